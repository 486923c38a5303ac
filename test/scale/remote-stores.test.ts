/**
 * The main thread's memory stores served to HTTP workers over real MessagePorts: a worker holding a
 * context gets only the messages appended since its copy, records equal the main thread's (as arrays:
 * the store's windows do not survive structured clone), and a worker holds copies only up to
 * SENTIO_CONTEXT_CACHE_MESSAGES, past which a context crosses whole at every call.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../src/store/idempotency-store.js';
import { MemoryRateLimitStore } from '../../src/store/rate-limit-store.js';
import { remoteStores, storeHandlers } from '../../src/scale/remote-stores.js';
import { reviveError } from '../../src/scale/remote-engine.js';
import { RpcClient, serveRpc } from '../../src/scale/rpc.js';
import type { RpcHandler } from '../../src/scale/rpc.js';
import type { ContextRecord, ContextStore } from '../../src/store/context-store.js';
import { MemoryContextStore } from '../../src/store/memory-store.js';
import { storedMessage } from '../helpers/stored-message.js';

const message = storedMessage;

const channels: MessageChannel[] = [];
afterEach(() => { for (const c of channels.splice(0)) { c.port1.close(); c.port2.close(); } });

/**
 * The main thread's memory stores, a worker connected to them over its own channel per call of
 * `worker()`, and how the main thread answered each context call: unchanged, only the messages appended
 * since the worker's copy (and how many), or the whole record.
 */
function mainThread(): { worker: (cachedMessages: number) => ContextStore; answers: string[] } {
  const contexts = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 1000 });
  const handlers = storeHandlers({
    backend: 'memory', contexts, rateLimits: new MemoryRateLimitStore(), idempotency: new MemoryIdempotencyStore(), close: async () => {},
  });
  const answers: string[] = [];
  const counted = (h: RpcHandler): RpcHandler => async (args, signal) => {
    const r = await h(args, signal);
    const v = r.value as { since?: unknown[]; messages?: unknown[] } | string | undefined;
    answers.push(typeof v !== 'object' ? String(v) : v.since ? `since ${v.since.length}` : `whole ${v.messages!.length}`);
    return r;
  };
  const served = { ...handlers, 'ctx.get': counted(handlers['ctx.get']!), 'ctx.append': counted(handlers['ctx.append']!) };
  const worker = (cachedMessages: number) => {
    const channel = new MessageChannel();
    channels.push(channel);
    serveRpc(channel.port1, served);
    return remoteStores(new RpcClient(channel.port2, reviveError), cachedMessages).contexts;
  };
  return { worker, answers };
}

const ids = (r: ContextRecord | undefined) => [...(r?.messages ?? [])].map((m) => m.id);

describe('remote context stores (HTTP workers without Redis)', () => {
  it('a worker holding a context gets only what changed, and its records equal the main thread\'s', async () => {
    const { worker, answers } = mainThread();
    const contexts = worker(1_000);
    await contexts.append('c', ['a', 'b'].map(message));
    const record = await contexts.append('c', [message('c')]);
    expect(ids(record)).toEqual(['a', 'b', 'c']);
    expect(record.messages.at(-1)!.id).toBe('c');
    expect(await contexts.get('c')).toBe(record);
    expect(answers).toEqual(['whole 2', 'since 1', 'unchanged']);
    expect(contexts.transferred!()).toEqual({ since: 1, whole: 2 });
  });

  it('an append\'s idempotency token reaches the main thread\'s store', async () => {
    const inner = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 1000 });
    const tokens: Array<string | undefined> = [];
    const contexts: ContextStore = {
      get: (id) => inner.get(id),
      append: (id, messages, once) => { tokens.push(once); return inner.append(id, messages); },
      size: () => inner.size(),
      available: () => inner.available(),
      close: () => inner.close(),
    };
    const handlers = storeHandlers({
      backend: 'memory', contexts, rateLimits: new MemoryRateLimitStore(), idempotency: new MemoryIdempotencyStore(), close: async () => {},
    });
    const channel = new MessageChannel();
    channels.push(channel);
    serveRpc(channel.port1, handlers);
    const worker = remoteStores(new RpcClient(channel.port2, reviveError), 1_000).contexts;
    await worker.append('c', [message('a')], 'token-1');
    await worker.append('c', [message('b')]);
    expect(tokens).toEqual(['token-1', undefined]);
  });

  it('two workers appending to one context each rebuild exactly the main thread\'s list', async () => {
    const { worker, answers } = mainThread();
    const [a, b] = [worker(1_000), worker(1_000)];
    await a.append('c', ['a0'].map(message));
    await b.append('c', [message('b0')]);
    expect(ids(await a.append('c', [message('a1')]))).toEqual(['a0', 'b0', 'a1']);
    expect(ids(await b.get('c'))).toEqual(['a0', 'b0', 'a1']);
    expect(answers).toEqual(['whole 1', 'whole 2', 'since 2', 'since 1']);
  });

  it('a context larger than the worker\'s cache crosses whole at every read and append, and stays exact', async () => {
    const { worker, answers } = mainThread();
    const contexts = worker(100);
    await contexts.append('big', Array.from({ length: 150 }, (_, i) => message(`m${i}`)));
    const first = await contexts.get('big');
    const appended = await contexts.append('big', [message('n')]);
    expect(answers).toEqual(['whole 150', 'whole 150', 'whole 151']);
    expect(ids(first)).toEqual(Array.from({ length: 150 }, (_, i) => `m${i}`));
    expect(ids(appended)).toEqual([...ids(first), 'n']);
  });
});
