/**
 * All cores of one host (SENTIO_HTTP_WORKERS > 1): N worker threads, each running its own uWS app on the
 * same port (the kernel spreads connections over them with SO_REUSEPORT), while inference stays in the
 * one engine on the main thread, so its micro-batcher fills batches from every worker's requests.
 *
 *   main thread                          worker thread i (src/scale/http-worker.ts)
 *   engine + batcher  <── RPC port ──>   RemoteEngine ─┐
 *   memory stores     <── RPC port ──>   stores* ──────┤
 *   bucket memory (SharedArrayBuffer) ── buckets* ─────┼─ startSentio(): uWS app on :port
 *   (or none: Redis)                     Redis client* ┘   (auth, limits, routes)
 *   control: listening / close / closed / reload-keys     * one or the other
 *
 * Without Redis the main thread holds the one set of in-process stores and serves it to every worker, so
 * contexts and idempotency records stay shared; rate-limit buckets sit in shared memory that every worker
 * updates directly. With Redis each worker uses Redis directly.
 * Threads rather than node:cluster processes because processes cannot share one engine (one model copy,
 * one batcher per device) without a far costlier IPC hop. docs/deployment.md.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { AggregatorRegistry, Registry, collectDefaultMetrics } from 'prom-client';
import type { AnalysisEngine } from '../app.js';
import type { Config } from '../config.js';
import type { ClaimResult } from '../store/idempotency-store.js';
import { createLogger } from '../log.js';
import type { EngineMetricsSource } from '../metrics.js';
import { threadsText } from '../metrics.js';
import { pickFreePort } from '../http/port.js';
import { openStores } from '../store/factory.js';
import type { StateStores } from '../store/factory.js';
import type { FromWorker, ToWorker, WorkerInit, WorkerMetrics } from './http-worker.js';
import { engineHandlers, reviveError } from './remote-engine.js';
import { storeHandlers } from './remote-stores.js';
import { RpcClient, serveRpc } from './rpc.js';
import { allocateSharedBuckets } from './shared-rate-limit.js';
import type { RpcHandler } from './rpc.js';

export interface HttpWorkersOptions {
  engine: AnalysisEngine;
  /** The engine's metrics, served to every worker's /metrics. */
  engineMetrics: EngineMetricsSource;
  logger?: Logger | undefined;
  /** The worker script; by default http-worker.js beside this module (.ts when running from sources). */
  workerUrl?: URL | undefined;
  /** Node flags for the worker threads (tests running the TypeScript sources pass a loader). */
  execArgv?: string[] | undefined;
}

export interface SentioWorkers {
  readonly port: number;
  readonly workers: number;
  readonly logger: Logger;
  /** Stop every worker (each drains within `graceMs`), then the stores and the engine. */
  close(graceMs?: number): Promise<void>;
  /** Close every worker's app at once, cutting what is in flight (a second signal while draining). */
  abort(): Promise<void>;
}

/** A worker that dies unexpectedly is replaced after this long; a replacement that fails to start is tried
 * again, each time after twice as long, up to RESPAWN_MAX_DELAY_MS. */
const RESPAWN_DELAY_MS = 1_000;
const RESPAWN_MAX_DELAY_MS = 30_000;

export async function startHttpWorkers(config: Config, opts: HttpWorkersOptions): Promise<SentioWorkers> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const count = config.httpWorkers;
  // With Redis each worker connects on its own; check it answers before starting any of them.
  if (config.redisUrl) await (await openStores(config, { logger })).close();
  const shared: StateStores | undefined = config.redisUrl ? undefined : await openStores(config, { logger });
  const sharedBuckets = shared ? allocateSharedBuckets() : undefined;
  const handlers: Record<string, RpcHandler> = {
    ...engineHandlers(opts.engine),
    'metrics.engine': async () => ({ value: await opts.engineMetrics.text() }),
    'metrics.all': async () => ({ value: await threadsText(await workersMetrics(), opts.engineMetrics) }),
    ...(shared ? storeHandlers(shared) : {}),
  };
  // uWS sets SO_REUSEPORT only on a fixed port, so an ephemeral one is picked first and then shared.
  const port = config.port === 0 ? await pickFreePort(config.host) : config.port;
  const url = opts.workerUrl ?? new URL(import.meta.url.endsWith('.ts') ? './http-worker.ts' : './http-worker.js', import.meta.url);
  // Each worker also serves calls from the main thread (its metrics), on a channel of their own: one port
  // carries calls one way only (rpc.ts).
  const workers = new Map<number, { worker: Worker; metrics: RpcClient }>();
  let closing = false;

  // Each worker's last metrics, served for it while it does not answer; a replaced worker's counters and
  // histograms stay in the sums (`retired`, its last answer), so that no total falls when a worker is
  // replaced: Prometheus reads a fall as a reset of every series (an observability review, 2026-11-28).
  const lastMetrics = new Map<Worker, WorkerMetrics>();
  const ended = new WeakSet<Worker>();
  let retired: Promise<WorkerMetrics> = Promise.resolve([]);
  const mainThread = mainThreadMemory();
  const workersMetrics = async (): Promise<WorkerMetrics[]> => {
    const live = await Promise.all([...workers.values()].map(async ({ worker, metrics }) => {
      const m = await workerMetrics(metrics);
      if (ended.has(worker)) return []; // it ended during this scrape: counted in `retired`, once
      if (m) lastMetrics.set(worker, m);
      return m ?? lastMetrics.get(worker) ?? [];
    }));
    return [...live, await retired, await mainThread.getMetricsAsJSON()];
  };
  const retire = (worker: Worker) => {
    ended.add(worker);
    const last = lastMetrics.get(worker);
    lastMetrics.delete(worker);
    if (!last) return;
    // Process-wide series are each worker's copy of the same figures (taken once, from a live worker).
    const totals = last.filter((m) => (String(m.type) === 'counter' || String(m.type) === 'histogram') && !m.name.startsWith('sentio_process_'));
    const before = retired;
    retired = before.then((r) => AggregatorRegistry.aggregate([r, totals]).getMetricsAsJSON()).catch(() => before);
  };

  const spawn = (index: number): Promise<void> => {
    const { port1, port2 } = new MessageChannel();
    const toWorker = new MessageChannel();
    // The Idempotency-Key claims this worker holds: a worker that dies cannot finish their requests (it
    // answers them 503), so its claims are released, or every retry would get 409 for the claim's lease.
    const claims = new Set<string>();
    serveRpc(port1, shared ? { ...handlers, ...claimTracking(handlers, claims) } : handlers);
    const init: WorkerInit = {
      index,
      config: { ...config, port },
      rpcPort: port2,
      servePort: toWorker.port2,
      sharedBuckets,
      labels: opts.engine.labels,
      engineDescription: opts.engine.describe(),
    };
    const worker = new Worker(url, { workerData: init, transferList: [port2, toWorker.port2], execArgv: opts.execArgv ?? [] });
    workers.set(index, { worker, metrics: new RpcClient(toWorker.port1, reviveError) });
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (m: FromWorker) => {
        if (m.t === 'listening') {
          started = true;
          resolve();
        } else if (m.t === 'failed') {
          reject(new Error(`HTTP worker ${index}: ${m.message}`));
          // Whatever its failed start left open (a socket) would keep the thread alive beside its replacement.
          void worker.terminate();
        }
      });
      worker.on('error', (err) => {
        logger.error({ err, worker: index }, 'HTTP worker crashed');
        if (!started) reject(err);
      });
      worker.on('exit', (code) => {
        port1.close();
        toWorker.port1.close();
        for (const scope of claims) void shared?.idempotency.release(scope);
        claims.clear();
        if (workers.get(index)?.worker === worker) workers.delete(index);
        retire(worker);
        if (!started) {
          reject(new Error(`HTTP worker ${index} exited with code ${code} before listening`));
          return;
        }
        if (closing) return;
        logger.error({ worker: index, code }, `HTTP worker exited; starting a new one in ${RESPAWN_DELAY_MS} ms`);
        respawn(index, RESPAWN_DELAY_MS);
      });
    });
  };

  /**
   * Start worker `index` again after `delayMs`; a start that fails (Redis still down) is tried again, later.
   * The timer holds the process open: with every worker gone it is all that does (unref'd, a crash of both
   * workers at once ended the process, with exit code 0). close() clears it.
   */
  const respawns = new Set<NodeJS.Timeout>();
  const respawn = (index: number, delayMs: number): void => {
    const timer = setTimeout(() => {
      respawns.delete(timer);
      if (closing) return;
      spawn(index).then(() => logger.info({ worker: index }, 'HTTP worker restarted'), (err: unknown) => {
        const next = Math.min(delayMs * 2, RESPAWN_MAX_DELAY_MS);
        logger.error({ err, worker: index }, `HTTP worker restart failed; trying again in ${next} ms`);
        respawn(index, next);
      });
    }, delayMs);
    respawns.add(timer);
  };

  const stopWorkers = async (graceMs: number) => {
    closing = true;
    for (const timer of respawns) clearTimeout(timer);
    respawns.clear();
    await Promise.all([...workers.values()].map(({ worker }) => stopWorker(worker, graceMs)));
  };

  try {
    await Promise.all(Array.from({ length: count }, (_, i) => spawn(i)));
  } catch (err) {
    await stopWorkers(1_000);
    await shared?.close();
    throw err;
  }
  const reloadKeys = () => {
    for (const { worker } of workers.values()) worker.postMessage({ t: 'reload-keys' } satisfies ToWorker);
  };
  process.on('SIGHUP', reloadKeys);
  logger.info({ workers: count, port, state: shared ? 'main-thread memory stores' : 'redis' }, 'HTTP workers listening');

  return {
    port,
    workers: count,
    logger,
    async close(graceMs = 10_000) {
      await stopWorkers(graceMs);
      process.off('SIGHUP', reloadKeys); // after the drain: without a listener, a SIGHUP would end the process
      await shared?.close();
      await opts.engine.close();
      logger.flush();
    },
    // Each worker closes its app at once (a thread ended with uWS handles open aborts the process).
    abort: () => stopWorkers(0),
  };
}

/** The idempotency handlers of one worker, noting which claims it holds until it completes or releases them. */
function claimTracking(handlers: Record<string, RpcHandler>, claims: Set<string>): Record<string, RpcHandler> {
  return {
    'idem.claim': async (args, signal) => {
      const r = await handlers['idem.claim']!(args, signal);
      if ((r as { value?: ClaimResult }).value?.outcome === 'claimed') claims.add(args[0] as string);
      return r;
    },
    'idem.complete': (args, signal) => {
      claims.delete(args[0] as string);
      return handlers['idem.complete']!(args, signal);
    },
    'idem.release': (args, signal) => {
      claims.delete(args[0] as string);
      return handlers['idem.release']!(args, signal);
    },
  };
}

/** One worker's metrics as data; undefined from a worker that does not answer within a second (it is stuck or ending). */
function workerMetrics(worker: RpcClient): Promise<WorkerMetrics | undefined> {
  return worker.call<WorkerMetrics>('metrics', [], { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
}

/**
 * The main thread's heap and garbage collection, summed with the workers': it holds the engine's side and,
 * without Redis, every context, and was left out of them. (Its event loop's lag is not reported.)
 */
function mainThreadMemory(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sentio_' });
  for (const m of registry.getMetricsAsArray()) {
    if (!/^sentio_nodejs_(heap_|gc_|external_memory)/.test(m.name)) registry.removeSingleMetric(m.name);
  }
  return registry;
}

/** Ask a worker to drain and close its app, then end the thread (terminate only once uWS is closed). */
function stopWorker(worker: Worker, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate().then(() => resolve(), () => resolve());
    };
    const timer = setTimeout(finish, graceMs + 5_000);
    worker.on('message', (m: FromWorker) => {
      // Closed: the thread ends by itself once its ports close; terminate only if it lingers.
      if (m.t === 'closed') setTimeout(finish, 1_000).unref();
    });
    worker.once('exit', finish);
    worker.postMessage({ t: 'close', graceMs } satisfies ToWorker);
  });
}
