/** Emotion entries in their V1 and V2 wire shapes (service-interface.md, "Emotion entry"). */
import { round4 } from '../core/emotions.js';
import type { EmotionVector, Scores, SubEmotionVector } from '../core/emotions.js';
import type { Eq, IntensityLevel } from '../core/eq.js';
import type { Analysis } from '../core/emotion-service.js';

export type EntryShape = 'v1' | 'v2';

/** V1 labels are "<intensity word> <category>"; the words follow the V2 intensity levels. */
const V1_INTENSITY_WORDS: Record<IntensityLevel, string> = {
  critical: 'extreme',
  high: 'strong',
  moderate: 'moderate',
  subtle: 'mild',
  minimal: 'slight',
};

export interface EntryOptions {
  includeSubEmotions: boolean;
}

function rawOf(raw: EmotionVector): EmotionVector {
  return { fear: raw.fear, sadness: raw.sadness, joy: raw.joy, anger: raw.anger, love: raw.love, surprise: raw.surprise };
}

function subOf(sub: SubEmotionVector): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(sub)) out[k] = round4(v);
  return out;
}

export function v1Label(eq: Eq): string {
  return `${V1_INTENSITY_WORDS[eq.intensityLevel]} ${eq.category}`;
}

export function v1Entry(a: { scores: Scores; eq: Eq }, opts?: EntryOptions): Record<string, unknown> {
  const entry: Record<string, unknown> = { text: v1Label(a.eq), category: a.eq.category, raw: rawOf(a.scores.raw) };
  if (opts?.includeSubEmotions) entry['subEmotions'] = subOf(a.scores.sub);
  return entry;
}

export function v2Entry(a: Analysis, opts?: EntryOptions): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    category: a.eq.category,
    text: a.text,
    raw: rawOf(a.scores.raw),
    intensity: round4(a.eq.intensity),
    intensityLevel: a.eq.intensityLevel,
    valence: round4(a.eq.valence),
    arousal: round4(a.eq.arousal),
    complexity: a.eq.complexity,
    wonderIndex: round4(a.eq.wonderIndex),
    discoveryLevel: a.eq.discoveryLevel,
  };
  if (opts?.includeSubEmotions) entry['subEmotions'] = subOf(a.scores.sub);
  return entry;
}

/** V2 batch entries and the V2 stored-state `system` entry carry four fields. */
export function v2Brief(eq: Eq): Record<string, unknown> {
  return { category: eq.category, intensity: round4(eq.intensity), valence: round4(eq.valence), arousal: round4(eq.arousal) };
}

export function entryFor(shape: EntryShape, a: Analysis, opts?: EntryOptions): Record<string, unknown> {
  return shape === 'v1' ? v1Entry(a, opts) : v2Entry(a, opts);
}

/** A trend as the response shows it: the valence trend to four decimals, as its direction was read. */
export function trendOut(t: { direction: string; valenceTrend: number }): { direction: string; valenceTrend: number } {
  return { direction: t.direction, valenceTrend: round4(t.valenceTrend) };
}
