import { describe, expect, it } from 'vitest';
import { EMOTIONS, SUB_EMOTIONS } from '../../src/core/emotions.js';
import type { Emotion } from '../../src/core/emotions.js';
import { DISCOVERY_BASELINE_MIN, STATE_HALF_LIFE, STATE_WINDOW, aggregateState, baselineOf, discoveryBaseline, trendOf } from '../../src/core/trajectory.js';
import type { StoredMessage } from '../../src/store/context-store.js';

/** A deterministic pseudo-random history (no model needed: these are the stored numbers' arithmetic). */
function history(n: number, seed = 1): StoredMessage[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, (_, i) => {
    const raw = EMOTIONS.map(() => rnd());
    const sum = raw.reduce((a, b) => a + b, 0);
    return {
      id: `m${i}`, role: 'user', text: `message ${i}`, at: i, tokens: 1 + (i % 7),
      raw: raw.map((x) => x / sum), sub: SUB_EMOTIONS.map(() => rnd()), valence: 2 * rnd() - 1, arousal: rnd(),
      eq: {
        category: EMOTIONS[Math.floor(rnd() * EMOTIONS.length)]!, intensity: rnd(), intensityLevel: 'moderate', valence: 2 * rnd() - 1,
        arousal: rnd(), complexity: 'simple', wonderIndex: rnd(), discoveryScore: rnd(), discoveryLevel: 'normal',
      },
    };
  });
}

/** The documented definition, over every stored message: weights halve every STATE_HALF_LIFE messages back. */
function definition(messages: StoredMessage[]) {
  const n = messages.length;
  const w = messages.map((_, i) => 0.5 ** ((n - 1 - i) / STATE_HALF_LIFE));
  const total = w.reduce((a, b) => a + b, 0);
  const mix = (f: (m: StoredMessage) => number) => messages.reduce((a, m, i) => a + w[i]! * f(m), 0) / total;
  return {
    raw: EMOTIONS.map((_, j) => mix((m) => m.raw[j]!)),
    sub: SUB_EMOTIONS.map((_, j) => mix((m) => m.sub[j]!)),
    valence: mix((m) => m.valence),
    arousal: mix((m) => m.arousal),
  };
}

describe('aggregate state', () => {
  it('equals the full-history definition for short and long contexts, though it reads only the recent window', () => {
    for (const n of [1, 2, 7, STATE_WINDOW, STATE_WINDOW + 1, 1_000]) {
      const messages = history(n, n);
      const got = aggregateState(messages)!;
      const want = definition(messages);
      // The messages left out weigh under 2^-24 of the whole, so the two agree far below the 4 decimals reported.
      EMOTIONS.forEach((e, j) => expect(got.raw[e]).toBeCloseTo(want.raw[j]!, 7));
      SUB_EMOTIONS.forEach((e, j) => expect(got.sub[e]).toBeCloseTo(want.sub[j]!, 7));
      expect(got.valence).toBeCloseTo(want.valence, 7);
      expect(got.arousal).toBeCloseTo(want.arousal, 7);
      expect(got.tokens).toBe(messages.reduce((a, m) => a + m.tokens, 0));
    }
  });

  it('follows the conversation: the newest message weighs most', () => {
    const messages = history(40);
    for (const m of messages) m.raw = EMOTIONS.map((e) => (e === 'sadness' ? 1 : 0));
    messages[39]!.raw = EMOTIONS.map((e) => (e === 'joy' ? 1 : 0));
    const s = aggregateState(messages)!;
    expect(s.raw.joy).toBeCloseTo(1 / definitionWeightSum(40), 12);
    expect(s.raw.sadness + s.raw.joy).toBeCloseTo(1, 12);
    expect(aggregateState([])).toBeUndefined();
  });
});

function definitionWeightSum(n: number): number {
  let t = 0;
  for (let k = 0; k < n; k++) t += 0.5 ** (k / STATE_HALF_LIFE);
  return t;
}

describe('baseline', () => {
  it('averages every stored message', () => {
    const messages = history(1_000, 3);
    const b = baselineOf(messages)!;
    const mean = (f: (m: StoredMessage) => number) => messages.reduce((a, m) => a + f(m), 0) / messages.length;
    expect(b.messageCount).toBe(1_000);
    expect(b.averageIntensity).toBeCloseTo(mean((m) => m.eq.intensity), 12);
    expect(b.baselineValence).toBeCloseTo(mean((m) => m.eq.valence), 12);
    expect(b.averageArousal).toBeCloseTo(mean((m) => m.eq.arousal), 12);
    expect(b.averageDiscovery).toBeCloseTo(mean((m) => m.eq.discoveryScore), 12);
    expect(baselineOf([])).toBeUndefined();
  });

  it('the discovery reference of the next message is the mean discovery score, from three messages on', () => {
    for (const n of [0, 1, DISCOVERY_BASELINE_MIN - 1]) expect(discoveryBaseline(history(n))).toBeUndefined();
    for (const n of [DISCOVERY_BASELINE_MIN, 50, 1_000]) {
      const messages = history(n, 7);
      expect(discoveryBaseline(messages)).toBeCloseTo(baselineOf(messages)!.averageDiscovery, 12);
    }
  });

  it('names the commonest category; a tie goes to the newest message, else to the one seen first', () => {
    const withCategories = (cats: Emotion[]) => history(cats.length).map((m, i) => ({ ...m, eq: { ...m.eq, category: cats[i]! } }));
    expect(baselineOf(withCategories(['joy', 'anger', 'anger', 'joy', 'fear']))!.dominantCategory).toBe('joy');
    expect(baselineOf(withCategories(['joy', 'anger', 'anger', 'joy']))!.dominantCategory).toBe('joy');
    expect(baselineOf(withCategories(['anger', 'joy', 'anger', 'joy', 'joy', 'sadness']))!.dominantCategory).toBe('joy');
    expect(baselineOf(withCategories(['fear', 'joy', 'sadness', 'love']))!.dominantCategory).toBe('love');
  });
});

describe('trend', () => {
  it('works the documented example: valences -0.6, -0.1, 0.5 are improving by 1.1', () => {
    const messages = history(3).map((m, i) => ({ ...m, eq: { ...m.eq, valence: [-0.6, -0.1, 0.5][i]! } }));
    const t = trendOf(messages);
    expect(t.direction).toBe('improving');
    expect(t.valenceTrend).toBeCloseTo(1.1, 12);
  });

  const trendOfValences = (v: number[]) => trendOf(history(v.length).map((m, i) => ({ ...m, eq: { ...m.eq, valence: v[i]! } })));

  // The HTTP tests met this boundary only through one model's scores; a new model would move them off it.
  it('reads the trend as the response shows it (four decimals): 0.149996 is 0.15, improving; 0.14994 is stable', () => {
    expect(trendOfValences([0, 0.149996]).direction).toBe('improving');
    expect(trendOfValences([0, -0.149996]).direction).toBe('declining');
    expect(trendOfValences([0, 0.14994]).direction).toBe('stable');
    expect(trendOfValences([0, -0.14994]).direction).toBe('stable');
  });

  it('volatile: big swings that do not add up to a direction (n ≥ 3, swing ≥ 0.6, |valenceTrend| < swing)', () => {
    // Swing 1.6; the fit leans down (-0.96), but less than the swing: volatile, not declining.
    const down = trendOfValences([0.8, -0.8, 0.8, -0.8]);
    expect(down.direction).toBe('volatile');
    expect(down.valenceTrend).toBeCloseTo(-0.96, 12);
    // No fitted change at all: volatile, not stable.
    const flat = trendOfValences([0.8, -0.8, 0.8, -0.8, 0.8]);
    expect(flat.direction).toBe('volatile');
    expect(flat.valenceTrend).toBeCloseTo(0, 12);
    // Just over the 0.6 swing: volatile; just under: the fitted -0.348 is declining.
    expect(trendOfValences([0.31, -0.31, 0.31, -0.31]).direction).toBe('volatile');
    expect(trendOfValences([0.29, -0.29, 0.29, -0.29]).direction).toBe('declining');
  });

  it('big moves in one direction are a trend, not volatility; two messages are never volatile', () => {
    // Swing 0.9, valenceTrend 1.8 ≥ swing.
    expect(trendOfValences([-0.9, -0.1, 0.9]).direction).toBe('improving');
    // Swing 1.8, but n < 3.
    expect(trendOfValences([0.9, -0.9]).direction).toBe('declining');
  });

  it('stable: a trend within ±0.15 and small swings, a flat history, and fewer than two messages', () => {
    const drift = trendOfValences([0, 0.05, 0.1]);
    expect(drift.direction).toBe('stable');
    expect(drift.valenceTrend).toBeCloseTo(0.1, 12);
    expect(trendOfValences([0.1, -0.1, 0.1, -0.1, 0.1]).direction).toBe('stable'); // swing 0.2, no trend
    expect(trendOfValences([-0.4, -0.4, -0.4, -0.4])).toEqual({ direction: 'stable', valenceTrend: 0 });
    expect(trendOfValences([0.7])).toEqual({ direction: 'stable', valenceTrend: 0 });
    expect(trendOfValences([])).toEqual({ direction: 'stable', valenceTrend: 0 });
    expect(trendOfValences([0, -0.1, -0.2]).direction).toBe('declining'); // -0.2: past the threshold
  });

  /** Messages of the given roles and valences, oldest first. */
  const spoken = (turns: ReadonlyArray<[StoredMessage['role'], number]>) =>
    history(turns.length).map((m, i) => ({ ...m, role: turns[i]![0], eq: { ...m.eq, valence: turns[i]![1] } }));

  it("follows the user: a chat's replies between the user's messages do not move it", () => {
    // A steadily sad user, a warm reply after each message: over every message this swings by 0.9 (volatile).
    const chat = spoken([['user', -0.4], ['assistant', 0.5], ['user', -0.45], ['assistant', 0.5], ['user', -0.4], ['assistant', 0.5]]);
    expect(trendOf(chat)).toEqual(trendOfValences([-0.4, -0.45, -0.4]));
    expect(trendOf(chat).direction).toBe('stable');
    // The user's last TREND_WINDOW messages, however many replies lie between them.
    const long = spoken(Array.from({ length: 45 }, (_, i): [StoredMessage['role'], number] => (i % 3 === 2 ? ['user', (i % 7) / 7] : ['assistant', -1])));
    expect(trendOf(long)).toEqual(trendOfValences(Array.from({ length: 10 }, (_, k) => ((3 * (k + 5) + 2) % 7) / 7)));
    // One user message is no trend yet, whatever the replies do.
    expect(trendOf(spoken([['assistant', -0.9], ['user', -0.2], ['assistant', 0.9]]))).toEqual({ direction: 'stable', valenceTrend: 0 });
  });

  it('reads every message of a context that has no user message (callers that store only other roles)', () => {
    expect(trendOf(spoken([['assistant', -0.6], ['system', -0.1], ['assistant', 0.5]]))).toEqual(trendOfValences([-0.6, -0.1, 0.5]));
  });
});

describe("state and baseline follow the user's messages", () => {
  /** A chat: the user's messages as history() makes them, a reply after each that differs in every number. */
  function chat(n: number): { all: StoredMessage[]; users: StoredMessage[] } {
    const users = history(n, 7);
    const replies = history(n, 8).map((m) => ({ ...m, role: 'assistant' as const, eq: { ...m.eq, category: 'joy' as Emotion } }));
    return { all: users.flatMap((m, i) => [m, replies[i]!]), users };
  }

  it('the state mixes only the user messages, with the weights it gives them alone', () => {
    for (const n of [1, 6, STATE_WINDOW + 3]) {
      const { all, users } = chat(n);
      const got = aggregateState(all)!;
      const want = aggregateState(users)!;
      expect({ ...got, tokens: 0 }).toEqual({ ...want, tokens: 0 });
      expect(got.tokens).toBe(all.reduce((a, m) => a + m.tokens, 0)); // what the context holds
    }
  });

  it('the baseline averages the user messages and counts every message', () => {
    const { all, users } = chat(9);
    expect(baselineOf(all)).toEqual({ ...baselineOf(users)!, messageCount: 18 });
  });

  it('a context without user messages reads all of them', () => {
    const others = history(5).map((m) => ({ ...m, role: 'assistant' as const }));
    expect(aggregateState(others)).toEqual(aggregateState(history(5)));
    expect(baselineOf(others)).toEqual(baselineOf(history(5)));
  });
});
