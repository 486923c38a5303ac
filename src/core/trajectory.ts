/**
 * A context's emotional trajectory (V2): the recent valence trend and the long-run baseline.
 * Definitions and thresholds: docs/context-and-trajectory.md.
 */
import { EMOTIONS, SUB_EMOTIONS, combineScores } from './emotions.js';
import type { Emotion, EmotionVector, Scores, SubEmotionVector } from './emotions.js';
import type { StoredMessage } from '../store/context-store.js';

export type TrendDirection = 'improving' | 'declining' | 'stable' | 'volatile';

export interface Trend {
  direction: TrendDirection;
  /** Fitted valence change across the trend window (least-squares slope × (n − 1)), in [-2, 2]. */
  valenceTrend: number;
}

export interface Baseline {
  averageIntensity: number;
  baselineValence: number;
  averageArousal: number;
  /** Mean discovery score, the reference for discoveryLevel of new messages. */
  averageDiscovery: number;
  dominantCategory: Emotion;
  messageCount: number;
}

/** Messages the trend looks back over. */
export const TREND_WINDOW = 10;
const TREND_THRESHOLD = 0.15;
const VOLATILITY_THRESHOLD = 0.6;
/** Weight of a message in the aggregate state halves every this many newer messages. */
export const STATE_HALF_LIFE = 5;

export function trendOf(messages: readonly StoredMessage[]): Trend {
  const window = messages.slice(-TREND_WINDOW).map((m) => m.eq.valence);
  const n = window.length;
  if (n < 2) return { direction: 'stable', valenceTrend: 0 };
  const meanX = (n - 1) / 2;
  const meanY = window.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  window.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  const valenceTrend = Math.max(-2, Math.min(2, (num / den) * (n - 1)));
  let swing = 0;
  for (let i = 1; i < n; i++) swing += Math.abs(window[i]! - window[i - 1]!);
  swing /= n - 1;
  let direction: TrendDirection = 'stable';
  if (n >= 3 && swing >= VOLATILITY_THRESHOLD && Math.abs(valenceTrend) < swing) direction = 'volatile';
  else if (valenceTrend >= TREND_THRESHOLD) direction = 'improving';
  else if (valenceTrend <= -TREND_THRESHOLD) direction = 'declining';
  return { direction, valenceTrend };
}

export function baselineOf(messages: readonly StoredMessage[]): Baseline | undefined {
  const n = messages.length;
  if (n === 0) return undefined;
  const mean = (f: (m: StoredMessage) => number) => messages.reduce((a, m) => a + f(m), 0) / n;
  const counts = new Map<Emotion, number>();
  for (const m of messages) counts.set(m.eq.category, (counts.get(m.eq.category) ?? 0) + 1);
  let dominantCategory: Emotion = messages[n - 1]!.eq.category;
  for (const [e, c] of counts) if (c > (counts.get(dominantCategory) ?? 0)) dominantCategory = e;
  return {
    averageIntensity: mean((m) => m.eq.intensity),
    baselineValence: mean((m) => m.eq.valence),
    averageArousal: mean((m) => m.eq.arousal),
    averageDiscovery: mean((m) => m.eq.discoveryScore),
    dominantCategory,
    messageCount: n,
  };
}

export function scoresOf(m: StoredMessage): Scores {
  const raw = {} as EmotionVector;
  EMOTIONS.forEach((e, i) => (raw[e] = m.raw[i]!));
  const sub = {} as SubEmotionVector;
  SUB_EMOTIONS.forEach((e, i) => (sub[e] = m.sub[i]!));
  return { raw, sub, valence: m.valence, arousal: m.arousal, tokens: m.tokens };
}

/** The context's current state: stored messages mixed with weights that halve every STATE_HALF_LIFE messages. */
export function aggregateState(messages: readonly StoredMessage[]): Scores | undefined {
  const n = messages.length;
  if (n === 0) return undefined;
  const weighted = messages.map((m, i) => {
    const s = scoresOf(m);
    const w = Math.pow(0.5, (n - 1 - i) / STATE_HALF_LIFE);
    return { ...s, tokens: w }; // combineScores weights by `tokens`
  });
  const state = combineScores(weighted);
  return { ...state, tokens: messages.reduce((a, m) => a + m.tokens, 0) };
}
