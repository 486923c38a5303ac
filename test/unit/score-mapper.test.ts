/** ScoreMapper: model outputs in the manifest's label order become API-ordered scores, label by label. */
import { describe, expect, it } from 'vitest';
import { EMOTIONS, SUB_EMOTIONS, ScoreMapper } from '../../src/core/emotions.js';

describe('ScoreMapper', () => {
  // A model whose outputs come in another order than the API's (as the shipped manifest's do).
  const order = { emotions: [...EMOTIONS].reverse(), subEmotions: [...SUB_EMOTIONS.slice(14), ...SUB_EMOTIONS.slice(0, 14)] };
  const mapper = new ScoreMapper(order);
  // Each output distinct, so a label read from the wrong column shows.
  const emotions = Float32Array.from(order.emotions, (_, k) => (k + 1) / 100);
  const subEmotions = Float32Array.from(order.subEmotions, (_, k) => (k + 1) / 1000);

  it('reads every label from its own column, in the API order', () => {
    const s = mapper.toScores({ emotions, subEmotions, valence: 0.25, arousal: 0.5, tokens: 7 });
    expect(Object.keys(s.raw)).toEqual([...EMOTIONS]);
    expect(Object.keys(s.sub)).toEqual([...SUB_EMOTIONS]);
    const sum = emotions.reduce((a, b) => a + b, 0);
    for (const e of EMOTIONS) expect(s.raw[e]).toBeCloseTo(emotions[order.emotions.indexOf(e)]! / sum, 12);
    for (const e of SUB_EMOTIONS) expect(s.sub[e]).toBe(subEmotions[order.subEmotions.indexOf(e)]);
    expect(s).toMatchObject({ valence: 0.25, arousal: 0.5, tokens: 7 });
  });

  it('spreads evenly when the six outputs are all zero, and clamps the heads', () => {
    const s = mapper.toScores({ emotions: new Float32Array(6), subEmotions, valence: -3, arousal: 2, tokens: 1 });
    for (const e of EMOTIONS) expect(s.raw[e]).toBe(1 / 6);
    expect(s.valence).toBe(-1);
    expect(s.arousal).toBe(1);
  });
});
