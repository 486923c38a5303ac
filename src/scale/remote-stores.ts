/**
 * In-process stores shared by HTTP worker threads when there is no Redis: the main thread holds the one
 * set of memory stores and serves them over each worker's port, so every worker sees the same contexts
 * and idempotency records (rate-limit buckets live in shared memory: shared-rate-limit.ts). Each call is
 * one message round trip to the main thread. A worker keeps the context records it has read and asks
 * the main thread only whether they are still current, so a read of an unchanged context costs the main
 * thread a lookup instead of copying the whole record. With Redis the workers talk to Redis themselves
 * and none of this is used.
 */
import { LRUCache } from 'lru-cache';
import type { ClaimResult, IdempotencyStore, StoredReply } from '../guard/idempotency.js';
import type { BucketResult, RateLimitStore } from '../guard/rate-limit.js';
import type { ContextRecord, ContextStore, StoredMessage } from '../store/context-store.js';
import type { StateStores } from '../store/factory.js';
import type { RpcClient, RpcHandler } from './rpc.js';

/** The main thread's answer to a read of a context the worker already holds at the same version. */
const UNCHANGED = 'unchanged';

/** Changes with every append (total), and when an expired context is started afresh (createdAt). */
function versionOf(r: ContextRecord): string {
  return `${r.createdAt}:${r.updatedAt}:${r.total}`;
}

/** A record as it crosses to a worker: structured clone copies arrays, not the memory store's windows. */
function cloneable(r: ContextRecord | undefined): ContextRecord | undefined {
  return r && (Array.isArray(r.messages) ? r : { ...r, messages: [...r.messages] });
}

/** Main thread: serve `stores` to workers. */
export function storeHandlers(stores: StateStores): Record<string, RpcHandler> {
  const value = (v: unknown) => ({ value: v });
  return {
    'ctx.get': async ([id, known]) => {
      const record = await stores.contexts.get(id as string);
      return value(record && known !== null && versionOf(record) === known ? UNCHANGED : cloneable(record));
    },
    'ctx.append': async ([id, messages]) => value(cloneable(await stores.contexts.append(id as string, messages as StoredMessage[]))),
    'ctx.size': async () => value(await stores.contexts.size()),
    'rl.take': async ([bucket, cost, capacity, refill, now]) =>
      value(await stores.rateLimits.take(bucket as string, cost as number, capacity as number, refill as number, now as number)),
    'idem.claim': async ([scope, fp, ttl]) => value(await stores.idempotency.claim(scope as string, fp as string, ttl as number)),
    'idem.complete': async ([scope, fp, reply, ttl]) =>
      value(await stores.idempotency.complete(scope as string, fp as string, reply as StoredReply, ttl as number)),
    'idem.release': async ([scope]) => value(await stores.idempotency.release(scope as string)),
  };
}

/** Worker thread: the main thread's stores behind the usual interfaces. */
export function remoteStores(rpc: RpcClient, cachedMessages = 50_000): { contexts: ContextStore; rateLimits: RateLimitStore; idempotency: IdempotencyStore } {
  // Records are immutable snapshots (a store never changes a list it handed out), so a cached one is
  // exact as long as its version matches the main thread's.
  // Messages a worker keeps across its context records (SENTIO_CONTEXT_CACHE_MESSAGES); a context whose
  // record was dropped crosses from the main thread whole at its next read.
  const cache = new LRUCache<string, ContextRecord>({ maxSize: Math.max(1, cachedMessages), sizeCalculation: (r) => r.messages.length + 1 });
  const contexts: ContextStore = {
    async get(id) {
      const cached = cache.get(id);
      const reply = await rpc.call<ContextRecord | typeof UNCHANGED | undefined>('ctx.get', [id, cached ? versionOf(cached) : null]);
      if (reply === UNCHANGED && cached) return cached;
      if (reply === undefined || reply === UNCHANGED) cache.delete(id);
      else cache.set(id, reply);
      return reply === UNCHANGED ? undefined : reply;
    },
    async append(id, messages) {
      const record = await rpc.call<ContextRecord>('ctx.append', [id, messages]);
      cache.set(id, record);
      return record;
    },
    size: () => rpc.call<number>('ctx.size', []),
    close: async () => {}, // the main thread owns and closes the stores
  };
  const rateLimits: RateLimitStore = {
    take: (bucket, cost, capacity, refill, now) => rpc.call<BucketResult>('rl.take', [bucket, cost, capacity, refill, now]),
  };
  const idempotency: IdempotencyStore = {
    claim: (scope, fp, ttl) => rpc.call<ClaimResult>('idem.claim', [scope, fp, ttl]),
    complete: (scope, fp, reply, ttl) => rpc.call<void>('idem.complete', [scope, fp, reply, ttl]),
    release: (scope) => rpc.call<void>('idem.release', [scope]),
  };
  return { contexts, rateLimits, idempotency };
}
