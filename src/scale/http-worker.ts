/**
 * Entry of one HTTP worker thread: a complete Sentio HTTP stack (its own uWS app on the shared port, auth,
 * rate limits, idempotency, routes) whose engine, and without Redis whose stores, are the main thread's.
 * See http-workers.ts for the main-thread side and the message protocol.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { startSentio } from '../app.js';
import type { Sentio } from '../app.js';
import type { Config } from '../config.js';
import type { LabelOrder } from '../core/emotions.js';
import { createLogger } from '../log.js';
import { RemoteEngine, reviveError } from './remote-engine.js';
import { remoteStores } from './remote-stores.js';
import { RpcClient, serveRpc } from './rpc.js';
import { SharedMemoryRateLimitStore } from './shared-rate-limit.js';
import type { SharedBucketMemory } from './shared-rate-limit.js';

export interface WorkerInit {
  index: number;
  /** The process's configuration, with the port every worker listens on. */
  config: Config;
  rpcPort: MessagePort;
  /** Calls from the main thread to this worker (its metrics). */
  servePort: MessagePort;
  /** Set without Redis: contexts and idempotency records live on the main thread, buckets in this memory. */
  sharedBuckets: SharedBucketMemory | undefined;
  labels: LabelOrder;
  engineDescription: Record<string, unknown>;
}

export type ToWorker = { t: 'close'; graceMs: number } | { t: 'reload-keys' };
export type FromWorker = { t: 'listening'; port: number } | { t: 'failed'; message: string } | { t: 'closed' };
/** A worker's metrics as data (Metrics.json()), which the main thread sums for every scrape. */
export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** How long a failed worker goes on answering its open connections before it closes them (below). */
const FAILED_WORKER_GRACE_MS = 1_000;

async function run(): Promise<void> {
  const control = parentPort;
  if (!control) throw new Error('http-worker.ts runs only as a worker thread. This is a bug.');
  const init = workerData as WorkerInit;
  const post = (m: FromWorker) => control.postMessage(m);
  const rpc = new RpcClient(init.rpcPort, reviveError);
  const engine = new RemoteEngine(rpc, init.labels, init.engineDescription);
  const stores = init.sharedBuckets ? remoteStores(rpc, init.config.contextCacheMessages) : undefined;
  const rateLimits = init.sharedBuckets && stores ? new SharedMemoryRateLimitStore(init.sharedBuckets, stores.rateLimits) : undefined;
  const logger = createLogger(init.config.logLevel).child({ worker: init.index });
  let sentio: Sentio;
  try {
    sentio = await startSentio(init.config, {
      engine, logger,
      engineMetrics: { text: () => rpc.call<string>('metrics.engine', []) },
      // Any worker answers a scrape with every worker's metrics, summed on the main thread (metrics.ts).
      metricsText: () => rpc.call<string>('metrics.all', []),
      worker: init.index,
      ...(stores && rateLimits ? { store: stores.contexts, rateLimits, idempotency: stores.idempotency } : {}),
    });
  } catch (err) {
    logger.flush();
    post({ t: 'failed', message: (err as Error).message });
    init.rpcPort.close();
    init.servePort.close();
    return;
  }
  // A bug that escapes a request ends this thread; left to Node, the thread ended with uWS's handles still
  // open on its loop and Node aborted the whole process (probe, 2026-11-26). Close the app first, then end
  // the thread: waiting for it to run dry left it alive behind an upstream call still open (up to
  // SENTIO_LLM_TIMEOUT_MS), its Idempotency-Key claims held (409s) and no replacement started. So the
  // drain is short: a second, in which requests already sent on its keep-alive connections are still
  // answered (with Connection: close, so their clients reconnect to another worker), where closing at
  // once reset them unanswered (an overload review, 2026-11-28: 4 to 27 of a loaded worker's requests).
  let failed = false;
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    logger.fatal({ err }, 'HTTP worker failed; closing it, the main thread starts a new one');
    void sentio.close(FAILED_WORKER_GRACE_MS).finally(() => {
      logger.flush();
      init.rpcPort.close();
      init.servePort.close();
      control.close();
      process.exit(1); // in a worker thread: ends this thread only
    });
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  serveRpc(init.servePort, { metrics: async () => ({ value: await sentio.metrics.json() }) });
  control.on('message', (m: ToWorker) => {
    if (m.t === 'reload-keys') {
      // Signals reach only the main thread; startSentio's SIGHUP listener reloads the key file.
      process.emit('SIGHUP', 'SIGHUP');
      return;
    }
    sentio.close(m.graceMs).finally(() => {
      logger.flush();
      init.rpcPort.close();
      init.servePort.close();
      post({ t: 'closed' });
      control.close();
    });
  });
  post({ t: 'listening', port: sentio.port });
}

void run();
