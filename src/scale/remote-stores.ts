/**
 * In-process stores shared by HTTP worker threads when there is no Redis: the main thread holds the one
 * set of memory stores and serves them over each worker's port, so every worker sees the same contexts
 * and idempotency records (rate-limit buckets live in shared memory: shared-rate-limit.ts). Each call is
 * one message round trip to the main thread. A worker keeps the context records it has read and tells the
 * main thread which copy it holds; a read or an append then carries only the messages appended since
 * (none for an unchanged context), as with Redis, instead of a copy of the whole history. With Redis the
 * workers talk to Redis themselves and none of this is used.
 */
import { LRUCache } from 'lru-cache';
import type { ClaimResult, IdempotencyStore, StoredReply } from '../store/idempotency-store.js';
import type { BucketResult, RateLimitStore } from '../store/rate-limit-store.js';
import { appendedSince, cachedWeight } from '../store/context-store.js';
import { PerKeyQueue } from '../store/per-key-queue.js';
import type { ContextRecord, ContextStore, CopyHeld, StoredMessage, Transferred } from '../store/context-store.js';
import type { StateStores } from '../store/factory.js';
import { extendWindow } from '../store/message-window.js';
import type { RpcClient, RpcHandler } from './rpc.js';

/** The main thread's answer to a read of a context the worker already holds at the same version. */
const UNCHANGED = 'unchanged';

/** What a worker tells the main thread of the copy of a context it holds. */
interface Held extends CopyHeld {
  updatedAt: number;
}

/**
 * A record as it crosses to a worker: the messages appended since the copy the worker holds (`since`,
 * with the list's `length`), or, when that copy cannot rebuild it, every message (`messages`, an array:
 * structured clone copies arrays, not the store's windows).
 */
type WireRecord = Omit<ContextRecord, 'messages'> & ({ messages: StoredMessage[] } | { since: StoredMessage[]; length: number });

function heldOf(r: ContextRecord | undefined): Held | null {
  return r ? { createdAt: r.createdAt, updatedAt: r.updatedAt, total: r.total, length: r.messages.length } : null;
}

/** Main thread: `r` for a worker holding `held` (see Redis's SINCE, src/store/redis/context-store.ts). */
function toWire(r: ContextRecord, held: Held | null): WireRecord {
  const meta = { id: r.id, createdAt: r.createdAt, updatedAt: r.updatedAt, total: r.total };
  const n = r.messages.length;
  const gap = held ? appendedSince(held, r) : undefined;
  if (gap !== undefined) {
    const since: StoredMessage[] = [];
    for (let i = n - gap; i < n; i++) since.push(r.messages.at(i)!);
    return { ...meta, since, length: n };
  }
  return { ...meta, messages: [...r.messages] };
}

/** Worker: the record from the main thread's answer and the copy that was named in the call. */
function fromWire(w: WireRecord, held: ContextRecord | undefined, transferred: Transferred): ContextRecord {
  if ('messages' in w) {
    transferred.whole += w.messages.length;
    return w;
  }
  transferred.since += w.since.length;
  if (!held) throw new Error('a context tail for a copy this worker does not hold. This is a bug.');
  const { since, length, ...meta } = w;
  return { ...meta, messages: extendWindow(held.messages, since, length) };
}

/** Main thread: serve `stores` to workers. */
export function storeHandlers(stores: StateStores): Record<string, RpcHandler> {
  const value = (v: unknown) => ({ value: v });
  return {
    'ctx.get': async ([id, held]) => {
      const record = await stores.contexts.get(id as string);
      const h = held as Held | null;
      const unchanged = record && h && h.createdAt === record.createdAt && h.updatedAt === record.updatedAt && h.total === record.total;
      return value(!record ? undefined : unchanged ? UNCHANGED : toWire(record, h));
    },
    'ctx.append': async ([id, messages, held, once]) =>
      value(toWire(await stores.contexts.append(id as string, messages as StoredMessage[], once as string | undefined), held as Held | null)),
    'ctx.size': async () => value(await stores.contexts.size()),
    'ctx.available': async () => value(await stores.contexts.available()),
    'rl.take': async ([bucket, cost, capacity, refill, now]) =>
      value(await stores.rateLimits.take(bucket as string, cost as number, capacity as number, refill as number, now as number)),
    'idem.claim': async ([scope, fp]) => value(await stores.idempotency.claim(scope as string, fp as string)),
    'idem.complete': async ([scope, fp, reply, ttl]) =>
      value(await stores.idempotency.complete(scope as string, fp as string, reply as StoredReply, ttl as number)),
    'idem.release': async ([scope]) => value(await stores.idempotency.release(scope as string)),
  };
}

/** Worker thread: the main thread's stores behind the usual interfaces. */
export function remoteStores(rpc: RpcClient, cachedMessages: number): { contexts: ContextStore; rateLimits: RateLimitStore; idempotency: IdempotencyStore } {
  // Records are immutable snapshots (a store never changes a list it handed out), so a held one plus the
  // messages appended since is exact. Messages a worker keeps across its records: SENTIO_CONTEXT_CACHE_MESSAGES;
  // a context whose record was dropped crosses whole at its next read or append.
  const cache = new LRUCache<string, ContextRecord>({ maxSize: Math.max(1, cachedMessages), sizeCalculation: cachedWeight });
  const transferred: Transferred = { since: 0, whole: 0 };
  const appends = new PerKeyQueue();
  const contexts: ContextStore = {
    async get(id) {
      const held = cache.get(id);
      const reply = await rpc.call<WireRecord | typeof UNCHANGED | undefined>('ctx.get', [id, heldOf(held)]);
      if (reply === UNCHANGED && held) return held;
      if (reply === undefined || reply === UNCHANGED) {
        cache.delete(id);
        return undefined;
      }
      const record = fromWire(reply, held, transferred);
      cache.set(id, record);
      return record;
    },
    // One at a time per context in this worker (PerKeyQueue), each naming the copy the last one left.
    append: (id, messages, once) => appends.run(id, async () => {
      const held = cache.get(id);
      const record = fromWire(await rpc.call<WireRecord>('ctx.append', [id, messages, heldOf(held), once]), held, transferred);
      cache.set(id, record);
      return record;
    }),
    size: () => rpc.call<number>('ctx.size', []),
    available: () => rpc.call<boolean>('ctx.available', []),
    transferred: () => ({ ...transferred }),
    close: async () => {}, // the main thread owns and closes the stores
  };
  const rateLimits: RateLimitStore = {
    take: (bucket, cost, capacity, refill, now) => rpc.call<BucketResult>('rl.take', [bucket, cost, capacity, refill, now]),
  };
  const idempotency: IdempotencyStore = {
    claim: (scope, fp) => rpc.call<ClaimResult>('idem.claim', [scope, fp]),
    complete: (scope, fp, reply, ttl) => rpc.call<void>('idem.complete', [scope, fp, reply, ttl]),
    release: (scope) => rpc.call<void>('idem.release', [scope]),
  };
  return { contexts, rateLimits, idempotency };
}
