/**
 * The emotion analysis core: scores texts through the engine, derives EQ dimensions, and keeps contexts.
 * Knows nothing of HTTP or wire shapes; api/ turns its results into V1 or V2 responses.
 */
import { randomHex } from '../random-id.js';
import type { CancelSignal } from '../engine/cancel.js';
import { EngineAbortedError } from '../engine/errors.js';
import { EMOTIONS, SUB_EMOTIONS, combineScores } from './emotions.js';
import type { ModelOutputs, ScoreMapper, Scores } from './emotions.js';
import { computeEq } from './eq.js';
import type { Eq, EqParams } from './eq.js';
import { aggregateState, baselineOf, discoveryReference, discoverySum, scoresOf, trendOf } from './trajectory.js';
import type { Baseline, Trend } from './trajectory.js';
import { appendedSince, findMessage } from '../store/context-store.js';
import { PerKeyQueue } from '../store/per-key-queue.js';
import type { ContextRecord, ContextStore, MessageList, Role, StoredMessage } from '../store/context-store.js';

/** The engine as the core sees it. */
export interface ScoreSource {
  /** `tenant`: whose texts (the API key's id), for fair order between tenants in the engine's queue. */
  analyze(texts: string[], opts?: { signal?: CancelSignal | undefined; urgent?: boolean | undefined; tenant?: string | undefined }): Promise<ModelOutputs[]>;
}

export interface MessageInput {
  role: Role;
  text: string;
  externalId?: string | undefined;
  /** ISO 8601 timestamp given by the caller. */
  timestamp?: string | undefined;
}

export interface AnalysisOptions {
  eq: EqParams;
  /** 0..1: weight of the context's running state in the reported scores (V1 smoothing). */
  smoothing: number;
}

export interface Analysis {
  text: string;
  scores: Scores;
  eq: Eq;
}

export interface ContextAnalysis extends Analysis {
  trend: Trend;
}

export interface ContextState {
  system: Analysis;
  trend: Trend;
  baseline: Baseline;
}

export class EmotionService {
  /**
   * Each stored history's state, computed once. Stores never change a record's message list once handed
   * out (a write makes a new one), so a state read of a context unchanged since the last read makes no
   * pass over it.
   */
  readonly #states = new WeakMap<MessageList, ContextState>();
  /**
   * Σ discovery score of each stored history, whose mean is the reference for a new message's
   * discoveryLevel. Summing a history of 1,000 messages at every analysis cost more than the rest of the
   * request, so each append derives its history's sum from the one it read (#seedDiscoverySum).
   */
  readonly #discoverySums = new WeakMap<MessageList, number>();
  /** Context analyses in the order they arrived, per context (see analyzeContext). */
  readonly #arrivals = new PerKeyQueue();

  constructor(
    private readonly engine: ScoreSource,
    private readonly mapper: ScoreMapper,
    private readonly store: ContextStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Scores for each text, in order; `urgent` when the caller's next step waits on them (engine.ts). */
  async score(texts: string[], signal?: CancelSignal, urgent = false): Promise<Scores[]> {
    const outputs = await this.engine.analyze(texts, { signal, urgent });
    return outputs.map((o) => this.mapper.toScores(o));
  }

  /** The messages taken together (one entry): token-weighted mean of their scores. */
  async analyzeStateless(messages: readonly MessageInput[], opts: AnalysisOptions, signal?: CancelSignal): Promise<Analysis> {
    const scores = await this.score(messages.map((m) => m.text), signal);
    const combined = combineMessages(scores);
    return { text: joinTexts(messages), scores: combined, eq: computeEq(combined, opts.eq) };
  }

  async analyzeBatch(messages: readonly MessageInput[], opts: AnalysisOptions, signal?: CancelSignal): Promise<Analysis[]> {
    const scores = await this.score(messages.map((m) => m.text), signal);
    return scores.map((s, i) => ({ text: messages[i]!.text, scores: s, eq: computeEq(s, opts.eq) }));
  }

  /**
   * Analyse messages within a context: each is stored (for lookup and the trajectory); the reply
   * describes them taken together, smoothed towards the context's state when asked.
   */
  async analyzeContext(
    contextId: string, messages: readonly MessageInput[], opts: AnalysisOptions, signal?: CancelSignal, once?: string,
  ): Promise<ContextAnalysis> {
    // Scoring and the read start at once, as before. The append waits until the requests to this context
    // that arrived before this one have handed theirs to the store (or failed): the store keeps the order
    // it is handed (the Redis store queues per context), so a short request cannot overtake a long one.
    // Only the hand-over waits, not the store's answer, so a stalled store bounds each request alone.
    const scoring = this.score(messages.map((m) => m.text), signal);
    const reading = this.store.get(contextId);
    scoring.catch(noop); // both awaited in this request's turn; until then a rejection is not unhandled
    reading.catch(noop);
    const turn = await this.#arrivals.run(contextId, async () => {
      const [scores, before] = await Promise.all([scoring, reading]);
      const prior = before?.messages ?? [];
      const priorSum = this.#discoverySum(prior);
      const now = this.now();
      // Each message is read against the history before it, this request's earlier messages included.
      let sum = priorSum;
      const stored = messages.map((m, i) => {
        const eq = computeEq(scores[i]!, opts.eq, discoveryReference(sum, prior.length + i));
        sum += eq.discoveryScore;
        return toStored(m, scores[i]!, eq, now);
      });
      if (signal?.aborted) throw new EngineAbortedError('request aborted'); // nothing stored for a gone client
      const appending = this.store.append(contextId, stored, once);
      appending.catch(noop); // awaited below, once the turn has passed to the next request
      return { scores, before, prior, priorSum, appending };
    });
    const { scores, before, prior, priorSum } = turn;
    const record = await turn.appending;
    this.#seedDiscoverySum(before, priorSum, record);
    let combined = combineMessages(scores);
    const state = opts.smoothing > 0 ? aggregateState(prior) : undefined;
    if (state) combined = blend(combined, state, opts.smoothing);
    return {
      text: joinTexts(messages),
      scores: combined,
      eq: computeEq(combined, opts.eq, discoveryReference(priorSum, prior.length)),
      trend: trendOf(record.messages),
    };
  }

  #discoverySum(messages: MessageList): number {
    if (messages.length === 0) return 0;
    let sum = this.#discoverySums.get(messages);
    if (sum === undefined) this.#discoverySums.set(messages, (sum = discoverySum(messages, 0, messages.length)));
    return sum;
  }

  /**
   * The sum for `after` from the one for `before`: `after` is `before` less its first few messages plus
   * the messages appended since (this request's, and any that other requests appended in between).
   */
  #seedDiscoverySum(before: ContextRecord | undefined, priorSum: number, after: ContextRecord): void {
    const prior = before?.messages ?? [];
    const held = before
      ? { createdAt: before.createdAt, total: before.total, length: prior.length }
      : { createdAt: after.createdAt, total: 0, length: 0 };
    const appended = appendedSince(held, after);
    if (appended === undefined) return; // the context began again, or more was appended than it keeps
    const list = after.messages;
    const evicted = prior.length + appended - list.length;
    this.#discoverySums.set(list, priorSum - discoverySum(prior, 0, evicted) + discoverySum(list, list.length - appended, list.length));
  }

  async getState(contextId: string): Promise<ContextState> {
    const record = await this.store.get(contextId);
    if (!record) throw contextNotFound(contextId);
    const known = this.#states.get(record.messages);
    if (known) return known;
    const state = aggregateState(record.messages);
    const baseline = baselineOf(record.messages);
    if (!state || !baseline) throw contextNotFound(contextId);
    const out = { system: { text: '', scores: state, eq: computeEq(state) }, trend: trendOf(record.messages), baseline };
    this.#states.set(record.messages, out);
    return out;
  }

  async getMessage(contextId: string, messageId: string): Promise<Analysis> {
    const record = await this.store.get(contextId);
    if (!record) throw contextNotFound(contextId);
    const m = findMessage(record, messageId);
    if (!m) throw new MessageNotFoundError(`no message "${messageId}" in context "${contextId}"`);
    return { text: m.text, scores: scoresOf(m), eq: m.eq };
  }

  /** Append already-scored chat turns to a context (chat with context_id). */
  async appendScored(contextId: string, items: ReadonlyArray<{ input: MessageInput; scores: Scores; eq: Eq }>): Promise<Trend> {
    const now = this.now();
    const record = await this.store.append(contextId, items.map((it) => toStored(it.input, it.scores, it.eq, now)));
    return trendOf(record.messages);
  }

  /** Stored messages of a context, or undefined when unknown/expired. */
  async history(contextId: string): Promise<MessageList | undefined> {
    return (await this.store.get(contextId))?.messages;
  }
}

function contextNotFound(contextId: string): ContextNotFoundError {
  return new ContextNotFoundError(`context "${contextId}" does not exist or has expired`);
}

/** A context id with no stored context (never written, or expired); the API answers 404 context_not_found. */
export class ContextNotFoundError extends Error {
  override readonly name = 'ContextNotFoundError';
  readonly code = 'CONTEXT_NOT_FOUND';
}

/** A message id the context does not hold; the API answers 404 message_not_found. */
export class MessageNotFoundError extends Error {
  override readonly name = 'MessageNotFoundError';
  readonly code = 'MESSAGE_NOT_FOUND';
}

/**
 * Several messages taken together: the token-weighted mean of the texts that have words. A text with no
 * word piece (empty, or only characters the tokenizer drops) is the model reading [CLS] alone: its
 * scores say nothing about the text, so it does not dilute the others' (unless no text has words).
 * Its token still counts in usage.
 */
function combineMessages(scores: readonly Scores[]): Scores {
  const worded = scores.filter((s) => s.tokens > 1);
  if (worded.length === scores.length || worded.length === 0) return combineScores(scores);
  return { ...combineScores(worded), tokens: scores.reduce((n, s) => n + s.tokens, 0) };
}

/** The entry's text, as it is stored: lone surrogates as U+FFFD, which strict JSON clients accept back. */
function joinTexts(messages: readonly MessageInput[]): string {
  return (messages.length === 1 ? messages[0]!.text : messages.map((m) => m.text).join('\n')).toWellFormed();
}

declare global {
  interface String {
    /** ES2024, in Node since 20; TypeScript's ES2022 library does not declare them. */
    toWellFormed(): string;
    isWellFormed(): boolean;
  }
}

function toStored(m: MessageInput, s: Scores, eq: Eq, now: number): StoredMessage {
  const at = m.timestamp ? Date.parse(m.timestamp) : now;
  return {
    id: m.externalId ?? `msg_${randomHex(8)}`,
    role: m.role,
    // Lone surrogates become U+FFFD here, as UTF-8 storage (Redis) would make them: both stores give back the same text.
    text: m.text.toWellFormed(),
    raw: EMOTIONS.map((e) => s.raw[e]),
    sub: SUB_EMOTIONS.map((e) => s.sub[e]),
    valence: s.valence,
    arousal: s.arousal,
    tokens: s.tokens,
    eq,
    at: Number.isFinite(at) ? at : now,
  };
}

/** (1 − α)·current + α·state, for every head; tokens stay the current message's. */
export function blend(current: Scores, state: Scores, alpha: number): Scores {
  const mixed = combineScores([
    { ...current, tokens: 1 - alpha },
    { ...state, tokens: alpha },
  ]);
  return { ...mixed, tokens: current.tokens };
}

function noop(): void {}
