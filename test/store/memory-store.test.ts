/**
 * The in-process store: the message windows it hands out against a plain-array model, and expiry
 * against an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { CONTEXT_OVERHEAD_BYTES, MESSAGE_OVERHEAD_BYTES, cachedWeight } from '../../src/store/context-store.js';
import type { ContextRecord, StoredMessage } from '../../src/store/context-store.js';
import { MemoryContextStore } from '../../src/store/memory-store.js';
import { storedMessage } from '../helpers/stored-message.js';

const message = storedMessage;

describe('MemoryContextStore', () => {
  it('keeps the newest messages in order, and a record handed out never changes as appends evict and compact', async () => {
    const max = 20;
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: max });
    const model: StoredMessage[] = [];
    const handedOut: Array<{ record: ContextRecord; ids: string[] }> = [];
    let seed = 7;
    for (let i = 0; i < 400; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const added = Array.from({ length: 1 + (seed % 3) }, (_, k) => message(`m${i}-${k}`));
      model.push(...added);
      const record = await store.append('c', added);
      handedOut.push({ record, ids: model.slice(-max).map((m) => m.id) });
      expect(record.total).toBe(model.length);
      expect((await store.get('c'))!.messages).toBe(record.messages);
    }
    for (const { record, ids } of handedOut) {
      const messages = record.messages;
      expect([...messages].map((m) => m.id)).toEqual(ids);
      expect(messages.length).toBe(ids.length);
      expect(Array.from({ length: messages.length }, (_, i) => messages.at(i)!.id)).toEqual(ids);
      expect(messages.at(-1)!.id).toBe(ids.at(-1));
      expect(messages.at(-ids.length)!.id).toBe(ids[0]);
      expect(messages.at(ids.length)).toBeUndefined();
      expect(messages.at(-ids.length - 1)).toBeUndefined();
    }
  });

  it('starts an empty context from an empty append', async () => {
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 5 });
    const record = await store.append('e', []);
    expect(record.messages.length).toBe(0);
    expect([...record.messages]).toEqual([]);
    expect(record.messages.at(0)).toBeUndefined();
  });

  // lru-cache reuses a clock reading for its ttlResolution (1 ms of real time by default); a clock that
  // jumps within that window must still expire a context at once (test/http/errors.test.ts failed on this).
  it('expires a context the moment the clock passes its TTL, even within the same tick', async () => {
    let now = 1_000_000;
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 10, now: () => now });
    await store.append('c', []);
    now += 59_000;
    expect(await store.get('c')).toBeDefined();
    now += 2_000;
    expect(await store.get('c')).toBeUndefined();
  });

  it('a write restarts the TTL: the context outlives its first write by the TTL of its last', async () => {
    let now = 1_000_000;
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 10, now: () => now });
    await store.append('slide', [message('a')]);
    now += 40_000;
    await store.append('slide', [message('b')]);
    now += 30_000; // 70 s after the first write, 30 s after the second
    const kept = await store.get('slide');
    expect(kept).toBeDefined();
    expect([...kept!.messages].map((m) => m.id)).toEqual(['a', 'b']);
    now += 29_000; // reads do not extend it
    expect(await store.get('slide')).toBeDefined();
    now += 2_000; // 61 s after the second write
    expect(await store.get('slide')).toBeUndefined();
  });

  // Bounded only in contexts, 100,000 contexts of 1,000 messages of 8 KiB each was hundreds of GB: one key
  // at its quota added about 290 MB a minute (a reviewer's probe). The bound is in estimated bytes too.
  it('keeps the estimated bytes of all contexts under maxBytes, the least recently used going first', async () => {
    const big = (id: string): StoredMessage => ({ ...message(id), text: 'x'.repeat(8_192) });
    const perMessage = MESSAGE_OVERHEAD_BYTES + 8_192;
    const maxBytes = CONTEXT_OVERHEAD_BYTES * 4 + perMessage * 40; // four contexts of 10 messages
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 1_000, maxMessagesPerContext: 10, maxBytes });
    // A context past its message bound keeps its size: evicted messages leave the estimate.
    for (let i = 0; i < 25; i++) await store.append('old', [big(`o${i}`)]);
    expect((await store.get('old'))!.messages.length).toBe(10);
    for (let c = 0; c < 3; c++) for (let i = 0; i < 10; i++) await store.append(`c${c}`, [big(`${c}-${i}`)]);
    expect(await store.size()).toBe(4);
    await store.append('c3', [big('new')]); // over the bound: the least recently used context goes
    expect(await store.get('old')).toBeUndefined();
    expect(await store.size()).toBe(4);
    for (const id of ['c0', 'c1', 'c2', 'c3']) expect(await store.get(id), id).toBeDefined();
    // Many small contexts: the count stays far below maxContexts, the bytes bound it.
    for (let i = 0; i < 500; i++) await store.append(`s${i}`, [big(`s${i}`)]);
    expect(await store.size()).toBeLessThanOrEqual(Math.floor(maxBytes / (CONTEXT_OVERHEAD_BYTES + perMessage)));
    expect(await store.get('s499')).toBeDefined();
  });
});

// The copies a Redis-backed instance or an HTTP worker holds were bounded in messages alone: 50,000 messages
// of 8 KiB each held about 450 MB per instance or worker, where the docs said about 1 KB each.
describe('cachedWeight (SENTIO_CONTEXT_CACHE_MESSAGES)', () => {
  it('counts a record once and each message one plus one per full KiB of its text', () => {
    const record = (texts: string[]): ContextRecord => ({
      id: 'c', createdAt: 0, updatedAt: 0, total: texts.length,
      messages: texts.map((text, i) => ({ ...message(`m${i}`), text })),
    });
    expect(cachedWeight(record([]))).toBe(1);
    expect(cachedWeight(record(['short', 'x'.repeat(1_023)]))).toBe(3);
    expect(cachedWeight(record(['x'.repeat(1_024), 'x'.repeat(8_192)]))).toBe(1 + 2 + 9);
  });
});
