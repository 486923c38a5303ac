/**
 * A small OpenAI-compatible upstream for tests and the chat benchmark: POST /v1/chat/completions over
 * real HTTP on a loopback port, JSON or SSE (chat.completion.chunk, usage chunk, [DONE]), tool calls,
 * and failures on demand (a status with headers, a hang, a connection that dies mid-stream, an in-band
 * error event). It records every request it receives and whether the client hung up before the end.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type Behavior =
  | {
      kind: 'reply';
      /** The reply text; '' or undefined with toolCalls for a tool-call-only reply. */
      content?: string;
      toolCalls?: FakeToolCall[];
      finishReason?: string;
      /** Report usage (default true); false leaves Sentio to estimate it. */
      usage?: boolean;
      /** Delay before the first byte of the response (non-streaming: plus tokenMs per word). */
      ttftMs?: number;
      /** Delay between streamed chunks (non-streaming: added once per word before answering). */
      tokenMs?: number;
      /** Put finish_reason on a separate empty-delta chunk (OpenAI's style) instead of the last content chunk. */
      separateFinish?: boolean;
    }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Streaming: send this many content chunks, then destroy the socket. Non-streaming: destroy at once. */
  | { kind: 'die'; afterChunks: number }
  /** Streaming: send this many content chunks, then an in-band error event. */
  | { kind: 'error-event'; afterChunks: number }
  /** Streaming: send the whole reply but end the body without finish_reason or [DONE]. */
  | { kind: 'truncated' }
  /**
   * A 200 whose body is these pieces, each its own write, `gapMs` apart (so that they arrive as separate
   * reads): malformed or oddly split bodies. A function is called per piece index (bodies too large to hold).
   */
  | { kind: 'raw'; contentType?: string; pieces: ReadonlyArray<string | Buffer> | { count: number; piece: (i: number) => string | Buffer }; gapMs?: number; /** Never end the response. */ open?: boolean };

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> & { messages?: Array<{ role: string; content?: unknown }> };
  /** The client closed the connection before the response was complete. */
  closedEarly: boolean;
  /** The response was written completely. */
  completed: boolean;
  /** A write found the socket full at least once (the client, Sentio, stopped reading for a while). */
  backpressured: boolean;
  /** The client's port: the same port on two requests means a reused keep-alive connection. */
  remotePort: number | undefined;
}

export interface FakeLlmOptions {
  /** Used when no behavior is queued. */
  defaultBehavior?: Behavior;
  /** Used when no behavior is queued and the request names this (upstream) model. */
  byModel?: Record<string, Behavior>;
  host?: string;
  /** 0 (the default): any free port. */
  port?: number;
}

export const DEFAULT_REPLY = 'Thank you for telling me. I am here with you, and we can take this one step at a time.';

export class FakeLlm {
  readonly received: Received[] = [];
  readonly #server: http.Server;
  readonly #queue: Behavior[] = [];
  #default: Behavior;
  readonly #byModel: Record<string, Behavior>;
  #port = 0;
  #waiters: Array<() => void> = [];

  private constructor(opts: FakeLlmOptions) {
    this.#default = opts.defaultBehavior ?? { kind: 'reply', content: DEFAULT_REPLY };
    this.#byModel = opts.byModel ?? {};
    this.#server = http.createServer((req, res) => this.#handle(req, res));
    this.#server.keepAliveTimeout = 30_000;
  }

  static async start(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
    const f = new FakeLlm(opts);
    await new Promise<void>((resolve, reject) => {
      f.#server.once('error', reject); // a port in use
      f.#server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
    });
    f.#port = (f.#server.address() as AddressInfo).port;
    return f;
  }

  /** The OpenAI-style base URL (…/v1). */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  get last(): Received | undefined {
    return this.received[this.received.length - 1];
  }

  /** Behaviors for the next requests, in order; then the default again. */
  enqueue(...b: Behavior[]): void {
    this.#queue.push(...b);
  }

  setDefault(b: Behavior): void {
    this.#default = b;
  }

  reset(): void {
    this.received.length = 0;
    this.#queue.length = 0;
  }

  /** Resolves when the given request has finished one way or the other (completed or closed early). */
  async settled(r: Received, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!r.completed && !r.closedEarly) {
      if (Date.now() > deadline) throw new Error('fake LLM: request did not settle');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #notify(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Received['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'];
      } catch {
        // recorded as empty
      }
      const rec: Received = { path: req.url ?? '', headers: req.headers, body, closedEarly: false, completed: false, backpressured: false, remotePort: req.socket.remotePort };
      this.received.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) rec.closedEarly = true;
        this.#notify();
      });
      res.on('finish', () => {
        rec.completed = true;
        this.#notify();
      });
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const model = typeof body['model'] === 'string' ? body['model'] : '';
      const behavior = this.#queue.shift() ?? (Object.hasOwn(this.#byModel, model) ? this.#byModel[model]! : this.#default);
      this.#respond(behavior, body, res, rec);
    });
  }

  #respond(b: Behavior, body: Received['body'], res: http.ServerResponse, rec: Received): void {
    const stream = body['stream'] === true;
    const model = typeof body['model'] === 'string' ? body['model'] : 'fake';
    switch (b.kind) {
      case 'status':
        res.writeHead(b.status, { 'content-type': 'application/json', ...b.headers });
        res.end(JSON.stringify(b.body ?? { error: { message: `fake status ${b.status}`, type: 'fake_error' } }));
        return;
      case 'hang':
        return;
      case 'die':
        if (!stream) {
          res.socket?.destroy();
          return;
        }
        void this.#stream(res, rec, model, body, { kind: 'reply', content: DEFAULT_REPLY }, { dieAfter: b.afterChunks });
        return;
      case 'error-event':
        void this.#stream(res, rec, model, body, { kind: 'reply', content: DEFAULT_REPLY }, { errorAfter: b.afterChunks });
        return;
      case 'truncated':
        void this.#stream(res, rec, model, body, { kind: 'reply', content: DEFAULT_REPLY }, { truncated: true });
        return;
      case 'raw':
        void this.#raw(res, b);
        return;
      case 'reply':
        if (stream) void this.#stream(res, rec, model, body, b, {});
        else void this.#json(res, model, body, b);
    }
  }

  async #raw(res: http.ServerResponse, b: Extract<Behavior, { kind: 'raw' }>): Promise<void> {
    res.writeHead(200, { 'content-type': b.contentType ?? 'text/event-stream' });
    res.socket?.setNoDelay(true);
    const count = 'count' in b.pieces ? b.pieces.count : b.pieces.length;
    for (let i = 0; i < count && !res.destroyed; i++) {
      const piece = 'count' in b.pieces ? b.pieces.piece(i) : b.pieces[i]!;
      if (!res.write(piece)) await drained(res);
      if (b.gapMs) await sleep(b.gapMs);
    }
    if (!res.destroyed && !b.open) res.end();
  }

  async #json(res: http.ServerResponse, model: string, body: Received['body'], b: Extract<Behavior, { kind: 'reply' }>): Promise<void> {
    const content = b.content ?? (b.toolCalls ? null : DEFAULT_REPLY);
    // As long as generating the reply token by token would take.
    const generation = (b.ttftMs ?? 0) + (b.tokenMs ?? 0) * (content?.match(/\S+\s*|\s+/g) ?? []).length;
    if (generation) await sleep(generation);
    const message: Record<string, unknown> = { role: 'assistant', content };
    if (b.toolCalls) {
      message['tool_calls'] = b.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }));
    }
    const out: Record<string, unknown> = {
      id: 'cmpl-fake',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, finish_reason: b.finishReason ?? (b.toolCalls ? 'tool_calls' : 'stop') }],
    };
    if (b.usage !== false) out['usage'] = usageOf(body, content ?? '', b.toolCalls);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }

  async #stream(
    res: http.ServerResponse, rec: Received, model: string, body: Received['body'], b: Extract<Behavior, { kind: 'reply' }>,
    fail: { dieAfter?: number; errorAfter?: number; truncated?: boolean },
  ): Promise<void> {
    if (b.ttftMs) await sleep(b.ttftMs);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = { id: 'cmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
    // Honours backpressure like a real server: a full socket pauses generation until it drains.
    const send = async (o: unknown) => {
      if (res.write(`data: ${JSON.stringify(o)}\n\n`) || res.destroyed) return;
      rec.backpressured = true;
      await drained(res);
    };
    const content = b.content ?? (b.toolCalls ? '' : DEFAULT_REPLY);
    const pieces = content.match(/\S+\s*|\s+/g) ?? [];
    const finish = b.finishReason ?? (b.toolCalls ? 'tool_calls' : 'stop');
    await send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    let sent = 0;
    for (let i = 0; i < pieces.length; i++) {
      if (fail.dieAfter !== undefined && sent >= fail.dieAfter) {
        await sleep(20); // let what was sent reach the client first
        res.socket?.destroy();
        return;
      }
      if (fail.errorAfter !== undefined && sent >= fail.errorAfter) {
        await send({ error: { message: 'fake upstream failure mid-stream', type: 'server_error' } });
        res.end();
        return;
      }
      if (b.tokenMs) await sleep(b.tokenMs);
      if (res.destroyed) return;
      const last = i === pieces.length - 1 && !b.toolCalls && !b.separateFinish && !fail.truncated;
      await send({ ...base, choices: [{ index: 0, delta: { content: pieces[i] }, finish_reason: last ? finish : null }] });
      sent++;
    }
    if (fail.truncated) {
      res.end();
      return;
    }
    for (const [index, t] of (b.toolCalls ?? []).entries()) {
      await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }, finish_reason: null }] });
      const half = Math.ceil(t.arguments.length / 2);
      for (const part of [t.arguments.slice(0, half), t.arguments.slice(half)]) {
        await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: part } }] }, finish_reason: null }] });
      }
    }
    if (b.toolCalls || b.separateFinish || pieces.length === 0) {
      await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    }
    const opts = body['stream_options'] as { include_usage?: boolean } | undefined;
    if (opts?.include_usage && b.usage !== false) await send({ ...base, choices: [], usage: usageOf(body, content, b.toolCalls) });
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  }
}

/** Resolves once a full socket has drained or closed, leaving no listener behind. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Word counts stand in for tokens: tests check that Sentio reports the upstream's figures. */
function usageOf(body: Received['body'], reply: string, toolCalls?: FakeToolCall[]): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const words = (s: string) => (s.match(/\S+/g) ?? []).length;
  const prompt = (body.messages ?? []).reduce((n, m) => n + 3 + (typeof m.content === 'string' ? words(m.content) : 0), 0);
  const completion = words(reply) + (toolCalls ?? []).reduce((n, t) => n + 1 + words(t.arguments), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
