/**
 * Configuration: one zod schema over the environment, parsed once and frozen. Every knob is listed in
 * the README's configuration table; `SENTIO_` is the only prefix read.
 */
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { CONTEXT_OVERHEAD_BYTES, DEFAULT_CACHED_MESSAGES, MESSAGE_OVERHEAD_BYTES } from './store/context-store.js';
import { ENGINE_OPTION_MAX } from './engine/options.js';
import { DEFAULT_COUNT_SECONDS } from './store/redis/context-store.js';
import { shippedModelDir } from './repo-paths.js';

const bool = z
  .enum(['0', '1', 'true', 'false', 'yes', 'no'])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');
/** Decimal digits only: Number() would also take '0x50', '1e3' and ' '. */
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\s*\d+\s*$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max)).default(def);
/** A decimal fraction, no exponent or hex: '0.5'. */
const decimal = (def: number, min: number, max: number) =>
  z.string().regex(/^\s*\d+(\.\d+)?\s*$/, 'expected a decimal number').transform(Number).pipe(z.number().min(min).max(max)).default(def);
/** Milliseconds handed to setTimeout, which fires at once past 2^31 - 1 (Node: TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;

const EnvSchema = z.object({
  SENTIO_PORT: int(8080, 0, 65535),
  SENTIO_HOST: z.string().min(1).default('127.0.0.1'),
  SENTIO_API_KEYS: z.string().optional(),
  SENTIO_API_KEYS_FILE: z.string().optional(),
  SENTIO_TLS_CERT: z.string().optional(),
  SENTIO_TLS_KEY: z.string().optional(),
  SENTIO_ALLOW_INSECURE_HTTP: bool.default(false),
  SENTIO_LLM_BASE_URL: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
  SENTIO_LLM_API_KEY: z.string().optional(),
  SENTIO_LLM_MODELS: z.string().default('llm-k2-thinking-turbo=llm-k2-thinking-turbo,llm-k2-thinking=llm-k2-thinking'),
  SENTIO_LLM_TIMEOUT_MS: int(60_000, 1, MAX_TIMER_MS),
  /** Emotion-aware system instruction in chat (docs/chat.md, "Guidance"); a request can still turn it off. */
  SENTIO_CHAT_GUIDANCE: bool.default(true),
  /** Long chat messages' words read on a thread of their own, not the event loop (core/text-reader.ts). */
  SENTIO_CHAT_READ_THREAD: bool.default(true),
  SENTIO_CONTEXT_TTL_SECONDS: int(86_400, 1),
  /**
   * Contexts kept in memory; the least recently used is evicted past this. Bounded because the LRU sets
   * aside its index for every slot at start: 30 million slots took 1.1 GB before the first request.
   */
  SENTIO_CONTEXT_MAX: int(100_000, 1, 10_000_000),
  /** Messages kept per context; the oldest is evicted past this (its lookup then answers 404). */
  SENTIO_CONTEXT_MAX_MESSAGES: int(1_000, 1),
  /** Estimated MiB of all contexts held in process together; past it the least recently used go. */
  SENTIO_CONTEXT_MAX_MB: int(512, 1, 1_048_576),
  /** redis:// or rediss://, with a database number or none (ioredis read "/abc" as NaN and crashed the start). */
  SENTIO_REDIS_URL: z.string()
    // In this order, each stopping the rest: a URL Node cannot read (a port past 65535) was reported as the
    // wrong scheme when zod's URL check came first.
    .refine((u) => URL.canParse(u), { message: 'not a URL this server can read (a port past 65535, a space?)', abort: true })
    .refine((u) => /^rediss?:$/.test(new URL(u).protocol), { message: 'expected a redis:// or rediss:// URL', abort: true })
    .refine((u) => /^\/?(\d+)?$/.test(new URL(u).pathname), 'the path must be a database number, such as /0')
    .optional(),
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  SENTIO_REDIS_PREFIX: z.string().min(1).max(64).default('sentio:'),
  /** A Redis command not answered within this fails with 503: fail fast rather than queue behind a dead server. */
  SENTIO_REDIS_TIMEOUT_MS: int(1_000, 10, 60_000),
  /** How long one count of the contexts in Redis (a SCAN of every context key) serves /metrics; 0 counts at every scrape. */
  SENTIO_REDIS_COUNT_SECONDS: int(DEFAULT_COUNT_SECONDS, 0, 3_600),
  /**
   * Context messages kept decoded from the shared store (Redis, or the main thread for HTTP workers
   * without Redis), so that a read or append fetches only what changed. docs/deployment.md
   */
  SENTIO_CONTEXT_CACHE_MESSAGES: int(DEFAULT_CACHED_MESSAGES, 0),
  /** HTTP threads (uWS apps on worker threads sharing the port); 1 serves HTTP on the main thread. docs/deployment.md */
  SENTIO_HTTP_WORKERS: int(1, 1, 256),
  SENTIO_RATE_LIMIT_RPM: int(600, 1),
  SENTIO_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SENTIO_MAX_BODY_BYTES: int(1_048_576, 1),
  SENTIO_MAX_MESSAGE_BYTES: int(8_192, 1),
  SENTIO_MAX_MESSAGES: int(64, 1),
  SENTIO_MAX_BATCH_MESSAGES: int(1_024, 1),
  SENTIO_MAX_CHAT_MESSAGES: int(256, 1),
  /** UTF-8 bytes of an id or key; each ends up in store keys and log lines, hence the ceiling. */
  SENTIO_MAX_CONTEXT_ID_BYTES: int(128, 1, 4_096),
  SENTIO_MAX_EXTERNAL_ID_BYTES: int(128, 1, 4_096),
  SENTIO_MAX_IDEMPOTENCY_KEY_BYTES: int(255, 1, 4_096),
  /** A request whose body has not fully arrived after this long gets its connection closed. */
  SENTIO_REQUEST_TIMEOUT_MS: int(30_000, 1, MAX_TIMER_MS),
  /** On SIGTERM/SIGINT, how long in-flight requests and streams may take to finish before they are cut. */
  SENTIO_SHUTDOWN_GRACE_MS: int(10_000, 0, MAX_TIMER_MS),
  /** Requests in progress at once; past it new ones get 503 at once (each may hold a 1 MiB body). */
  SENTIO_MAX_IN_FLIGHT: int(512, 1),
  /** 0: three quarters of SENTIO_MAX_IN_FLIGHT, so that one key leaves a quarter of the slots to the others. */
  SENTIO_MAX_IN_FLIGHT_PER_KEY: int(0, 0),
  /** V8 grows the heap to (1 + this/100) x what survived the last full collection; 0 = V8's own heuristic (docs/deployment.md). */
  SENTIO_HEAP_GROWTH_PERCENT: int(100, 0, 1_000),
  SENTIO_MODEL_DIR: z.string().default(shippedModelDir()),
  SENTIO_EXECUTION_PROVIDER: z.enum(['auto', 'cuda', 'cpu', 'hybrid']).default('auto'),
  /** With SENTIO_EXECUTION_PROVIDER=hybrid: requests of at least this many texts run on the GPU (docs/gpu.md#hybrid). */
  SENTIO_HYBRID_MIN_TEXTS: int(32, 1, ENGINE_OPTION_MAX),
  /** Engine threads running batches in parallel; 0 = one per core up to 4 (docs/engine.md). */
  SENTIO_INFERENCE_THREADS: int(0, 0, 256),
  SENTIO_INTRA_OP_THREADS: int(0, 0, 1024),
  SENTIO_INTER_OP_THREADS: int(1, 0, 1024),
  /** Nice increment for the engine threads: the JS thread first when both want a CPU (docs/engine.md, Thread priority). */
  SENTIO_THREAD_NICE: int(10, 0, 19),
  /** Linux: keep a woken engine thread off the JS thread's CPU (docs/engine.md). */
  SENTIO_STEER_WAKEUPS: bool.default(true),
  SENTIO_GRAPH_OPTIMIZATION: z.enum(['disabled', 'basic', 'extended', 'all']).default('all'),
  SENTIO_PACKED_RECURRENCE: bool.default(true),
  SENTIO_FUSED_POOLING: bool.default(true),
  SENTIO_BATCHING: bool.default(true),
  SENTIO_BATCH_MAX_SIZE: int(256, 1, 4096),
  SENTIO_BATCH_MAX_TOKENS: int(0, 0, ENGINE_OPTION_MAX),
  SENTIO_BATCH_MAX_WAIT_MS: decimal(2, 0, 1000),
  SENTIO_BATCH_STREAM_CHUNK: int(16, 0, 4096),
  SENTIO_RUN_MAX_TOKENS: int(1024, 0, 1 << 24),
  SENTIO_BATCH_FAIR: bool.default(true),
  SENTIO_BATCH_LANE: bool.default(true),
  SENTIO_QUEUE_MAX: int(4_096, 1, ENGINE_OPTION_MAX),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Limits {
  bodyBytes: number;
  messageBytes: number;
  messages: number;
  batchMessages: number;
  chatMessages: number;
  contextIdBytes: number;
  externalIdBytes: number;
  idempotencyKeyBytes: number;
}

export interface Config {
  port: number;
  host: string;
  apiKeys: readonly string[];
  apiKeysFile: string | undefined;
  tls: { cert: string; key: string } | undefined;
  allowInsecureHttp: boolean;
  llm: { baseUrl: string | undefined; apiKey: string | undefined; models: ReadonlyMap<string, string>; timeoutMs: number };
  chat: { guidance: boolean; readThread: boolean };
  contextTtlSeconds: number;
  contextMax: number;
  contextMaxMessages: number;
  /** Estimated bytes of the in-process contexts together (the memory store). */
  contextMaxBytes: number;
  redisUrl: string | undefined;
  redisPrefix: string;
  redisTimeoutMs: number;
  redisCountSeconds: number;
  contextCacheMessages: number;
  httpWorkers: number;
  rateLimitRpm: number;
  logLevel: Env['SENTIO_LOG_LEVEL'];
  limits: Limits;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  maxInFlight: number;
  maxInFlightPerKey: number;
  heapGrowthPercent: number;
  engine: {
    modelDir: string;
    executionProvider: Env['SENTIO_EXECUTION_PROVIDER'];
    hybridMinTexts: number;
    inferenceThreads: number;
    intraOpThreads: number;
    interOpThreads: number;
    graphOptimization: Env['SENTIO_GRAPH_OPTIMIZATION'];
    packedRecurrence: boolean;
    fusedPooling: boolean;
    threadNice: number;
    steerWakeups: boolean;
    batching: boolean;
    maxBatchSize: number;
    maxBatchTokens: number;
    maxWaitMs: number;
    maxQueue: number;
    streamChunk: number;
    maxRunTokens: number;
    fairTenants: boolean;
    priorityLane: boolean;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function parseModelMap(spec: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const pair of spec.split(',')) {
    const trimmed = pair.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0 || eq === trimmed.length - 1) {
      throw new ConfigError(`SENTIO_LLM_MODELS: expected public=upstream pairs, got "${trimmed}"`);
    }
    const name = trimmed.slice(0, eq).trim();
    // a second pair for one name silently replaced the first: which upstream served it depended on the order
    if (map.has(name)) throw new ConfigError(`SENTIO_LLM_MODELS: the public name "${name}" is given twice`);
    map.set(name, trimmed.slice(eq + 1).trim());
  }
  if (map.size === 0) throw new ConfigError('SENTIO_LLM_MODELS: no public=upstream pair (unset it for the default pair)');
  return map;
}

/**
 * SENTIO_* names read outside this schema: the addon override (binding.ts), its build, the packed kernels'
 * cap (native/packed_gru.cc), the benches' texts, tests.
 */
const OTHER_SETTINGS = /^SENTIO_(NATIVE_ADDON|ORT_LIB_DIR|PACKED_GRU_ISA|DATA|TEST_.*)$/;

/**
 * Warnings for SENTIO_* variables that no setting reads, with the setting nearest in spelling: a
 * misspelt limit (SENTIO_MAX_INFLIGHT) was ignored without a word, its default silently in force.
 */
export function unknownSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = Object.keys(EnvSchema.shape);
  return Object.keys(env)
    .filter((k) => k.startsWith('SENTIO_') && !known.includes(k) && !OTHER_SETTINGS.test(k))
    .map((k) => {
      const [nearest] = known.map((n) => [n, editDistance(k, n)] as const).sort((a, b) => a[1] - b[1]);
      const hint = nearest && nearest[1] <= 3 ? `; did you mean ${nearest[0]}?` : '';
      return `${k} is not a Sentio setting and is ignored${hint}`;
    });
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** Parse the environment (only SENTIO_* keys are read). Throws ConfigError naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  // An empty value is an unset one (`SENTIO_PORT= npm start`), not 0, false or '': the default applies.
  for (const [k, v] of Object.entries(env)) if (k.startsWith('SENTIO_') && v !== undefined && v.trim() !== '') picked[k] = v;
  const parsed = EnvSchema.safeParse(picked);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${String(issue?.path[0] ?? 'environment')}: ${issue?.message ?? 'invalid'}`);
  }
  const e = parsed.data;
  // One context at its largest must fit, or the store could not keep it at all (lru-cache drops an entry
  // larger than its bound).
  const fullContext = CONTEXT_OVERHEAD_BYTES + e.SENTIO_CONTEXT_MAX_MESSAGES * (MESSAGE_OVERHEAD_BYTES + e.SENTIO_MAX_MESSAGE_BYTES);
  if (e.SENTIO_REDIS_URL === undefined && e.SENTIO_CONTEXT_MAX_MB * 1_048_576 < fullContext) { // with Redis it bounds nothing
    throw new ConfigError(`SENTIO_CONTEXT_MAX_MB: must hold one full context (SENTIO_CONTEXT_MAX_MESSAGES messages of SENTIO_MAX_MESSAGE_BYTES), at least ${Math.ceil(fullContext / 1_048_576)}`);
  }
  // A body smaller than one message at its limit turned every analysis with such a message into a 413.
  if (e.SENTIO_MAX_BODY_BYTES < e.SENTIO_MAX_MESSAGE_BYTES) {
    throw new ConfigError(`SENTIO_MAX_BODY_BYTES: must be at least SENTIO_MAX_MESSAGE_BYTES (${e.SENTIO_MAX_MESSAGE_BYTES}), as a body carries one message at least`);
  }
  if ((e.SENTIO_TLS_CERT === undefined) !== (e.SENTIO_TLS_KEY === undefined)) {
    throw new ConfigError('SENTIO_TLS_CERT and SENTIO_TLS_KEY must be set together');
  }
  const apiKeys = (e.SENTIO_API_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  const config: Config = {
    port: e.SENTIO_PORT,
    // "[::1]" as in a URL: the socket takes the address without brackets
    host: e.SENTIO_HOST.replace(/^\[(.*)\]$/, '$1'),
    apiKeys,
    apiKeysFile: e.SENTIO_API_KEYS_FILE,
    tls: e.SENTIO_TLS_CERT && e.SENTIO_TLS_KEY ? { cert: e.SENTIO_TLS_CERT, key: e.SENTIO_TLS_KEY } : undefined,
    allowInsecureHttp: e.SENTIO_ALLOW_INSECURE_HTTP,
    llm: {
      baseUrl: e.SENTIO_LLM_BASE_URL?.replace(/\/+$/, ''),
      apiKey: e.SENTIO_LLM_API_KEY,
      models: parseModelMap(e.SENTIO_LLM_MODELS),
      timeoutMs: e.SENTIO_LLM_TIMEOUT_MS,
    },
    chat: { guidance: e.SENTIO_CHAT_GUIDANCE, readThread: e.SENTIO_CHAT_READ_THREAD },
    contextTtlSeconds: e.SENTIO_CONTEXT_TTL_SECONDS,
    contextMax: e.SENTIO_CONTEXT_MAX,
    contextMaxMessages: e.SENTIO_CONTEXT_MAX_MESSAGES,
    contextMaxBytes: e.SENTIO_CONTEXT_MAX_MB * 1_048_576,
    redisUrl: e.SENTIO_REDIS_URL,
    redisPrefix: e.SENTIO_REDIS_PREFIX,
    redisTimeoutMs: e.SENTIO_REDIS_TIMEOUT_MS,
    redisCountSeconds: e.SENTIO_REDIS_COUNT_SECONDS,
    contextCacheMessages: e.SENTIO_CONTEXT_CACHE_MESSAGES,
    httpWorkers: e.SENTIO_HTTP_WORKERS,
    rateLimitRpm: e.SENTIO_RATE_LIMIT_RPM,
    logLevel: e.SENTIO_LOG_LEVEL,
    limits: {
      bodyBytes: e.SENTIO_MAX_BODY_BYTES,
      messageBytes: e.SENTIO_MAX_MESSAGE_BYTES,
      messages: e.SENTIO_MAX_MESSAGES,
      batchMessages: e.SENTIO_MAX_BATCH_MESSAGES,
      chatMessages: e.SENTIO_MAX_CHAT_MESSAGES,
      contextIdBytes: e.SENTIO_MAX_CONTEXT_ID_BYTES,
      externalIdBytes: e.SENTIO_MAX_EXTERNAL_ID_BYTES,
      idempotencyKeyBytes: e.SENTIO_MAX_IDEMPOTENCY_KEY_BYTES,
    },
    requestTimeoutMs: e.SENTIO_REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SENTIO_SHUTDOWN_GRACE_MS,
    maxInFlight: e.SENTIO_MAX_IN_FLIGHT,
    // Three quarters, and always a slot left to the other keys where there are two or more.
    maxInFlightPerKey: e.SENTIO_MAX_IN_FLIGHT_PER_KEY || Math.max(1, Math.min(e.SENTIO_MAX_IN_FLIGHT - 1, Math.ceil(e.SENTIO_MAX_IN_FLIGHT * 3 / 4))),
    heapGrowthPercent: e.SENTIO_HEAP_GROWTH_PERCENT,
    engine: {
      modelDir: e.SENTIO_MODEL_DIR,
      executionProvider: e.SENTIO_EXECUTION_PROVIDER,
      hybridMinTexts: e.SENTIO_HYBRID_MIN_TEXTS,
      inferenceThreads: e.SENTIO_INFERENCE_THREADS,
      intraOpThreads: e.SENTIO_INTRA_OP_THREADS,
      interOpThreads: e.SENTIO_INTER_OP_THREADS,
      graphOptimization: e.SENTIO_GRAPH_OPTIMIZATION,
      packedRecurrence: e.SENTIO_PACKED_RECURRENCE,
      fusedPooling: e.SENTIO_FUSED_POOLING,
      threadNice: e.SENTIO_THREAD_NICE,
      steerWakeups: e.SENTIO_STEER_WAKEUPS,
      batching: e.SENTIO_BATCHING,
      maxBatchSize: e.SENTIO_BATCH_MAX_SIZE,
      maxBatchTokens: e.SENTIO_BATCH_MAX_TOKENS,
      maxWaitMs: e.SENTIO_BATCH_MAX_WAIT_MS,
      maxQueue: e.SENTIO_QUEUE_MAX,
      streamChunk: e.SENTIO_BATCH_STREAM_CHUNK,
      maxRunTokens: e.SENTIO_RUN_MAX_TOKENS,
      fairTenants: e.SENTIO_BATCH_FAIR,
      priorityLane: e.SENTIO_BATCH_LANE,
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !(o instanceof Map)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** uWS only says "App construction failed", and only after the model has loaded: read and match the PEMs here. */
function checkTlsFiles(tlsFiles: { cert: string; key: string }): void {
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  const cert = read('SENTIO_TLS_CERT', tlsFiles.cert);
  const key = read('SENTIO_TLS_KEY', tlsFiles.key);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(`SENTIO_TLS_CERT/SENTIO_TLS_KEY: not a usable PEM certificate and matching key (${(err as Error).message})`);
  }
}

/** 127.0.0.0/8 and ::1 in any spelling ("0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"), and localhost. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function isLoopback(host: string): boolean { // loadConfig took the brackets off "[::1]"
  const family = isIP(host);
  return host.toLowerCase() === 'localhost' || (family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4'));
}

/**
 * Rules that decide whether the server may start (DECISIONS.md "Running it"). Returns warnings to log;
 * throws ConfigError with the fix when it must not start.
 */
export function checkStartup(config: Config): string[] {
  if (config.apiKeys.length === 0 && !config.apiKeysFile) {
    throw new ConfigError(
      'no API key configured. For development set SENTIO_API_KEYS=<key>[,<key>...]; for production create a hashed key file with ' +
        '`npx sentio keys create --name <name> --file keys.json` and set SENTIO_API_KEYS_FILE=keys.json',
    );
  }
  const warnings: string[] = [];
  if (config.apiKeys.length > 0 && config.apiKeysFile) {
    warnings.push('SENTIO_API_KEYS and SENTIO_API_KEYS_FILE are both set: the plaintext keys stay valid beside the file\'s; unset SENTIO_API_KEYS outside development');
  }
  if (config.tls) {
    checkTlsFiles(config.tls);
    return [...warnings, `HTTPS only (certificate ${config.tls.cert})`];
  }
  if (!isLoopback(config.host) && !config.allowInsecureHttp) {
    throw new ConfigError(
      `refusing plain HTTP on non-loopback address ${config.host}: set SENTIO_TLS_CERT and SENTIO_TLS_KEY, ` +
        'or SENTIO_ALLOW_INSECURE_HTTP=1 behind a TLS-terminating proxy',
    );
  }
  return [
    ...warnings,
    isLoopback(config.host)
      ? `plain HTTP on loopback ${config.host}; set SENTIO_TLS_CERT/SENTIO_TLS_KEY to serve HTTPS`
      : `plain HTTP on ${config.host} (SENTIO_ALLOW_INSECURE_HTTP=1): only behind a TLS-terminating proxy`,
  ];
}
