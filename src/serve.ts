/**
 * The server process (started by main.ts): configuration → engine (loaded and warmed) → HTTP → listen.
 * SIGTERM and SIGINT stop accepting, let in-flight requests and streams finish within the grace period,
 * then exit 0; a second one while draining exits at once (1), for an operator who will not wait (the first
 * delivered again, as under `npm start`, is not a second one: signals.ts).
 */
import v8 from 'node:v8';
import { ConfigError, checkStartup, loadConfig, unknownSettings } from './config.js';
import { createEngine } from './engine/engine.js';
import { ProviderUnavailableError } from './engine/errors.js';
import { startSentio } from './app.js';
import { claimPort } from './http/port.js';
import { EngineMetrics } from './metrics.js';
import { startHttpWorkers } from './scale/http-workers.js';
import { openStores } from './store/factory.js';
import { createLogger } from './log.js';
import { repeatsFirst } from './signals.js';
import type { StopSignal } from './signals.js';

export interface ServeOptions {
  /** The signal that asked the process to stop while it started, if one did. */
  stopAsked?: () => StopSignal | undefined;
  /** Called once this server's own SIGTERM and SIGINT handlers are set. */
  started?: () => void;
}

export async function serve(opts: ServeOptions = {}): Promise<void> {
  let config;
  let warnings: string[];
  try {
    config = loadConfig();
    warnings = [...checkStartup(config), ...unknownSettings()];
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sentio: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // V8 otherwise lets the heap grow to about 4x what survives a full collection: under the load benchmark
  // 250 MB of heap for 50 MB live, and an RSS past 400 MB. V8 reads the flag whenever it sets the next
  // collection's limit, so setting it now takes effect (the benchmark shows it; docs/deployment.md#memory).
  if (config.heapGrowthPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
  // After saturating load V8 allocated some of each request's objects straight into the old generation
  // ("pretenuring"), where they die as old garbage and hold what they point to alive through every young
  // collection: with the other causes, 1.2 KB a request moved into the old generation and a full
  // collection ran every 3 s. Off, set before any request code runs (docs/deployment.md#memory).
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
  const logger = createLogger(config.logLevel);
  for (const w of warnings) logger.warn(w);
  // Unreachable Redis is a start-up error: say so before spending seconds on loading the model.
  if (config.redisUrl) await (await openStores(config, { logger })).close();
  // Engine runs feed the batch histograms of /metrics; warm-up runs (during createEngine) are not counted.
  let engineMetrics: EngineMetrics | undefined;
  const engine = await createEngine({ ...config.engine, logger, onBatch: (run) => engineMetrics?.observeBatch(run) }).catch((err: unknown) => {
    // The engine speaks of its options; the operator set an environment variable.
    if (err instanceof ProviderUnavailableError) {
      throw new Error(err.message.replace(/executionProvider '(\w+)'/g, 'SENTIO_EXECUTION_PROVIDER=$1').replace(/(use SENTIO_EXECUTION_PROVIDER=\w+) or '(\w+)'/, '$1 or SENTIO_EXECUTION_PROVIDER=$2'));
    }
    throw err;
  });
  engineMetrics = new EngineMetrics(() => engine.stats());
  const early = opts.stopAsked?.();
  if (early !== undefined) {
    logger.info({ signal: early.signal }, 'stopped while starting: nothing to drain');
    logger.flush();
    process.exit(0);
  }
  // Taken just before the listen (the model load above takes seconds): uWS would share a port in use.
  const releasePort = config.port === 0 ? () => undefined : await claimPort(config.host, config.port).catch((err: NodeJS.ErrnoException) => {
    // An address this machine does not have is the host's fault; anything else, the port's.
    const hostFault = err.code === 'ENOTFOUND' || err.code === 'EADDRNOTAVAIL' || err.code === 'EAI_AGAIN';
    const why = err.code === 'EADDRINUSE' ? 'is already in use (another Sentio instance?)' : `cannot be bound (${err.code ?? err.message})`;
    const fix = hostFault ? 'set SENTIO_HOST to an address of this machine' : 'set SENTIO_PORT to a free port';
    process.stderr.write(`sentio: ${config.host}:${config.port} ${why}; ${fix}\n`);
    process.exit(1);
  });
  const sentio = config.httpWorkers > 1
    ? await startHttpWorkers(config, { engine, logger, engineMetrics })
    : await startSentio(config, { engine, logger, engineMetrics });
  logger.info({ host: config.host, port: sentio.port, tls: Boolean(config.tls), httpWorkers: config.httpWorkers }, 'sentio listening');
  logger.flush(); // supervisors and scripts wait for this line; do not leave it to the next block

  let stopping: StopSignal | undefined;
  let cutShort = false; // a second signal: whichever close ends first, the exit status is 1
  const stop = (signal: string, at = performance.now()) => {
    if (stopping) {
      if (repeatsFirst(stopping, signal)) return; // npm's copy of a process group's signal (signals.ts)
      cutShort = true;
      logger.warn({ signal }, 'second signal while draining: exiting without waiting for in-flight requests');
      logger.flush();
      // Requests still open get a 503 rather than a reset; HTTP worker threads must close their apps first
      // anyway (bounded), as exiting with their uWS handles open aborts the process.
      const cut = 'abort' in sentio ? sentio.abort() : sentio.close(0);
      void Promise.race([cut.catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]).finally(() => process.exit(1));
      return;
    }
    stopping = { signal, at };
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: draining in-flight requests');
    releasePort(); // the listener closes now: a successor may take the port while this one drains
    sentio.close(config.shutdownGraceMs).then(
      () => process.exit(cutShort ? 1 : 0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  opts.started?.();
  // One that came after the check above, while the server began to listen, is served as any other.
  const late = opts.stopAsked?.();
  if (late !== undefined) stop(late.signal, late.at);
}
