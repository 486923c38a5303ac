/**
 * Engine options and their defaults. Each default is argued in docs/engine.md; the server maps its
 * SENTIO_* environment onto these (src/config.ts).
 */
import { availableParallelism } from 'node:os';
import type { Clock } from './clock.js';
import type { ExecutionProvider, GraphOptimization, NativeInfo } from './binding.js';
import { EngineInputError } from './errors.js';
import { shippedModelDir } from '../repo-paths.js';

/** A pino-compatible logger subset: the engine logs a line at load (and a warning on CUDA fallback). */
export interface EngineLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Where the engine runs: the addon's providers, or `hybrid`: calls of at least hybridMinTexts texts on
 * CUDA and smaller ones on the CPUs, each through its own engine (hybrid.ts; docs/gpu.md#hybrid).
 */
export type EngineProvider = ExecutionProvider | 'hybrid';

export interface EngineOptions {
  /** Folder with model.onnx, tokenizer.json and manifest.json. Default: the checkout's models/emotion (repo-paths.ts). */
  modelDir?: string;
  /**
   * auto: CUDA when usable, else CPU with one warning. cuda: fail at load without CUDA. hybrid: CUDA for
   * calls of hybridMinTexts texts or more and the CPUs for the rest, or CPU alone with one warning, as auto.
   * Default auto.
   */
  executionProvider?: EngineProvider;
  /** With executionProvider hybrid: the fewest texts in one call that go to the GPU. Default 32. */
  hybridMinTexts?: number;
  cudaDeviceId?: number;
  /**
   * Engine threads, each running its own batch (on CPU on one shared session, on CUDA each on its own). 0 = auto: one per CPU up to 4
   * (docs/engine.md: on small CPUs, parallel batches beat parallel operators). Default 0.
   */
  inferenceThreads?: number;
  /** ONNX Runtime threads inside one run. 0 = auto: the CPUs divided among the engine threads. Default 0. */
  intraOpThreads?: number;
  /** Threads running independent operators of one run; 1 runs the graph sequentially, others in parallel mode. Default 1. */
  interOpThreads?: number;
  graphOptimization?: GraphOptimization;
  /**
   * On CPU, run the model's GRU nodes with the addon's kernel that computes only real tokens
   * (docs/engine.md#packed-recurrence) instead of ONNX Runtime's, which steps every row to the longest
   * text. The model file is not changed. Default true.
   */
  packedRecurrence?: boolean;
  /**
   * On CPU, run the max, mean and attention pooling that closes each branch of the model as the addon's
   * MaskedPool operator (docs/engine.md#fused-pooling), which reads a padded position once, instead of
   * ONNX Runtime's dozen operators over every padded position. The model file is not changed. Default true.
   */
  fusedPooling?: boolean;
  /** Let ONNX Runtime's threads spin between operators. Default false (they would compete with the JS thread). */
  allowSpinning?: boolean;
  /** Nice increment (0..19) for the engine's threads, so that the JS thread wins contested cores. Default 10 (docs/engine.md, Thread priority). */
  threadNice?: number;
  /**
   * Linux: when waking an engine idle for 5 ms or more, keep the thread it wakes off the calling (JS)
   * thread's CPU, so that the scheduler does not run the inference there while another CPU idles
   * (docs/engine.md#wake-steering). Default true.
   */
  steerWakeups?: boolean;
  /** Check model.onnx and tokenizer.json against the manifest's sha256. Default true. */
  verifyChecksums?: boolean;
  /** Run warm-up batches at load. Default true. */
  warmup?: boolean;
  /** false: every analyze() call is its own engine run (the unbatched baseline). Default true. */
  batching?: boolean;
  /** Texts per batch. Default 256 (maxBatchTokens is what bounds a batch's cost). */
  maxBatchSize?: number;
  /**
   * Padded tokens per batch (texts x longest). 0 = auto, set by the provider that loaded: on CPU 8192 (64
   * texts of 128 tokens), on CUDA maxBatchSize x the model's longest input, so that only the text count
   * bounds a batch there (a CUDA run costs nearly the same for 32 texts as for 256; docs/gpu.md). Default 0.
   */
  maxBatchTokens?: number;
  /** Longest a text waits for companions while another batch runs. Default 2 ms. */
  maxWaitMs?: number;
  /** Texts waiting for a batch before calls are refused with EngineOverloadedError. Default 4096. */
  maxQueue?: number;
  /** Batches handed to the native engine at once. 0 = auto: 2, one running and one ready. Default 0. */
  maxBatchesInFlight?: number;
  /**
   * A batch holding texts of several calls runs as engine runs of at most this many texts, each answering
   * its callers as it finishes, so replies flow while the rest of the batch runs. 0 = one run per batch.
   * Default 16.
   */
  streamChunk?: number;
  /**
   * On CPU, an engine run's padded tokens (texts × the longest text's tokens) at most this many, unless one
   * text is longer: a priority batch waits for the runs in progress, so this bounds its wait. 0 = no
   * bound. Default 1024: eight texts of the full 128 tokens, about 5-10 ms on a 2-core build machine.
   */
  maxRunTokens?: number;
  /**
   * Fair order between tenants (the `tenant` of each analyze call) in the queue; false = first come,
   * first served (the benchmark's baseline). Default true.
   */
  fairTenants?: boolean;
  /**
   * The priority lane for light tenants' texts beside a bulk batch (with fairTenants); false = only urgent
   * texts take it, light tenants' go by fair order in normal batches (a benchmark baseline). Default true.
   */
  priorityLane?: boolean;
  logger?: EngineLogger;
  /** Injected time for the batcher (tests). */
  clock?: Clock;
  /** Called on the JS thread after each engine run with its size and time from hand-off to result (metrics). */
  onBatch?: (run: { texts: number; ms: number }) => void;
}

export type ResolvedEngineOptions = Required<Omit<EngineOptions, 'logger' | 'clock' | 'cudaDeviceId' | 'onBatch'>> &
  Pick<EngineOptions, 'logger' | 'clock' | 'onBatch'> & { cudaDeviceId: number };

export const ENGINE_DEFAULTS = {
  modelDir: shippedModelDir(),
  executionProvider: 'auto',
  hybridMinTexts: 32,
  cudaDeviceId: 0,
  inferenceThreads: 0,
  intraOpThreads: 0,
  interOpThreads: 1,
  graphOptimization: 'all',
  packedRecurrence: true,
  fusedPooling: true,
  allowSpinning: false,
  threadNice: 10,
  steerWakeups: true,
  verifyChecksums: true,
  warmup: true,
  batching: true,
  maxBatchSize: 256,
  maxBatchTokens: 0,
  maxWaitMs: 2,
  maxQueue: 4096,
  maxBatchesInFlight: 0,
  streamChunk: 16,
  maxRunTokens: 1024,
  fairTenants: true,
  priorityLane: true,
} as const satisfies Omit<ResolvedEngineOptions, 'logger' | 'clock'>;

/** The largest count an engine option takes (queue length, tokens per batch). */
export const ENGINE_OPTION_MAX = 1 << 30;

function int(name: string, v: number, min: number, max = ENGINE_OPTION_MAX): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new EngineInputError(`engine option ${name} must be an integer in [${min}, ${max}], got ${v}`);
  }
  return v;
}

export function resolveEngineOptions(o: EngineOptions = {}): ResolvedEngineOptions {
  const r: ResolvedEngineOptions = { ...ENGINE_DEFAULTS, ...stripUndefined(o) };
  if (!['auto', 'cuda', 'cpu', 'hybrid'].includes(r.executionProvider)) {
    throw new EngineInputError(`engine option executionProvider must be auto, cuda, cpu or hybrid, got ${String(r.executionProvider)}`);
  }
  int('hybridMinTexts', r.hybridMinTexts, 1);
  if (!['disabled', 'basic', 'extended', 'all'].includes(r.graphOptimization)) {
    throw new EngineInputError(`engine option graphOptimization must be disabled, basic, extended or all`);
  }
  int('cudaDeviceId', r.cudaDeviceId, 0, 1024);
  int('inferenceThreads', r.inferenceThreads, 0, 256);
  int('intraOpThreads', r.intraOpThreads, 0, 1024);
  int('interOpThreads', r.interOpThreads, 0, 1024);
  int('threadNice', r.threadNice, 0, 19);
  int('maxBatchSize', r.maxBatchSize, 1, 65536);
  int('maxBatchTokens', r.maxBatchTokens, 0);
  int('maxQueue', r.maxQueue, 1);
  int('maxBatchesInFlight', r.maxBatchesInFlight, 0, 64);
  int('streamChunk', r.streamChunk, 0, 65536);
  int('maxRunTokens', r.maxRunTokens, 0, 1 << 24);
  if (typeof r.packedRecurrence !== 'boolean') throw new EngineInputError('engine option packedRecurrence must be a boolean');
  if (typeof r.fusedPooling !== 'boolean') throw new EngineInputError('engine option fusedPooling must be a boolean');
  if (typeof r.fairTenants !== 'boolean') throw new EngineInputError('engine option fairTenants must be a boolean');
  if (typeof r.priorityLane !== 'boolean') throw new EngineInputError('engine option priorityLane must be a boolean');
  if (!(r.maxWaitMs >= 0 && r.maxWaitMs <= 10_000)) {
    throw new EngineInputError(`engine option maxWaitMs must be in [0, 10000], got ${r.maxWaitMs}`);
  }
  return r;
}

/** On CPU a batch's padded tokens bound its run time, and so the wait of the texts behind it. */
export const CPU_BATCH_TOKENS = 8192;

/** maxBatchTokens with 0 ("auto") replaced by the value for the provider the engine loaded. */
export function batchTokensFor(provider: NativeInfo['provider'], o: Pick<ResolvedEngineOptions, 'maxBatchTokens' | 'maxBatchSize'>, maxLength: number): number {
  if (o.maxBatchTokens > 0) return o.maxBatchTokens;
  return provider === 'cuda' ? o.maxBatchSize * maxLength : CPU_BATCH_TOKENS;
}

/** The thread layout the options ask for, with every 0 ("auto") replaced by a number. */
export function threadPlan(o: Pick<ResolvedEngineOptions, 'inferenceThreads' | 'intraOpThreads' | 'maxBatchesInFlight'>, cpus = availableParallelism()): {
  threads: number;
  intraOpThreads: number;
  maxBatchesInFlight: number;
} {
  // Whatever is left on auto fills the CPUs without oversubscribing them.
  const threads =
    o.inferenceThreads > 0
      ? o.inferenceThreads
      : Math.max(1, Math.min(4, o.intraOpThreads > 0 ? Math.floor(cpus / o.intraOpThreads) : cpus));
  const intraOpThreads = o.intraOpThreads > 0 ? o.intraOpThreads : Math.max(1, Math.floor(cpus / threads));
  // A batch is shared out across all engine threads, so one running and one ready keep them all busy.
  const maxBatchesInFlight = o.maxBatchesInFlight > 0 ? o.maxBatchesInFlight : 2;
  return { threads, intraOpThreads, maxBatchesInFlight };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
