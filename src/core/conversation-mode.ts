/**
 * conversationMode (V2 chat): how the assistant should respond to the user's latest message, decided from
 * its emotions (the model's scores and EQ dimensions), the context's trajectory, and the text itself.
 * The modes, the formulas and their thresholds are documented in docs/conversation-modes.md; keep the two
 * in step.
 *
 * Crisis comes first and is not a score among others: a crisis signal in the latest user message, or in
 * one of the few before it, selects crisis_intervention whatever the other modes would say.
 */
import { EMOTIONS } from './emotions.js';
import type { Scores } from './emotions.js';
import type { Eq } from './eq.js';
import type { Trend } from './trajectory.js';
import { crisisFrom, normalise, readCrisis } from './crisis.js';
import type { Affect, CrisisReading, CrisisSignal } from './crisis.js';

export const CONVERSATION_MODES = [
  'crisis_intervention',
  'emotional_support',
  'de_escalation',
  'celebratory',
  'exploratory',
  'informational',
] as const;
export type ConversationModeName = (typeof CONVERSATION_MODES)[number];

export interface ResponseStrategy {
  tone: string;
  approach: string;
}

export interface ConversationMode {
  mode: ConversationModeName;
  /** 0..1. */
  confidence: number;
  responseStrategy: ResponseStrategy;
  /** Set when mode is crisis_intervention. */
  crisis?: CrisisSignal;
}

export interface ModeInput {
  /** The latest user message. */
  text: string;
  scores: Scores;
  eq: Eq;
  /**
   * Earlier user messages, most recent first (the request's history, then the context's), each with the
   * emotion model's reading of it when known, which opens the crisis rules' third tier as it did then.
   */
  earlierUser: readonly EarlierMessage[];
  /** The trajectory of the user's messages in the context before this one; absent without context. */
  trend?: Trend | undefined;
  /** Mean valence of the user's earlier messages in the context. */
  baselineValence?: number | undefined;
  /** readText(text), when the caller has it already (chat computes it while the engine scores the text). */
  reading?: TextReading | undefined;
}

export interface EarlierMessage {
  text: string;
  /** The emotion model's scores of it, when known: they open the crisis rules' third tier as they did then. */
  scores?: Scores | undefined;
  eq?: Eq | undefined;
  /** readText(text), when the caller has it already. */
  reading?: TextReading | undefined;
}

/** How many earlier user messages are checked for a crisis signal. */
export const CRISIS_LOOKBACK = 3;
/** Confidence kept by a crisis signal for each user message said after it. */
const CRISIS_DECAY = 0.9;
/** Softmax temperature of the mode scores: lower makes confidence sharper. */
const TEMPERATURE = 0.12;

const CRISIS_LINES = 'for example 988 (call or text) in the US and Canada, Samaritans on 116 123 in the UK and Ireland, or the local emergency number';

export const STRATEGIES: Readonly<Record<ConversationModeName, ResponseStrategy>> = {
  crisis_intervention: {
    tone: 'calm, warm, non-judgemental and direct',
    approach:
      'Take what they said seriously and stay with them. Ask directly whether they are safe right now. Encourage them '
      + `to reach a person now: someone they trust, a crisis line (${CRISIS_LINES}), or emergency services if they are `
      + 'in immediate danger. Do not give information about means, do not lecture, and do not end the conversation.',
  },
  emotional_support: {
    tone: 'warm, gentle and patient',
    approach:
      'Acknowledge and validate the feeling before anything else; reflect back what they shared; ask one open question; '
      + 'offer practical suggestions only if they want them.',
  },
  de_escalation: {
    tone: 'calm, respectful and steady',
    approach:
      'Acknowledge the frustration without defensiveness or judgement; do not argue or match the intensity; keep it '
      + 'short and focus on what can be done next.',
  },
  celebratory: {
    tone: 'warm, upbeat and enthusiastic',
    approach: 'Share in the good news and reflect their excitement; ask what it means to them or what comes next.',
  },
  exploratory: {
    tone: 'curious, engaged and encouraging',
    approach: 'Explore the question with them: offer interesting angles and concrete examples, and invite follow-up questions.',
  },
  informational: {
    tone: 'clear, friendly and concise',
    approach: 'Answer the request directly and accurately, structured for easy reading; offer more detail if it would help.',
  },
};

const SELF_HARM_APPROACH =
  'Respond without judgement or alarm and take it seriously. Ask gently whether they are safe right now and whether '
  + `they have hurt themselves in a way that needs medical care. Encourage them to talk to someone they trust or a crisis line (${CRISIS_LINES}), `
  + 'or emergency services if they are in danger. Do not describe methods, and do not end the conversation.';
const THIRD_PARTY_APPROACH =
  'Help the user help the person at risk: take it seriously, encourage them not to leave the person alone if they are in '
  + `immediate danger, to call emergency services, and to contact a crisis line together (${CRISIS_LINES}). `
  + 'Acknowledge how hard this is for the user too.';

/** Text cues (on the normalised text); each list is documented in docs/conversation-modes.md. */
const CUES = {
  distress: /\b(?:sad|sadness|lonely|alone|depressed|depressing|anxious|anxiety|scared|afraid|terrified|worried|worry|grief|grieving|died|passed away|miss (?:him|her|them|my)|heartbroken|crying|cry|cried|hurts|stressed|overwhelmed|hopeless|miserable|devastated|exhausted|panic|nervous|lost my|broke up|breakup|empty|numb)\b/,
  anger: /\b(?:furious|angry|anger|pissed|hate|livid|fed up|sick of|ridiculous|unacceptable|outraged|outrageous|annoyed|annoying|frustrated|frustrating|mad at|so mad|infuriating|rage|scam|worst|useless|incompetent)\b/,
  celebration: /\b(?:got the job|got engaged|engaged|married|promoted|promotion|passed (?:my|the) (?:exam|test|driving)|won|graduated|accepted|new baby|pregnant|so happy|so excited|excited|amazing news|great news|good news|best day|best (?:\w+ )?ever|finally did|we did it|i did it|yay|woohoo|hooray|congrats|celebrate|celebrating|thrilled|proud)\b/,
  curiosity: /\b(?:why|how (?:do|does|did|come|can|would|could)|what if|wonder|wondering|curious|fascinat\w*|tell me more|interesting|explore|imagine|is it true|how is it that)\b/,
  task: /\b(?:help me|can you|could you|please|write|draft|fix|convert|calculate|translate|summari[sz]e|list|explain|code|email|what is the|when is|where is|how many|how much|how to|how do i|recipe|schedule|define)\b/,
};

/** Distress in the words themselves, for when the emotion model reads a grim sentence as flat. */
const DISTRESS_WORDS = /\b(?:pain|painful|suffering|suffer|hurt|hurts|hurting|tired|exhausted|hopeless|worthless|alone|lonely|empty|numb|miserable|hate my life|hate myself|cannot take|cannot do this|nobody|no one|sad|depressed|broken|trapped|done with|give up|relief|escape|goodbye|tonight|crying|dark)\b/;

/** What the words of a message say, whatever the emotion model reads in them: no scores needed. */
export interface TextReading {
  crisis: CrisisReading;
  /** DISTRESS_WORDS occur: opens the affect-gated crisis rules even when the model reads the text as flat. */
  distressWords: boolean;
  cues: Record<keyof typeof CUES, boolean>;
  question: boolean;
}

/**
 * Reads texts that take every path of the crisis reading, each twice (V8 compiles a function or a pattern on
 * first use and a pattern again on the next): the English rules; the other languages' rules, which only a
 * text that no English rule reads reaches, and all of them only when the one that matches is set aside (a
 * fan's joke); and the learned signal, which only a text that no rule reads reaches. The server does this at
 * start (app.ts), so that no chat turn pays for it.
 */
export function warmUpReading(): void {
  for (const text of ['warm-up: i cannot go on, the pills and the bridge, goodbye', 'si el Madrid pierde otra vez me voy a matar jaja',
    'warm-up: a long day, the bus was late']) {
    readText(text);
    readText(text);
  }
}

export function readText(text: string): TextReading {
  const t = normalise(text);
  return {
    crisis: readCrisis(text, t),
    distressWords: DISTRESS_WORDS.test(t),
    cues: {
      distress: CUES.distress.test(t),
      anger: CUES.anger.test(t),
      celebration: CUES.celebration.test(t),
      curiosity: CUES.curiosity.test(t),
      task: CUES.task.test(t),
    },
    question: /\?\s*$/.test(t),
  };
}

/**
 * Whether the text reads as distressed, which enables the affect-gated crisis rules: the emotion model
 * says so, or the words do. Erring towards "yes" is deliberate (see crisis.ts).
 */
function affectOf(reading: TextReading, scores: Scores, eq: Eq): Affect {
  const neg = scores.raw.sadness + scores.raw.fear + scores.raw.anger;
  const pos = scores.raw.joy + scores.raw.love;
  const model = neg >= 0.45 || neg > pos + 0.1 || eq.valence <= -0.2;
  // A grim statement of fact ("I have a rope ready") reads flat: no emotion stands out and joy and love
  // do not dominate. Flat counts as distressed here; only a clearly positive reading closes the gate.
  const flat = Math.max(...EMOTIONS.map((e) => scores.raw[e])) < 0.4 && pos < 0.5;
  return { negative: model || flat || reading.distressWords };
}

/** Whether a text's crisis signal depends on the emotion model's reading of it (a third-tier phrase only). */
export function crisisNeedsAffect(reading: TextReading): boolean {
  return reading.crisis.direct === undefined && reading.crisis.contextual !== undefined;
}

/** The crisis signal that applies to this turn: the latest message's, or a recent one's, decayed. */
function crisisOf(input: Pick<ModeInput, 'scores' | 'eq' | 'earlierUser'>, reading: TextReading): CrisisSignal | undefined {
  const now = crisisFrom(reading.crisis, affectOf(reading, input.scores, input.eq));
  if (now) return now;
  let best: CrisisSignal | undefined;
  input.earlierUser.slice(0, CRISIS_LOOKBACK).forEach((m, i) => {
    // One reading per message (the learned signal is the costly part of it), for the affect and the rules.
    const r = m.reading ?? readText(m.text);
    const s = crisisFrom(r.crisis, m.scores && m.eq ? affectOf(r, m.scores, m.eq) : undefined);
    if (!s) return;
    const confidence = s.confidence * Math.pow(CRISIS_DECAY, i + 1);
    if (!best || confidence > best.confidence) best = { ...s, confidence, rule: `${s.rule}@${i + 1}` };
  });
  return best;
}

/** The score of every non-crisis mode, each roughly in [0, 1]. */
function modeScores(input: ModeInput, reading: TextReading): Record<Exclude<ConversationModeName, 'crisis_intervention'>, number> {
  const { scores: s, eq } = input;
  const cue = (name: keyof typeof CUES) => (reading.cues[name] ? 1 : 0);
  const question = reading.question ? 1 : 0;
  const declining = input.trend?.direction === 'declining' ? 1 : 0;
  const improving = input.trend?.direction === 'improving' ? 1 : 0;
  const lowBaseline = input.baselineValence !== undefined && input.baselineValence < -0.2 ? 1 : 0;
  const neg = Math.max(0, -eq.valence);
  const pos = Math.max(0, eq.valence);
  const angerCue = cue('anger');
  return {
    emotional_support:
      0.45 * (s.raw.sadness + s.raw.fear) + 0.25 * neg + 0.3 * cue('distress') + 0.1 * declining + 0.1 * lowBaseline,
    de_escalation: 0.5 * s.raw.anger + 0.35 * angerCue + 0.15 * eq.arousal * (s.raw.anger >= 0.3 || angerCue ? 1 : 0),
    celebratory: 0.3 * (s.raw.joy + s.raw.love) * eq.intensity + 0.2 * pos + 0.4 * cue('celebration') + 0.05 * improving,
    exploratory: 0.2 * eq.wonderIndex + 0.1 * s.raw.surprise + 0.35 * cue('curiosity') + 0.1 * question,
    informational: 0.3 + 0.15 * s.sub.neutral + 0.15 * cue('task') + 0.05 * question,
  };
}

export function decideMode(input: ModeInput): ConversationMode {
  const reading = input.reading ?? readText(input.text);
  const crisis = crisisOf(input, reading);
  if (crisis) {
    const base = STRATEGIES.crisis_intervention;
    const approach = crisis.kind === 'self_harm' ? SELF_HARM_APPROACH : crisis.kind === 'third_party' ? THIRD_PARTY_APPROACH : base.approach;
    return { mode: 'crisis_intervention', confidence: round2(crisis.confidence), responseStrategy: { tone: base.tone, approach }, crisis };
  }
  const scores = modeScores(input, reading);
  const entries = Object.entries(scores) as Array<[Exclude<ConversationModeName, 'crisis_intervention'>, number]>;
  let best = entries[0]!;
  for (const e of entries) if (e[1] > best[1]) best = e;
  const z = entries.reduce((acc, [, v]) => acc + Math.exp((v - best[1]) / TEMPERATURE), 0);
  return { mode: best[0], confidence: round2(1 / z), responseStrategy: STRATEGIES[best[0]] };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
