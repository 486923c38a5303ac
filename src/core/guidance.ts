/**
 * The emotion-aware system instruction that Sentio adds to a chat before calling the LLM: the user's
 * current emotional state, how it has moved over the conversation, and the response strategy of the
 * conversation mode. It never quotes the user's text. docs/chat.md ("Guidance") shows an example.
 */
import type { Eq } from './eq.js';
import type { ConversationMode } from './conversation-mode.js';
import type { Trend } from './trajectory.js';

export interface GuidanceInput {
  eq: Eq;
  mode: ConversationMode;
  /** The user's trajectory in the context, when the chat has one. */
  trend?: Trend | undefined;
}

const TREND_WORDS: Record<Trend['direction'], string> = {
  improving: 'has been improving',
  declining: 'has been getting worse',
  stable: 'has been steady',
  volatile: 'has been swinging up and down',
};

function valenceWord(v: number): string {
  if (v <= -0.5) return 'very negative';
  if (v <= -0.15) return 'negative';
  if (v < 0.15) return 'neutral';
  if (v < 0.5) return 'positive';
  return 'very positive';
}

function arousalWord(a: number): string {
  return a >= 0.66 ? 'high' : a >= 0.33 ? 'moderate' : 'low';
}

/** Categories that fit a crisis; the model reads some crisis messages as another ("I want to die" as love). */
const DISTRESS_CATEGORIES: ReadonlySet<string> = new Set(['sadness', 'fear', 'anger']);

/** The instruction text (plain prose, a few lines). */
export function guidanceText(g: GuidanceInput): string {
  const { eq, mode } = g;
  // A crisis is found by rules on the words; a category or a tone that contradicts it would mislead the LLM.
  const crisis = mode.mode === 'crisis_intervention';
  const state = crisis && !DISTRESS_CATEGORIES.has(eq.category)
    ? 'distress (their words signal a possible crisis)'
    : `${eq.intensityLevel} ${eq.category}`;
  const tone = valenceWord(crisis ? Math.min(eq.valence, 0) : eq.valence);
  const lines = [
    'Emotional context for your next reply, from Sentio\'s analysis of the user\'s latest message. Use it to shape '
      + 'your reply; do not mention it, quote it, or label the user\'s emotions unless they ask.',
    `- Current state: ${state}; tone ${tone}, energy ${arousalWord(eq.arousal)}.`,
  ];
  // A mood read as improving since a crisis message ("ok" reads as joy) is no sign the risk has passed, and
  // said beside the crisis approach it can soften the reply (a chat review, 2026-11-28).
  if (g.trend && !(crisis && g.trend.direction === 'improving')) lines.push(`- Over this conversation their mood ${TREND_WORDS[g.trend.direction]}.`);
  lines.push(`- Conversation mode: ${mode.mode.replace(/_/g, ' ')}.`);
  lines.push(`- Tone: ${mode.responseStrategy.tone}.`);
  lines.push(`- Approach: ${mode.responseStrategy.approach}`);
  if (crisis) {
    lines.push(
      '- Safety first: the user may be at risk of suicide or self-harm (or someone they know may be). Their safety comes '
        + 'before any other goal of this conversation. Never provide information that could be used for self-harm.',
    );
  }
  return lines.join('\n');
}

/**
 * Messages with the instruction inserted as a system message after the caller's own leading system
 * messages (so the caller's system prompt stays first), or first when there is none.
 */
export function withGuidance<M extends { role: string }>(messages: readonly M[], text: string): Array<M | { role: 'system'; content: string }> {
  let at = 0;
  while (at < messages.length && messages[at]!.role === 'system') at++;
  return [...messages.slice(0, at), { role: 'system', content: text }, ...messages.slice(at)];
}
