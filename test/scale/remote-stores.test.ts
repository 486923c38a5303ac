/**
 * The main thread's memory stores served to an HTTP worker over a real MessagePort: records cross as
 * plain arrays (the store's windows do not survive structured clone), and a worker holds copies only up
 * to SENTIO_CONTEXT_CACHE_MESSAGES, past which a context crosses whole at every read.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../src/guard/idempotency.js';
import { MemoryRateLimitStore } from '../../src/guard/rate-limit.js';
import { remoteStores, storeHandlers } from '../../src/scale/remote-stores.js';
import { reviveError } from '../../src/scale/remote-engine.js';
import { RpcClient, serveRpc } from '../../src/scale/rpc.js';
import type { RpcHandler } from '../../src/scale/rpc.js';
import type { StoredMessage } from '../../src/store/context-store.js';
import { MemoryContextStore } from '../../src/store/memory-store.js';

const message = (id: string) => ({
  id, role: 'user', text: `text of ${id}`, raw: [1, 0, 0, 0, 0, 0], sub: new Array<number>(28).fill(0),
  valence: 0, arousal: 0, tokens: 3, eq: {} as StoredMessage['eq'], at: 0,
}) as StoredMessage;

const channels: MessageChannel[] = [];
afterEach(() => { for (const c of channels.splice(0)) { c.port1.close(); c.port2.close(); } });

/** A worker's stores over a fresh channel, and the kinds of answer the main thread gave to its reads. */
function connect(cachedMessages: number): { contexts: ReturnType<typeof remoteStores>['contexts']; reads: string[] } {
  const contexts = new MemoryContextStore({ ttlSeconds: 60, maxContexts: 10, maxMessagesPerContext: 1000 });
  const handlers = storeHandlers({
    backend: 'memory', contexts, rateLimits: new MemoryRateLimitStore(), idempotency: new MemoryIdempotencyStore(), close: async () => {},
  });
  const reads: string[] = [];
  const get = handlers['ctx.get']!;
  const counted: RpcHandler = async (args, signal) => {
    const r = await get(args, signal);
    reads.push(r.value === 'unchanged' ? 'unchanged' : 'record');
    return r;
  };
  const channel = new MessageChannel();
  channels.push(channel);
  serveRpc(channel.port1, { ...handlers, 'ctx.get': counted });
  return { contexts: remoteStores(new RpcClient(channel.port2, reviveError), cachedMessages).contexts, reads };
}

describe('remote context stores (HTTP workers without Redis)', () => {
  it('records cross as arrays equal to the main thread\'s, and an unchanged context is not sent again', async () => {
    const { contexts, reads } = connect(1_000);
    await contexts.append('c', ['a', 'b'].map(message));
    const record = await contexts.append('c', [message('c')]);
    expect([...record.messages].map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(record.messages.at(-1)!.id).toBe('c');
    expect(await contexts.get('c')).toBe(record);
    expect(reads).toEqual(['unchanged']);
  });

  it('a context larger than the worker\'s cache crosses whole at every read, and stays exact', async () => {
    const { contexts, reads } = connect(100);
    await contexts.append('big', Array.from({ length: 150 }, (_, i) => message(`m${i}`)));
    const first = await contexts.get('big');
    const second = await contexts.get('big');
    expect(reads).toEqual(['record', 'record']);
    expect([...second!.messages].map((m) => m.id)).toEqual(Array.from({ length: 150 }, (_, i) => `m${i}`));
    expect([...first!.messages]).toEqual([...second!.messages]);
  });
});
