/**
 * In-process stores shared by HTTP worker threads when there is no Redis: the main thread holds the one
 * set of memory stores and serves them over each worker's port, so every worker sees the same contexts,
 * idempotency records and quotas. Each call is one message round trip to the main thread. With Redis the
 * workers talk to Redis themselves and none of this is used.
 */
import type { ClaimResult, IdempotencyStore, StoredReply } from '../guard/idempotency.js';
import type { BucketResult, RateLimitStore } from '../guard/rate-limit.js';
import type { ContextRecord, ContextStore, StoredMessage } from '../store/context-store.js';
import type { StateStores } from '../store/factory.js';
import type { RpcClient, RpcHandler } from './rpc.js';

/** Main thread: serve `stores` to workers. */
export function storeHandlers(stores: StateStores): Record<string, RpcHandler> {
  const value = (v: unknown) => ({ value: v });
  return {
    'ctx.get': async ([id]) => value(await stores.contexts.get(id as string)),
    'ctx.append': async ([id, messages]) => value(await stores.contexts.append(id as string, messages as StoredMessage[])),
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
export function remoteStores(rpc: RpcClient): { contexts: ContextStore; rateLimits: RateLimitStore; idempotency: IdempotencyStore } {
  const contexts: ContextStore = {
    get: (id) => rpc.call<ContextRecord | undefined>('ctx.get', [id]),
    append: (id, messages) => rpc.call<ContextRecord>('ctx.append', [id, messages]),
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
