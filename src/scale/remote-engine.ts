/**
 * The engine seen from an HTTP worker thread: texts go to the main thread's one engine (so its batcher
 * fills batches from every worker), scores come back as typed arrays moved, not copied, across the port.
 */
import type { AnalysisEngine } from '../app.js';
import type { LabelOrder, ModelOutputs } from '../core/emotions.js';
import type { CancelSignal } from '../engine/cancel.js';
import {
  EngineAbortedError, EngineDisposedError, EngineInputError, EngineOverloadedError, InferenceError, ModelLoadError,
  ProviderUnavailableError,
} from '../engine/errors.js';
import { StoreUnavailableError } from '../store/context-store.js';
import type { RpcClient, RpcHandler, SerializedError } from './rpc.js';

/** One analyze() result in flat arrays: text i's emotions are emotions[i*E .. (i+1)*E). */
interface PackedOutputs {
  emotions: Float64Array<ArrayBuffer>;
  sub: Float64Array<ArrayBuffer>;
  valence: Float64Array<ArrayBuffer>;
  arousal: Float64Array<ArrayBuffer>;
  tokens: Float64Array<ArrayBuffer>;
}

/** Main thread: serve the engine to workers. */
export function engineHandlers(engine: AnalysisEngine): Record<string, RpcHandler> {
  const e = engine.labels.emotions.length;
  const s = engine.labels.subEmotions.length;
  return {
    'engine.analyze': async ([texts, urgent, tenant], signal) => {
      const outs = await engine.analyze(texts as string[], { signal, urgent: urgent === true, tenant: typeof tenant === 'string' ? tenant : undefined });
      const n = outs.length;
      const packed: PackedOutputs = {
        emotions: new Float64Array(n * e),
        sub: new Float64Array(n * s),
        valence: new Float64Array(n),
        arousal: new Float64Array(n),
        tokens: new Float64Array(n),
      };
      outs.forEach((o, i) => {
        for (let k = 0; k < e; k++) packed.emotions[i * e + k] = o.emotions[k]!;
        for (let k = 0; k < s; k++) packed.sub[i * s + k] = o.subEmotions[k]!;
        packed.valence[i] = o.valence;
        packed.arousal[i] = o.arousal;
        packed.tokens[i] = o.tokens;
      });
      return { value: packed, transfer: Object.values(packed).map((a: Float64Array<ArrayBuffer>) => a.buffer) };
    },
  };
}

/** Worker thread: an AnalysisEngine whose work runs on the main thread. */
export class RemoteEngine implements AnalysisEngine {
  readonly labels: LabelOrder;
  readonly #rpc: RpcClient;
  readonly #description: Record<string, unknown>;

  constructor(rpc: RpcClient, labels: LabelOrder, description: Record<string, unknown>) {
    this.#rpc = rpc;
    this.labels = labels;
    this.#description = description;
  }

  async analyze(texts: string[], opts?: { signal?: CancelSignal | undefined; urgent?: boolean | undefined; tenant?: string | undefined }): Promise<ModelOutputs[]> {
    const p = await this.#rpc.call<PackedOutputs>('engine.analyze', [texts, opts?.urgent === true, opts?.tenant], {
      signal: opts?.signal,
      onAbort: () => new EngineAbortedError('the request was aborted'),
    });
    const e = this.labels.emotions.length;
    const s = this.labels.subEmotions.length;
    return Array.from({ length: p.valence.length }, (_, i) => ({
      emotions: p.emotions.subarray(i * e, (i + 1) * e),
      subEmotions: p.sub.subarray(i * s, (i + 1) * s),
      valence: p.valence[i]!,
      arousal: p.arousal[i]!,
      tokens: p.tokens[i]!,
    }));
  }

  /** As the main thread's engine described itself when this worker started. */
  describe(): Record<string, unknown> {
    return this.#description;
  }

  /** The engine belongs to the main thread, which closes it after every worker has stopped. */
  async close(): Promise<void> {}
}

const BY_CODE: Record<string, new (message: string) => Error> = {
  ENGINE_OVERLOADED: EngineOverloadedError,
  ENGINE_ABORTED: EngineAbortedError,
  ENGINE_DISPOSED: EngineDisposedError,
  ENGINE_MODEL_LOAD_FAILED: ModelLoadError,
  ENGINE_PROVIDER_UNAVAILABLE: ProviderUnavailableError,
  ENGINE_INFERENCE_FAILED: InferenceError,
  ENGINE_INVALID_INPUT: EngineInputError,
  STORE_UNAVAILABLE: StoreUnavailableError,
};

/** Rebuild an error from the main thread as the class the HTTP layer maps (by `code`). */
export function reviveError(e: SerializedError): Error {
  const Known = e.code ? BY_CODE[e.code] : undefined;
  if (Known) return new Known(e.message);
  return Object.assign(new Error(e.message), { name: e.name, ...(e.code ? { code: e.code } : {}) });
}
