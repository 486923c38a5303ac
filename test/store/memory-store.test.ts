/**
 * The in-process store's expiry against an injected clock. lru-cache reuses a clock reading for its
 * ttlResolution (1 ms of real time by default); a clock that jumps within that window must still expire
 * a context at once (the HTTP expiry test in test/http/errors.test.ts failed on this, now and then).
 */
import { describe, expect, it } from 'vitest';
import { MemoryContextStore } from '../../src/store/memory-store.js';

describe('MemoryContextStore', () => {
  it('expires a context the moment the clock passes its TTL, even within the same tick', async () => {
    let now = 1_000_000;
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 10, now: () => now });
    await store.append('c', []);
    now += 59_000;
    expect(await store.get('c')).toBeDefined();
    now += 2_000;
    expect(await store.get('c')).toBeUndefined();
  });
});
