/**
 * Errors as a closed set of coded types. `ERRORS` is the only place that maps a code to an HTTP status
 * and an error type; docs/errors.md lists every code (a test keeps the two in step).
 */

type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'idempotency_error'
  | 'payload_too_large_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'upstream_error'
  | 'service_unavailable_error';

export const ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_encoding: { status: 400, type: 'invalid_request_error' },
  missing_field: { status: 400, type: 'invalid_request_error' },
  invalid_type: { status: 400, type: 'invalid_request_error' },
  invalid_value: { status: 400, type: 'invalid_request_error' },
  unknown_field: { status: 400, type: 'invalid_request_error' },
  invalid_model: { status: 400, type: 'invalid_request_error' },
  invalid_role: { status: 400, type: 'invalid_request_error' },
  invalid_path_parameter: { status: 400, type: 'invalid_request_error' },
  context_id_too_long: { status: 400, type: 'invalid_request_error' },
  external_id_too_long: { status: 400, type: 'invalid_request_error' },
  idempotency_key_invalid: { status: 400, type: 'invalid_request_error' },
  upstream_rejected: { status: 400, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  route_not_found: { status: 404, type: 'not_found_error' },
  context_not_found: { status: 404, type: 'not_found_error' },
  message_not_found: { status: 404, type: 'not_found_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  idempotency_key_in_use: { status: 409, type: 'idempotency_error' },
  idempotency_key_reused: { status: 422, type: 'idempotency_error' },
  body_too_large: { status: 413, type: 'payload_too_large_error' },
  message_too_large: { status: 413, type: 'payload_too_large_error' },
  too_many_messages: { status: 413, type: 'payload_too_large_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  upstream_rate_limited: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'server_error' },
  upstream_error: { status: 502, type: 'upstream_error' },
  upstream_timeout: { status: 504, type: 'upstream_error' },
  llm_not_configured: { status: 503, type: 'service_unavailable_error' },
  overloaded: { status: 503, type: 'service_unavailable_error' },
  not_ready: { status: 503, type: 'service_unavailable_error' },
  service_unavailable: { status: 503, type: 'service_unavailable_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string; param?: string };
  request_id: string;
}

/** The limits that refuse a request at once to shed load (counted in sentio_http_requests_shed_total). */
export const SHED_LIMITS = ['in_flight', 'key_in_flight', 'engine_queue'] as const;
export type ShedLimit = (typeof SHED_LIMITS)[number];

/** An error the API reports to its caller. Anything else that reaches the edge is a 500. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly param: string | undefined;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Readonly<Record<string, string>>;
  /** Set when a limit refused the request to shed load, not for anything the request itself did. */
  readonly shed: ShedLimit | undefined;

  constructor(code: ErrorCode, message: string, opts: { param?: string; headers?: Record<string, string>; cause?: unknown; shed?: ShedLimit } = {}) {
    // No stack: an AppError is an answer, not a fault (a fault keeps its own as the cause), and capturing
    // one was most of the cost of a 429 or 503 that sheds load (about 5 µs of the main thread each).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { cause: opts.cause });
    Error.stackTraceLimit = limit;
    this.code = code;
    this.param = opts.param;
    this.headers = opts.headers ?? {};
    this.shed = opts.shed;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

/** Characters of a message or param an error body carries: both may echo a client's value (a model name, a field). */
const ECHO_LIMIT = 512;

// A surrogate without its pair. JSON.stringify writes one as a \ud83d escape, which strict clients
// (serde_json, Python encoding to UTF-8) refuse, so the whole error body would be unreadable to them.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A field's place in a JSON value, as an error's `param` names it: `messages[0].content.text`. */
export function paramPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

/**
 * `s`, cut at `max` characters with an ellipsis when longer, with lone surrogates made U+FFFD: a client's
 * value may hold one, a cut may split a pair, and V8's JSON.parse message quotes a half of one.
 */
export function clip(s: string, max: number): string {
  const cut = s.length > max ? `${s.slice(0, max - 1)}…` : s;
  return cut.replace(LONE_SURROGATE, '\uFFFD');
}

/** The 413 of a request with more messages than its endpoint takes (`per` names the request: "chat request"). */
export function tooManyMessages(max: number, got: number, per = 'request'): AppError {
  return new AppError('too_many_messages', `at most ${max} messages per ${per} (got ${got})`, { param: 'messages' });
}

export function toErrorBody(err: AppError, requestId: string): ErrorBody {
  const error: ErrorBody['error'] = { type: ERRORS[err.code].type, code: err.code, message: clip(err.message, ECHO_LIMIT) };
  if (err.param !== undefined) error.param = clip(err.param, ECHO_LIMIT);
  return { error, request_id: requestId };
}
