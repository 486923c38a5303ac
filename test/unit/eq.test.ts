/** EQ labels read the values a response shows (rounded to four decimals), never the unrounded ones beside them. */
import { describe, expect, it } from 'vitest';
import { EMOTIONS, SUB_EMOTIONS } from '../../src/core/emotions.js';
import type { Scores } from '../../src/core/emotions.js';
import { DEFAULT_EQ_PARAMS, computeEq } from '../../src/core/eq.js';

function scores(raw: Partial<Record<(typeof EMOTIONS)[number], number>>, sub: Partial<Record<(typeof SUB_EMOTIONS)[number], number>>): Scores {
  return {
    raw: Object.fromEntries(EMOTIONS.map((e) => [e, raw[e] ?? 0])) as Scores['raw'],
    sub: Object.fromEntries(SUB_EMOTIONS.map((e) => [e, sub[e] ?? 0])) as Scores['sub'],
    valence: -0.8, arousal: 0.9, tokens: 8,
  };
}

describe('computeEq complexity', () => {
  // A reviewer's synthetic case: neutral shown as 0.5 beside complexity "layered" (the rule says simple).
  it('reads neutral and the active sub-emotions as shown', () => {
    const angry = { anger: 0.9, sadness: 0.1 };
    expect(computeEq(scores(angry, { neutral: 0.49996, anger: 0.3, annoyance: 0.3 }), DEFAULT_EQ_PARAMS).complexity).toBe('simple');
    expect(computeEq(scores(angry, { neutral: 0.4999, anger: 0.3, annoyance: 0.3 }), DEFAULT_EQ_PARAMS).complexity).not.toBe('simple');
    // 0.24996 is shown as 0.25, an active sub-emotion: two of them make a layered text.
    expect(computeEq(scores(angry, { anger: 0.24996, annoyance: 0.24996 }), DEFAULT_EQ_PARAMS).complexity).toBe('layered');
  });
});

describe('computeEq intensity level', () => {
  // A flat distribution (no peak) and a valence of 0 leave intensity = 0.25 × arousal, so the boundary
  // is set exactly, whatever the model: the HTTP tests met it only through one model version's scores.
  const flat = (arousal: number): Scores => ({
    ...scores(Object.fromEntries(EMOTIONS.map((e) => [e, 1 / 6])), {}),
    valence: 0.05 / 0.7, // 0.7 × this + 0.3 × (2/6 − 3/6) = 0
    arousal,
  });
  it('reads the level from the intensity as shown: 0.149996 is 0.15, subtle; 0.14994 is minimal', () => {
    const shown = computeEq(flat(0.599984), DEFAULT_EQ_PARAMS);
    expect(shown.intensity).toBeCloseTo(0.149996, 9);
    expect(shown.intensityLevel).toBe('subtle');
    const under = computeEq(flat(0.59976), DEFAULT_EQ_PARAMS);
    expect(under.intensity).toBeCloseTo(0.14994, 9);
    expect(under.intensityLevel).toBe('minimal');
  });
});
