/**
 * A context's emotional trajectory (V2): the recent valence trend and the long-run baseline.
 * Definitions and thresholds: docs/context-and-trajectory.md.
 */
import { EMOTIONS, SUB_EMOTIONS, round4 } from './emotions.js';
import type { Emotion, EmotionVector, Scores, SubEmotionVector } from './emotions.js';
import type { MessageList, StoredMessage } from '../store/context-store.js';

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

/**
 * The stored messages that describe the context's user, newest first, at most `max`: those with role
 * user, or all of them in a context that has none (a caller that stores only other roles). A chat context
 * holds the assistant's replies too, and read with them a steadily sad user answered by warm replies had
 * an "improving" or "volatile" trend and a cheerful state: the bot's tone, not the user's mood
 * (docs/context-and-trajectory.md).
 */
function usersNewest(messages: MessageList, max: number): StoredMessage[] {
  const picked: StoredMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && picked.length < max; i--) {
    const m = messages.at(i)!;
    if (m.role === 'user') picked.push(m);
  }
  if (picked.length > 0) return picked;
  for (let i = messages.length - 1; i >= 0 && picked.length < max; i--) picked.push(messages.at(i)!);
  return picked;
}

/** The trend over the user's last TREND_WINDOW messages (usersNewest). */
export function trendOf(messages: MessageList): Trend {
  const window = usersNewest(messages, TREND_WINDOW).map((m) => m.eq.valence).reverse(); // oldest first
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
  // Decided on the trend as the response shows it (4 decimals): 0.149996 is shown as 0.15, which is improving.
  const shown = round4(valenceTrend);
  let direction: TrendDirection = 'stable';
  if (n >= 3 && swing >= VOLATILITY_THRESHOLD && Math.abs(shown) < swing) direction = 'volatile';
  else if (shown >= TREND_THRESHOLD) direction = 'improving';
  else if (shown <= -TREND_THRESHOLD) direction = 'declining';
  return { direction, valenceTrend };
}

/** Means over the user's messages (usersNewest); messageCount counts every message the context holds. */
export function baselineOf(messages: MessageList): Baseline | undefined {
  if (messages.length === 0) return undefined;
  const users = usersNewest(messages, Infinity);
  const n = users.length;
  let intensity = 0;
  let valence = 0;
  let arousal = 0;
  let discovery = 0;
  const counts = new Map<Emotion, number>(); // in first-seen order, which breaks ties below
  for (let i = n - 1; i >= 0; i--) {
    const m = users[i]!;
    intensity += m.eq.intensity;
    valence += m.eq.valence;
    arousal += m.eq.arousal;
    discovery += m.eq.discoveryScore;
    counts.set(m.eq.category, (counts.get(m.eq.category) ?? 0) + 1);
  }
  // The commonest category; on a tie the newest message's, else the one seen first.
  let dominantCategory: Emotion = users[0]!.eq.category;
  for (const [e, c] of counts) if (c > counts.get(dominantCategory)!) dominantCategory = e;
  return {
    averageIntensity: intensity / n,
    baselineValence: valence / n,
    averageArousal: arousal / n,
    averageDiscovery: discovery / n,
    dominantCategory,
    messageCount: messages.length,
  };
}

/** Messages a context needs before its mean discovery score becomes the reference for new ones. */
export const DISCOVERY_BASELINE_MIN = 3;

/**
 * The reference for discoveryLevel of a context's next message: the stored messages' mean discovery
 * score, once there are DISCOVERY_BASELINE_MIN of them (the baseline's averageDiscovery, without the rest).
 */
export function discoveryBaseline(messages: MessageList): number | undefined {
  return discoveryReference(discoverySum(messages, 0, messages.length), messages.length);
}

/** discoveryBaseline from the sum of the discovery scores of `n` stored messages. */
export function discoveryReference(sum: number, n: number): number | undefined {
  return n < DISCOVERY_BASELINE_MIN ? undefined : sum / n;
}

/** Σ discovery score of messages [from, to). */
export function discoverySum(messages: MessageList, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += messages.at(i)!.eq.discoveryScore;
  return sum;
}

export function scoresOf(m: StoredMessage): Scores {
  const raw = {} as EmotionVector;
  EMOTIONS.forEach((e, i) => (raw[e] = m.raw[i]!));
  const sub = {} as SubEmotionVector;
  SUB_EMOTIONS.forEach((e, i) => (sub[e] = m.sub[i]!));
  return { raw, sub, valence: m.valence, arousal: m.arousal, tokens: m.tokens };
}

/**
 * Messages the aggregate state mixes: past 24 half-lives a message weighs under 2^-24 of the newest
 * (below float32 resolution, which is all the model's scores have), so the mix costs no more for a context
 * of 1,000 messages than for one of 120 (only the token count reads them all).
 */
export const STATE_WINDOW = STATE_HALF_LIFE * 24;

/**
 * The context's current state: the user's messages (usersNewest) mixed with weights that halve every
 * STATE_HALF_LIFE messages; `tokens` counts every stored message.
 */
export function aggregateState(messages: MessageList): Scores | undefined {
  const n = messages.length;
  if (n === 0) return undefined;
  const users = usersNewest(messages, STATE_WINDOW);
  const raw = new Float64Array(EMOTIONS.length);
  const sub = new Float64Array(SUB_EMOTIONS.length);
  let valence = 0;
  let arousal = 0;
  let weights = 0;
  for (let k = users.length - 1; k >= 0; k--) { // oldest first, as the sums have always been taken
    const m = users[k]!;
    const w = Math.pow(0.5, k / STATE_HALF_LIFE);
    weights += w;
    for (let j = 0; j < raw.length; j++) raw[j]! += w * m.raw[j]!;
    for (let j = 0; j < sub.length; j++) sub[j]! += w * m.sub[j]!;
    valence += w * m.valence;
    arousal += w * m.arousal;
  }
  let tokens = 0;
  for (let i = 0; i < n; i++) tokens += messages.at(i)!.tokens;
  const rawOut = {} as EmotionVector;
  EMOTIONS.forEach((e, j) => (rawOut[e] = raw[j]! / weights));
  const subOut = {} as SubEmotionVector;
  SUB_EMOTIONS.forEach((e, j) => (subOut[e] = sub[j]! / weights));
  return { raw: rawOut, sub: subOut, valence: valence / weights, arousal: arousal / weights, tokens };
}
