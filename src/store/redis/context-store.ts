/**
 * Contexts in Redis, shared by every instance. An append is one Lua script (push, trim, count, TTL, read
 * back), so appends from several instances to one context serialise inside Redis and none is lost; a Lua
 * script rather than MULTI because it is one round trip that also returns the record as it stood right
 * after this append, and because it can branch (start afresh when the context is logically expired).
 * Expiry is Redis's own PEXPIRE, sliding on every write like the in-process store; reads do not extend it.
 *
 * Reads and appends keep the records they decoded (bounded by messages) and send Redis the version they
 * hold; Redis answers without the message list when that version is current (a read: unchanged; an
 * append: it applied to exactly that history), so neither polling a context's state nor adding to a long
 * session moves and decodes its whole history every time. The version check runs inside Redis, so a
 * record is never older than what Redis holds.
 */
import { LRUCache } from 'lru-cache';
import type { ContextRecord, ContextStore, StoredMessage } from '../context-store.js';
import { decode, encode } from './codec.js';
import type { RedisConnection } from './connection.js';
import { contextKeys, contextMetaPattern } from './keys.js';

// KEYS: meta, messages. ARGV: now, ttlMs, maxMessages, staleBefore (0: none), version held by the caller
// ('' for none), message...
// Returns {createdAt, total} when the context stood at the caller's version before this append, else
// {createdAt, total, messages}.
const APPEND = `
local now, ttl, max, stale, held = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
if stale > 0 then
  local updated = redis.call('HGET', KEYS[1], 'updatedAt')
  if updated and tonumber(updated) <= stale then redis.call('DEL', KEYS[1], KEYS[2]) end
end
local m = redis.call('HMGET', KEYS[1], 'createdAt', 'updatedAt', 'total')
local current = held ~= '' and m[1] and m[2] and (m[1] .. ':' .. m[2] .. ':' .. (m[3] or '0')) == held
redis.call('HSETNX', KEYS[1], 'createdAt', now)
redis.call('HSET', KEYS[1], 'updatedAt', now)
local n = #ARGV - 5
local total = redis.call('HINCRBY', KEYS[1], 'total', n)
if n > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 6))
  redis.call('LTRIM', KEYS[2], -max, -1)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
redis.call('PEXPIRE', KEYS[1], ttl)
if current then return {redis.call('HGET', KEYS[1], 'createdAt'), tostring(total)} end
return {redis.call('HGET', KEYS[1], 'createdAt'), tostring(total), redis.call('LRANGE', KEYS[2], 0, -1)}
`;

// KEYS: meta, messages. ARGV: version held by the caller ('' for none).
// Returns nil when the context does not exist, {createdAt, updatedAt, total} when the caller's version is
// current, else {createdAt, updatedAt, total, messages}.
const READ = `
local m = redis.call('HMGET', KEYS[1], 'createdAt', 'updatedAt', 'total')
if not m[1] or not m[2] then return false end
local total = m[3] or '0'
if ARGV[1] ~= '' and (m[1] .. ':' .. m[2] .. ':' .. total) == ARGV[1] then return {m[1], m[2], total} end
return {m[1], m[2], total, redis.call('LRANGE', KEYS[2], 0, -1)}
`;

/** Messages kept decoded across cached records (one process). */
const CACHED_MESSAGES = 50_000;

export interface RedisContextStoreOptions {
  ttlSeconds: number;
  maxMessagesPerContext: number;
  /**
   * An injected clock (tests). Redis's TTL runs on Redis's clock, which a fake clock cannot move, so with
   * one the store also treats a context whose last write is older than the TTL by this clock as gone.
   * Without one, Redis's TTL alone decides.
   */
  now?: (() => number) | undefined;
}

type AppendReply = [Buffer, Buffer] | [Buffer, Buffer, Buffer[]];
type ReadReply = null | [Buffer, Buffer, Buffer] | [Buffer, Buffer, Buffer, Buffer[]];

function versionOf(r: ContextRecord): string {
  return `${r.createdAt}:${r.updatedAt}:${r.total}`;
}

export class RedisContextStore implements ContextStore {
  readonly #redis: RedisConnection;
  readonly #ttlMs: number;
  readonly #maxMessages: number;
  readonly #fakeClock: (() => number) | undefined;
  readonly #cache = new LRUCache<string, ContextRecord>({ maxSize: CACHED_MESSAGES, sizeCalculation: (r) => r.messages.length + 1 });

  constructor(redis: RedisConnection, opts: RedisContextStoreOptions) {
    this.#redis = redis;
    this.#ttlMs = opts.ttlSeconds * 1000;
    this.#maxMessages = opts.maxMessagesPerContext;
    this.#fakeClock = opts.now;
    redis.client.defineCommand('sentioContextAppend', { numberOfKeys: 2, lua: APPEND });
    redis.client.defineCommand('sentioContextRead', { numberOfKeys: 2, lua: READ });
  }

  #now(): number {
    return this.#fakeClock ? this.#fakeClock() : Date.now();
  }

  async get(contextId: string): Promise<ContextRecord | undefined> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const cached = this.#cache.get(contextId);
    const reply = await this.#redis.run((c) =>
      (c as unknown as ContextCommands).sentioContextReadBuffer(keys.meta, keys.messages, cached ? versionOf(cached) : ''));
    if (reply === null) {
      this.#cache.delete(contextId);
      return undefined;
    }
    let record: ContextRecord;
    if (reply.length === 3) {
      if (!cached) throw new Error('redis: "unchanged" for a context this process does not hold. This is a bug.');
      record = cached;
    } else {
      record = {
        id: contextId,
        createdAt: Number(reply[0].toString()),
        updatedAt: Number(reply[1].toString()),
        total: Number(reply[2].toString()),
        messages: reply[3].map((b) => decode<StoredMessage>(b)),
      };
      this.#cache.set(contextId, record);
    }
    if (this.#fakeClock && record.updatedAt + this.#ttlMs <= this.#fakeClock()) return undefined;
    return record;
  }

  async append(contextId: string, messages: readonly StoredMessage[]): Promise<ContextRecord> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const now = this.#now();
    const staleBefore = this.#fakeClock ? now - this.#ttlMs : 0;
    const held = this.#cache.get(contextId);
    const args = [String(now), String(this.#ttlMs), String(this.#maxMessages), String(staleBefore), held ? versionOf(held) : '', ...messages.map(encode)];
    const reply = await this.#redis.run((c) =>
      (c as unknown as ContextCommands).sentioContextAppendBuffer(keys.meta, keys.messages, ...args));
    let list: StoredMessage[];
    if (reply.length === 2) {
      if (!held) throw new Error('redis: an append against a context this process does not hold. This is a bug.');
      // Redis applied this append to exactly the history held here: extend it as Redis did (push, trim).
      const all = [...held.messages, ...messages];
      list = all.length > this.#maxMessages ? all.slice(all.length - this.#maxMessages) : all;
    } else {
      list = reply[2].map((b) => decode<StoredMessage>(b));
    }
    const record: ContextRecord = {
      id: contextId,
      createdAt: Number(reply[0].toString()),
      updatedAt: now,
      total: Number(reply[1].toString()),
      messages: list,
    };
    this.#cache.set(contextId, record);
    return record;
  }

  /** Contexts held under this prefix. A SCAN over the keyspace: for metrics at scrape intervals, not per request. */
  async size(): Promise<number> {
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
  sentioContextReadBuffer(meta: string, messages: string, version: string): Promise<ReadReply>;
  sentioContextAppendBuffer(meta: string, messages: string, ...args: Array<string | Buffer>): Promise<AppendReply>;
}
