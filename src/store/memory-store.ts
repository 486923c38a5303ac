/** The default, in-process context store: an LRU (lru-cache) bounded in contexts, with per-entry TTL. */
import { LRUCache } from 'lru-cache';
import type { ContextRecord, ContextStore, StoredMessage } from './context-store.js';
import { extendWindow } from './message-window.js';

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
    const record: ContextRecord = {
      id: contextId,
      createdAt: prev?.createdAt ?? now,
      updatedAt: now,
      total: (prev?.total ?? 0) + messages.length,
      messages: extendWindow(prev?.messages, messages, this.#maxMessages),
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
