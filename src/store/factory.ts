/**
 * Picks where shared state lives: in this process (the default) or in Redis when SENTIO_REDIS_URL is set.
 * Contexts, rate-limit buckets and idempotency records always move together, so instances never share
 * one of them and diverge on another. Stores passed in (tests, HTTP worker proxies) are used as given.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { MemoryIdempotencyStore } from './idempotency-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryRateLimitStore } from './rate-limit-store.js';
import type { RateLimitStore } from './rate-limit-store.js';
import type { ContextStore } from './context-store.js';
import { MemoryContextStore } from './memory-store.js';
import { RedisConnection } from './redis/connection.js';
import { RedisContextStore } from './redis/context-store.js';
import { RedisIdempotencyStore } from './redis/idempotency-store.js';
import { RedisRateLimitStore } from './redis/rate-limit-store.js';

export interface StateStores {
  readonly backend: 'memory' | 'redis';
  readonly contexts: ContextStore;
  readonly rateLimits: RateLimitStore;
  readonly idempotency: IdempotencyStore;
  /** Close the stores and, with Redis, the connection. */
  close(): Promise<void>;
}

export type StoreConfig = Pick<Config, 'redisUrl' | 'redisPrefix' | 'redisTimeoutMs' | 'redisCountSeconds' | 'contextCacheMessages' | 'contextTtlSeconds' | 'contextMax' | 'contextMaxMessages' | 'contextMaxBytes'>;

export interface OpenStoresOptions {
  logger?: Logger | undefined;
  /** Milliseconds clock (tests). */
  now?: (() => number) | undefined;
  contexts?: ContextStore | undefined;
  rateLimits?: RateLimitStore | undefined;
  idempotency?: IdempotencyStore | undefined;
}

/** Open the configured stores. With Redis, throws RedisStartupError when it cannot be reached. */
export async function openStores(config: StoreConfig, opts: OpenStoresOptions = {}): Promise<StateStores> {
  const needOwn = !opts.contexts || !opts.rateLimits || !opts.idempotency;
  if (config.redisUrl && needOwn) {
    const redis = await RedisConnection.open({
      url: config.redisUrl,
      prefix: config.redisPrefix,
      commandTimeoutMs: config.redisTimeoutMs,
      logger: opts.logger,
    });
    const contexts = opts.contexts ?? new RedisContextStore(redis, {
      ttlSeconds: config.contextTtlSeconds,
      maxMessagesPerContext: config.contextMaxMessages,
      cachedMessages: config.contextCacheMessages,
      countEverySeconds: config.redisCountSeconds,
      now: opts.now,
    });
    const ownIdempotency = opts.idempotency ? undefined : new RedisIdempotencyStore(redis, { logger: opts.logger });
    return {
      backend: 'redis',
      contexts,
      rateLimits: opts.rateLimits ?? new RedisRateLimitStore(redis, opts.logger),
      idempotency: opts.idempotency ?? ownIdempotency!,
      async close() {
        await contexts.close();
        await ownIdempotency?.close(); // its releases and completions that Redis has not taken yet
        await redis.close();
      },
    };
  }
  const contexts = opts.contexts ?? new MemoryContextStore({
    ttlSeconds: config.contextTtlSeconds,
    maxContexts: config.contextMax,
    maxMessagesPerContext: config.contextMaxMessages,
    maxBytes: config.contextMaxBytes,
    now: opts.now,
  });
  return {
    backend: 'memory',
    contexts,
    rateLimits: opts.rateLimits ?? new MemoryRateLimitStore(),
    idempotency: opts.idempotency ?? new MemoryIdempotencyStore(),
    close: () => contexts.close(),
  };
}
