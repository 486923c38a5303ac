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
    const e = out.emotions;
    const i = this.#emotionIdx;
    const fear = e[i[0]!]!, sadness = e[i[1]!]!, joy = e[i[2]!]!, anger = e[i[3]!]!, love = e[i[4]!]!, surprise = e[i[5]!]!;
    const sum = fear + sadness + joy + anger + love + surprise;
    const raw: EmotionVector = sum > 0
      ? { fear: fear / sum, sadness: sadness / sum, joy: joy / sum, anger: anger / sum, love: love / sum, surprise: surprise / sum }
      : { fear: 1 / 6, sadness: 1 / 6, joy: 1 / 6, anger: 1 / 6, love: 1 / 6, surprise: 1 / 6 };
    return { raw, sub: subVector(out.subEmotions, this.#subIdx), valence: clamp(out.valence, -1, 1), arousal: clamp(out.arousal, 0, 1), tokens: out.tokens };
  }
}

/**
 * The 28 sub-emotion scores as one object literal, so that every vector has the same hidden class and
 * is built in one allocation; adding the keys one by one went through V8's runtime 28 times a text and
 * left the EQ code's reads megamorphic (a CPU profile under single-message load showed both).
 */
function subVector(v: ArrayLike<number>, i: readonly number[]): SubEmotionVector {
  return {
    admiration: v[i[0]!]!, amusement: v[i[1]!]!, anger: v[i[2]!]!, annoyance: v[i[3]!]!, approval: v[i[4]!]!,
    caring: v[i[5]!]!, confusion: v[i[6]!]!, curiosity: v[i[7]!]!, desire: v[i[8]!]!, disappointment: v[i[9]!]!,
    disapproval: v[i[10]!]!, disgust: v[i[11]!]!, embarrassment: v[i[12]!]!, excitement: v[i[13]!]!, fear: v[i[14]!]!,
    gratitude: v[i[15]!]!, grief: v[i[16]!]!, joy: v[i[17]!]!, love: v[i[18]!]!, nervousness: v[i[19]!]!,
    optimism: v[i[20]!]!, pride: v[i[21]!]!, realization: v[i[22]!]!, relief: v[i[23]!]!, remorse: v[i[24]!]!,
    sadness: v[i[25]!]!, surprise: v[i[26]!]!, neutral: v[i[27]!]!,
  };
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
