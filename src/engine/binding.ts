/**
 * The only place that loads the native addon (build/Release/sentio.node, built by `npm run build:native`).
 * It declares the addon's six functions and wraps them so that every failure, thrown or rejected, comes
 * out as one of the engine's typed errors (errors.ts). The addon is loaded on first use, so importing
 * the engine costs nothing where it is never started.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ModelLoadError, fromNativeError } from './errors.js';
import { repoPathCandidates } from '../repo-paths.js';

/** Tokenizer tables as the addon takes them (tokenizerTables() in model-files.ts maps tokenizer.json here). */
export interface NativeTokenizerTables {
  vocab: readonly string[];
  /** Repeated [code point, n, r1 .. rn]. */
  charMap: Uint32Array;
  /** Repeated [first, last, class]. */
  classes: Uint32Array;
  continuationPrefix: string;
  maxLength: number;
  maxWordChars: number;
  padId: number;
  unkId: number;
  clsId: number;
}

export type ExecutionProvider = 'auto' | 'cuda' | 'cpu';
export type GraphOptimization = 'disabled' | 'basic' | 'extended' | 'all';

export interface NativeLoadOptions {
  modelPath: string;
  tokenizer: NativeTokenizerTables;
  executionProvider?: ExecutionProvider;
  cudaDeviceId?: number;
  /** Engine threads running batches concurrently: on one shared session on CPU, each on its own on CUDA. Default 1. */
  threads?: number;
  /** ONNX Runtime threads inside one run; 0 lets ONNX Runtime pick (one per physical core). */
  intraOpThreads?: number;
  interOpThreads?: number;
  graphOptimization?: GraphOptimization;
  /** On CPU, GRU nodes run as the addon's PackedGRU operator. Default true. */
  packedRecurrence?: boolean;
  /** On CPU, each branch's pooling runs as the addon's MaskedPool operator. Default true. */
  fusedPooling?: boolean;
  /** ONNX Runtime worker threads busy-wait between ops when true. */
  allowSpinning?: boolean;
  /** Run a few batches at load so that the first request does not pay for arena growth. */
  warmup?: boolean;
  /** A run() with more texts is split into ONNX Runtime runs of at most this many. */
  maxRunTexts?: number;
  /**
   * On CPU, a run's padded tokens (texts × longest) at most this where one text allows. Default 0, no
   * bound (the engine passes its own default, 1024).
   */
  maxRunTokens?: number;
  /** Added to the nice value of the engine's threads (0..19), so that the JS thread wins contested cores. */
  threadNice?: number;
  /** Linux: keep an idle engine's woken thread off the caller's CPU (native/wake_steering.h). Default true. */
  steerWakeups?: boolean;
}

declare const handleBrand: unique symbol;
/** An opaque, type-tagged reference to a loaded engine. */
export interface NativeHandle {
  readonly [handleBrand]: true;
}

/** Token ids, flat, with each text's count; every text has at least one id ([CLS]). */
export interface NativeTokens {
  ids: Int32Array;
  lengths: Int32Array;
}

export interface NativeRunResult {
  /** One array per model output, [batch, width] row-major, texts in input order. */
  outputs: Record<string, Float32Array>;
  /** Model input tokens per text ([CLS] included, after truncation). */
  tokenCounts: Int32Array;
}

export interface NativeInfo {
  provider: 'cpu' | 'cuda';
  /** Why 'auto' did not get CUDA; null when it did, or when CPU was asked for. */
  fallbackReason: string | null;
  ortVersion: string;
  outputs: { name: string; width: number }[];
  maxLength: number;
  vocabSize: number;
  threads: number;
  /** ONNX Runtime sessions: 1 on CPU; on CUDA one per engine thread, fewer if the GPU refused one. */
  sessions: number;
  intraOpThreads: number;
  interOpThreads: number;
  graphOptimization: GraphOptimization;
  /** GRU nodes the CPU session runs as PackedGRU (0 on CUDA or with packedRecurrence off). */
  packedRecurrences: number;
  /** The packed kernels' instruction set: 'avx512', 'avx2' or 'base'; null when none is packed. */
  packedKernels: 'avx512' | 'avx2' | 'base' | null;
  /** Pooling subgraphs the CPU session runs as MaskedPool (0 on CUDA or with fusedPooling off). */
  fusedPoolings: number;
  /** Linux, 2+ CPUs, steerWakeups on: wakes of an idle engine are kept off the caller's CPU. */
  wakeSteering: boolean;
  /** Wakes steered so far. */
  steeredWakeups: number;
  /** ONNX Runtime runs made so far for jobs (not the warm-up at load): how the addon cut the jobs into runs. */
  runs: number;
  /** Jobs an engine thread has taken from the queue so far. */
  jobsTaken: number;
  disposed: boolean;
}

interface RawBinding {
  load(options: NativeLoadOptions): Promise<NativeHandle>;
  /** `priority`: taken before queued jobs and before started jobs' remaining sub-batches. */
  run(handle: NativeHandle, batch: readonly string[] | NativeTokens, priority?: boolean): Promise<NativeRunResult>;
  tokenize(handle: NativeHandle, texts: readonly string[]): Promise<NativeTokens>;
  info(handle: NativeHandle): NativeInfo;
  dispose(handle: NativeHandle): Promise<void>;
  /** Stops and joins every engine's threads, synchronously (process exit). */
  stopAll(): void;
}

export type NativeBinding = Omit<RawBinding, 'stopAll'>;

const CANDIDATES = repoPathCandidates('build', 'Release', 'sentio.node');

let raw: RawBinding | undefined;

function loadRaw(): RawBinding {
  if (raw) return raw;
  const override = process.env['SENTIO_NATIVE_ADDON'] || undefined; // empty counts as unset, as for every setting
  const path = override ?? CANDIDATES.find((p) => existsSync(p));
  if (!path) {
    throw new ModelLoadError(`native addon not built: none of ${CANDIDATES.join(', ')} exists; run \`npm run build:native\``);
  }
  try {
    raw = createRequire(import.meta.url)(path) as RawBinding;
    // process.exit() goes on to C exit(), whose static destructors free ONNX Runtime: no engine thread may
    // still be running then, a load's included (native/worker.cc, Live()).
    const addon = raw;
    process.once('exit', () => addon.stopAll());
  } catch (err) {
    // Node appends a "Require stack:" list to the message; the first line says what failed.
    const reason = (err as Error).message.split('\n')[0];
    throw new ModelLoadError(`cannot load native addon ${path}${override ? ' (SENTIO_NATIVE_ADDON)' : ''}: ${reason}`, { cause: err });
  }
  return raw;
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fromNativeError(err);
  }
}

/** The addon, typed, with errors translated. Async functions never throw synchronously. */
export const native: NativeBinding = {
  load: (options) => call(() => loadRaw().load(options)),
  run: (handle, batch, priority) => call(() => loadRaw().run(handle, batch, priority)),
  tokenize: (handle, texts) => call(() => loadRaw().tokenize(handle, texts)),
  info: (handle) => {
    try {
      return loadRaw().info(handle);
    } catch (err) {
      throw fromNativeError(err);
    }
  },
  dispose: (handle) => call(() => loadRaw().dispose(handle)),
};
