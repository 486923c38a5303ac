/**
 * The service over the real engine and the in-process store. Each context analysis takes the discovery
 * reference of the history before it from a sum carried from append to append; it must equal the
 * definition (the mean over the stored messages) through evictions and concurrent appends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisEngine } from '../../src/app.js';
import { EmotionService } from '../../src/core/emotion-service.js';
import { ScoreMapper } from '../../src/core/emotions.js';
import { DEFAULT_EQ_PARAMS, computeEq } from '../../src/core/eq.js';
import { discoveryBaseline, scoresOf } from '../../src/core/trajectory.js';
import { MemoryContextStore } from '../../src/store/memory-store.js';
import { testEngine } from '../helpers/engine.js';

const TEXTS = [
  'I finally understood how the whole thing fits together, what a revelation',
  'the meeting was moved to thursday',
  'I am so scared of what the doctor will say tomorrow',
  'wow, I never knew the ocean could glow like that at night',
  'this is the worst week I have had in years',
  'thank you for being there for me, I love you all',
  'the train was late again and I am furious',
];

let engine: AnalysisEngine;
beforeAll(async () => { engine = await testEngine(); });
afterAll(async () => { await engine.close(); });

describe('EmotionService context analysis', () => {
  it('scores each message against the mean discovery score of the stored history, through evictions and concurrent appends', async () => {
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 6 });
    const service = new EmotionService(engine, new ScoreMapper(engine.labels), store);
    const opts = { eq: DEFAULT_EQ_PARAMS, smoothing: 0 };
    let checked = 0;
    for (let round = 0; round < 40; round++) {
      if (round % 10 === 9) {
        // Concurrent analyses: each carried sum must count the messages the others appended before it
        // (the next round checks the newest).
        await Promise.all([0, 1, 2].map((k) => service.analyzeContext('c', [{ role: 'user', text: TEXTS[(round + k) % TEXTS.length]! }], opts)));
        continue;
      }
      const before = await store.get('c');
      const reference = before ? discoveryBaseline(before.messages) : undefined;
      await service.analyzeContext('c', [{ role: 'user', text: TEXTS[round % TEXTS.length]! }], opts);
      const stored = (await store.get('c'))!.messages.at(-1)!;
      const want = computeEq(scoresOf(stored), DEFAULT_EQ_PARAMS, reference);
      expect(stored.eq.discoveryScore).toBeCloseTo(want.discoveryScore, 12);
      expect(stored.eq.discoveryLevel).toBe(want.discoveryLevel);
      if (reference !== undefined) checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });

  it("reads each message of a request against the history before it, the request's earlier messages included", async () => {
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 100 });
    const service = new EmotionService(engine, new ScoreMapper(engine.labels), store);
    const opts = { eq: DEFAULT_EQ_PARAMS, smoothing: 0 };
    await service.analyzeContext('d', TEXTS.slice(0, 2).map((text) => ({ role: 'user' as const, text })), opts);
    await service.analyzeContext('d', TEXTS.map((text) => ({ role: 'user' as const, text })), opts);
    const messages = [...(await store.get('d'))!.messages];
    expect(messages.length).toBe(2 + TEXTS.length);
    for (let i = 0; i < messages.length; i++) {
      const history = messages.slice(0, i);
      const want = computeEq(scoresOf(messages[i]!), DEFAULT_EQ_PARAMS, discoveryBaseline(history));
      expect(messages[i]!.eq.discoveryScore).toBeCloseTo(want.discoveryScore, 12);
    }
  });

  it('keeps a context in the order its analyses arrived, not the order they finish', async () => {
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 1000 });
    const service = new EmotionService(engine, new ScoreMapper(engine.labels), store);
    const opts = { eq: DEFAULT_EQ_PARAMS, smoothing: 0 };
    const long = Array.from({ length: 256 }, (_, i) => ({ role: 'user' as const, text: `${TEXTS[i % TEXTS.length]!} `.repeat(6), externalId: `long-${i}` }));
    let longDone = false;
    let shortDone = false;
    const first = service.analyzeContext('o', long, opts).then(() => { longDone = true; expect(shortDone).toBe(false); });
    const second = service.analyzeContext('o', [{ role: 'user', text: 'ok', externalId: 'short' }], opts).then(() => { shortDone = true; expect(longDone).toBe(true); });
    await Promise.all([first, second]);
    const ids = (await store.get('o'))!.messages;
    expect(ids.length).toBe(257);
    expect(ids.at(-1)!.id).toBe('short');
    expect(ids.at(0)!.id).toBe('long-0');
  });

  it('lets a failed analysis pass its turn on without storing anything', async () => {
    const store = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 1000 });
    const service = new EmotionService(engine, new ScoreMapper(engine.labels), store);
    const opts = { eq: DEFAULT_EQ_PARAMS, smoothing: 0 };
    const gone = new AbortController();
    const failed = service.analyzeContext('f', [{ role: 'user', text: TEXTS[0]!, externalId: 'gone' }], opts, gone.signal);
    gone.abort();
    const next = service.analyzeContext('f', [{ role: 'user', text: TEXTS[1]!, externalId: 'kept' }], opts);
    await expect(failed).rejects.toThrow();
    await next;
    expect([...(await store.get('f'))!.messages].map((m) => m.id)).toEqual(['kept']);
  });
});
