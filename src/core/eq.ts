/**
 * The V2 EQ dimensions, derived from the model's three heads. docs/eq-dimensions.md gives every formula,
 * range and threshold with a worked example; keep the two in step.
 */
import { EMOTIONS, SUB_EMOTIONS, clamp, dominant, round4 } from './emotions.js';
import type { Emotion, EmotionVector, Scores, SubEmotion } from './emotions.js';

export type IntensityLevel = 'critical' | 'high' | 'moderate' | 'subtle' | 'minimal';
export type Complexity = 'simple' | 'layered' | 'paradoxical' | 'transcendent';
export type DiscoveryLevel = 'routine' | 'normal' | 'significant' | 'breakthrough' | 'transcendent';

export interface EqParams {
  /** 0..1, default 0.5: how readily moderate signals count as intense (see intensity). */
  sensitivity: number;
  /** Per-emotion minimum probability for the dominant category (V1 `thresholds`). */
  thresholds: Partial<Record<Emotion, number>>;
}

export const DEFAULT_EQ_PARAMS: EqParams = { sensitivity: 0.5, thresholds: {} };

export interface Eq {
  category: Emotion;
  intensity: number;
  intensityLevel: IntensityLevel;
  valence: number;
  arousal: number;
  complexity: Complexity;
  wonderIndex: number;
  /** The continuous score behind discoveryLevel (stored for the context baseline). */
  discoveryScore: number;
  discoveryLevel: DiscoveryLevel;
}

const POSITIVE_SUB: ReadonlySet<SubEmotion> = new Set<SubEmotion>([
  'admiration', 'amusement', 'approval', 'caring', 'desire', 'excitement', 'gratitude', 'joy', 'love',
  'optimism', 'pride', 'relief',
]);
const NEGATIVE_SUB: ReadonlySet<SubEmotion> = new Set<SubEmotion>([
  'anger', 'annoyance', 'disappointment', 'disapproval', 'disgust', 'embarrassment', 'fear', 'grief',
  'nervousness', 'remorse', 'sadness',
]);
/** A sub-emotion counts as present in a text from this probability on. */
const ACTIVE_SUB_THRESHOLD = 0.25;

export function intensityLevel(x: number): IntensityLevel {
  if (x >= 0.8) return 'critical';
  if (x >= 0.6) return 'high';
  if (x >= 0.35) return 'moderate';
  if (x >= 0.15) return 'subtle';
  return 'minimal';
}

export function discoveryLevel(x: number): DiscoveryLevel {
  if (x >= 0.8) return 'transcendent';
  if (x >= 0.6) return 'breakthrough';
  if (x >= 0.4) return 'significant';
  if (x >= 0.15) return 'normal';
  return 'routine';
}

/** The highest-scoring emotion that meets its threshold; the plain argmax when none does. */
function chooseCategory(raw: EmotionVector, thresholds: EqParams['thresholds']): Emotion {
  let best: Emotion | undefined;
  for (const e of EMOTIONS) {
    if (raw[e] < (thresholds[e] ?? 0)) continue;
    if (best === undefined || raw[e] > raw[best]) best = e;
  }
  return best ?? dominant(raw);
}

/** Lexical valence of the six-way distribution: positive minus negative mass (surprise is neutral). */
function distributionValence(raw: EmotionVector): number {
  return raw.joy + raw.love - raw.sadness - raw.anger - raw.fear;
}

export function computeEq(s: Scores, params: EqParams = DEFAULT_EQ_PARAMS, baselineDiscovery?: number): Eq {
  const category = chooseCategory(s.raw, params.thresholds);
  const valence = clamp(0.7 * s.valence + 0.3 * distributionValence(s.raw), -1, 1);
  const arousal = clamp(s.arousal, 0, 1);

  // Intensity: is the text emotional at all (1 - neutral), how peaked the six-way distribution is,
  // and how energetic and polarised it reads; sensitivity bends the curve (0.5 leaves it linear).
  const emotional = 1 - s.sub.neutral;
  const peak = (s.raw[category] - 1 / EMOTIONS.length) / (1 - 1 / EMOTIONS.length);
  const base = clamp(emotional * (0.55 * clamp(peak, 0, 1) + 0.25 * arousal + 0.2 * Math.abs(valence)), 0, 1);
  const intensity = Math.pow(base, Math.pow(2, 1 - 2 * params.sensitivity));

  const sub = s.sub;
  // The weights of the signals that make up wonder (curiosity, awe, surprise), read by name: a loop over
  // a [name, weight] table made these reads megamorphic.
  const wonderMiss = (1 - 0.6 * s.raw.surprise) * (1 - 1.0 * sub.curiosity) * (1 - 0.9 * sub.surprise) *
    (1 - 0.7 * sub.realization) * (1 - 0.6 * sub.admiration) * (1 - 0.5 * sub.excitement) * (1 - 0.3 * sub.confusion);
  const wonderIndex = clamp(1 - wonderMiss, 0, 1);

  let discoveryScore = clamp(wonderIndex * (0.5 + 0.5 * intensity) + 0.3 * s.sub.realization, 0, 1);
  if (baselineDiscovery !== undefined) {
    // Relative to the conversation's own baseline: a marked rise is more of a discovery.
    discoveryScore = clamp(discoveryScore + 0.5 * (discoveryScore - baselineDiscovery), 0, 1);
  }

  return {
    category,
    intensity,
    // From the value the response shows: 0.149996 is shown as 0.15 and must read as subtle, not minimal.
    intensityLevel: intensityLevel(round4(intensity)),
    valence,
    arousal,
    // The shown values (sub-emotions too, inside), as above: a label must not contradict the numbers beside it.
    complexity: complexityOf(s, round4(wonderIndex), round4(intensity)),
    wonderIndex,
    discoveryScore,
    discoveryLevel: discoveryLevel(discoveryScore),
  };
}

function complexityOf(s: Scores, wonder: number, intensity: number): Complexity {
  // A mostly neutral or barely emotional text has no feelings to mix; its six-way spread is noise.
  if (round4(s.sub.neutral) >= 0.5 || intensity < 0.15) return 'simple';
  let active = 0;
  let activePos = false;
  let activeNeg = false;
  for (const e of SUB_EMOTIONS) {
    if (e === 'neutral' || round4(s.sub[e]) < ACTIVE_SUB_THRESHOLD) continue;
    active++;
    if (POSITIVE_SUB.has(e)) activePos = true;
    if (NEGATIVE_SUB.has(e)) activeNeg = true;
  }
  const pos = s.raw.joy + s.raw.love;
  const neg = s.raw.sadness + s.raw.anger + s.raw.fear;
  // Opposite feelings: both polarities in one head, or the two heads disagreeing (the six-way head
  // reads mostly positive while a negative sub-emotion is present, or the reverse).
  const mixed = (pos >= 0.2 && neg >= 0.2) || (activePos && activeNeg) || (pos >= 0.5 && activeNeg) || (neg >= 0.5 && activePos);
  const layered = secondLargest(s.raw) >= 0.2 || active >= 2;
  if ((mixed || active >= 3) && wonder >= 0.5 && intensity >= 0.5) return 'transcendent';
  if (mixed) return 'paradoxical';
  if (layered) return 'layered';
  return 'simple';
}

/** The second value of the six in descending order (the largest again when it occurs twice). */
function secondLargest(raw: EmotionVector): number {
  let first = -Infinity;
  let second = -Infinity;
  for (const e of EMOTIONS) {
    const v = raw[e];
    if (v > first) {
      second = first;
      first = v;
    } else if (v > second) {
      second = v;
    }
  }
  return second;
}
