/**
 * Contexts in Redis, shared by every instance. An append is one Lua script (push, trim, count, TTL, read
 * back), so appends from several instances to one context serialise inside Redis and none is lost; a Lua
 * script rather than MULTI because it is one round trip that also returns the record as it stood right
 * after this append, and because it can branch (start afresh when the context is logically expired).
 * Expiry is Redis's own PEXPIRE, sliding on every write like the in-process store; reads do not extend it.
 */
import type { ContextRecord, ContextStore, StoredMessage } from '../context-store.js';
import { decode, encode } from './codec.js';
import type { RedisConnection } from './connection.js';
import { contextKeys, contextMetaPattern } from './keys.js';

// KEYS: meta, messages. ARGV: now, ttlMs, maxMessages, staleBefore (0: none), message...
// Returns {createdAt, total, messages}.
const APPEND = `
local now, ttl, max, stale = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if stale > 0 then
  local updated = redis.call('HGET', KEYS[1], 'updatedAt')
  if updated and tonumber(updated) <= stale then redis.call('DEL', KEYS[1], KEYS[2]) end
end
redis.call('HSETNX', KEYS[1], 'createdAt', now)
redis.call('HSET', KEYS[1], 'updatedAt', now)
local n = #ARGV - 4
local total = redis.call('HINCRBY', KEYS[1], 'total', n)
if n > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 5))
  redis.call('LTRIM', KEYS[2], -max, -1)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
redis.call('PEXPIRE', KEYS[1], ttl)
return {redis.call('HGET', KEYS[1], 'createdAt'), tostring(total), redis.call('LRANGE', KEYS[2], 0, -1)}
`;

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

type AppendReply = [Buffer, Buffer, Buffer[]];

export class RedisContextStore implements ContextStore {
  readonly #redis: RedisConnection;
  readonly #ttlMs: number;
  readonly #maxMessages: number;
  readonly #fakeClock: (() => number) | undefined;

  constructor(redis: RedisConnection, opts: RedisContextStoreOptions) {
    this.#redis = redis;
    this.#ttlMs = opts.ttlSeconds * 1000;
    this.#maxMessages = opts.maxMessagesPerContext;
    this.#fakeClock = opts.now;
    redis.client.defineCommand('sentioContextAppend', { numberOfKeys: 2, lua: APPEND });
  }

  #now(): number {
    return this.#fakeClock ? this.#fakeClock() : Date.now();
  }

  async get(contextId: string): Promise<ContextRecord | undefined> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const replies = await this.#redis.run((c) =>
      c.multi().hmget(keys.meta, 'createdAt', 'updatedAt', 'total').lrangeBuffer(keys.messages, 0, -1).exec());
    const [metaReply, listReply] = replies ?? [];
    if (!metaReply || !listReply || metaReply[0] || listReply[0]) {
      throw metaReply?.[0] ?? listReply?.[0] ?? new Error('redis: MULTI was discarded. This is a bug.');
    }
    const [createdAt, updatedAt, total] = metaReply[1] as Array<string | null>;
    if (createdAt == null || updatedAt == null) return undefined;
    if (this.#fakeClock && Number(updatedAt) + this.#ttlMs <= this.#fakeClock()) return undefined;
    return {
      id: contextId,
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
      total: Number(total ?? 0),
      messages: (listReply[1] as Buffer[]).map((b) => decode<StoredMessage>(b)),
    };
  }

  async append(contextId: string, messages: readonly StoredMessage[]): Promise<ContextRecord> {
    const keys = contextKeys(this.#redis.prefix, contextId);
    const now = this.#now();
    const staleBefore = this.#fakeClock ? now - this.#ttlMs : 0;
    const args = [String(now), String(this.#ttlMs), String(this.#maxMessages), String(staleBefore), ...messages.map(encode)];
    const [createdAt, total, list] = await this.#redis.run((c) =>
      (c as unknown as ContextCommands).sentioContextAppendBuffer(keys.meta, keys.messages, ...args));
    return {
      id: contextId,
      createdAt: Number(createdAt.toString()),
      updatedAt: now,
      total: Number(total.toString()),
      messages: list.map((b) => decode<StoredMessage>(b)),
    };
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
  sentioContextAppendBuffer(meta: string, messages: string, ...args: Array<string | Buffer>): Promise<AppendReply>;
}
