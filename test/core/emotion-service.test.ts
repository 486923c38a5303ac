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
        // Appends that interleave: all three read the same history, so each carried sum must count the
        // others' messages appended in between too (the next round checks the newest).
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
});
