/** How an upstream call failed, in the client's terms; api/error-mapping.ts gives each its HTTP answer. */
export type UpstreamFailure = 'failed' | 'timeout' | 'rejected' | 'rate_limited';

/** The upstream failed, timed out, refused the request as invalid, or is rate limiting (with when to come back). */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly code = 'UPSTREAM_FAILED';
  readonly retryAfterS: number | undefined;

  constructor(readonly failure: UpstreamFailure, message: string, options: { retryAfterS?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterS = options.retryAfterS;
  }
}
