/** The RPC between HTTP workers and the main thread, over a real MessageChannel. */
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { RpcClient, serveRpc } from '../../src/scale/rpc.js';

describe('serveRpc', () => {
  // A worker that died left its calls running on the main thread: its texts stayed in the engine's queue
  // and were scored for nobody.
  it('aborts the calls still running when the other side of the port goes away', async () => {
    const { port1, port2 } = new MessageChannel();
    let aborted = 0;
    let started = 0;
    serveRpc(port1, {
      wait: (_args, signal) => new Promise((resolve) => {
        started++;
        signal.addEventListener('abort', () => { aborted++; resolve({ value: 'aborted' }); }, { once: true });
      }),
    });
    const client = new RpcClient(port2, (e) => new Error(e.message));
    void client.call('wait', []).catch(() => undefined);
    void client.call('wait', []).catch(() => undefined);
    while (started < 2) await new Promise((r) => setTimeout(r, 5));
    expect(aborted).toBe(0);
    port2.close();
    for (let i = 0; i < 100 && aborted < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(aborted).toBe(2);
  });

  // Thrown on the main thread, either ended the process that serves every worker, and the call waited on.
  it('answers a handler that throws, and a result that cannot be posted, with the error', async () => {
    const { port1, port2 } = new MessageChannel();
    serveRpc(port1, {
      throws: () => { throw new Error('thrown before any promise'); },
      uncloneable: async () => ({ value: { fn: () => 1 } }),
    });
    const client = new RpcClient(port2, (e) => Object.assign(new Error(e.message), { name: e.name }));
    try {
      await expect(client.call('throws', [])).rejects.toThrow('thrown before any promise');
      await expect(client.call('uncloneable', [])).rejects.toMatchObject({ name: 'DataCloneError' });
      await expect(client.call('missing', [])).rejects.toThrow('no RPC method "missing"');
    } finally {
      port1.close();
    }
  });
});
