/**
 * Assembles Sentio from its configuration: engine → service → routes → HTTP server. serve.ts runs it as a
 * process; tests start it in-process on an ephemeral loopback port.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { ScoreMapper } from './core/emotions.js';
import type { LabelOrder } from './core/emotions.js';
import { EmotionService } from './core/emotion-service.js';
import type { ScoreSource } from './core/emotion-service.js';
import type { ContextStore } from './store/context-store.js';
import { openStores } from './store/factory.js';
import { CompositeKeyVerifier, StaticKeyVerifier } from './auth/api-keys.js';
import type { KeyVerifier } from './auth/api-keys.js';
import { HttpServer, requestOf } from './http/server.js';
import { Metrics } from './metrics.js';
import type { EngineGauges, EngineMetricsSource } from './metrics.js';
import type { Route } from './http/server.js';
import { emotionRoutes } from './api/emotion-routes.js';
import { v1Dialect } from './api/v1/emotions.js';
import { v2Dialect } from './api/v2/emotions.js';
import { healthRoutes } from './api/health.js';
import { openApiRoute } from './api/openapi.js';
import { chatRoutes } from './api/chat/serving.js';
import { createLogger } from './log.js';
import { accessLogger } from './http/access-log.js';
import { warmUpReading } from './core/conversation-mode.js';
import { TextReader } from './core/text-reader.js';
import { mapLowerError } from './api/error-mapping.js';
import { FileKeyVerifier } from './auth/key-file.js';
import { rateLimiter } from './guard/rate-limit.js';
import type { RateLimitStore } from './store/rate-limit-store.js';
import { idempotencyMiddleware } from './guard/idempotency.js';
import type { IdempotencyStore } from './store/idempotency-store.js';

/** What the server needs from an inference engine. */
export interface AnalysisEngine extends ScoreSource {
  readonly labels: LabelOrder;
  describe(): Record<string, unknown>;
  /** Queue gauges for /metrics. */
  stats?(): EngineGauges;
  close(opts?: { drain?: boolean }): Promise<void>;
}

/**
 * Times every engine call: a histogram of the calls that got their scores (a refused or aborted call's
 * near-zero wait would pull the percentiles down just when the engine is overloaded), and
 * x-inference-time on the request it served.
 */
function meteredEngine(engine: AnalysisEngine, metrics: Metrics): ScoreSource {
  return {
    async analyze(texts, opts) {
      const started = performance.now();
      let scored = false;
      const ctx = requestOf(opts?.signal);
      try {
        // The request's key is the tenant the engine's queue keeps fair order between.
        const out = await engine.analyze(texts, ctx?.key ? { ...opts, tenant: ctx.key.id } : opts);
        scored = true;
        return out;
      } finally {
        const ms = performance.now() - started;
        if (scored) metrics.analysisTime.observe(ms / 1000);
        if (ctx) ctx.inferenceMs += ms;
      }
    },
  };
}

export interface SentioOptions {
  engine: AnalysisEngine;
  logger?: Logger;
  store?: ContextStore;
  rateLimits?: RateLimitStore;
  idempotency?: IdempotencyStore;
  keys?: KeyVerifier;
  /** Where /metrics reads the engine's metrics (an EngineMetrics fed by the engine's onBatch). */
  engineMetrics: EngineMetricsSource;
  /** The whole text of /metrics, where it is not this server's alone (an HTTP worker: every worker's, summed). */
  metricsText?: () => Promise<string>;
  /** This server's index among the HTTP worker threads, if it is one. */
  worker?: number;
  /** Milliseconds clock for contexts (tests). */
  now?: () => number;
  /** Node options for the thread that reads chat messages (tests running the TypeScript sources: their loader). */
  readerExecArgv?: string[];
}

export interface Sentio {
  readonly port: number;
  readonly server: HttpServer;
  readonly service: EmotionService;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Graceful stop: refuse new connections, let in-flight requests finish within `graceMs`, release. */
  close(graceMs?: number): Promise<void>;
}

export async function startSentio(config: Config, opts: SentioOptions): Promise<Sentio> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  // Load the crisis model (missing or corrupt: start-up fails, not the first chat turn) and compile the crisis
  // reading's patterns, which V8 does on first use: 0.3 s here that the first chat turns paid instead. Chat
  // reads on its own thread (TextReader, which warms up the same way); this thread reads if that one is lost.
  warmUpReading();
  // The key file before the stores: a file unusable, or with no active key, stops the start with nothing to close
  // (an HTTP worker that failed here with a Redis client open stayed alive, and was spawned again).
  let keyFile: FileKeyVerifier | undefined;
  if (!opts.keys && config.apiKeysFile) {
    keyFile = new FileKeyVerifier(config.apiKeysFile, logger);
    // A server no key can reach is refused a start, as one with no key configured is (DECISIONS.md).
    if (keyFile.size === 0 && config.apiKeys.length === 0) {
      throw new Error(`SENTIO_API_KEYS_FILE: ${config.apiKeysFile} holds no active key; create one with \`npx sentio keys create --name <name> --file ${config.apiKeysFile}\``);
    }
  }
  // In process, or in Redis when SENTIO_REDIS_URL is set (throws when Redis cannot be reached).
  const stores = await openStores(config, { logger, now: opts.now, contexts: opts.store, rateLimits: opts.rateLimits, idempotency: opts.idempotency });
  // What the server holds beside the stores, given back in reverse by close(), and by a start that fails after
  // this (a port in use, TLS files changed since they were read): an HTTP worker's failed start otherwise kept
  // its Redis client, and with it the thread, alive. Each step runs once; one that throws does not stop the rest.
  const undo: Array<() => unknown> = [];
  const giveBack = () => {
    for (const step of undo.splice(0).reverse()) {
      try {
        step();
      } catch {
        // giving back what was taken; an error that matters is the one the caller reports
      }
    }
  };
  try {
    const store = stores.contexts;
    const metrics = new Metrics({
      engine: opts.engineMetrics,
      contexts: () => store.size(),
      contextsAvailable: () => store.available(),
      transferred: store.transferred?.bind(store),
      worker: opts.worker,
      // Read at scrape time only, once the server below exists.
      inFlight: () => ({ requests: server.inFlight, busiestKey: server.busiestKeyInFlight }),
    });
    undo.push(() => metrics.close());
    const service = new EmotionService(meteredEngine(opts.engine, metrics), new ScoreMapper(opts.engine.labels), store, opts.now);
    keyFile?.watch();
    undo.push(() => keyFile?.close());
    const keys = opts.keys ?? new CompositeKeyVerifier([new StaticKeyVerifier(config.apiKeys), ...(keyFile ? [keyFile] : [])]);
    const reloadKeys = () => keyFile?.reload();
    process.on('SIGHUP', reloadKeys);
    undo.push(() => process.off('SIGHUP', reloadKeys));
    let closing = false;

    const reader = new TextReader({ logger, thread: config.chat.readThread, execArgv: opts.readerExecArgv });
    undo.push(() => reader.close());
    const chat = chatRoutes({ service, config, logger, metrics, reader });
    undo.push(() => chat.close());
    const rateLimit = rateLimiter({ store: stores.rateLimits, defaultRpm: config.rateLimitRpm });
    const apiRoutes: Route[] = [
      ...emotionRoutes(v1Dialect, { service, limits: config.limits, charge: rateLimit.charge }),
      ...emotionRoutes(v2Dialect, { service, limits: config.limits, charge: rateLimit.charge }),
      ...chat.routes,
    ];
    const routes: Route[] = [
      ...healthRoutes({ ready: () => !closing, describe: () => opts.engine.describe() }),
      ...apiRoutes,
    ];
    routes.push(openApiRoute(routes, config.limits), {
      method: 'get', pattern: '/metrics', auth: true, shed: false, summary: 'Prometheus metrics',
      handler: async () => ({ status: 200, body: undefined, rawBody: await (opts.metricsText ?? (() => metrics.text()))(), contentType: metrics.registry.contentType }),
    });

    // Access lines are built field by field from ids and numbers (RequestLogEntry), never from headers or
    // bodies, so they skip the redaction pass: its wildcard paths cost as much as the rest of the line.
    const accessLog = accessLogger(logger);
    const server = new HttpServer({
      routes,
      keys,
      logger,
      tls: config.tls,
      maxBodyBytes: config.limits.bodyBytes,
      // An analysed message is at most 7 (two objects, five members): room for the most messages any
      // request may hold (a batch, a context analysis, a chat, as configured), at the default limits 4
      // times the largest batch, while a 1 MiB body shaped to cost most (a flat object, deep brackets)
      // stays within about 20 ms of parsing instead of 60-120.
      maxJsonNodes: Math.max(32_768, 16 * Math.max(config.limits.batchMessages, config.limits.messages, config.limits.chatMessages)),
      requestTimeoutMs: config.requestTimeoutMs,
      maxInFlight: config.maxInFlight,
      maxInFlightPerKey: config.maxInFlightPerKey,
      mapError: mapLowerError,
      admit: rateLimit.admit,
      quota: rateLimit.quota,
      middleware: [
        idempotencyMiddleware({
          store: stores.idempotency,
          ttlMs: config.contextTtlSeconds * 1000,
          maxKeyBytes: config.limits.idempotencyKeyBytes,
          charge: rateLimit.charge,
        }),
      ],
      onRequestDone: (entry) => {
        metrics.observeRequest(entry);
        accessLog(entry);
      },
    });
    undo.push(() => server.closeAll());
    const port = await server.listen(config.host, config.port);

    return {
      port,
      server,
      service,
      logger,
      metrics,
      async close(graceMs = 10_000) {
        closing = true;
        server.stopListening();
        // Drained, and then no new request on the open connections for 250 ms, within the grace period.
        await server.waitQuiet(250, graceMs);
        server.closeAll();
        // Interrupted streams end their handlers (and log 503) as their next write fails: a moment, not a grace.
        await server.waitIdle(1_000);
        giveBack(); // the server's closeAll() again is a no-op; then the upstream pool, SIGHUP, key file, metrics
        await stores.close();
        await opts.engine.close();
        logger.flush();
      },
    };
  } catch (err) {
    giveBack();
    await stores.close().catch(() => undefined);
    throw err;
  }
}
