/** The label sets and the model's scores for one text, in the API's order. */

export const EMOTIONS = ['fear', 'sadness', 'joy', 'anger', 'love', 'surprise'] as const;
export type Emotion = (typeof EMOTIONS)[number];

export const SUB_EMOTIONS = [
  'admiration', 'amusement', 'anger', 'annoyance', 'approval', 'caring', 'confusion', 'curiosity', 'desire',
  'disappointment', 'disapproval', 'disgust', 'embarrassment', 'excitement', 'fear', 'gratitude', 'grief',
  'joy', 'love', 'nervousness', 'optimism', 'pride', 'realization', 'relief', 'remorse', 'sadness',
  'surprise', 'neutral',
] as const;
export type SubEmotion = (typeof SUB_EMOTIONS)[number];

export type EmotionVector = Record<Emotion, number>;
export type SubEmotionVector = Record<SubEmotion, number>;

/** What the model says about one text (or a token-weighted mix of several). */
export interface Scores {
  /** Six probabilities summing to 1. */
  raw: EmotionVector;
  /** 28 independent probabilities. */
  sub: SubEmotionVector;
  /** Model valence head, [-1, 1]. */
  valence: number;
  /** Model arousal head, [0, 1]. */
  arousal: number;
  /** Emotion-model input tokens. */
  tokens: number;
}

/** One text's outputs as the engine returns them, in the model's label order. */
export interface ModelOutputs {
  emotions: ArrayLike<number>;
  subEmotions: ArrayLike<number>;
  valence: number;
  arousal: number;
  tokens: number;
}

export interface LabelOrder {
  emotions: readonly string[];
  subEmotions: readonly string[];
}

/** Builds index maps once, then converts model outputs to API-ordered Scores. */
export class ScoreMapper {
  readonly #emotionIdx: number[];
  readonly #subIdx: number[];

  constructor(order: LabelOrder) {
    this.#emotionIdx = EMOTIONS.map((e) => indexOrThrow(order.emotions, e, 'emotions'));
    this.#subIdx = SUB_EMOTIONS.map((e) => indexOrThrow(order.subEmotions, e, 'sub_emotions'));
  }

  toScores(out: ModelOutputs): Scores {
    let sum = 0;
    for (const i of this.#emotionIdx) sum += out.emotions[i]!;
    const raw = {} as EmotionVector;
    EMOTIONS.forEach((e, k) => {
      raw[e] = sum > 0 ? out.emotions[this.#emotionIdx[k]!]! / sum : 1 / EMOTIONS.length;
    });
    const sub = {} as SubEmotionVector;
    SUB_EMOTIONS.forEach((e, k) => {
      sub[e] = out.subEmotions[this.#subIdx[k]!]!;
    });
    return { raw, sub, valence: clamp(out.valence, -1, 1), arousal: clamp(out.arousal, 0, 1), tokens: out.tokens };
  }
}

function indexOrThrow(labels: readonly string[], name: string, what: string): number {
  const i = labels.indexOf(name);
  if (i < 0) throw new Error(`model manifest: ${what} has no label "${name}". This is a bug in the model export.`);
  return i;
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

export function dominant(raw: EmotionVector): Emotion {
  let best: Emotion = EMOTIONS[0];
  for (const e of EMOTIONS) if (raw[e] > raw[best]) best = e;
  return best;
}

/** Token-weighted mean of several texts' scores: the emotion of the messages taken together. */
export function combineScores(list: readonly Scores[]): Scores {
  if (list.length === 1) return list[0]!;
  const tokens = list.reduce((n, s) => n + s.tokens, 0);
  const w = list.map((s) => (tokens > 0 ? s.tokens / tokens : 1 / list.length));
  const raw = {} as EmotionVector;
  for (const e of EMOTIONS) raw[e] = list.reduce((acc, s, i) => acc + w[i]! * s.raw[e], 0);
  const sub = {} as SubEmotionVector;
  for (const e of SUB_EMOTIONS) sub[e] = list.reduce((acc, s, i) => acc + w[i]! * s.sub[e], 0);
  return {
    raw,
    sub,
    valence: list.reduce((acc, s, i) => acc + w[i]! * s.valence, 0),
    arousal: list.reduce((acc, s, i) => acc + w[i]! * s.arousal, 0),
    tokens,
  };
}

export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
