/**
 * Contexts in Redis, shared by every instance. An append is one Lua script (push, trim, count, TTL, read
 * back), so appends from several instances to one context serialise inside Redis and none is lost; a Lua
 * script rather than MULTI because it is one round trip that also returns the record as it stood right
 * after this append, and because it can branch (start afresh when the context is logically expired).
 * Expiry is Redis's own PEXPIRE, sliding on every write like the in-process store; reads do not extend it.
 *
 * Reads and appends keep the records they decoded (bounded by messages) and tell Redis which history they
 * hold: its creation time, its total of messages ever appended and how many of them it holds. Redis then
 * sends only the messages appended since (none when nothing changed) and the length of its list, and the
 * whole list only when the held copy cannot rebuild it (an earlier context with that id, or too far
 * behind); so neither polling a context's state nor adding to a long session moves and decodes its whole
 * history, even with several requests appending to one context at once. The check runs inside Redis, so
 * a record is never older than what Redis holds, and its messages are always exactly Redis's list (also
 * when instances are configured with different SENTIO_CONTEXT_MAX_MESSAGES).
 */
import { LRUCache } from 'lru-cache';
import { DEFAULT_CACHED_MESSAGES, StoreUnavailableError, cachedWeight } from '../context-store.js';
import type { ContextRecord, ContextStore, MessageList, StoredMessage, Transferred } from '../context-store.js';
import { extendWindow } from '../message-window.js';
import { PerKeyQueue } from '../per-key-queue.js';
import { decode, encode } from './codec.js';
import type { RedisConnection } from './connection.js';
import { contextKeys, contextMetaPattern, onceKey } from './keys.js';

// The messages a caller lacks. With `held` = "createdAt:total:length" of its copy: those appended since,
// when the context is the same (createdAt) and the copy plus them covers Redis's list; otherwise the whole
// list. Returns the messages, 1 when they are a tail to add to the caller's copy (0: the whole list), and
// the list's length (the caller keeps that many of the newest).
const SINCE = `
local function since(created, total, held)
  local llen = redis.call('LLEN', KEYS[2])
  local hc, ht, hl = string.match(held, '^(%d+):(%d+):(%d+)$')
  local gap = ht and (tonumber(total) - tonumber(ht))
  if hc == created and gap >= 0 and gap <= llen and tonumber(hl) + gap >= llen then
    if gap == 0 then return {}, 1, llen end
    return redis.call('LRANGE', KEYS[2], -gap, -1), 1, llen
  end
  return redis.call('LRANGE', KEYS[2], 0, -1), 0, llen
end
`;

// KEYS: meta, messages, once (the append's marker). ARGV: now, ttlMs, maxMessages, staleBefore (0: none),
// held ('' for none), once ('1': set the marker, and skip an append already marked), message...
// Returns {createdAt, updatedAt, total, messages, tail, length} (see SINCE): the record right after this
// append (a skipped append keeps the updatedAt of the one it repeats).
const APPEND = `${SINCE}
local now, ttl, max, stale, held = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
if stale > 0 then
  local updated = redis.call('HGET', KEYS[1], 'updatedAt')
  if updated and tonumber(updated) <= stale then redis.call('DEL', KEYS[1], KEYS[2]) end
end
-- A retry of a request whose append landed after the request had given up: that append stands, and the
-- context is returned as it is (unless it is gone since, when the retry's append starts it afresh).
local applied = ARGV[6] == '1' and not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ttl)
local has_meta = redis.call('EXISTS', KEYS[1]) == 1
if not (applied and has_meta) then
  -- Under volatile-lru Redis may have evicted one of the two keys and kept the other: the context is gone,
  -- and starts afresh. Without its record, an old list is not revived; without its list, the record's
  -- createdAt and total belong to messages that are gone. (Only then a DEL: a script's first write decides
  -- whether a Redis over maxmemory refuses it, and DEL is not refused, so deleting nothing first would let
  -- every append past noeviction.)
  local has_list = redis.call('EXISTS', KEYS[2]) == 1
  if not has_meta and has_list then
    redis.call('DEL', KEYS[2])
  elseif has_meta and not has_list and tonumber(redis.call('HGET', KEYS[1], 'total') or '0') > 0 then
    redis.call('DEL', KEYS[1])
  end
  redis.call('HSETNX', KEYS[1], 'createdAt', now)
  redis.call('HSET', KEYS[1], 'updatedAt', now)
  local n = #ARGV - 6
  redis.call('HINCRBY', KEYS[1], 'total', n)
  if n > 0 then
    -- In slices: unpack() of some 8,000 values passes Lua's limit.
    for i = 7, #ARGV, 1000 do redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
    redis.call('LTRIM', KEYS[2], -max, -1)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local m = redis.call('HMGET', KEYS[1], 'createdAt', 'updatedAt', 'total')
local list, tail, llen = since(m[1], m[3], held)
return {m[1], m[2], m[3], list, tail, llen}
`;

// KEYS: meta, messages. ARGV: held ('' for none).
// Returns nil when the context does not exist, else {createdAt, updatedAt, total, messages, tail, length}.
const READ = `${SINCE}
local m = redis.call('HMGET', KEYS[1], 'createdAt', 'updatedAt', 'total')
if not m[1] or not m[2] then return false end
local total = m[3] or '0'
-- Under volatile-lru Redis may have evicted the list but kept the record: that context is gone too.
if tonumber(total) > 0 and redis.call('EXISTS', KEYS[2]) == 0 then return false end
local list, tail, llen = since(m[1], total, ARGV[1])
return {m[1], m[2], total, list, tail, llen}
`;

export interface RedisContextStoreOptions {
  ttlSeconds: number;
  maxMessagesPerContext: number;
  /** Messages kept decoded across the records this process holds (SENTIO_CONTEXT_CACHE_MESSAGES; default DEFAULT_CACHED_MESSAGES). */
  cachedMessages?: number | undefined;
  /**
   * An injected clock (tests). Redis's TTL runs on Redis's clock, which a fake clock cannot move, so with
   * one the store also treats a context whose last write is older than the TTL by this clock as gone.
   * Without one, Redis's TTL alone decides.
   */
  now?: (() => number) | undefined;
  /** Seconds a count of the contexts serves size() (SENTIO_REDIS_COUNT_SECONDS; default DEFAULT_COUNT_SECONDS, 0: count every time). */
  countEverySeconds?: number | undefined;
}

type AppendReply = [Buffer, Buffer, Buffer, Buffer[], number, number];
type ReadReply = null | [Buffer, Buffer, Buffer, Buffer[], number, number];

/** What a caller holding `r` tells Redis (see SINCE). */
function heldOf(r: ContextRecord | undefined): string {
  return r ? `${r.createdAt}:${r.total}:${r.messages.length}` : '';
}

/** How long a scrape waits for a count it started before it reads the last one (size()). */
const FRESH_COUNT_WAIT_MS = 500;
/** How long one count of the contexts serves size(), unless told (SENTIO_REDIS_COUNT_SECONDS). */
export const DEFAULT_COUNT_SECONDS = 15;

export class RedisContextStore implements ContextStore {
  readonly #redis: RedisConnection;
  readonly #ttlMs: number;
  readonly #maxMessages: number;
  readonly #fakeClock: (() => number) | undefined;
  readonly #cache: LRUCache<string, ContextRecord>;
  readonly #transferred: Transferred = { since: 0, whole: 0 };
  readonly #appends = new PerKeyQueue();
  readonly #countEveryMs: number;
  #count = 0;
  #countedAt = -Infinity;
  #counting: Promise<void> | undefined;

  constructor(redis: RedisConnection, opts: RedisContextStoreOptions) {
    this.#redis = redis;
    this.#ttlMs = opts.ttlSeconds * 1000;
    this.#countEveryMs = (opts.countEverySeconds ?? DEFAULT_COUNT_SECONDS) * 1000;
    this.#maxMessages = opts.maxMessagesPerContext;
    this.#fakeClock = opts.now;
    // A record larger than the whole cache is not kept (lru-cache skips it): its context is fetched whole.
    this.#cache = new LRUCache({ maxSize: Math.max(1, opts.cachedMessages ?? DEFAULT_CACHED_MESSAGES), sizeCalculation: cachedWeight });
    redis.client.defineCommand('sentioContextAppend', { numberOfKeys: 3, lua: APPEND });
    redis.client.defineCommand('sentioContextRead', { numberOfKeys: 2, lua: READ });
  }

  #now(): number {
    return this.#fakeClock ? this.#fakeClock() : Date.now();
  }

  async get(contextId: string): Promise<ContextRecord | undefined> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const cached = this.#cache.get(contextId);
    const reply = await this.#redis.run((c) =>
      (c as unknown as ContextCommands).sentioContextReadBuffer(keys.meta, keys.messages, heldOf(cached)));
    if (reply === null) {
      this.#cache.delete(contextId);
      return undefined;
    }
    const [createdAt, updatedAt, total, list, tail, length] = reply;
    const messages = this.#messages(cached, list, tail, length);
    let record: ContextRecord;
    if (cached && messages === cached.messages && cached.updatedAt === Number(updatedAt.toString())) {
      record = cached; // unchanged: #messages kept the held list, so creation time and total are the same
    } else {
      record = {
        id: contextId,
        createdAt: Number(createdAt.toString()),
        updatedAt: Number(updatedAt.toString()),
        total: Number(total.toString()),
        messages,
      };
      this.#cache.set(contextId, record);
    }
    if (this.#fakeClock && record.updatedAt + this.#ttlMs <= this.#fakeClock()) return undefined;
    return record;
  }

  /**
   * One at a time per context in this process (PerKeyQueue). The wait for its turn is bounded by the
   * command timeout too, so an append answers 503 within two timeouts even behind a frozen Redis.
   */
  append(contextId: string, messages: readonly StoredMessage[], once?: string): Promise<ContextRecord> {
    return this.#appends.run(contextId, () => this.#append(contextId, messages, once), {
      ms: this.#redis.commandTimeoutMs,
      error: () => new StoreUnavailableError('redis: an earlier append to this context has not been answered'),
    });
  }

  async #append(contextId: string, messages: readonly StoredMessage[], once: string | undefined): Promise<ContextRecord> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const now = this.#now();
    const staleBefore = this.#fakeClock ? now - this.#ttlMs : 0;
    // The copy this append will extend: the one named to Redis, whatever the cache holds by the reply.
    const held = this.#cache.get(contextId);
    const args = [String(now), String(this.#ttlMs), String(this.#maxMessages), String(staleBefore), heldOf(held), once ? '1' : '0', ...messages.map(encode)];
    const [createdAt, updatedAt, total, list, tail, length] = await this.#redis.run((c) =>
      (c as unknown as ContextCommands).sentioContextAppendBuffer(keys.meta, keys.messages, onceKey(keys.meta, once), ...args));
    const record: ContextRecord = {
      id: contextId,
      createdAt: Number(createdAt.toString()),
      updatedAt: Number(updatedAt.toString()),
      total: Number(total.toString()),
      messages: this.#messages(held, list, tail, length),
    };
    this.#cache.set(contextId, record);
    return record;
  }

  /** The record's messages from Redis's reply: the newest `length` of the held copy plus a tail, or a whole list. */
  #messages(held: ContextRecord | undefined, list: Buffer[], tail: number, length: number): MessageList {
    const got = list.map((b) => decode<StoredMessage>(b));
    this.#transferred[tail === 1 ? 'since' : 'whole'] += got.length;
    if (tail !== 1) return got;
    if (!held) throw new Error('redis: a tail for a context this process does not hold. This is a bug.');
    if (got.length === 0 && held.messages.length === length) return held.messages;
    return extendWindow(held.messages, got, length);
  }

  transferred(): Transferred {
    return { ...this.#transferred };
  }

  /**
   * Contexts held under this prefix: a SCAN of every context's key, 1 s for 600,000 keys. Scanned at every
   * scrape, that outran the 1 s a worker thread's metrics are waited for, and a scrape with several HTTP
   * workers lost every series (a reviewer's probe, 2026-11-28). So a count serves the scrapes of the next
   * `countEverySeconds`; a scrape that starts one waits for it at most FRESH_COUNT_WAIT_MS, else reads the
   * last count (0 before the first). With 0 every scrape counts, and waits. While Redis cannot be read the
   * count stays as it was.
   */
  async size(): Promise<number> {
    if (!this.#counting && performance.now() - this.#countedAt >= this.#countEveryMs) {
      this.#counting = this.#scanCount()
        .then((n) => { this.#count = n; this.#countedAt = performance.now(); }, () => {})
        .finally(() => { this.#counting = undefined; });
    }
    if (this.#counting && this.#countEveryMs === 0) await this.#counting;
    else if (this.#counting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#counting, new Promise((r) => { timer = setTimeout(r, FRESH_COUNT_WAIT_MS); })]);
      clearTimeout(timer);
    }
    return this.#count;
  }

  async available(): Promise<boolean> {
    return this.#redis.ready;
  }

  #scanCount(): Promise<number> {
    const pattern = contextMetaPattern(this.#redis.prefix);
    return this.#redis.run(async (c) => {
      let n = 0;
      let cursor = '0';
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        n += keys.length;
        cursor = next;
      } while (cursor !== '0');
      return n;
    });
  }

  /** The connection belongs to the store set (factory.ts), which closes it once every store is done. */
  async close(): Promise<void> {}
}

interface ContextCommands {
  sentioContextReadBuffer(meta: string, messages: string, held: string): Promise<ReadReply>;
  sentioContextAppendBuffer(meta: string, messages: string, once: string, ...args: Array<string | Buffer>): Promise<AppendReply>;
}
