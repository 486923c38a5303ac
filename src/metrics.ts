/**
 * Prometheus metrics (`GET /metrics`). One registry per server instance, so several in one process
 * (tests) do not collide. Names follow `sentio_<noun>_<unit>`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { CONVERSATION_MODES } from './core/conversation-mode.js';
import { CRISIS_KINDS } from './core/crisis.js';
import { SHED_LIMITS } from './errors.js';
import type { RequestLogEntry } from './http/server.js';
import type { Transferred } from './store/context-store.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// The event-loop lag monitor samples on a timer; at prom-client's default 10 ms it woke an idle server
// 100 times a second. 100 ms still gives the lag histogram ten samples a second.
const LAG_RESOLUTION_MS = 100;
const LAG_STATS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'] as const;

export interface EngineGauges {
  queuedTexts: number;
  inFlightBatches: number;
  /** Totals, read at each scrape: ONNX Runtime runs, batches sent through the priority lane, batches that failed. */
  onnxRuns?: number;
  priorityBatches?: number;
  failedBatches?: number;
}

export interface EngineMetricsSource {
  text(): Promise<string>;
}

/**
 * The engine's metrics, kept where the engine runs: with SENTIO_HTTP_WORKERS that is the main thread,
 * and each worker's /metrics fetches this text from it, so every scrape sees the one engine's batches.
 */
export class EngineMetrics implements EngineMetricsSource {
  readonly #registry = new Registry();
  readonly #batchSize = new Histogram({
    name: 'sentio_engine_batch_size_texts', help: 'Texts per hand-off to the native engine (a batch, or a part of a streamed one)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers: [this.#registry],
  });
  readonly #inferenceTime = new Histogram({
    name: 'sentio_engine_inference_duration_seconds', help: 'Time of one hand-off to the native engine until its result (tokenization and inference)',
    buckets: LATENCY_BUCKETS, registers: [this.#registry],
  });

  constructor(source: () => EngineGauges) {
    // Read once per scrape (the collectors run in one turn), not once per series: each read asks the addon.
    let scraped: EngineGauges | undefined;
    const gauges = (): EngineGauges => {
      if (!scraped) {
        scraped = source();
        queueMicrotask(() => { scraped = undefined; });
      }
      return scraped;
    };
    new Gauge({
      name: 'sentio_engine_queue_depth_texts', help: 'Texts waiting for a batch', registers: [this.#registry],
      collect() { this.set(gauges().queuedTexts); },
    });
    new Gauge({
      name: 'sentio_engine_batches_in_flight', help: 'Batches handed to the engine and not finished', registers: [this.#registry],
      collect() { this.set(gauges().inFlightBatches); },
    });
    totalOf(this.#registry, 'sentio_engine_onnx_runs_total', 'ONNX Runtime runs: the addon cuts each batch into runs of texts of similar length', () => gauges().onnxRuns);
    totalOf(this.#registry, 'sentio_engine_priority_batches_total', 'Batches sent through the priority lane (urgent texts, light API keys beside bulk batches)', () => gauges().priorityBatches);
    totalOf(this.#registry, 'sentio_engine_failed_batches_total', 'Hand-offs to the native engine that failed (their texts answered 500 internal_error; the log says why)', () => gauges().failedBatches);
  }

  /** One engine run (EngineOptions.onBatch). */
  observeBatch(run: { texts: number; ms: number }): void {
    this.#batchSize.observe(run.texts);
    this.#inferenceTime.observe(run.ms / 1000);
  }

  text(): Promise<string> {
    return this.#registry.metrics();
  }
}

export class Metrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'sentio_http_requests_total', help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'] as const, registers: [this.registry],
  });
  readonly #latency = new Histogram({
    name: 'sentio_http_request_duration_seconds', help: 'HTTP request latency (time to the last byte written)',
    labelNames: ['route', 'method'] as const, buckets: LATENCY_BUCKETS, registers: [this.registry],
  });
  /** Every limit starts at 0, so that the shedding alert has a series before the first refusal. */
  readonly #shed = zeroed(new Counter({
    name: 'sentio_http_requests_shed_total', help: 'Requests refused at once to shed load, by the limit that refused them (503 overloaded, or 429 for one key\'s in-flight share)',
    labelNames: ['limit'] as const, registers: [this.registry],
  }), 'limit', SHED_LIMITS);
  readonly #tokens = new Counter({
    name: 'sentio_analysed_tokens_total', help: 'Emotion-model input tokens analysed', registers: [this.registry],
  });
  readonly analysisTime = new Histogram({
    name: 'sentio_engine_request_duration_seconds', help: 'Time an engine call waited for its scores (queue and inference); calls refused or aborted are not counted',
    buckets: LATENCY_BUCKETS, registers: [this.registry],
  });
  readonly llmLatency = new Histogram({
    name: 'sentio_llm_request_duration_seconds', help: 'Upstream LLM call time: to the last token (outcome ok), or to the upstream\'s failure (outcome error: also counted in sentio_llm_errors_total)',
    labelNames: ['model', 'stream', 'outcome'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers: [this.registry],
  });
  /** Every kind, mode and signal starts at 0, so that a rate or an alert on one has a series before its first count. */
  readonly llmErrors = zeroed(new Counter({
    name: 'sentio_llm_errors_total', help: 'Upstream LLM failures by kind (the error code the client got)',
    labelNames: ['kind'] as const, registers: [this.registry],
  }), 'kind', ['upstream_error', 'upstream_timeout', 'upstream_rate_limited']);
  readonly conversationModes = zeroed(new Counter({
    name: 'sentio_chat_conversation_modes_total', help: 'Chat turns by the conversation mode chosen for the latest user message',
    labelNames: ['mode'] as const, registers: [this.registry],
  }), 'mode', CONVERSATION_MODES);
  readonly crisisSignals = zeroed(new Counter({
    name: 'sentio_chat_crisis_signals_total', help: 'Chat turns that chose crisis_intervention, by the kind of signal behind it',
    labelNames: ['kind'] as const, registers: [this.registry],
  }), 'kind', CRISIS_KINDS);

  readonly #engine: EngineMetricsSource;
  #perWorker: (() => void) | undefined;
  readonly #lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });

  constructor(sources: {
    /** The engine's own metrics: in this thread, or the main thread's for an HTTP worker. */
    engine: EngineMetricsSource;
    contexts: () => Promise<number>;
    /** Whether the context store can be reached (Redis connected; always, in process). */
    contextsAvailable?: (() => Promise<boolean>) | undefined;
    transferred?: (() => Transferred) | undefined;
    /** The HTTP worker thread this server is (SENTIO_HTTP_WORKERS > 1): its requests get a series of their own. */
    worker?: number | undefined;
    /** Requests in progress now, and the most of them one API key holds (HttpServer). */
    inFlight?: () => { requests: number; busiestKey: number };
  }) {
    this.#engine = sources.engine;
    if (sources.worker !== undefined) {
      const perWorker = new Counter({
        name: 'sentio_http_worker_requests_total', help: 'HTTP requests answered by each HTTP worker thread (how the kernel spreads connections)',
        labelNames: ['worker'] as const, registers: [this.registry],
      });
      const labels = { worker: String(sources.worker) };
      perWorker.inc(labels, 0);
      this.#perWorker = () => perWorker.inc(labels);
    }
    collectDefaultMetrics({ register: this.registry, prefix: 'sentio_', eventLoopMonitoringPrecision: LAG_RESOLUTION_MS });
    this.#replaceLagStats();
    // While the store cannot be read (the main thread's, for an HTTP worker without Redis), the last count read: 0 would read as "no contexts".
    let lastContexts = 0;
    new Gauge({
      name: 'sentio_contexts_stored', help: 'Contexts held by the context store: in process, expired ones until they are read or pushed out; in Redis, counted at most every SENTIO_REDIS_COUNT_SECONDS (the last count read while it cannot be read)', registers: [this.registry],
      async collect() {
        lastContexts = await sources.contexts().catch(() => lastContexts);
        this.set(lastContexts);
      },
    });
    const available = sources.contextsAvailable;
    if (available) {
      new Gauge({
        name: 'sentio_context_store_up', help: 'Whether the context store can be reached: 1 in process; with Redis, 1 while connected (contexts, lookups and Idempotency-Key requests answer 503 while it is 0)', registers: [this.registry],
        async collect() { this.set((await available().catch(() => false)) ? 1 : 0); },
      });
    }
    const inFlight = sources.inFlight;
    if (inFlight) {
      new Gauge({
        name: 'sentio_http_requests_in_flight', help: 'Requests in progress (streams, health checks and this scrape included): SENTIO_MAX_IN_FLIGHT limits the API requests among them', registers: [this.registry],
        collect() { this.set(inFlight().requests); },
      });
      new Gauge({
        name: 'sentio_http_key_requests_in_flight_max', help: 'The most requests in progress held by one API key: SENTIO_MAX_IN_FLIGHT_PER_KEY limits it', registers: [this.registry],
        collect() { this.set(inFlight().busiestKey); },
      });
    }
    const transferred = sources.transferred;
    if (transferred) {
      new Counter({
        name: 'sentio_context_messages_transferred_total',
        help: 'Context messages received from the shared store (Redis, or the main thread for HTTP workers): "since" extends a copy held, "whole" is a whole history (a first read, or SENTIO_CONTEXT_CACHE_MESSAGES too small)',
        labelNames: ['copy'] as const, registers: [this.registry],
        collect() {
          const t = transferred();
          this.reset();
          this.inc({ copy: 'since' }, t.since);
          this.inc({ copy: 'whole' }, t.whole);
        },
      });
    }
  }

  /**
   * Stops this instance's event-loop delay sampling (an HTTP worker's failed start otherwise left it running;
   * prom-client's own, behind its default metrics, is one per process and stays).
   */
  close(): void {
    this.#lag.disable();
  }

  /**
   * prom-client reports Node's event-loop delay histogram as it is, and on Node 20 that histogram holds the
   * whole interval between its timer's firings, the resolution included: an idle server read 100 ms of lag
   * at every percentile. The same seven gauges, from a histogram of our own, with the resolution taken off.
   */
  #replaceLagStats(): void {
    const delay = this.#lag;
    delay.enable();
    let snapshot: Record<(typeof LAG_STATS)[number], number> | undefined;
    const lag = (ns: number) => Math.max(0, ns / 1e6 - LAG_RESOLUTION_MS) / 1000;
    for (const stat of LAG_STATS) {
      const name = `sentio_nodejs_eventloop_lag_${stat}_seconds`;
      this.registry.removeSingleMetric(name);
      new Gauge({
        name, help: `The ${stat} of event-loop lag since the last scrape, in seconds`, registers: [this.registry],
        collect() {
          // The first of the seven read in a scrape takes the snapshot and starts a new interval.
          if (stat === 'min' || !snapshot) {
            snapshot = delay.count === 0 ? { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 } : {
              min: lag(delay.min), max: lag(delay.max), mean: lag(delay.mean), stddev: delay.stddev / 1e9,
              p50: lag(delay.percentile(50)), p90: lag(delay.percentile(90)), p99: lag(delay.percentile(99)),
            };
            delay.reset();
          }
          this.set(Number.isFinite(snapshot[stat]) ? snapshot[stat] : 0);
        },
      });
    }
  }

  /** The text of GET /metrics: this server's metrics, then the engine's. */
  async text(): Promise<string> {
    const [own, engine] = await Promise.all([this.registry.metrics(), this.#engine.text()]);
    return `${own}\n${engine}`;
  }

  /** This server's metrics as data, for threadsText() on the main thread (HTTP workers). */
  json(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    return this.registry.getMetricsAsJSON();
  }

  observeRequest(e: RequestLogEntry): void {
    this.#requests.inc({ route: e.route, method: e.method, status: String(e.status) });
    this.#perWorker?.();
    this.#latency.observe({ route: e.route, method: e.method }, e.latency_ms / 1000);
    if (e.analysed_tokens > 0) this.#tokens.inc(e.analysed_tokens);
    if (e.shed) this.#shed.inc({ limit: e.shed });
  }
}

function zeroed<L extends string>(counter: Counter<L>, label: L, values: readonly string[]): Counter<L> {
  for (const v of values) counter.inc({ [label]: v } as Partial<Record<L, string>>, 0);
  return counter;
}

/**
 * One /metrics for several HTTP worker threads of one process: each thread's metrics (Metrics.json()),
 * summed, then the engine's. A scrape reaches one worker, and each worker counting alone made every
 * counter go up and down from scrape to scrape, which Prometheus reads as resets. Counters and histograms
 * add up; what describes the whole process (its CPU, memory, descriptors, start time) or one shared store
 * is taken once; event-loop lag is the worst thread's.
 */
export async function threadsText(parts: MetricObjectWithValues<MetricValue<string>>[][], engine: EngineMetricsSource): Promise<string> {
  const aggregator = (name: string): string | undefined => {
    if (name.startsWith('sentio_process_') || name === 'sentio_contexts_stored') return 'first';
    // With Redis each worker has its own connection: one that is down fails that worker's requests.
    if (name === 'sentio_context_store_up') return 'min';
    if (name.startsWith('sentio_nodejs_eventloop_lag_') || name === 'sentio_http_key_requests_in_flight_max') return 'max';
    return undefined; // as declared (sum for ours)
  };
  const marked = parts.map((metrics) => metrics.map((m) => {
    const a = aggregator(m.name);
    return a ? { ...m, aggregator: a as typeof m.aggregator } : m;
  }));
  const [own, engineText] = await Promise.all([AggregatorRegistry.aggregate(marked).metrics(), engine.text()]);
  return `${own}\n${engineText}`;
}

/** A counter that mirrors a running total kept elsewhere, read at each scrape. */
function totalOf(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  let seen = 0;
  new Counter({
    name, help, registers: [registry],
    collect() {
      const now = read();
      if (now === undefined || now <= seen) return;
      this.inc(now - seen);
      seen = now;
    },
  });
}
