/**
 * Token buckets in Redis: one quota per key across every instance. The refill-and-take is one Lua
 * script, so concurrent requests from several instances cannot both spend the last token, and it reads
 * Redis's own clock (TIME), so instances whose clocks disagree still share one bucket exactly.
 *
 * While Redis is unreachable the store fails open to a bucket in this process (same capacity and
 * refill): rate limiting keeps working per process instead of refusing every request, at the price of a
 * key getting up to one quota per process (per HTTP worker: each has its own store) until Redis returns.
 * docs/deployment.md, "When Redis is down".
 */
import type { Logger } from 'pino';
import { MemoryRateLimitStore } from '../rate-limit-store.js';
import type { BucketResult, RateLimitStore } from '../rate-limit-store.js';
import { StoreUnavailableError } from '../context-store.js';
import type { RedisConnection } from './connection.js';

// KEYS: bucket. ARGV: cost, capacity, refillPerMs. Returns {allowed (0/1), tokens left (string)}.
const TAKE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost, cap, rate = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or cap
local at = tonumber(b[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
-- Once the bucket would be full again it holds nothing worth keeping.
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
return {allowed, tostring(tokens)}
`;

interface RateLimitCommands {
  sentioTakeToken(bucket: string, cost: string, capacity: string, refillPerMs: string): Promise<[number, string]>;
}

/** While failing open, how often one request also tries Redis to find out whether it is back. */
const RETRY_REDIS_MS = 1_000;

export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: RedisConnection;
  readonly #local = new MemoryRateLimitStore();
  readonly #logger: Logger | undefined;
  #failingOpen = false;
  #nextTry = 0;
  /** The connection's `connections` when Redis failed: once it has reconnected, try Redis at once. */
  #failedOn = 0;

  constructor(redis: RedisConnection, logger?: Logger) {
    this.#redis = redis;
    this.#logger = logger;
    redis.client.defineCommand('sentioTakeToken', { numberOfKeys: 1, lua: TAKE });
  }

  /**
   * `now` is only used by the local fallback; in Redis the bucket runs on Redis's clock. Once Redis has
   * failed, requests use the local bucket at once until the connection is made again, or for a second
   * (then one request tries Redis): with a frozen Redis every request had waited out the command timeout
   * here first, and then again for its context.
   */
  async take(bucket: string, cost: number, capacity: number, refillPerMs: number, now: number): Promise<BucketResult> {
    if (this.#failingOpen && Date.now() < this.#nextTry && this.#redis.connections === this.#failedOn) {
      return this.#local.take(bucket, cost, capacity, refillPerMs, now);
    }
    if (this.#failingOpen) this.#nextTry = Date.now() + RETRY_REDIS_MS; // this request is the second's try
    try {
      const [allowed, tokens] = await this.#redis.run((c) =>
        (c as unknown as RateLimitCommands).sentioTakeToken(
          this.#redis.prefix + bucket, String(cost), String(capacity), String(refillPerMs)));
      if (this.#failingOpen) {
        this.#failingOpen = false;
        this.#logger?.warn('rate limits shared through Redis again');
      }
      return { allowed: allowed === 1, tokens: Number(tokens) };
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      this.#failedOn = this.#redis.connections;
      this.#nextTry = Date.now() + RETRY_REDIS_MS;
      if (!this.#failingOpen) {
        this.#failingOpen = true;
        this.#logger?.warn({ reason: err.message }, 'redis unavailable: rate limits fall back to per-process buckets');
      }
      return this.#local.take(bucket, cost, capacity, refillPerMs, now);
    }
  }
}
