/** The default, in-process context store: an LRU (lru-cache) bounded in contexts, with per-entry TTL. */
import { LRUCache } from 'lru-cache';
import type { ContextRecord, ContextStore, MessageList, StoredMessage } from './context-store.js';

/**
 * The messages [start, end) of a context's log. The store only pushes onto a log, and compacting one
 * makes a new array, so what a window covers never changes after it is handed out, and an append costs
 * the new messages instead of a copy of the whole history.
 */
class MessageWindow implements MessageList {
  constructor(readonly log: StoredMessage[], readonly start: number, readonly end: number) {}

  get length(): number {
    return this.end - this.start;
  }

  at(index: number): StoredMessage | undefined {
    const i = index < 0 ? index + this.end - this.start : index;
    return i >= 0 && i < this.end - this.start ? this.log[this.start + i] : undefined;
  }

  *[Symbol.iterator](): Iterator<StoredMessage> {
    for (let i = this.start; i < this.end; i++) yield this.log[i]!;
  }
}

export interface MemoryStoreOptions {
  ttlSeconds: number;
  maxContexts: number;
  maxMessagesPerContext: number;
  /** Injectable clock (tests); milliseconds. */
  now?: () => number;
}

export class MemoryContextStore implements ContextStore {
  readonly #cache: LRUCache<string, ContextRecord>;
  readonly #maxMessages: number;
  readonly #now: () => number;

  constructor(opts: MemoryStoreOptions) {
    this.#now = opts.now ?? Date.now;
    this.#maxMessages = opts.maxMessagesPerContext;
    this.#cache = new LRUCache<string, ContextRecord>({
      max: opts.maxContexts,
      ttl: opts.ttlSeconds * 1000,
      ttlAutopurge: false,
      updateAgeOnGet: false,
      perf: { now: this.#now },
      // Read the clock at every check: lru-cache would otherwise reuse a reading for 1 ms of real time,
      // which an injected clock that jumps (tests) can outrun.
      ttlResolution: 0,
    });
  }

  async get(contextId: string): Promise<ContextRecord | undefined> {
    return this.#cache.get(contextId);
  }

  async append(contextId: string, messages: readonly StoredMessage[]): Promise<ContextRecord> {
    const now = this.#now();
    const prev = this.#cache.get(contextId);
    const before = prev?.messages as MessageWindow | undefined;
    let log: StoredMessage[] = [];
    let start = 0;
    // The cached record is its context's newest, so its window ends where its log does.
    if (before) ({ log, start } = before);
    for (const m of messages) log.push(m);
    start = Math.max(start, log.length - this.#maxMessages);
    // Evicted messages stay in the log, alive, until it is compacted: once they reach a sixteenth of the
    // window, copy the window to a new log (the old one stays as it is for windows already handed out).
    // That bounds both the memory kept for evicted messages and the copying, to 16 slots an append.
    if (start > 0 && start >= (log.length - start) >> 4) {
      log = log.slice(start);
      start = 0;
    }
    const record: ContextRecord = {
      id: contextId,
      createdAt: prev?.createdAt ?? now,
      updatedAt: now,
      total: (prev?.total ?? 0) + messages.length,
      messages: new MessageWindow(log, start, log.length),
    };
    this.#cache.set(contextId, record); // set() restarts the TTL: expiry slides with each write
    return record;
  }

  async size(): Promise<number> {
    return this.#cache.size;
  }

  async close(): Promise<void> {
    this.#cache.clear();
  }
}
