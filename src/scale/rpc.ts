/**
 * Request/response calls over a MessagePort between an HTTP worker thread and the main thread, which
 * holds the engine (and, without Redis, the stores). Arguments and results travel by structured clone;
 * a result may name buffers to transfer instead of copy. Errors cross as {name, code, message} and are
 * rebuilt by the caller's `revive`, so a typed error (EngineOverloadedError, StoreUnavailableError)
 * still maps to the same HTTP answer on the worker.
 */
import type { MessagePort, Transferable } from 'node:worker_threads';
import type { CancelSignal } from '../engine/cancel.js';

export interface SerializedError {
  name: string;
  message: string;
  code?: string | undefined;
}

type CallMessage = { t: 'call'; id: number; method: string; args: unknown[] };
type CancelMessage = { t: 'cancel'; id: number };
type ReplyMessage = { t: 'ok'; id: number; value: unknown } | { t: 'err'; id: number; error: SerializedError };

/** A handler's result; `transfer` lists buffers of `value` to move rather than copy. */
export interface HandlerResult {
  value: unknown;
  transfer?: Transferable[];
}

export type RpcHandler = (args: unknown[], signal: AbortSignal) => Promise<HandlerResult>;

/**
 * Serves calls arriving on `port`. A 'cancel' aborts the signal the handler was given, and so does the
 * port closing: a worker that died cannot take its answers, so its texts leave the engine's queue.
 */
export function serveRpc(port: MessagePort, handlers: Readonly<Record<string, RpcHandler>>): void {
  const running = new Map<number, AbortController>();
  port.once('close', () => {
    for (const controller of running.values()) controller.abort();
    running.clear();
  });
  port.on('message', (msg: CallMessage | CancelMessage) => {
    if (msg.t === 'cancel') {
      running.get(msg.id)?.abort();
      return;
    }
    const handler = handlers[msg.method];
    const controller = new AbortController();
    running.set(msg.id, controller);
    // A handler that throws, or a value that cannot be posted (not cloneable), answers the call with the
    // error: thrown here, it would end the main thread that serves every worker, and leave the call waiting.
    const fail = (err: unknown) => port.postMessage({ t: 'err', id: msg.id, error: serializeError(err) } satisfies ReplyMessage);
    let done: Promise<HandlerResult>;
    try {
      done = handler ? handler(msg.args, controller.signal) : Promise.reject(new Error(`no RPC method "${msg.method}". This is a bug.`));
    } catch (err) {
      done = Promise.reject(err);
    }
    done.then(
      (r) => {
        try {
          port.postMessage({ t: 'ok', id: msg.id, value: r.value } satisfies ReplyMessage, r.transfer ?? []);
        } catch (err) {
          fail(err);
        }
      },
      fail,
    ).finally(() => running.delete(msg.id));
  });
}

export class RpcClient {
  readonly #port: MessagePort;
  readonly #revive: (e: SerializedError) => Error;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextId = 1;

  constructor(port: MessagePort, revive: (e: SerializedError) => Error) {
    this.#port = port;
    this.#revive = revive;
    port.on('message', (msg: ReplyMessage) => {
      const p = this.#pending.get(msg.id);
      if (!p) return; // cancelled: the caller has already moved on
      this.#pending.delete(msg.id);
      if (msg.t === 'ok') p.resolve(msg.value);
      else p.reject(this.#revive(msg.error));
    });
  }

  /**
   * Call `method` on the other side. When `signal` fires, the call is rejected at once with
   * `onAbort()` and the other side is told to stop.
   */
  call<T>(method: string, args: unknown[], opts: { signal?: CancelSignal | undefined; onAbort?: () => Error } = {}): Promise<T> {
    const { signal } = opts;
    const abortError = () => opts.onAbort?.() ?? new Error('aborted');
    if (signal?.aborted) return Promise.reject(abortError());
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.#port.postMessage({ t: 'cancel', id } satisfies CancelMessage);
        reject(abortError());
      };
      this.#pending.set(id, {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v as T);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#port.postMessage({ t: 'call', id, method, args } satisfies CallMessage);
    });
  }
}

function serializeError(err: unknown): SerializedError {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(err),
    code: typeof e?.code === 'string' ? e.code : undefined,
  };
}
