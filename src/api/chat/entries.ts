/**
 * The assistant's emotion entry in a chat response (the user's is the emotion endpoints' own entry):
 * V2 category, intensity, valence, arousal and raw; V1 shape labelled `calm` when the reply carries no
 * marked emotion (rule below, docs/chat.md).
 */
import { EMOTIONS, round4 } from '../../core/emotions.js';
import type { Emotion, Scores } from '../../core/emotions.js';
import type { Eq } from '../../core/eq.js';
import { entryFor, v1Entry, v1Label, v2Brief } from '../entries.js';
import type { EntryOptions, EntryShape } from '../entries.js';

export interface Scored {
  text: string;
  scores: Scores;
  eq: Eq;
}

/** Sub-emotion `neutral` at or above this makes a reply calm whatever its intensity. */
const CALM_NEUTRAL = 0.5;
/** A second emotion at or above this share of `raw` joins the V1 label ("moderate joy and love"). */
const SECOND_EMOTION = 0.25;

/** The V1 calm rule: intensity level minimal or subtle (intensity < 0.35), or the neutral sub-emotion at 0.5 or more. */
function isCalm(a: Scored): boolean {
  return a.eq.intensityLevel === 'minimal' || a.eq.intensityLevel === 'subtle' || round4(a.scores.sub.neutral) >= CALM_NEUTRAL; // as shown
}

export function assistantEntry(shape: EntryShape, a: Scored, opts: EntryOptions): Record<string, unknown> {
  if (shape === 'v2') {
    const full = entryFor('v2', a, opts);
    const entry: Record<string, unknown> = { ...v2Brief(a.eq), raw: full['raw'] };
    if (opts.includeSubEmotions) entry['subEmotions'] = full['subEmotions'];
    return entry;
  }
  const entry = v1Entry(a, opts);
  if (isCalm(a)) return { ...entry, text: 'calm', category: 'calm' };
  const second = secondEmotion(a.scores.raw, a.eq.category);
  return second ? { ...entry, text: `${v1Label(a.eq)} and ${second}` } : { ...entry, text: v1Label(a.eq) };
}

function secondEmotion(raw: Record<Emotion, number>, first: Emotion): Emotion | undefined {
  let best: Emotion | undefined;
  for (const e of EMOTIONS) {
    if (e === first || raw[e] < SECOND_EMOTION) continue;
    if (!best || raw[e] > raw[best]) best = e;
  }
  return best;
}
