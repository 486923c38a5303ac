/**
 * Where rate-limit token buckets live in process (guard/rate-limit.ts charges requests against them;
 * store/redis/rate-limit-store.ts and scale/shared-rate-limit.ts keep them where instances or workers share them).
 */
import { LRUCache } from 'lru-cache';

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
