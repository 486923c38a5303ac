/**
 * Per-key token buckets. A key may spend its whole per-minute quota at once (capacity = RPM) and then
 * gets refilled at RPM/60 tokens a second. Weights: docs/security.md ("Rate limits").
 */
import { LRUCache } from 'lru-cache';
import { AppError } from '../errors.js';
import type { Middleware, RequestContext } from '../http/server.js';

export interface BucketResult {
  allowed: boolean;
  /** Tokens left after this request (or now, when refused). */
  tokens: number;
}

/** Where buckets live: in process, or in Redis when instances share quotas. */
export interface RateLimitStore {
  take(bucket: string, cost: number, capacity: number, refillPerMs: number, now: number): Promise<BucketResult>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  readonly #buckets = new LRUCache<string, { tokens: number; at: number }>({ max: 100_000 });

  async take(bucket: string, cost: number, capacity: number, refillPerMs: number, now: number): Promise<BucketResult> {
    const b = this.#buckets.get(bucket) ?? { tokens: capacity, at: now };
    const tokens = Math.min(capacity, b.tokens + Math.max(0, now - b.at) * refillPerMs);
    const allowed = tokens >= cost;
    const left = allowed ? tokens - cost : tokens;
    this.#buckets.set(bucket, { tokens: left, at: now });
    return { allowed, tokens: left };
  }
}

export interface RateLimitOptions {
  store: RateLimitStore;
  defaultRpm: number;
  /** Tokens a request costs. */
  costOf: (ctx: RequestContext, body: Record<string, unknown> | undefined) => number;
  now?: () => number;
}

/** Request weights: one per request, chat two (it also spends upstream LLM time), batch one per 64 texts. */
export function requestCost(ctx: RequestContext, body: Record<string, unknown> | undefined): number {
  if (ctx.route.endsWith('/chat/completions')) return 2;
  if (ctx.route.includes('batch-analys')) {
    const n = Array.isArray(body?.['messages']) ? (body['messages'] as unknown[]).length : 1;
    return Math.max(1, Math.ceil(n / 64));
  }
  return 1;
}

export function rateLimitMiddleware(opts: RateLimitOptions): Middleware {
  const now = opts.now ?? Date.now;
  return async (ctx, body, _raw, next) => {
    const key = ctx.key;
    if (!key) return next();
    const rpm = key.rateLimitRpm ?? opts.defaultRpm;
    const refillPerMs = rpm / 60_000;
    const cost = Math.min(opts.costOf(ctx, body), rpm);
    const r = await opts.store.take(`rl:${key.id}`, cost, rpm, refillPerMs, now());
    const remaining = Math.max(0, Math.floor(r.tokens));
    ctx.replyHeaders['ratelimit-limit'] = String(rpm);
    ctx.replyHeaders['ratelimit-remaining'] = String(remaining);
    ctx.replyHeaders['ratelimit-reset'] = String(Math.ceil((rpm - r.tokens) / refillPerMs / 1000));
    if (!r.allowed) {
      const retryAfter = Math.max(1, Math.ceil((cost - r.tokens) / refillPerMs / 1000));
      throw new AppError('rate_limit_exceeded', `rate limit of ${rpm} requests per minute exceeded; retry after ${retryAfter} s`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    return next();
  };
}
