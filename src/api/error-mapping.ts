/** Errors from the layers below the API (engine, core, store, the upstream LLM client) mapped to coded API errors. */
import { AppError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import type { UpstreamError, UpstreamFailure } from '../llm/errors.js';

const UPSTREAM: Record<UpstreamFailure, ErrorCode> = {
  failed: 'upstream_error', timeout: 'upstream_timeout', rejected: 'upstream_rejected', rate_limited: 'upstream_rate_limited',
};

export function mapLowerError(err: unknown): AppError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENGINE_OVERLOADED':
      return new AppError('overloaded', 'the analysis queue is full; retry shortly', { headers: { 'retry-after': '1' }, cause: err, shed: 'engine_queue' });
    case 'ENGINE_DISPOSED':
      return new AppError('service_unavailable', 'the engine is shutting down', { headers: { 'retry-after': '1' }, cause: err });
    case 'UPSTREAM_FAILED': {
      const e = err as UpstreamError;
      return new AppError(UPSTREAM[e.failure], e.message, {
        cause: err, ...(e.retryAfterS !== undefined ? { headers: { 'retry-after': String(e.retryAfterS) } } : {}),
      });
    }
    case 'CONTEXT_NOT_FOUND':
      return new AppError('context_not_found', (err as Error).message, { param: 'context_id', cause: err });
    case 'MESSAGE_NOT_FOUND':
      return new AppError('message_not_found', (err as Error).message, { param: 'message_id', cause: err });
    case 'STORE_UNAVAILABLE':
      // Idempotency-Key records live in the same store: a stateless request that carries one fails too.
      return new AppError('service_unavailable', 'the shared store (contexts, Idempotency-Key records) is unavailable; stateless and batch analysis and chat without a context_id still work, without an Idempotency-Key', { headers: { 'retry-after': '1' }, cause: err });
    default:
      return undefined;
  }
}
