/** The in-process idempotency store: running claims are never evicted, and full memory costs the largest tenant. */
import { describe, expect, it } from 'vitest';
import { IN_FLIGHT_LEASE_MS, MemoryIdempotencyStore } from '../../src/store/idempotency-store.js';
import type { StoredReply } from '../../src/store/idempotency-store.js';

const DAY = 86_400_000;
const reply = (n: number): StoredReply => ({ kind: 'json', status: 200, body: 'x'.repeat(n), headers: {} });

describe('MemoryIdempotencyStore', () => {
  it("a running claim survives any volume of another tenant's finished records", async () => {
    const store = new MemoryIdempotencyStore(20_000);
    expect(await store.claim('idem:key_a:1', 'fa')).toEqual({ outcome: 'claimed' });
    for (let i = 0; i < 500; i++) {
      await store.claim(`idem:key_b:${i}`, 'fb');
      await store.complete(`idem:key_b:${i}`, 'fb', reply(1000), DAY);
    }
    expect(await store.claim('idem:key_a:1', 'fa')).toEqual({ outcome: 'in_flight', fingerprint: 'fa' });
  });

  it('when full, the tenant holding the most bytes loses its oldest record, not a quiet tenant', async () => {
    const store = new MemoryIdempotencyStore(20_000);
    for (const n of [1, 2]) {
      await store.claim(`idem:key_a:${n}`, 'fa');
      await store.complete(`idem:key_a:${n}`, 'fa', reply(100), DAY);
    }
    for (let i = 0; i < 100; i++) {
      await store.claim(`idem:key_b:${i}`, 'fb');
      await store.complete(`idem:key_b:${i}`, 'fb', reply(1000), DAY);
    }
    for (const n of [1, 2]) expect((await store.claim(`idem:key_a:${n}`, 'fa')).outcome).toBe('done');
    expect((await store.claim('idem:key_b:99', 'fb')).outcome).toBe('done');
    expect((await store.claim('idem:key_b:0', 'fb')).outcome).toBe('claimed');
  });

  it('a claim lives its lease, not the retention; a finished record lives the retention', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore(1 << 20, { now: () => now });
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('claimed');
    now = IN_FLIGHT_LEASE_MS - 1; // far past a short retention such as SENTIO_CONTEXT_TTL_SECONDS=5
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('in_flight');
    now = IN_FLIGHT_LEASE_MS; // its holder never ended it: a retry may run
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('claimed');
    await store.complete('idem:key_a:long', 'f', reply(10), 5_000);
    now += 4_999;
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('done');
    now += 1;
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('claimed');
    await store.release('idem:key_a:long');
    expect((await store.claim('idem:key_a:long', 'f')).outcome).toBe('claimed');
  });
});
