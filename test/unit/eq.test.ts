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
