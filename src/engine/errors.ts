/**
 * The engine's errors: one class per failure the HTTP layer must tell apart, each with a stable `code`
 * (src/api/error-mapping.ts switches on it). Native failures arrive as plain Errors with a NATIVE_* code
 * and are translated here, in one place.
 */

export type EngineErrorCode =
  | 'ENGINE_OVERLOADED'
  | 'ENGINE_ABORTED'
  | 'ENGINE_DISPOSED'
  | 'ENGINE_MODEL_LOAD_FAILED'
  | 'ENGINE_PROVIDER_UNAVAILABLE'
  | 'ENGINE_INFERENCE_FAILED'
  | 'ENGINE_INVALID_INPUT';

export abstract class EngineError extends Error {
  abstract readonly code: EngineErrorCode;
}

/** The bounded queue is full: refuse now rather than wait without bound (HTTP 429/503 with Retry-After). */
export class EngineOverloadedError extends EngineError {
  override readonly name = 'EngineOverloadedError';
  readonly code = 'ENGINE_OVERLOADED';

  constructor(message: string) {
    // No stack: a refusal is a verdict on load, not a fault, and must stay cheap when the engine sheds a
    // flood (a stack costs about 5 µs of the JS thread).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** The caller's AbortSignal fired before the result was ready; the texts were not (or no longer) computed. */
export class EngineAbortedError extends EngineError {
  override readonly name = 'EngineAbortedError';
  readonly code = 'ENGINE_ABORTED';
}

/** The engine was closed (or is closing); nothing more will run. */
export class EngineDisposedError extends EngineError {
  override readonly name = 'EngineDisposedError';
  readonly code = 'ENGINE_DISPOSED';
}

/** The model or tokenizer could not be loaded: missing or corrupt file, wrong signature, checksum mismatch. */
export class ModelLoadError extends EngineError {
  override readonly name = 'ModelLoadError';
  readonly code = 'ENGINE_MODEL_LOAD_FAILED';
}

/** executionProvider 'cuda' was asked for but CUDA cannot be used on this host. */
export class ProviderUnavailableError extends EngineError {
  override readonly name = 'ProviderUnavailableError';
  readonly code = 'ENGINE_PROVIDER_UNAVAILABLE';
}

/** ONNX Runtime failed while running a batch; every text of that batch is rejected with it. */
export class InferenceError extends EngineError {
  override readonly name = 'InferenceError';
  readonly code = 'ENGINE_INFERENCE_FAILED';
}

/** A caller passed something that is not an array of strings, or an option out of range. */
export class EngineInputError extends EngineError {
  override readonly name = 'EngineInputError';
  readonly code = 'ENGINE_INVALID_INPUT';
}

/** Codes the addon puts on its errors (native/errors.h). */
export type NativeErrorCode =
  | 'NATIVE_INVALID_ARGUMENT'
  | 'NATIVE_MODEL_LOAD_FAILED'
  | 'NATIVE_PROVIDER_UNAVAILABLE'
  | 'NATIVE_INFERENCE_FAILED'
  | 'NATIVE_DISPOSED'
  | 'NATIVE_INTERNAL';

/** Translate an error thrown or rejected by the addon into the engine's own error classes. */
export function fromNativeError(err: unknown): Error {
  if (err instanceof EngineError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const options = { cause: err };
  switch (code as NativeErrorCode | undefined) {
    case 'NATIVE_INVALID_ARGUMENT':
      return new EngineInputError(message, options);
    case 'NATIVE_MODEL_LOAD_FAILED':
      return new ModelLoadError(message, options);
    case 'NATIVE_PROVIDER_UNAVAILABLE':
      return new ProviderUnavailableError(message, options);
    case 'NATIVE_DISPOSED':
      return new EngineDisposedError(message, options);
    case 'NATIVE_INFERENCE_FAILED':
    case 'NATIVE_INTERNAL':
    default:
      return new InferenceError(message, options);
  }
}
