/**
 * The upstream LLM: an OpenAI-compatible `/chat/completions` client over node:http(s) with a keep-alive
 * connection pool. It knows nothing of emotions or of Sentio's wire shapes; it sends a body, and returns
 * the upstream's JSON completion or an async iterator over its SSE chunks.
 *
 * Failures are UpstreamErrors (llm/errors.ts) that say how the call failed: rate limited (with its
 * Retry-After), rejected as invalid (400/413/422, with the upstream's message), timed out (no answer within
 * the timeout, 408/504), or failed (any other status, a refused or reset connection, a malformed reply);
 * api/error-mapping.ts gives each its HTTP answer (docs/chat.md, "Errors"). A request is cancelled (its
 * socket destroyed) when the caller's AbortSignal fires, which is how a client that disconnects stops
 * generation upstream.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { clip } from '../errors.js';
import { MAX_JSON_DEPTH, jsonOverLimits } from '../json-limits.js';
import { UpstreamError } from './errors.js';
import type { UpstreamFailure } from './errors.js';
import { SseParser } from './sse-parser.js';
import type { UpstreamChunk, UpstreamCompletion } from './types.js';

export interface LlmClientOptions {
  /** The OpenAI-compatible base, e.g. http://127.0.0.1:8000/v1 (no trailing slash). */
  baseUrl: string;
  apiKey?: string | undefined;
  /**
   * Non-streaming: the whole completion must arrive within this. Streaming: the response headers must,
   * and then no gap between two chunks may be longer.
   */
  timeoutMs: number;
  /** Most sockets to the upstream at once (further requests queue in the agent). */
  maxSockets?: number;
}

/** Raised when the caller's signal aborted the request; nobody is left to answer. */
export class UpstreamAbortedError extends Error {
  override name = 'UpstreamAbortedError';
}

/** An open streaming completion: iterate for chunks; `abort()` stops it early. */
export interface UpstreamStream extends AsyncIterable<UpstreamChunk> {
  abort(): void;
}

/** Bytes of an upstream error body kept for the message. */
const ERROR_BODY_LIMIT = 16_384;
/** Bytes of a completion accepted whole (a runaway upstream must not exhaust memory). */
const COMPLETION_BODY_LIMIT = 32 * 1_048_576;
/**
 * Bytes of a stream accepted (a runaway upstream must not stream for ever). Nothing of it is held, and
 * each token costs 200-odd bytes of chunk around it: 32 MiB cut a reply off at about 130,000 tokens,
 * which long-output models reach; this is about half a million.
 */
const STREAM_BODY_LIMIT = 128 * 1_048_576;
/** Characters of one stream event: a chat chunk is a few hundred; a whole tool call's arguments in one can be large. */
const STREAM_EVENT_LIMIT = 4 * 1_048_576;
/** Resends of a request whose pooled socket turned out closed; then the error stands. */
const STALE_SOCKET_RETRIES = 1;
/** Pooled sockets idle this long are closed: under uvicorn's 5 s keep-alive. */
const FREE_SOCKET_IDLE_MS = 4_000;

export class LlmClient {
  readonly #url: URL;
  readonly #transport: typeof http | typeof https;
  readonly #agent: http.Agent;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;

  constructor(opts: LlmClientOptions) {
    this.#url = new URL(`${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    const secure = this.#url.protocol === 'https:';
    this.#transport = secure ? https : http;
    const agentOpts: http.AgentOptions = {
      keepAlive: true,
      keepAliveMsecs: 1_000,
      maxSockets: opts.maxSockets ?? 1_024,
      maxFreeSockets: 256,
      // Reuse the most recently used socket: it is the least likely to have been closed by the upstream.
      scheduling: 'lifo',
      // A pooled socket idle this long is closed (sooner when the upstream's Keep-Alive header asks): before
      // uvicorn's 5 s (vLLM), which closes idle connections without saying so, and so meets a request.
      timeout: FREE_SOCKET_IDLE_MS,
    };
    this.#agent = secure ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
    this.#headers = { 'content-type': 'application/json' };
    if (opts.apiKey) this.#headers['authorization'] = `Bearer ${opts.apiKey}`;
    this.#timeoutMs = opts.timeoutMs;
  }

  /** A non-streaming completion. */
  async complete(body: Record<string, unknown>, signal: AbortSignal, requestId?: string): Promise<UpstreamCompletion> {
    const call = this.#start({ ...body, stream: false }, signal, requestId, 'application/json');
    try {
      const res = await call.response;
      const text = await readAll(res, COMPLETION_BODY_LIMIT);
      // Depth only: a reply's size is bounded by its bytes, and logprobs make legitimately large ones.
      if (jsonOverLimits(text)) throw new UpstreamError('failed', `the upstream LLM sent a completion nested deeper than ${MAX_JSON_DEPTH} levels`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new UpstreamError('failed', 'the upstream LLM sent a completion that is not JSON');
      }
      if (!isCompletion(parsed)) {
        throw new UpstreamError('failed', 'the upstream LLM sent a completion without well-formed choices');
      }
      return parsed;
    } catch (err) {
      throw call.explain(err);
    } finally {
      call.done();
    }
  }

  /**
   * Open a streaming completion. Resolves once the upstream has answered 200 (so refusals such as 429
   * become ordinary HTTP errors before Sentio starts its own stream); iterating yields parsed chunks.
   */
  async stream(body: Record<string, unknown>, signal: AbortSignal, requestId?: string): Promise<UpstreamStream> {
    const call = this.#start(body, signal, requestId, 'text/event-stream');
    let res: IncomingMessage;
    try {
      res = await call.response;
    } catch (err) {
      call.done();
      throw call.explain(err);
    }
    call.idle(); // from here on the timeout is an idle gap between chunks
    const timeoutMs = this.#timeoutMs;
    const iterate = async function* (): AsyncGenerator<UpstreamChunk> {
      const parser = new SseParser(STREAM_EVENT_LIMIT);
      // A character may be split across two pieces: decoding each piece alone would turn it into U+FFFD.
      const decoder = new StringDecoder('utf8');
      let received = 0;
      let finished = false;
      try {
        // Not destroyed when left at [DONE]: the rest of the body is drained below, and the socket goes
        // back to the keep-alive pool instead of being closed (a new connection per stream otherwise).
        const pieces = res.iterator({ destroyOnReturn: false }) as AsyncIterableIterator<Buffer>;
        for await (const piece of pieces) {
          received += piece.length;
          if (received > STREAM_BODY_LIMIT) {
            throw new UpstreamError('failed', `the upstream LLM streamed more than ${STREAM_BODY_LIMIT} bytes`);
          }
          const lines = parser.lines;
          const events = parser.push(decoder.write(piece));
          // Progress is a line ended (an SSE comment too: upstreams send them as keep-alives while a model
          // thinks), not a byte: an upstream trickling one byte of an event at a time was never timed out.
          if (parser.lines !== lines) call.idle();
          for (const data of events) {
            if (data === '[DONE]') {
              finished = true;
              return;
            }
            // While the consumer holds the chunk (a slow client applies backpressure), the upstream is
            // not the one being slow: the idle timer stops, and starts again when asked for more.
            call.hold();
            yield parseChunk(data);
            call.idle();
          }
        }
        for (const data of [...parser.push(decoder.end()), ...parser.end()]) {
          if (data === '[DONE]') {
            finished = true;
            return;
          }
          yield parseChunk(data);
        }
      } catch (err) {
        throw call.explain(err);
      } finally {
        call.done();
        if (finished && !res.complete) drainWithin(res, timeoutMs);
        else if (!finished) res.destroy();
      }
    };
    const it = iterate();
    return {
      [Symbol.asyncIterator]: () => it,
      abort: () => {
        call.abort();
        void it.return(undefined);
      },
    };
  }

  /** Close pooled connections (server shutdown). */
  close(): void {
    this.#agent.destroy();
  }

  #start(body: Record<string, unknown>, signal: AbortSignal, requestId: string | undefined, accept: string): UpstreamCall {
    const payload = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { ...this.#headers, accept, 'content-length': payload.length };
    if (requestId) headers['x-request-id'] = requestId;
    // A resend gets a connection of its own (agent false): another pooled one may be just as stale.
    const open = (fresh: boolean) => this.#transport.request(this.#url, { method: 'POST', agent: fresh ? false : this.#agent, headers });
    return new UpstreamCall(open, payload, signal, this.#timeoutMs);
  }
}

type Failure = 'timeout' | 'aborted';

/** One request's lifecycle: the timer, the abort listener, and the translation of failures. */
class UpstreamCall {
  readonly response: Promise<IncomingMessage>;
  #req!: http.ClientRequest;
  readonly #signal: AbortSignal;
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  #failure: Failure | undefined;
  /** done() was called: the request is over, and its socket may already serve another call from the pool. */
  #ended = false;
  #rejectResponse: (err: Error) => void = () => undefined;
  readonly #onAbort = () => this.abort();

  constructor(open: (fresh: boolean) => http.ClientRequest, payload: Buffer, signal: AbortSignal, timeoutMs: number) {
    this.#signal = signal;
    this.#timeoutMs = timeoutMs;
    this.response = new Promise<IncomingMessage>((resolve, reject) => {
      this.#rejectResponse = reject;
      const send = (attempt: number) => {
        const req = open(attempt > 0);
        this.#req = req;
        let answered = false;
        // `on`, not `once`: a second error (a reset after a timeout) must not go unhandled and end the process.
        req.on('error', (err: NodeJS.ErrnoException) => {
          // A pooled connection that the upstream closed while it sat idle fails before any reply, and the
          // request goes again, once, on a new connection (Node's advice for `reusedSocket`). Once, because
          // the same failure is also an upstream that read the request and then died: it may see it twice,
          // never more.
          if (!answered && req.reusedSocket && !this.#failure && attempt < STALE_SOCKET_RETRIES
            && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
            send(attempt + 1);
            return;
          }
          reject(err);
        });
        req.once('response', (res) => {
          answered = true;
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            resolve(res);
            return;
          }
          readAll(res, ERROR_BODY_LIMIT, true)
            .then((text) => reject(statusError(status, res.headers, text)))
            .catch(reject);
        });
        req.end(payload);
      };
      send(0);
    });
    // Handled by whoever awaits `response`; this only keeps an early failure from being "unhandled".
    this.response.catch(() => undefined);
    if (signal.aborted) {
      this.abort();
    } else {
      signal.addEventListener('abort', this.#onAbort, { once: true });
      this.#arm();
    }
  }

  /** Restart the timer: called on every chunk of a stream. */
  idle(): void {
    if (!this.#failure) this.#arm();
  }

  /** Stop the timer until the next idle(). */
  hold(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  abort(): void {
    this.#fail('aborted');
  }

  done(): void {
    this.#ended = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#signal.removeEventListener('abort', this.#onAbort);
  }

  /** The error to report for whatever went wrong. */
  explain(err: unknown): Error {
    if (this.#failure === 'aborted') return new UpstreamAbortedError('the client went away');
    if (this.#failure === 'timeout') {
      return new UpstreamError('timeout', `the upstream LLM did not answer within ${this.#timeoutMs} ms`, { cause: err });
    }
    if (err instanceof UpstreamError) return err;
    const code = (err as { code?: string } | null)?.code;
    const reason = code ? ` (${code})` : '';
    return new UpstreamError('failed', `the upstream LLM is unreachable or closed the connection${reason}`, { cause: err });
  }

  #arm(): void {
    if (this.#timer) this.#timer.refresh();
    else this.#timer = setTimeout(() => this.#fail('timeout'), this.#timeoutMs);
  }

  #fail(reason: Failure): void {
    // After done() there is nothing to stop; destroying the request then would destroy a pooled socket.
    if (this.#failure || this.#ended) return;
    this.#failure = reason;
    this.done();
    this.#req.destroy(new Error(reason));
    // A request still queued for one of the pool's sockets emits neither 'error' nor 'close' when
    // destroyed (Node 20): without this its caller waited for a response for ever.
    this.#rejectResponse(new Error(reason));
  }
}

/**
 * Read what follows [DONE] so that the socket goes back to the keep-alive pool, but not for longer than
 * the timeout: an upstream that never ended its response after [DONE] held its socket for good, and
 * once the pool's 1,024 were held every new chat waited for one.
 */
function drainWithin(res: IncomingMessage, timeoutMs: number): void {
  const timer = setTimeout(() => res.destroy(), timeoutMs);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
  res.resume();
}

function readAll(res: IncomingMessage, limit: number, truncate = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (c: Buffer) => {
      if (total >= limit) return;
      total += c.length;
      if (total > limit && !truncate) {
        res.destroy();
        reject(new UpstreamError('failed', `the upstream LLM sent more than ${limit} bytes`));
        return;
      }
      chunks.push(c);
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
    // A socket that dies mid-body: 'close' without 'end' (a settled promise ignores the late reject).
    res.once('close', () => reject(new Error('upstream response closed before its end')));
  });
}

/** The upstream's own error message, if its body is an OpenAI-style error. */
function upstreamMessage(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const m = typeof j.error === 'string' ? j.error : j.error?.message ?? j.message ?? j.detail;
    if (typeof m === 'string' && m) return clip(m, 300);
  } catch {
    // not JSON
  }
  return undefined;
}

/** Longest wait passed on: past a day a header is more likely wrong than meant, and past 1e21 `String()` writes an exponent. */
const MAX_RETRY_AFTER_S = 86_400;

/** Seconds to wait, from Retry-After (seconds or an HTTP date) or OpenAI's retry-after-ms, within [1, a day]. */
function retryAfterSeconds(headers: http.IncomingHttpHeaders, now = Date.now()): number {
  const ms = Number(headers['retry-after-ms']);
  const ra = headers['retry-after'];
  let seconds = Number.NaN;
  if (typeof ra === 'string' && ra.trim()) {
    seconds = /^\d+(\.\d+)?$/.test(ra.trim()) ? Number(ra) : (Date.parse(ra) - now) / 1000;
  }
  if (!Number.isFinite(seconds) && Number.isFinite(ms)) seconds = ms / 1000;
  if (!Number.isFinite(seconds)) return 1;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(seconds)));
}

/**
 * The API error for an upstream's status. Only a refusal of the caller's request (400, 413, 422) carries the
 * upstream's message: the others are about Sentio's own upstream account and settings, and their text
 * names them (an OpenAI 401 quotes part of the key, a 404 the internal model name, a 429 the organisation).
 */
function statusError(status: number, headers: http.IncomingHttpHeaders, text: string): UpstreamError {
  if (status === 429) {
    return new UpstreamError('rate_limited', 'the upstream LLM is rate limiting requests', { retryAfterS: retryAfterSeconds(headers) });
  }
  if (status === 400 || status === 413 || status === 422) {
    return new UpstreamError('rejected', `the upstream LLM rejected the request: ${upstreamMessage(text) ?? `HTTP ${status}`}`);
  }
  if (status === 408 || status === 504) {
    return new UpstreamError('timeout', `the upstream LLM timed out (HTTP ${status})`);
  }
  // 401/403/404 mean Sentio's own upstream settings are wrong (key, model map): not the caller's fault.
  // An upstream that says when to come back (a 503 in maintenance) has that passed on.
  const retry = status >= 500 && (headers['retry-after'] !== undefined || headers['retry-after-ms'] !== undefined);
  return new UpstreamError('failed', `the upstream LLM answered HTTP ${status}`, retry ? { retryAfterS: retryAfterSeconds(headers) } : {});
}

function parseChunk(data: string): UpstreamChunk {
  if (jsonOverLimits(data)) throw new UpstreamError('failed', `the upstream LLM sent a stream event nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new UpstreamError('failed', 'the upstream LLM sent a stream event that is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object') {
    throw new UpstreamError('failed', 'the upstream LLM sent a stream event that is not an object');
  }
  // Wrapped as OpenAI does, or bare: vLLM's ErrorResponse ({"object": "error", "message", "type", "code"}).
  const error = (parsed as { error?: unknown }).error ?? ((parsed as { object?: unknown }).object === 'error' ? parsed : undefined);
  if (error !== undefined && error !== null) {
    // An error event is answered as its HTTP twin would be: a refusal of the request with the upstream's
    // message, a rate limit with a backoff hint, a timeout. Any other says nothing the client can act on, and
    // its text stays here (it may name the account; see statusError).
    switch (eventFailure(error)) {
      case 'rejected': throw new UpstreamError('rejected', `the upstream LLM rejected the request: ${upstreamMessage(data) ?? 'an error event'}`);
      case 'rate_limited': throw new UpstreamError('rate_limited', 'the upstream LLM is rate limiting requests (an error event)', { retryAfterS: retryAfterSeconds({}) });
      case 'timeout': throw new UpstreamError('timeout', 'the upstream LLM timed out (an error event)');
      default: throw new UpstreamError('failed', 'the upstream LLM sent an error event in its stream');
    }
  }
  const choices = (parsed as { choices?: unknown }).choices;
  if (choices !== undefined && choices !== null && !(Array.isArray(choices) && choices.every((c) => isChoice(c, 'delta')))) {
    throw new UpstreamError('failed', 'the upstream LLM sent a stream event whose choices are malformed');
  }
  return parsed as UpstreamChunk;
}

/**
 * What a stream's error event says, in the order statusError reads statuses: a refusal of the request
 * (OpenAI's `invalid_request_error`, or a 400, 413 or 422 code: vLLM sends `"code": 400`, type
 * `BadRequestError`), a rate limit (a 429 code, or a type or code starting `rate_limit`), a timeout (a 408
 * or 504 code, or a type or code naming one), or else a failure.
 */
function eventFailure(error: unknown): UpstreamFailure {
  if (!isObject(error)) return 'failed';
  const code = Number(error['code']);
  const names = [error['type'], error['code']].filter((v): v is string => typeof v === 'string');
  if (error['type'] === 'invalid_request_error' || error['type'] === 'BadRequestError' || code === 400 || code === 413 || code === 422) return 'rejected';
  if (code === 429 || names.some((n) => /^rate_?limit/i.test(n))) return 'rate_limited';
  if (code === 408 || code === 504 || names.some((n) => /timeout/i.test(n))) return 'timeout';
  return 'failed';
}

/** A JSON object (not null, not an array): the shape every part of an upstream reply Sentio reads must have. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A choice is an object whose index (when given) is a whole number and whose finish_reason is text or null,
 * with a message (a completion's) or a delta (a chunk's, which may leave it out) that is an object too,
 * whose content is text or null and whose tool_calls are a list of tool calls (isToolCall): what Sentio
 * reads of it and what an OpenAI client expects to find there, so a client never gets those fields
 * mistyped in a 200.
 */
function isChoice(c: unknown, body: 'message' | 'delta'): boolean {
  if (!isObject(c)) return false;
  const index = c['index'];
  const finish = c['finish_reason'];
  if (index !== undefined && !(Number.isInteger(index) && (index as number) >= 0)) return false;
  if (finish !== undefined && finish !== null && typeof finish !== 'string') return false;
  const m = c[body];
  if (m === undefined && body === 'delta') return true;
  if (!isObject(m)) return false;
  const toolCalls = m['tool_calls'];
  return optionalText(m['content'], true) && optionalText(m['role'], true)
    && (toolCalls === undefined || toolCalls === null || (Array.isArray(toolCalls) && toolCalls.every((t) => isToolCall(t, body))));
}

/** Absent, text, or null where `nullable`: what the published response schemas say of these fields. */
const optionalText = (v: unknown, nullable: boolean) => v === undefined || typeof v === 'string' || (nullable && v === null);

/**
 * A tool call whose id, type and function's name and arguments, when given, are text (clients JSON.parse the
 * arguments), and whose index, when given, counts. A chunk's part of one may also hold null for the text
 * fields: proxies that serialise OpenAI's Python types (LiteLLM) send the pieces' absent fields as null.
 */
function isToolCall(t: unknown, body: 'message' | 'delta'): boolean {
  if (!isObject(t)) return false;
  const piece = body === 'delta';
  const index = t['index'];
  if (index !== undefined && !(Number.isInteger(index) && (index as number) >= 0)) return false;
  if (!optionalText(t['id'], piece) || !optionalText(t['type'], piece)) return false;
  const f = t['function'];
  if (f === undefined) return true;
  if (!isObject(f)) return false;
  return optionalText(f['name'], piece) && optionalText(f['arguments'], piece);
}

function isCompletion(v: unknown): v is UpstreamCompletion {
  if (!isObject(v)) return false;
  const choices = v['choices'];
  return Array.isArray(choices) && choices.length > 0 && choices.every((c) => isChoice(c, 'message'));
}
