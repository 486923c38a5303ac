import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/store/rate-limit-store.js';
import { SharedMemoryRateLimitStore, allocateSharedBuckets } from '../../src/scale/shared-rate-limit.js';
import { TS_LOADER } from '../helpers/worker-loader.js';

describe('SharedMemoryRateLimitStore', () => {
  it('behaves like the in-process bucket: capacity, refill, per-bucket state', async () => {
    const memory = allocateSharedBuckets(64);
    const shared = new SharedMemoryRateLimitStore(memory, new MemoryRateLimitStore());
    const local = new MemoryRateLimitStore();
    const rate = 5 / 60_000;
    const steps: Array<[string, number, number]> = [['a', 1, 0], ['a', 2, 10], ['b', 1, 10], ['a', 3, 20], ['a', 1, 12_020], ['a', 5, 12_030], ['b', 4, 60_000]];
    for (const [bucket, cost, now] of steps) {
      expect(await shared.take(bucket, cost, 5, rate, 1_000_000 + now)).toEqual(await local.take(bucket, cost, 5, rate, 1_000_000 + now));
    }
  });

  it('falls back to the given store when the table is full', async () => {
    const fallback = new MemoryRateLimitStore();
    const asked: string[] = [];
    const counting = { take: (b: string, ...rest: [number, number, number, number]) => { asked.push(b); return fallback.take(b, ...rest); } } as MemoryRateLimitStore;
    const shared = new SharedMemoryRateLimitStore(allocateSharedBuckets(4), counting);
    for (let i = 0; i < 10; i++) expect((await shared.take(`k${i}`, 1, 1, 1e-9, 1)).allowed).toBe(true);
    expect((await shared.take('k9', 1, 1, 1e-9, 2)).allowed).toBe(false);
    // The buckets past the table's four went to the fallback (and stayed there), none of the first four did.
    expect(asked.length).toBeGreaterThanOrEqual(6);
    expect(asked).toContain('k9');
    for (const k of ['k0', 'k1', 'k2', 'k3']) expect(asked).not.toContain(k);
  });

  it('four threads hammering the same buckets never spend more than the capacity', async () => {
    const memory = allocateSharedBuckets();
    const results = await Promise.all(Array.from({ length: 4 }, () => new Promise<number>((resolve, reject) => {
      const w = new Worker(new URL('./fixtures/bucket-worker.ts', import.meta.url), { workerData: { memory, attempts: 3_000, buckets: 3 }, execArgv: TS_LOADER });
      w.once('message', resolve);
      w.once('error', reject);
    })));
    // Three buckets of 1,000 tokens, 12,000 attempts: exactly 3,000 granted in all.
    expect(results.reduce((a, b) => a + b, 0)).toBe(3_000);
  });
});
