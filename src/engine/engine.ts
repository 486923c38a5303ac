/**
 * Sentio's inference engine: the native addon (tokenizer + ONNX Runtime on its own thread) behind the
 * micro-batcher. The server, benchmarks and tests use this and nothing else for inference.
 *
 *   const engine = await createEngine({ modelDir: 'models/emotion' });
 *   const [scores] = await engine.analyze(['I am so happy'], { signal });
 *   await engine.close();
 */
import { join, resolve } from 'node:path';
import type { ExecutionProvider, NativeHandle, NativeInfo, NativeRunResult, NativeTokenizerTables } from './binding.js';
import { native } from './binding.js';
import type { BatcherStats, Dispatcher } from './batcher.js';
import type { CancelSignal } from './cancel.js';
import { MicroBatcher, PassThrough } from './batcher.js';
import { estimateTokens } from './estimate.js';
import { EngineDisposedError, EngineInputError, InferenceError, ModelLoadError } from './errors.js';
import type { ModelManifest } from './model-files.js';
import { readModelFiles, TOKENIZER_FILE } from './model-files.js';
import { HybridEngine } from './hybrid.js';
import type { EngineOptions, EngineProvider, ResolvedEngineOptions } from './options.js';
import { batchTokensFor, resolveEngineOptions, threadPlan } from './options.js';

export * from './errors.js';
export type { EngineOptions, EngineLogger } from './options.js';
export { ENGINE_DEFAULTS } from './options.js';

/** One text's model outputs. Arrays are views into the batch's output buffers; do not keep them mutable. */
export interface TextScores {
  /** Six probabilities in the manifest's label order (info.labels.emotions). */
  emotions: Float32Array;
  /** 28 independent probabilities in the manifest's order (info.labels.subEmotions). */
  subEmotions: Float32Array;
  valence: number;
  arousal: number;
  /** Model input tokens ([CLS] included, after truncation to maxLength). */
  tokens: number;
}

export interface AnalyzeOptions {
  /** Aborting rejects with EngineAbortedError; queued texts are dropped before they reach the model. */
  signal?: CancelSignal | undefined;
  /** Latency-critical (a caller waits on it before anything else happens): queued ahead, sent without batching wait. */
  urgent?: boolean | undefined;
  /**
   * Whose texts these are (Sentio passes the API key's id). While several tenants have texts queued,
   * batches take them in fair order by estimated tokens instead of first come, first served.
   */
  tenant?: string | undefined;
}

export interface EngineInfo {
  /** The execution provider actually in use ('hybrid': this info is the CPU engine's, `hybrid.bulk` the GPU's). */
  provider: 'cpu' | 'cuda' | 'hybrid';
  requestedProvider: EngineProvider;
  /** Why 'auto' runs on CPU; null otherwise. */
  fallbackReason: string | null;
  model: { name: string; version: string; dir: string };
  labels: { emotions: readonly string[]; subEmotions: readonly string[] };
  maxLength: number;
  ortVersion: string;
  /** Engine threads running batches concurrently. */
  inferenceThreads: number;
  /** ONNX Runtime sessions they run on: 1 on CPU, one per engine thread on CUDA (fewer if the GPU refused one). */
  sessions: number;
  /** Wakes of an idle engine are kept off the caller's CPU (options.steerWakeups, Linux, 2+ CPUs). */
  wakeSteering: boolean;
  intraOpThreads: number;
  interOpThreads: number;
  graphOptimization: string;
  /** GRU nodes run by the addon's packed kernel (0: ONNX Runtime's GRU; always 0 on CUDA). */
  packedRecurrences: number;
  /** Their kernels' instruction set ('avx512', 'avx2'); null when none is packed. */
  packedKernels: string | null;
  /** Pooling subgraphs run by the addon's MaskedPool (0: ONNX Runtime's operators; always 0 on CUDA). */
  fusedPoolings: number;
  batching: {
    enabled: boolean;
    maxBatchSize: number;
    maxBatchTokens: number;
    maxWaitMs: number;
    maxQueue: number;
    maxBatchesInFlight: number;
    streamChunk: number;
    maxRunTokens: number;
    fairTenants: boolean;
    priorityLane: boolean;
  };
  /** Only where provider is 'hybrid': calls of at least minTexts texts run on the engine `bulk` describes. */
  hybrid?: { minTexts: number; bulk: EngineInfo };
}

export interface EngineStats extends BatcherStats {
  closed: boolean;
  /** ONNX Runtime runs the addon made for jobs so far (the warm-up at load aside): how its plan cut the batches. */
  onnxRuns: number;
}

export interface Engine {
  readonly info: EngineInfo;
  /** The manifest's label order for emotions and subEmotions (the shape the server's ScoreMapper takes). */
  readonly labels: { emotions: readonly string[]; subEmotions: readonly string[] };
  /** Scores for each text, in order. Rejects with a typed EngineError (see errors.ts). */
  analyze(texts: readonly string[], opts?: AnalyzeOptions): Promise<TextScores[]>;
  /** Queue depth, batches in flight and totals, for metrics. */
  stats(): EngineStats;
  /** A JSON-friendly summary for /readyz and logs. */
  describe(): Record<string, unknown>;
  /**
   * Stop: queued texts are rejected with EngineDisposedError, a running batch is cut short (its texts
   * rejected the same way), and the native session is freed. With drain: true, queued and running
   * work finishes first. Either way, calls made once it has begun are refused. Idempotent.
   */
  close(opts?: { drain?: boolean }): Promise<void>;
}

/** Output names fixed by the model contract (models/emotion/manifest.json). */
const OUT_EMOTIONS = 'emotions';
const OUT_SUB = 'sub_emotions';
const OUT_VA = 'valence_arousal';

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const opts = resolveEngineOptions(options);
  return opts.executionProvider === 'hybrid' ? createHybridEngine(opts) : createNativeEngine(opts, opts.executionProvider);
}

/**
 * A GPU engine for calls of hybridMinTexts texts or more and a CPU engine for the rest (hybrid.ts). Where
 * CUDA is unusable, the engine `auto` would give: the CPUs alone, after one warning.
 */
async function createHybridEngine(opts: ResolvedEngineOptions): Promise<Engine> {
  const bulk = await createNativeEngine(opts, 'auto', 'hybrid');
  if (bulk.info.provider === 'cpu') return bulk;
  let small: Engine;
  try {
    small = await createNativeEngine(opts, 'cpu', 'hybrid');
  } catch (err) {
    await bulk.close();
    throw err;
  }
  const engine = new HybridEngine(small, bulk, opts.hybridMinTexts);
  opts.logger?.info({ minTexts: opts.hybridMinTexts }, 'hybrid engine: calls of at least minTexts texts run on CUDA, smaller ones on the CPUs');
  return engine;
}

async function createNativeEngine(opts: ResolvedEngineOptions, provider: ExecutionProvider, requested: EngineProvider = provider): Promise<Engine> {
  const plan = threadPlan(opts);
  const dir = resolve(opts.modelDir);
  const started = performance.now();
  const files = await readModelFiles(dir, { verifyChecksums: opts.verifyChecksums });
  const handle = await native.load({
    modelPath: files.modelPath,
    tokenizer: files.tokenizer,
    executionProvider: provider,
    cudaDeviceId: opts.cudaDeviceId,
    threads: plan.threads,
    intraOpThreads: plan.intraOpThreads,
    interOpThreads: opts.interOpThreads,
    graphOptimization: opts.graphOptimization,
    packedRecurrence: opts.packedRecurrence,
    fusedPooling: opts.fusedPooling,
    allowSpinning: opts.allowSpinning,
    threadNice: opts.threadNice,
    steerWakeups: opts.steerWakeups,
    warmup: opts.warmup,
    maxRunTexts: Math.max(opts.maxBatchSize, 1),
    maxRunTokens: opts.maxRunTokens,
  }).catch((err: unknown) => {
    // The options were checked above: what the addon refuses as an argument is the tokenizer's tables.
    if (err instanceof EngineInputError) throw new ModelLoadError(`${join(dir, TOKENIZER_FILE)}: ${err.message}`, { cause: err });
    // A failed warm-up run (a tokenizer id past the model's vocabulary, say) is a model that cannot load.
    if (err instanceof InferenceError) throw new ModelLoadError(`${files.modelPath}: warm-up run failed: ${err.message}`, { cause: err });
    throw err;
  });
  let nativeInfo: NativeInfo;
  try {
    nativeInfo = native.info(handle);
    checkOutputs(nativeInfo, files.manifest);
    await checkVocabulary(handle, files.tokenizer);
  } catch (err) {
    await native.dispose(handle);
    throw err;
  }
  const engine = new NativeEngine(handle, nativeInfo, files.manifest, dir, { ...opts, executionProvider: requested, maxBatchesInFlight: plan.maxBatchesInFlight });
  const loadMs = Math.round(performance.now() - started);
  if (nativeInfo.fallbackReason !== null) {
    const reason = firstLine(nativeInfo.fallbackReason);
    const line = 'CUDA execution provider unavailable, running on CPU (see docs/gpu.md)';
    if (opts.logger) opts.logger.warn({ reason }, line);
    else process.emitWarning(`${line}: ${reason}`, { code: 'SENTIO_CUDA_FALLBACK' });
  }
  if (nativeInfo.provider === 'cuda' && nativeInfo.sessions < nativeInfo.threads) {
    // The GPU refused a session (its memory, most likely): engine threads share sessions, taking turns.
    opts.logger?.warn({ sessions: nativeInfo.sessions, threads: nativeInfo.threads }, 'fewer CUDA sessions than engine threads: they take turns (see docs/gpu.md)');
  }
  opts.logger?.info({ engine: engine.describe(), loadMs }, 'emotion engine ready');
  return engine;
}

function checkOutputs(info: NativeInfo, manifest: ModelManifest): void {
  const widths = new Map(info.outputs.map((o) => [o.name, o.width]));
  const expect: [string, number][] = [
    [OUT_EMOTIONS, manifest.outputs.emotions.labels.length],
    [OUT_SUB, manifest.outputs.sub_emotions.labels.length],
    [OUT_VA, manifest.outputs.valence_arousal.labels.length],
  ];
  for (const [name, width] of expect) {
    const got = widths.get(name);
    if (got !== width) {
      throw new ModelLoadError(`model output ${name} has width ${String(got)}, the manifest lists ${width} labels`);
    }
  }
}

/**
 * The tokenizer's highest id must be a row of the model's embedding tables: a tokenizer with more ids than
 * the model knows started and then failed every batch that held a new word, with every text beside it.
 * One run of [CLS] and that id finds it at start (ONNX Runtime's CPU Gather checks its indices).
 */
async function checkVocabulary(handle: NativeHandle, tokenizer: NativeTokenizerTables): Promise<void> {
  const last = tokenizer.vocab.length - 1;
  try {
    await native.run(handle, { ids: Int32Array.of(tokenizer.clsId, last), lengths: Int32Array.of(2) });
  } catch (err) {
    throw new ModelLoadError(`the tokenizer has ${last + 1} ids, but the model cannot read id ${last}: tokenizer.json is not this model's (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
}

/**
 * ONNX Runtime's messages carry a source location, a status ("1 : FAIL : ") and a trailing newline;
 * keep the readable part.
 */
function firstLine(s: string): string {
  const line = s.split('\n')[0] ?? s;
  const at = line.lastIndexOf('] : ');
  return (at >= 0 ? line.slice(at + 4) : line).replace(/^\s*\d+ : [A-Z_]+ : /, '').trim();
}

class NativeEngine implements Engine {
  readonly info: EngineInfo;
  readonly labels: { emotions: readonly string[]; subEmotions: readonly string[] };
  readonly #handle: NativeHandle;
  readonly #dispatcher: Dispatcher<string, TextScores>;
  readonly #widths: { emotions: number; sub: number; va: number };
  readonly #vaIndex: { valence: number; arousal: number };
  #closing: Promise<void> | undefined;

  constructor(handle: NativeHandle, ni: NativeInfo, manifest: ModelManifest, dir: string, opts: ResolvedEngineOptions) {
    this.#handle = handle;
    const labels = {
      emotions: Object.freeze([...manifest.outputs.emotions.labels]),
      subEmotions: Object.freeze([...manifest.outputs.sub_emotions.labels]),
    };
    this.labels = Object.freeze(labels);
    const va = manifest.outputs.valence_arousal.labels;
    this.#vaIndex = { valence: va.indexOf('valence'), arousal: va.indexOf('arousal') };
    this.#widths = { emotions: labels.emotions.length, sub: labels.subEmotions.length, va: va.length };
    const maxBatchTokens = batchTokensFor(ni.provider, opts, ni.maxLength);
    this.info = Object.freeze({
      provider: ni.provider,
      requestedProvider: opts.executionProvider,
      // /readyz shows this to anyone: file names, not the install's absolute paths (the log has those).
      fallbackReason: ni.fallbackReason === null ? null : firstLine(ni.fallbackReason).replace(/(?:\/[^\s/:'"]+)+\/([^\s/:'"]+)/g, '$1'),
      model: { name: manifest.name, version: manifest.version, dir },
      labels: this.labels,
      maxLength: ni.maxLength,
      ortVersion: ni.ortVersion,
      inferenceThreads: ni.threads,
      sessions: ni.sessions,
      wakeSteering: ni.wakeSteering,
      intraOpThreads: ni.intraOpThreads,
      interOpThreads: ni.interOpThreads,
      graphOptimization: ni.graphOptimization,
      packedRecurrences: ni.packedRecurrences,
      packedKernels: ni.packedKernels,
      fusedPoolings: ni.fusedPoolings,
      batching: {
        enabled: opts.batching,
        maxBatchSize: opts.maxBatchSize,
        maxBatchTokens,
        maxWaitMs: opts.maxWaitMs,
        maxQueue: opts.maxQueue,
        maxBatchesInFlight: opts.maxBatchesInFlight,
        streamChunk: opts.streamChunk,
        maxRunTokens: opts.maxRunTokens,
        fairTenants: opts.fairTenants,
        priorityLane: opts.priorityLane,
      },
    });
    const onBatch = opts.onBatch;
    const run = (texts: string[], priority: boolean): Promise<TextScores[]> => {
      const started = performance.now();
      return native.run(handle, texts, priority).then((r) => {
        try {
          onBatch?.({ texts: texts.length, ms: performance.now() - started });
        } catch (err) {
          // A metrics hook that throws must not fail texts that were scored.
          opts.logger?.warn({ err }, 'engine onBatch hook failed');
        }
        return this.#split(r, texts.length);
      });
    };
    const maxLength = ni.maxLength;
    this.#dispatcher = opts.batching
      ? new MicroBatcher<string, TextScores>(run, {
          maxBatchSize: opts.maxBatchSize,
          maxBatchTokens,
          maxWaitMs: opts.maxWaitMs,
          maxQueue: opts.maxQueue,
          maxBatchesInFlight: opts.maxBatchesInFlight,
          streamChunk: opts.streamChunk,
          fair: opts.fairTenants,
          lane: opts.priorityLane,
          cost: (text) => estimateTokens(text, maxLength),
          ...(opts.clock ? { clock: opts.clock } : {}),
        })
      : new PassThrough<string, TextScores>(run, { maxBatchSize: opts.maxBatchSize, maxQueue: opts.maxQueue });
  }

  analyze(texts: readonly string[], opts?: AnalyzeOptions): Promise<TextScores[]> {
    if (!Array.isArray(texts)) return Promise.reject(new EngineInputError('analyze(texts): texts must be an array of strings'));
    for (let i = 0; i < texts.length; i++) {
      if (typeof texts[i] !== 'string') {
        return Promise.reject(new EngineInputError(`analyze(texts): texts[${i}] is not a string`));
      }
    }
    // Once closing (draining, too) nothing new is taken: under steady traffic a drain would never end.
    if (this.#closing) return Promise.reject(new EngineDisposedError('engine closed'));
    return this.#dispatcher.submit(texts, opts);
  }

  stats(): EngineStats {
    return { ...this.#dispatcher.stats(), closed: this.#closing !== undefined, onnxRuns: native.info(this.#handle).runs };
  }

  describe(): Record<string, unknown> {
    const i = this.info;
    return {
      provider: i.provider,
      requestedProvider: i.requestedProvider,
      ...(i.fallbackReason ? { fallbackReason: i.fallbackReason } : {}),
      model: `${i.model.name}@${i.model.version}`,
      maxLength: i.maxLength,
      onnxruntime: i.ortVersion,
      packedRecurrence: i.packedRecurrences > 0 ? { nodes: i.packedRecurrences, kernels: i.packedKernels } : false,
      fusedPooling: i.fusedPoolings > 0 ? { nodes: i.fusedPoolings } : false,
      threads: { inference: i.inferenceThreads, sessions: i.sessions, intraOp: i.intraOpThreads, interOp: i.interOpThreads, wakeSteering: i.wakeSteering },
      batching: i.batching,
    };
  }

  close(opts: { drain?: boolean } = {}): Promise<void> {
    this.#closing ??= (async () => {
      if (opts.drain) await this.#dispatcher.drain();
      this.#dispatcher.close(new EngineDisposedError('engine closed'));
      await native.dispose(this.#handle);
    })();
    return this.#closing;
  }

  #split(r: NativeRunResult, n: number): TextScores[] {
    const em = r.outputs[OUT_EMOTIONS];
    const sub = r.outputs[OUT_SUB];
    const va = r.outputs[OUT_VA];
    const { emotions: we, sub: ws, va: wv } = this.#widths;
    if (!em || !sub || !va || em.length !== n * we || sub.length !== n * ws || va.length !== n * wv) {
      throw new ModelLoadError('model outputs do not match the manifest. This is a bug.');
    }
    const out = new Array<TextScores>(n);
    for (let i = 0; i < n; i++) {
      out[i] = {
        emotions: em.subarray(i * we, (i + 1) * we),
        subEmotions: sub.subarray(i * ws, (i + 1) * ws),
        valence: va[i * wv + this.#vaIndex.valence]!,
        arousal: va[i * wv + this.#vaIndex.arousal]!,
        tokens: r.tokenCounts[i]!,
      };
    }
    return out;
  }
}
