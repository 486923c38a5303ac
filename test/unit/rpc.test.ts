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
});
