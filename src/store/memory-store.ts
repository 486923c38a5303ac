/**
 * The default, in-process context store: an LRU (lru-cache) bounded in contexts and in estimated bytes,
 * with per-entry TTL.
 */
import { LRUCache } from 'lru-cache';
import { CONTEXT_OVERHEAD_BYTES, messageSize } from './context-store.js';
import type { ContextRecord, ContextStore, MessageList, StoredMessage } from './context-store.js';
import { extendWindow } from './message-window.js';

export interface MemoryStoreOptions {
  ttlSeconds: number;
  maxContexts: number;
  maxMessagesPerContext: number;
  /**
   * Estimated bytes of every context together; past it the least recently used go. Must hold one full
   * context (the config checks it). Default 512 MiB.
   */
  maxBytes?: number;
  /** Injectable clock (tests); milliseconds. */
  now?: () => number;
}

const DEFAULT_MAX_BYTES = 512 * 1_048_576;

function sizeOf(messages: MessageList): number {
  let size = CONTEXT_OVERHEAD_BYTES;
  for (const m of messages) size += messageSize(m);
  return size;
}

export class MemoryContextStore implements ContextStore {
  readonly #cache: LRUCache<string, ContextRecord>;
  readonly #maxMessages: number;
  readonly #now: () => number;
  /** Each record's estimated size, carried from append to append (summing a history per append costs it whole). */
  readonly #sizes = new WeakMap<MessageList, number>();

  constructor(opts: MemoryStoreOptions) {
    this.#now = opts.now ?? Date.now;
    this.#maxMessages = opts.maxMessagesPerContext;
    this.#cache = new LRUCache<string, ContextRecord>({
      max: opts.maxContexts,
      maxSize: opts.maxBytes ?? DEFAULT_MAX_BYTES,
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
    const size = this.#sizeAfter(prev?.messages, messages, record.messages);
    this.#sizes.set(record.messages, size);
    this.#cache.set(contextId, record, { size }); // set() restarts the TTL: expiry slides with each write
    return record;
  }

  /** The size of `after`: `before`'s, plus what was added, less what the window let go of. */
  #sizeAfter(before: MessageList | undefined, added: readonly StoredMessage[], after: MessageList): number {
    const held = before?.length ?? 0;
    let size = before ? (this.#sizes.get(before) ?? sizeOf(before)) : CONTEXT_OVERHEAD_BYTES;
    for (const m of added) size += messageSize(m);
    const evicted = held + added.length - after.length;
    for (let i = 0; i < evicted; i++) size -= messageSize(i < held ? before!.at(i)! : added[i - held]!);
    return size;
  }

  async size(): Promise<number> {
    return this.#cache.size;
  }

  async available(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.#cache.clear();
  }
}
