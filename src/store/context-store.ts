/**
 * Context storage behind one interface, so the in-process LRU and Redis backends are interchangeable.
 * A context holds the analysed messages of one session (bounded, oldest evicted first) and expires
 * SENTIO_CONTEXT_TTL_SECONDS after its last write (sliding; reads do not extend it).
 */
import type { Eq } from '../core/eq.js';

export type Role = 'user' | 'assistant' | 'system';

export interface StoredMessage {
  /** The caller's externalId / external_id, or a generated `msg_…` id. */
  id: string;
  role: Role;
  text: string;
  /** Six probabilities in EMOTIONS order. */
  raw: number[];
  /** 28 probabilities in SUB_EMOTIONS order. */
  sub: number[];
  /** Model heads. */
  valence: number;
  arousal: number;
  tokens: number;
  /** The EQ dimensions reported when the message was analysed. */
  eq: Eq;
  /** Milliseconds since the epoch (the caller's timestamp when given, else arrival). */
  at: number;
}

/**
 * A context's messages, oldest first: a plain array, or a window onto a log that appends push to in
 * place (message-window.ts), so that an append costs the new messages rather than a copy of the history.
 */
export interface MessageList extends Iterable<StoredMessage> {
  readonly length: number;
  /** As Array.prototype.at: a negative index counts from the end. */
  at(index: number): StoredMessage | undefined;
}

export interface ContextRecord {
  id: string;
  createdAt: number;
  updatedAt: number;
  /** Messages ever appended, including those evicted from `messages`. */
  total: number;
  /** The most recent messages, oldest first. Never changed once handed out: a write makes a new list. */
  messages: MessageList;
}

/** Context messages a store has received from a shared one, by how (ContextStore.transferred). */
export interface Transferred {
  since: number;
  whole: number;
}

export interface ContextStore {
  get(contextId: string): Promise<ContextRecord | undefined>;
  /**
   * Atomically append to the context (creating it if new) and return the updated record. With `once` (a
   * request's idempotency token), an append already applied under that token is not applied again: the
   * record is returned as it stands. That matters where an append can land after its request gave up (a
   * Redis command that timed out); a store whose appends cannot (in process) ignores it.
   */
  append(contextId: string, messages: readonly StoredMessage[], once?: string): Promise<ContextRecord>;
  /** Contexts currently held (metrics). */
  size(): Promise<number>;
  /** Whether the store can be reached now (metrics): always in process; with Redis, while connected. */
  available(): Promise<boolean>;
  /**
   * Stores that keep copies of a shared store's contexts (Redis; the main thread's, for HTTP workers):
   * messages received so far, as extensions of a copy held (`since`) or in whole histories (`whole`, when
   * no held copy could be extended: a first read, or SENTIO_CONTEXT_CACHE_MESSAGES too small). Metrics.
   */
  transferred?(): Transferred;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  readonly code = 'STORE_UNAVAILABLE';
}

/** Messages a process keeps decoded across its copies of a shared store's contexts (SENTIO_CONTEXT_CACHE_MESSAGES). */
export const DEFAULT_CACHED_MESSAGES = 50_000;

/**
 * Estimated heap bytes of a stored message beside its text (scores, EQ, ids: about 1 KB measured,
 * docs/context-and-trajectory.md), and of a context beside its messages.
 */
export const MESSAGE_OVERHEAD_BYTES = 1024;
export const CONTEXT_OVERHEAD_BYTES = 512;

/** A message's estimated size: its overhead and one byte per UTF-16 unit of its text. */
export function messageSize(m: StoredMessage): number {
  return MESSAGE_OVERHEAD_BYTES + m.text.length;
}

const weights = new WeakMap<MessageList, number>();

/**
 * A copy's share of SENTIO_CONTEXT_CACHE_MESSAGES: one for the record, and each message its estimated size
 * in whole KiB (one plus one per full KiB of its text), so the bound holds in bytes as well: counted by
 * messages alone, 50,000 messages of 8 KiB each held about 450 MB per instance or worker, not 50.
 * Each list is weighed once (a copy handed out unchanged is weighed again at every read).
 */
export function cachedWeight(record: ContextRecord): number {
  const list = record.messages;
  let w = weights.get(list);
  if (w === undefined) {
    w = 1;
    for (const m of list) w += Math.floor(messageSize(m) / 1024);
    weights.set(list, w);
  }
  return w;
}

/** What a holder of a copy of a context knows of it. */
export interface CopyHeld {
  createdAt: number;
  total: number;
  length: number;
}

/**
 * How many messages were appended to a context between a copy of it and `record`, when `record`'s list is
 * that copy less some of its first messages plus those last ones (a list only grows at its end and loses
 * messages at its start); undefined when it cannot be (another incarnation of the context, or a copy too
 * far behind). The rule Redis's SINCE script applies too (redis/context-store.ts).
 */
export function appendedSince(held: CopyHeld, record: ContextRecord): number | undefined {
  const gap = record.total - held.total;
  const n = record.messages.length;
  return held.createdAt === record.createdAt && gap >= 0 && gap <= n && held.length + gap >= n ? gap : undefined;
}

export function findMessage(record: ContextRecord, messageId: string): StoredMessage | undefined {
  const messages = record.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages.at(i)!;
    if (m.id === messageId) return m;
  }
  return undefined;
}
