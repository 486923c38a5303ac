/**
 * The uWebSockets.js edge: a route table, the per-request lifecycle (request id, abort handling, key
 * check, body read with a cap, handler, corked reply, audit log line) and listen/close. Handlers never
 * see uWS objects; they get a RequestContext and return a Reply.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import { AppError, toErrorBody } from '../errors.js';
import type { ShedLimit } from '../errors.js';
import { Canceller } from '../engine/cancel.js';
import type { CancelSignal } from '../engine/cancel.js';
import type { ApiKeyInfo, KeyVerifier } from '../auth/api-keys.js';
import { presentedKey } from '../auth/api-keys.js';
import { parseJsonObject, readBody } from './body.js';
import { randomHex } from '../random-id.js';
import { statusLine } from './status.js';
import { SseStream } from './sse.js';

export interface RequestContext {
  readonly requestId: string;
  readonly method: string;
  /** The route pattern (not the concrete path), for logs and metrics. */
  readonly route: string;
  readonly params: readonly string[];
  /** Lower-cased request headers, read before the first await (uWS requests are stack allocated). */
  readonly headers: Readonly<Record<string, string>>;
  /** Fires when the client goes away; handlers pass it to the engine and the upstream LLM. */
  readonly signal: CancelSignal;
  key: ApiKeyInfo | undefined;
  /** Emotion-model input tokens this request analysed (audit log, metrics). */
  analysedTokens: number;
  /** Extra headers for the reply (timings, rate limits), merged into success and error responses. */
  readonly replyHeaders: Record<string, string>;
  /** Milliseconds this request waited for the engine (x-inference-time). */
  inferenceMs: number;
  /**
   * Set by the idempotency guard while this request holds its Idempotency-Key: names the request's effect,
   * so that a store can apply it once however often it is retried (ContextStore.append).
   */
  idempotencyToken: string | undefined;
}

/**
 * Each request's abort signal travels with every call made for it (engine, store, upstream), so it is
 * how code far from the handler finds its request (engine timing): the request rides on its signal under
 * this symbol. Not AsyncLocalStorage: its promise hooks cost every promise on the hot path. Not a WeakMap
 * keyed by the signal: on Node 20 its entries kept each request's context, and all it reached, alive
 * through young-generation collections into the old generation, about 500 bytes a request under the V2
 * load (`--trace-gc-nvp`, docs/deployment.md#memory).
 */
const REQUEST = Symbol('sentio.request');

interface RequestSignal extends CancelSignal {
  [REQUEST]?: RequestContext;
}

/** The request a signal belongs to, if it is a request's signal. */
export function requestOf(signal: CancelSignal | undefined): RequestContext | undefined {
  return (signal as RequestSignal | undefined)?.[REQUEST];
}

export interface JsonReply {
  status: number;
  body: unknown;
  /** The body already serialised (idempotent replays, metrics); sent as is when present. */
  rawBody?: string;
  /** Default application/json. */
  contentType?: string;
  headers?: Record<string, string>;
}

/** A server-sent-events reply: the handler writes events through the stream, then returns. */
export interface StreamReply {
  stream: (sse: SseStream) => Promise<void>;
}

export type Reply = JsonReply | StreamReply;

export interface Route {
  method: 'get' | 'post';
  pattern: string;
  /** false only for health and readiness, the two routes DECISIONS.md frees from the key. */
  auth: boolean;
  /** false for /metrics: not refused by the in-flight limit, so that a scrape answers while the server sheds load. */
  shed?: boolean;
  /** The most messages the handler takes, named in the 413 of a body too large to parse for its count. */
  maxMessages?: number;
  handler: (ctx: RequestContext, body: Record<string, unknown> | undefined) => Promise<Reply> | Reply;
  /** For /openapi.json. */
  summary?: string;
  requestSchema?: ZodType;
  /** The 200 body (a stream's events for chat with `stream: true`). */
  responseSchema?: ZodType;
  streamSchema?: ZodType;
}

/** Runs around every authenticated handler (rate limiting, idempotency). */
export type Middleware = (
  ctx: RequestContext,
  body: Record<string, unknown> | undefined,
  rawBody: Buffer | undefined,
  next: () => Promise<Reply>,
) => Promise<Reply>;

export interface RequestLogEntry {
  request_id: string;
  key_id: string | undefined;
  method: string;
  route: string;
  status: number;
  latency_ms: number;
  analysed_tokens: number;
  /** The limit that refused the request to shed load, if one did. */
  shed?: ShedLimit;
}

export interface ServerOptions {
  routes: readonly Route[];
  keys: KeyVerifier;
  logger: Logger;
  maxBodyBytes: number;
  /** Arrays, objects and members a JSON body may hold (src/json-limits.ts); default unbounded. */
  maxJsonNodes?: number;
  requestTimeoutMs: number;
  tls?: { cert: string; key: string } | undefined;
  /** Runs for an authenticated request before its body is read (the rate limit's admission); throws to refuse. */
  admit?: (ctx: RequestContext) => Promise<void>;
  /** Sets the key's quota headers without charging it, for a 429 refused before `admit`. */
  quota?: (ctx: RequestContext) => Promise<void>;
  middleware?: readonly Middleware[];
  /** Requests handled at once; past it new requests get 503 overloaded at once. */
  maxInFlight?: number;
  /** Requests of one key handled at once (of those the in-flight limit counts); past it 429 at once. */
  maxInFlightPerKey?: number;
  /** Called once per finished request (after the reply, or on abort with status 499). */
  onRequestDone?: (entry: RequestLogEntry) => void;
  /** Maps errors from lower layers (engine, store, upstream) to API errors. */
  mapError?: (err: unknown) => AppError | undefined;
}

const HEADERS_READ = ['x-api-key', 'authorization', 'content-type', 'content-encoding', 'content-length', 'transfer-encoding', 'idempotency-key', 'accept'];

/** A Content-Type's charset parameter, quoted or not (spaces around '=' tolerated), and the ones JSON's UTF-8 satisfies. */
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * A body that uWS, answered before reading it, would read and throw away to keep the connection alive:
 * declared past the cap, or chunked (no bound at all). A client without a key could feed it gigabytes;
 * such a request gets its connection closed instead. A small body is still skipped and keep-alive goes on.
 */
function costlyToSkip(contentLength: string | undefined, transferEncoding: string | undefined, maxBodyBytes: number): boolean {
  return Number(contentLength ?? '0') > maxBodyBytes || Boolean(transferEncoding);
}

function newRequestId(): string {
  return `req_${randomHex(12)}`;
}

export class HttpServer {
  readonly #app: TemplatedApp;
  readonly #opts: ServerOptions;
  #listenSocket: us_listen_socket | undefined;
  #port = 0;
  #inFlight = 0;
  /** Requests in progress by key id, of those the in-flight limit counts (not /metrics). */
  readonly #keyInFlight = new Map<string, number>();
  /** When the last request started (performance.now()), for waitQuiet. */
  #lastStart = 0;
  #idleWaiters: Array<() => void> = [];
  #draining = false;
  /** Streams being written, for closeAll. */
  readonly #streams = new Set<SseStream>();
  /**
   * Requests not yet answered, each in a slot of its own, which closeAll() answers 503. Slots are reused
   * through a free list: a Set, added to and deleted from at every request, churned its hash tables into
   * old-space garbage (+40 MB of peak RSS under the load bench).
   */
  readonly #interrupts: Array<(() => void) | undefined> = [];
  readonly #freeSlots: number[] = [];

  constructor(opts: ServerOptions) {
    this.#opts = opts;
    // Forward-secret suites only: OpenSSL's default list still offered static-RSA key exchange on TLS 1.2
    // (AES128-SHA), which a recorded session cannot keep from whoever later gets the key. TLS 1.3's are all.
    this.#app = opts.tls ? uWS.SSLApp({ cert_file_name: opts.tls.cert, key_file_name: opts.tls.key, ssl_ciphers: TLS12_CIPHERS }) : uWS.App();
    for (const route of opts.routes) {
      this.#app[route.method](route.pattern, (res, req) => this.#handle(route, res, req));
      // HEAD is GET without the body (RFC 9110): load balancers probe /healthz that way.
      if (route.method === 'get') this.#app.head(route.pattern, (res, req) => this.#handle(route, res, req, true));
    }
    this.#app.any('/*', (res, req) => this.#unmatched(res, req));
  }

  get port(): number {
    return this.#port;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most requests in progress of one API key, of those SENTIO_MAX_IN_FLIGHT_PER_KEY counts (0 if none). */
  get busiestKeyInFlight(): number {
    let most = 0;
    for (const n of this.#keyInFlight.values()) if (n > most) most = n;
    return most;
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port}`));
          return;
        }
        this.#listenSocket = socket;
        this.#port = uWS.us_socket_local_port(socket);
        resolve(this.#port);
      });
    });
  }

  /** Stop accepting connections; in-flight requests continue. */
  stopListening(): void {
    this.#draining = true;
    if (this.#listenSocket) {
      uWS.us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = undefined;
    }
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. Returns whether it drained. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /**
   * Resolves once no request is in flight and none has started for `quietMs`, or after `timeoutMs`. While
   * draining every reply carries Connection: close, so keep-alive clients leave after their next one; a
   * request already on the wire when the connections close would otherwise meet a reset (seen at SIGTERM
   * under keep-alive load, most with several workers, each of which drains on its own).
   */
  async waitQuiet(quietMs: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0 || !(await this.waitIdle(left))) return;
      const since = performance.now() - this.#lastStart;
      if (since >= quietMs) return;
      await new Promise((r) => setTimeout(r, Math.min(quietMs - since, Math.max(0, deadline - performance.now()))));
    }
  }

  /** Close every remaining connection (after draining); a stream still open ends with an error event first. */
  closeAll(): void {
    this.stopListening();
    for (const interrupt of this.#interrupts.slice()) interrupt?.();
    for (const sse of this.#streams) {
      const err = new AppError('service_unavailable', 'the server shut down before this reply was complete');
      sse.interrupt(JSON.stringify(toErrorBody(err, sse.requestId)));
    }
    this.#app.close();
  }

  /** The key a request presents, verified; throws the 401 (missing or not valid) otherwise. */
  #authenticate(xApiKey: string, authorization: string): ApiKeyInfo {
    const key = presentedKey(xApiKey, authorization);
    // RFC 9110 15.5.2: a 401 names the scheme that would be accepted.
    const headers = { 'www-authenticate': 'Bearer' };
    if (key === undefined) throw new AppError('missing_api_key', 'an API key is required: send x-api-key or Authorization: Bearer', { headers });
    const info = key ? this.#opts.keys.verify(key) : undefined;
    if (!info) throw new AppError('invalid_api_key', 'the API key is not valid', { headers });
    return info;
  }

  #unmatched(res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    const requestId = newRequestId();
    const path = req.getUrl();
    // As sent: methods are case-sensitive (RFC 9110), so `get` is not GET, and is counted as OTHER.
    const method = req.getCaseSensitiveMethod();
    // Any token is a method to uWS: an unknown one must not become a new metrics series per request.
    const known = KNOWN_METHODS.has(method) ? method : 'OTHER';
    const matching = this.#opts.routes.filter((r) => patternMatches(r.pattern, path));
    const methods = matching.map((r) => r.method.toUpperCase());
    // A GET route answers HEAD too (RFC 9110's 405 names every method the resource supports in Allow).
    if (methods.includes('GET')) methods.push('HEAD');
    const allowed = methods.some((m) => m !== method);
    // The key first here too (spec: every request without a valid key gets 401): a caller without one
    // learns nothing of the routes. The paths that take no key (/healthz, /readyz) answer 405 to anyone, so
    // that a probe sent with the wrong method reads as that, not as a missing key.
    const open = matching.length > 0 && matching.every((r) => !r.auth);
    let keyInfo: ApiKeyInfo | undefined;
    let err: AppError;
    try {
      if (!open) keyInfo = this.#authenticate(req.getHeader('x-api-key'), req.getHeader('authorization'));
      err = allowed ? new AppError('method_not_allowed', `${method} is not allowed on ${path}`)
        : new AppError('route_not_found', `no route for ${method} ${path}`);
    } catch (refused) {
      if (!(refused instanceof AppError)) throw refused;
      err = refused;
    }
    const headers: Record<string, string> = (keyInfo || open) && allowed ? { allow: [...new Set(methods)].join(', ') } : { ...err.headers };
    const closeConnection = this.#draining || costlyToSkip(req.getHeader('content-length'), req.getHeader('transfer-encoding'), this.#opts.maxBodyBytes);
    writeJson(res, err.status, JSON.stringify(toErrorBody(err, requestId)), requestId, { head: method === 'HEAD', headers, closeConnection });
    this.#opts.onRequestDone?.({
      // A path that a route takes is counted under that route's template (a 405, or a 401 there): still a
      // bounded set of labels, and the one a dashboard of that route reads.
      request_id: requestId, key_id: keyInfo?.id, method: known, route: matching[0]?.pattern ?? 'unmatched', status: err.status,
      latency_ms: Math.round((performance.now() - started) * 1000) / 1000, analysed_tokens: 0,
    });
  }

  #handle(route: Route, res: HttpResponse, req: HttpRequest, head = false): void {
    const started = performance.now();
    this.#lastStart = started;
    const headers: Record<string, string> = {};
    for (const h of HEADERS_READ) {
      const v = req.getHeader(h);
      if (v) headers[h] = v;
    }
    const rawParams: string[] = [];
    for (let i = 0; i < paramCount(route); i++) rawParams.push(req.getParameter(i) ?? '');
    const params: string[] = [];
    const abort = new Canceller();
    // interrupted: answered 503 by closeAll() while still running; nothing more is written or logged for it.
    const state = { aborted: false, responded: false, interrupted: false };
    res.onAborted(() => {
      state.aborted = true;
      abort.abort();
    });
    const ctx: RequestContext = {
      requestId: newRequestId(),
      method: head ? 'HEAD' : route.method.toUpperCase(),
      route: route.pattern,
      params,
      headers,
      signal: abort.signal,
      key: undefined,
      analysedTokens: 0,
      replyHeaders: {},
      inferenceMs: 0,
      idempotencyToken: undefined,
    };
    (abort.signal as RequestSignal)[REQUEST] = ctx;
    this.#inFlight++;
    let keyCounted: string | undefined; // the key this request counts against, once admitted
    let status = 499; // client closed before a reply, as nginx logs it
    let shed: ShedLimit | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#interrupts[slot] = undefined;
      this.#freeSlots.push(slot);
      this.#inFlight--;
      if (keyCounted !== undefined) {
        const n = this.#keyInFlight.get(keyCounted)! - 1;
        if (n === 0) this.#keyInFlight.delete(keyCounted);
        else this.#keyInFlight.set(keyCounted, n);
      }
      const entry: RequestLogEntry = {
        request_id: ctx.requestId, key_id: ctx.key?.id, method: ctx.method, route: ctx.route,
        status, latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
        analysed_tokens: ctx.analysedTokens,
      };
      if (shed) entry.shed = shed;
      this.#opts.onRequestDone?.(entry);
      if (this.#inFlight === 0 && this.#idleWaiters.length) {
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const w of waiters) w();
      }
    };
    const sendError = (err: AppError, closeConnection = false) => {
      if (state.aborted) return; // nobody to answer: the request stays logged as 499
      status = err.status;
      shed = err.shed;
      state.responded = true;
      const body = JSON.stringify(toErrorBody(err, ctx.requestId));
      const headers = { ...ctx.replyHeaders, ...err.headers };
      res.cork(() => writeJson(res, err.status, body, ctx.requestId, { headers, closeConnection: closeConnection || this.#draining, inferenceMs: ctx.inferenceMs, head }));
    };
    // Shutdown past its grace period: a reply not yet started gets a 503 (it was a reset logged as 499).
    const interrupt = () => {
      if (state.responded || state.aborted) return; // a stream has its own interrupt (closeAll)
      sendError(new AppError('service_unavailable', 'the server shut down before this request was complete', { headers: { 'retry-after': '1' } }), true);
      state.interrupted = true;
      finish();
      abort.abort(); // its work is not wanted now: engine jobs and an upstream call stop as for a client gone
    };
    const slot = this.#freeSlots.pop() ?? this.#interrupts.length;
    this.#interrupts[slot] = interrupt;

    let bodyRead = false;
    // A reply that leaves the body unread closes the connection when skipping that body could be unbounded.
    const unreadBodyTooLarge = () => !bodyRead && costlyToSkip(headers['content-length'], headers['transfer-encoding'], this.#opts.maxBodyBytes);
    const run = async (): Promise<void> => {
      // The key first: a request without a valid one gets 401 whatever else is wrong with it (spec,
      // Authentication). Then the in-flight limit (a 503 spends no quota), then the quota, before the body.
      if (route.auth) {
        ctx.key = this.#authenticate(headers['x-api-key'] ?? '', headers['authorization'] ?? '');
        if (route.shed !== false) {
          if (this.#inFlight > (this.#opts.maxInFlight ?? Infinity)) {
            throw new AppError('overloaded', `more than ${this.#opts.maxInFlight} requests in progress; retry shortly`, { headers: { 'retry-after': '1' }, shed: 'in_flight' });
          }
          // One key must not hold every slot: within its quota, slow bodies or long streams kept them all,
          // and every other tenant got 503 (a reviewer's probe: 520 trickled bodies, 54 of 69 refused).
          const held = this.#keyInFlight.get(ctx.key.id) ?? 0;
          const cap = this.#opts.maxInFlightPerKey ?? Infinity;
          if (held >= cap) {
            // Every 429 carries the RateLimit-* headers (DECISIONS.md); without them if the quota's store fails.
            await this.#opts.quota?.(ctx).catch(() => undefined);
            throw new AppError('rate_limit_exceeded', `this API key already has ${cap} request${cap === 1 ? '' : 's'} in progress, its most at once; retry shortly`, { headers: { 'retry-after': '1' }, shed: 'key_in_flight' });
          }
          this.#keyInFlight.set(ctx.key.id, held + 1);
          keyCounted = ctx.key.id;
        }
      }
      let refusal: AppError | undefined; // a POST whose body is refused unread, once admitted (it spends quota)
      let reading: Promise<Buffer> | undefined;
      let stop: Canceller | undefined;
      if (route.method === 'post') {
        const declared = Number(headers['content-length'] ?? '0');
        const contentType = headers['content-type'] ?? '';
        const type = contentType.split(';')[0]!.trim().toLowerCase();
        const named = CHARSET.exec(contentType);
        const charset = named ? (named[1] ?? named[2] ?? '').toLowerCase() : undefined;
        const coding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
        refusal = declared > this.#opts.maxBodyBytes
          ? new AppError('body_too_large', `request body exceeds ${this.#opts.maxBodyBytes} bytes`)
          : type !== 'application/json' ? new AppError('unsupported_media_type', 'Content-Type must be application/json')
          // JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread, not refused.
          : charset !== undefined && !UTF8_CHARSETS.has(charset) ? new AppError('unsupported_media_type', `charset "${charset.slice(0, 64)}" is not supported: send the body as UTF-8`)
          // A compressed body read as JSON fails as 'not valid UTF-8': name the real cause (RFC 9110 15.5.16).
          : coding !== 'identity' && coding !== '' ? new AppError('unsupported_media_type', `Content-Encoding ${coding.slice(0, 64)} is not supported: send the body uncompressed`, { headers: { 'accept-encoding': 'identity' } })
          : undefined;
      }
      if (route.method === 'post' && !refusal) {
        // uWS drops body data that arrives with no onData handler: the read starts in this tick, before the
        // admission's store round trip, and stops if the request is refused before its body is needed
        // (readBody removes its listeners on both signals when it settles; nothing here listens on the
        // request's signal).
        stop = new Canceller();
        reading = readBody(res, {
          limit: this.#opts.maxBodyBytes,
          timeoutMs: this.#opts.requestTimeoutMs,
          signal: abort.signal,
          stop: stop.signal,
          onTimeout: () => {
            status = 408;
            if (state.aborted) return;
            state.aborted = true; // nobody to answer: the connection is closed
            res.close();
          },
        });
        // Handled from the start: a body refused (too large) while the admission still waits on its store
        // (a Redis round trip) rejected with no handler yet, and Node ends a process on an unhandled
        // rejection. The await below still sees the refusal.
        reading.catch(() => undefined);
      }
      try {
        if (route.auth) await this.#opts.admit?.(ctx);
        if (refusal) throw refusal;
        rawParams.forEach((p, i) => params.push(decodeParam(p, i)));
      } catch (err) {
        // uWS keeps the connection's framing: the rest of the body is skipped and keep-alive goes on (the
        // reply closes the connection instead where that could mean skipping without bound: costlyToSkip).
        stop?.abort(err); // the refusal is the reason: a default one is a DOMException, a stack's cost
        throw err;
      }
      const raw = reading && (await reading);
      bodyRead = reading !== undefined;
      const body = raw && parseJsonObject(raw, this.#opts.maxJsonNodes, route.maxMessages);
      const next = () => Promise.resolve(route.handler(ctx, body));
      const chain = (this.#opts.middleware ?? []).reduceRight<() => Promise<Reply>>(
        (inner, mw) => () => mw(ctx, body, raw, inner),
        next,
      );
      const reply = await (route.auth ? chain() : next());
      if (state.interrupted) return;
      if ('stream' in reply) {
        if (state.aborted) return; // the client left while the stream was prepared: its upstream call is cancelled
        status = 200;
        const sse = new SseStream(res, ctx.requestId, ctx.replyHeaders, () => state.aborted, () => this.#draining);
        state.responded = true;
        this.#streams.add(sse);
        try {
          await reply.stream(sse);
        } finally {
          this.#streams.delete(sse);
        }
        // The log says how the stream ended: cut by the shutdown, left by the client before its end, or
        // failed in-band (sent as a 200, logged and counted with the error's status, so alerts see it).
        if (sse.interrupted) status = 503;
        else if (state.aborted) status = 499;
        else if (sse.failedStatus !== undefined) status = sse.failedStatus;
        return;
      }
      status = reply.status;
      if (state.aborted) return;
      // Serialised before the reply counts as started, so that a body that cannot be (too deep for the
      // stack) is answered as the 500 it is, not left unanswered.
      const json = reply.rawBody ?? JSON.stringify(reply.body);
      state.responded = true;
      const replyHeaders = { ...ctx.replyHeaders, ...reply.headers };
      // While draining, close each connection after its reply so keep-alive clients reconnect elsewhere.
      res.cork(() => writeJson(res, reply.status, json, ctx.requestId, {
        headers: replyHeaders, contentType: reply.contentType, inferenceMs: ctx.inferenceMs, head,
        closeConnection: this.#draining || unreadBodyTooLarge(),
      }));
    };

    run()
      .catch((err: unknown) => {
        if (state.interrupted) return; // answered 503 at shutdown; its work failing now is expected
        if (state.aborted && !state.responded) return; // the client left; its work was cancelled, not failed
        if (state.responded) {
          this.#opts.logger.error({ err, request_id: ctx.requestId }, 'error after reply started');
          return;
        }
        const appErr = err instanceof AppError ? err : this.#opts.mapError?.(err);
        if (appErr) {
          // A body refused mid-upload, or refused unread and too large to skip, is not drained: answer,
          // then close the connection.
          sendError(appErr, appErr.code === 'body_too_large' || unreadBodyTooLarge());
        } else {
          this.#opts.logger.error({ err, request_id: ctx.requestId }, 'unhandled error');
          sendError(new AppError('internal_error', 'internal server error'));
        }
      })
      .finally(finish);
  }
}

interface WriteOptions {
  headers?: Record<string, string>;
  /** Close the connection after this reply (a draining server, a request whose body could not be read). */
  closeConnection?: boolean;
  contentType?: string | undefined;
  /** Sent as x-inference-time when the request ran the model. */
  inferenceMs?: number;
  /** A HEAD request: the same status and headers, Content-Length included, and no body. */
  head?: boolean;
}

/**
 * `inferenceMs` > 0 adds x-inference-time. It is written here rather than merged into `headers` as a
 * `{ 'x-inference-time': … }` spread first into the reply's headers: built that way, under V2 load, about
 * 300 bytes of every request outlived two young-generation collections into the old generation (none
 * without that header; the same with a constant value, so the object spread, not the string, did it:
 * `--trace-gc-nvp`, docs/deployment.md#memory).
 */
function writeJson(res: HttpResponse, status: number, body: string, requestId: string, options: WriteOptions = {}): void {
  const { headers = {}, closeConnection = false, contentType = 'application/json', inferenceMs = 0, head = false } = options;
  res.writeStatus(statusLine(status));
  res.writeHeader('content-type', contentType);
  res.writeHeader('x-request-id', requestId);
  if (inferenceMs > 0) res.writeHeader('x-inference-time', inferenceMs.toFixed(3));
  for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
  if (head) {
    // uWS 3.0.6: endWithoutBody(n) with n > 0 never ends the response (the process then aborts), and
    // with closeConnection it writes its own Content-Length: 0. So the length goes in by hand, except on
    // the last reply of a draining server, where 0 is what can be said.
    if (closeConnection) {
      res.endWithoutBody(0, true);
    } else {
      res.writeHeader('content-length', String(Buffer.byteLength(body)));
      res.endWithoutBody();
    }
  } else {
    res.end(body, closeConnection);
  }
}

const paramCounts = new WeakMap<Route, number>();
function paramCount(route: Route): number {
  let n = paramCounts.get(route);
  if (n === undefined) {
    n = route.pattern.split('/').filter((s) => s.startsWith(':')).length;
    paramCounts.set(route, n);
  }
  return n;
}

/** TLS 1.2 suites offered: ECDHE key exchange with AEAD ciphers (Mozilla's "intermediate" set). */
const TLS12_CIPHERS = 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305';

/** Path parameters by position, as errors name them (docs/errors.md): every route's first is a context id. */
const PATH_PARAMS = ['context_id', 'message_id'];

function decodeParam(raw: string, index: number): string {
  const name = PATH_PARAMS[index] ?? `path parameter ${index + 1}`;
  // uWS reads the path's bytes as UTF-8, and bytes that are not become U+FFFD: raw 0xFF and 0xFE then named
  // one context. A raw U+FFFD reads the same, so it is refused too. A path is ASCII with the rest
  // percent-encoded (RFC 3986), where bad bytes fail below and %EF%BF%BD is read exactly.
  if (raw.includes('\uFFFD')) throw new AppError('invalid_path_parameter', `${name} holds raw bytes that are not UTF-8, or a raw U+FFFD; percent-encode it`, { param: name });
  try {
    return decodeURIComponent(raw);
  } catch {
    // decodeURIComponent throws for a bad escape ("%G1", "%4") and for escapes that decode to bytes that are not UTF-8 ("%E0%A4")
    throw new AppError('invalid_path_parameter', `${name} is not valid percent-encoding of UTF-8`, { param: name });
  }
}

function patternMatches(pattern: string, path: string): boolean {
  const a = pattern.split('/');
  const b = path.split('/');
  if (a.length !== b.length) return false;
  return a.every((seg, i) => seg.startsWith(':') ? b[i] !== '' : seg === b[i]);
}
