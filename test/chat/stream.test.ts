/**
 * Streaming chat: OpenAI chunk format, chunks forwarded as the upstream produces them, the emotions chunk
 * before [DONE], backpressure, cancellation on disconnect, and upstream failures before and during the
 * stream.
 */
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { DEFAULT_REPLY, FakeLlm } from '../helpers/fake-llm.js';
import { LlmClient } from '../../src/llm/client.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
let llm: FakeLlm;

const V2 = '/v2/chat/completions';
const V1 = '/v1/chat/completions';

interface Event {
  data: string;
  json?: Record<string, any>;
  at: number;
}

/** POST and read the SSE body event by event, with the arrival time of each. */
async function streamChat(path: string, body: Record<string, unknown>, signal?: AbortSignal, onEvent?: (e: Event) => void, headers: Record<string, string> = {}): Promise<{ res: Response; events: Event[] }> {
  const t0 = performance.now();
  const res = await fetch(s.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, ...headers },
    body: JSON.stringify(body),
    signal,
  });
  const events: Event[] = [];
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return { res, events };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const raw = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      const e: Event = { data, at: performance.now() - t0 };
      if (data !== '[DONE]') e.json = JSON.parse(data) as Record<string, any>;
      events.push(e);
      onEvent?.(e);
    }
  }
  return { res, events };
}

/** An upstream's SSE event, and a chunk of its stream, as raw pieces for the fake LLM. */
const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const chunk = (choices: unknown) => sse({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices });

const body = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  ({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages, stream: true, ...extra });
const user = (content: string) => ({ role: 'user', content });

/** A streamed V2 chat to another server, read as it comes: the text so far, and the end of the reading. */
async function readAsItComes(base: string): Promise<{ res: Response; text: () => string; ended: Promise<void> }> {
  const res = await fetch(`${base}${V2}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify(body([user('hi')])),
  });
  let text = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    for await (const piece of res.body!) text += decoder.decode(piece, { stream: true });
  })();
  return { res, text: () => text, ended };
}

beforeAll(async () => {
  llm = await FakeLlm.start();
  s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '500' });
});
afterAll(async () => {
  await s?.close();
  await llm?.close();
});
beforeEach(() => llm.reset());

describe('streaming chat', () => {
  it('streams chat.completion.chunk events; the last one before [DONE] carries emotions, usage and conversationMode', async () => {
    const { res, events } = await streamChat(V2, body([user('I just got engaged!!')]));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.json!);
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('llm-k2-thinking-turbo');
      expect(Number.isInteger(c.created)).toBe(true);
    }
    // Every chunk has its choice (clients read choices[0] of each): Sentio's fields ride on the finishing one.
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks[0]!.choices[0].delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(DEFAULT_REPLY);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null && c.emotions === undefined)).toBe(true);

    const last = chunks.at(-1)!;
    expect(last.emotion_model).toBe('emotion-v2');
    expect(last.emotions.user.text).toBe('I just got engaged!!');
    expect(Object.keys(last.emotions.assistant).sort()).toEqual(['arousal', 'category', 'intensity', 'raw', 'valence']);
    expect(last.usage.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage.completion_tokens).toBe((DEFAULT_REPLY.match(/\S+/g) ?? []).length); // the upstream's own count
    expect(last.usage.analyse_tokens).toBeGreaterThan(0);
    expect(last.conversationMode.mode).toBeTypeOf('string');
    // Sentio asks the upstream for usage in the stream
    expect(llm.last!.body['stream_options']).toEqual({ include_usage: true });
    expect(llm.last!.body['stream']).toBe(true);
  });

  it('with stream_options.include_usage, ends with a chunk of its own without choices, as OpenAI sends usage', async () => {
    const { events } = await streamChat(V2, body([user('I just got engaged!!')], { stream_options: { include_usage: true } }));
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.json!);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.emotions.assistant.category).toBeTypeOf('string');
    expect(last.usage.analyse_tokens).toBeGreaterThan(0);
    expect(last.conversationMode.mode).toBeTypeOf('string');
    const content = chunks.slice(0, -1);
    expect(content.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(DEFAULT_REPLY);
    expect(content.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(content.every((c) => c.emotions === undefined && c.usage === undefined)).toBe(true);
    // The option is Sentio's to honour: the upstream is asked for usage either way.
    expect(llm.last!.body['stream_options']).toEqual({ include_usage: true });
  });

  // Azure OpenAI's asynchronous content filter sends annotation chunks (a choice, no delta) after the finish;
  // the stream then ended with choices: [] again (a review, 2026-11-28).
  it('a chunk with a choice after the finish carries Sentio\'s fields in its place', async () => {
    llm.enqueue({ kind: 'raw', pieces: [chunk([{ index: 0, delta: { role: 'assistant', content: 'All fine.' } }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      chunk([{ index: 0, finish_reason: null, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }]), 'data: [DONE]\n\n'] });
    const { events } = await streamChat(V2, body([user('how are things?')]));
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.json!);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-2)!.emotions).toBeUndefined();
    const last = chunks.at(-1)!;
    expect(last.choices[0].content_filter_results).toBeDefined();
    expect(last.emotions.assistant.category).toBeTypeOf('string');
  });

  it('reuses the upstream connection from one stream to the next (keep-alive pool)', async () => {
    await streamChat(V2, body([user('one')]));
    await streamChat(V2, body([user('two')]));
    const [a, b] = llm.received;
    expect(a!.remotePort).toBeDefined();
    expect(b!.remotePort).toBe(a!.remotePort);
  });

  it('V1 streams too, without conversationMode', async () => {
    const { events } = await streamChat(V1, body([user('hello')], { emotion_model: 'emotion-v1' }));
    const last = events.at(-2)!.json!;
    expect(last.conversationMode).toBeUndefined();
    expect(Object.keys(last.emotions.user).sort()).toEqual(['category', 'raw', 'text']);
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('forwards each chunk as the upstream produces it (no buffering of the reply)', async () => {
    llm.enqueue({ kind: 'reply', content: 'one two three four five six', tokenMs: 80 });
    const { events } = await streamChat(V2, body([user('count for me')]));
    const content = events.filter((e) => e.json?.choices?.[0]?.delta?.content);
    expect(content).toHaveLength(6);
    // The first word arrives long before the upstream has finished (6 × 80 ms).
    const first = content[0]!.at;
    const lastAt = content.at(-1)!.at;
    expect(lastAt - first).toBeGreaterThan(300);
    for (let i = 1; i < content.length; i++) expect(content[i]!.at - content[i - 1]!.at).toBeGreaterThan(40);
  });

  it('passes an upstream finish-only chunk and tool-call deltas through', async () => {
    llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"sentio"}' }] });
    const { events } = await streamChat(V2, body([user('look it up')], { tools: [{ type: 'function', function: { name: 'lookup' } }] }));
    const chunks = events.slice(0, -1).map((e) => e.json!);
    const deltas = chunks.flatMap((c) => c.choices).map((c: any) => c.delta);
    const calls = deltas.filter((d: any) => d.tool_calls).flatMap((d: any) => d.tool_calls);
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_9', type: 'function', function: { name: 'lookup' } });
    expect(calls.map((c: any) => c.function.arguments).join('')).toBe('{"q":"sentio"}');
    const last = chunks.at(-1)!;
    expect(last.choices[0].finish_reason).toBe('tool_calls');
    expect(last.emotions.assistant).toBeUndefined();
    expect(last.usage.completion_tokens).toBeGreaterThan(0);
  });

  // Proxies that serialise OpenAI's Python types (LiteLLM) send a piece's absent id, type, name or arguments as null.
  it('tool-call pieces with a null id, type, name or arguments pass through', async () => {
    const piece = (fn: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...extra, function: fn }] }, finish_reason: null }]);
    llm.enqueue({ kind: 'raw', pieces: [
      piece({ name: 'lookup', arguments: null }, { id: 'call_n', type: 'function' }),
      piece({ name: null, arguments: '{"q":' }, { id: null, type: null }), piece({ name: null, arguments: '"x"}' }),
      chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]), 'data: [DONE]\n\n'] });
    const { res, events } = await streamChat(V2, body([user('look it up')], { tools: [{ type: 'function', function: { name: 'lookup' } }] }));
    expect(res.status).toBe(200);
    const calls = events.slice(0, -1).flatMap((e) => e.json!.choices).flatMap((c: any) => c.delta?.tool_calls ?? []);
    expect(calls.map((c: any) => c.function.arguments ?? '').join('')).toBe('{"q":"x"}');
    expect(events.at(-2)!.json!.choices[0].finish_reason).toBe('tool_calls');
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('scores an empty streamed reply without tool calls as the empty text', async () => {
    llm.enqueue({ kind: 'reply', content: '', finishReason: 'length' });
    const { events } = await streamChat(V2, body([user('Tell me a long story')]));
    const last = events.at(-2)!.json!;
    const alone = ((await (await s.post('/v2/emotions/analysis', { messages: [{ content: { text: '' } }] })).json()) as Record<string, any>).emotions._default;
    expect(last.emotions.assistant.raw).toEqual(alone.raw);
    expect(last.emotions.assistant.intensity).toBe(alone.intensity);
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('a client that disconnects cancels the upstream request', async () => {
    llm.enqueue({ kind: 'reply', content: 'word '.repeat(200), tokenMs: 20 });
    const ac = new AbortController();
    let got = 0;
    await streamChat(V2, body([user('tell me a long story')]), ac.signal, (e) => {
      if (e.json?.choices?.[0]?.delta?.content && ++got === 3) ac.abort();
    }).catch((err: Error) => expect(err.name).toBe('AbortError'));
    const rec = llm.received[0]!;
    await llm.settled(rec, 2_000);
    expect(rec.closedEarly).toBe(true);
    expect(rec.completed).toBe(false);
    // The server logs the request as closed by the client and stays healthy.
    const ok = await streamChat(V2, body([user('still there?')]));
    expect(ok.events.at(-1)!.data).toBe('[DONE]');
  });

  it('honours backpressure: a client that stops reading stalls the upstream instead of filling memory', async () => {
    const words = 60_000;
    llm.enqueue({ kind: 'reply', content: 'lorem ipsum '.repeat(words / 2) });
    const url = new URL(s.base + V2);
    const payload = JSON.stringify(body([user('write a lot')], { emotion_guidance: false }));
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY } }, resolve);
      req.on('error', reject);
      req.end(payload);
    });
    res.pause();
    // Do not read: Sentio's socket fills, SseStream.send waits, Sentio stops reading the upstream.
    const rec = () => llm.received[0]!;
    const deadline = Date.now() + 10_000;
    while (!(llm.received[0]?.backpressured) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(rec().backpressured).toBe(true);
    expect(rec().completed).toBe(false);
    // Now read everything: the whole reply arrives intact.
    let text = '';
    let tail = '';
    const events: Array<Record<string, any> | '[DONE]'> = [];
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      tail += c;
      let i: number;
      while ((i = tail.indexOf('\n\n')) >= 0) {
        const data = tail.slice(0, i).replace(/^data: /, '');
        tail = tail.slice(i + 2);
        const e = data === '[DONE]' ? data : (JSON.parse(data) as Record<string, any>);
        events.push(e);
        if (e !== '[DONE]') text += e.choices?.[0]?.delta?.content ?? '';
      }
    });
    res.resume();
    await new Promise((r) => res.on('end', r));
    const errors = events.filter((e) => e !== '[DONE]' && e.error);
    expect(errors).toEqual([]);
    expect(events.at(-1)).toBe('[DONE]');
    expect(text.length).toBe('lorem ipsum '.length * (words / 2));
    expect(text === 'lorem ipsum '.repeat(words / 2)).toBe(true);
    expect(rec().completed).toBe(true);
  });
});

describe('streaming failures', () => {
  it('an upstream error before the stream starts is an ordinary HTTP error', async () => {
    llm.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '3' } });
    const { res } = await streamChat(V2, body([user('hi')]));
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    const j = (await res.json()) as Record<string, any>;
    expect(j.error.code).toBe('upstream_rate_limited');
  });

  it('an upstream that dies mid-stream → an error event in the decided shape, then [DONE]', async () => {
    llm.enqueue({ kind: 'die', afterChunks: 2 });
    const { res, events } = await streamChat(V2, body([user('hi')]));
    expect(res.status).toBe(200);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const err = events.at(-2)!.json!;
    expect(err.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(typeof err.error.message).toBe('string');
    expect(err.request_id).toBe(res.headers.get('x-request-id'));
    expect(events.filter((e) => e.json?.choices?.[0]?.delta?.content)).toHaveLength(2);
    expect(events.some((e) => e.json?.emotions)).toBe(false);
  });

  it('an in-band upstream error event, or a stream cut short, ends with an error event', async () => {
    llm.enqueue({ kind: 'error-event', afterChunks: 1 });
    let { events, res } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error.code).toBe('upstream_error');
    expect(events.at(-1)!.data).toBe('[DONE]');
    // Sent as a 200, logged (and counted on /metrics) with the error's status: it was logged 200, out of
    // sight of an alert on 5xx.
    s.sentio.logger.flush();
    await new Promise((r) => setTimeout(r, 150));
    const id = res.headers.get('x-request-id');
    const line = s.logs.map((l) => JSON.parse(l) as { request_id?: string; msg?: string; status?: number }).find((l) => l.request_id === id && l.msg === 'request');
    expect(line?.status).toBe(502);
    llm.enqueue({ kind: 'truncated' });
    ({ events } = await streamChat(V2, body([user('hi')])));
    expect(events.at(-2)!.json!.error).toMatchObject({ code: 'upstream_error' });
    expect(events.at(-2)!.json!.error.message).toMatch(/ended before/);
  });

  it('an upstream that fails before its first chunk gets an ordinary HTTP error, and its Idempotency-Key is released', async () => {
    const cases: Array<[Parameters<FakeLlm['enqueue']>[0], number, string]> = [
      [{ kind: 'raw', pieces: ['data: {"error":{"message":"model overloaded","type":"server_error"}}\n\n'] }, 502, 'upstream_error'],
      // A refusal of the request itself is answered as the upstream's HTTP 400 would be (chat review).
      [{ kind: 'raw', pieces: ['data: {"error":{"message":"context too long","type":"invalid_request_error"}}\n\n'] }, 400, 'upstream_rejected'],
      [{ kind: 'raw', pieces: ['data: {"error":{"object":"error","message":"context too long","type":"BadRequestError","code":400}}\n\n'] }, 400, 'upstream_rejected'],
      // Bare, as vLLM's ErrorResponse (a chat review found it read as a broken stream, 502).
      [{ kind: 'raw', pieces: ['data: {"object":"error","message":"context too long","type":"BadRequestError","param":null,"code":400}\n\n'] }, 400, 'upstream_rejected'],
      // A rate limit or a timeout said in-band is answered as its HTTP twin, Retry-After included (chat review, 2026-11-28).
      [{ kind: 'raw', pieces: ['data: {"error":{"message":"Rate limit reached for org-x","type":"rate_limit_error","code":429}}\n\n'] }, 429, 'upstream_rate_limited'],
      [{ kind: 'raw', pieces: ['data: {"error":{"message":"model overloaded","type":"server_error","code":"rate_limit_exceeded"}}\n\n'] }, 429, 'upstream_rate_limited'],
      [{ kind: 'raw', pieces: ['data: {"error":{"message":"model overloaded","type":"server_error","code":504}}\n\n'] }, 504, 'upstream_timeout'],
      [{ kind: 'raw', pieces: [': thinking\n\n'], open: true }, 504, 'upstream_timeout'], // headers, then nothing
      [{ kind: 'raw', pieces: ['data: [DONE]\n\n'] }, 502, 'upstream_error'],
      [{ kind: 'raw', pieces: ['data: {not json\n\n'] }, 502, 'upstream_error'],
    ];
    for (const [behavior, status, code] of cases) {
      const key = `first-chunk-${code}-${Math.random()}`;
      llm.enqueue(behavior);
      const res = await fetch(s.base + V2, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'idempotency-key': key },
        body: JSON.stringify(body([user('hi')])),
      });
      expect(res.status, JSON.stringify(behavior)).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const { error } = (await res.json()) as Record<string, any>;
      expect(error.code).toBe(code);
      expect(res.headers.get('retry-after')).toBe(code === 'upstream_rate_limited' ? '1' : null);
      // The upstream's message reaches the client for a refusal only (another may name the account).
      expect(error.message.includes('context too long') || error.message.includes('model overloaded')).toBe(code === 'upstream_rejected');
      // The key was given back: the retry runs, and streams.
      llm.enqueue({ kind: 'reply', content: 'all good now' });
      const retry = await fetch(s.base + V2, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'idempotency-key': key },
        body: JSON.stringify(body([user('hi')])),
      });
      expect(retry.status).toBe(200);
      expect(await retry.text()).toMatch(/"content":"now"[\s\S]*\[DONE\]/);
    }
  });

  it('an upstream that stalls mid-stream → upstream_timeout error event', async () => {
    llm.enqueue({ kind: 'reply', content: 'slow words here', tokenMs: 700 });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error).toMatchObject({ type: 'upstream_error', code: 'upstream_timeout' });
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('with context_id, a streamed turn joins the context; a failed one does not', async () => {
    const id = `stream-ctx-${Date.now()}`;
    await streamChat(V2, body([user('I feel a bit anxious today')], { context_id: id }));
    let state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.baseline.messageCount).toBe(2);
    llm.enqueue({ kind: 'die', afterChunks: 1 });
    await streamChat(V2, body([user('and now?')], { context_id: id }));
    state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.baseline.messageCount).toBe(2);
  });
});

describe('shutdown during a stream', () => {
  // The finishing chunk is held back to carry Sentio's fields: a shutdown that cut the stream then dropped
  // the reply's last words (a review, 2026-11-28).
  it('a stream cut by the shutdown while its finishing chunk is held back still gets that chunk, then the error', async () => {
    const other = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url });
    try {
      // The upstream finishes its reply and then neither sends [DONE] nor ends: Sentio holds the finish. Both
      // chunks in one write arrive in one read, so the finish is held before the client sees the first.
      llm.enqueue({ kind: 'raw', open: true, pieces: [chunk([{ index: 0, delta: { role: 'assistant', content: 'the last ' } }])
        + chunk([{ index: 0, delta: { content: 'words' }, finish_reason: 'stop' }])] });
      const stream = await readAsItComes(other.base);
      await waitFor(() => stream.text().includes('the last '));
      expect(stream.text()).not.toContain('words'); // held back
      await other.sentio.close(200);
      await stream.ended;
      const events = stream.text().split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
      expect(events.at(-1)).toBe('[DONE]');
      expect(JSON.parse(events.at(-2)!).error).toMatchObject({ code: 'service_unavailable' });
      const finish = JSON.parse(events.at(-3)!);
      expect(finish.choices[0]).toMatchObject({ delta: { content: 'words' }, finish_reason: 'stop' });
    } finally {
      await other.close();
    }
  });

  it('a stream still open when the grace period ends gets an error event and [DONE], logged 503', async () => {
    const other = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url });
    try {
      llm.enqueue({ kind: 'reply', content: 'one two three four five six seven eight nine ten', tokenMs: 100 });
      const stream = await readAsItComes(other.base);
      // A few words in (counted, not timed: 250 ms could be before the first on a slow host)
      await waitFor(() => (stream.text().match(/"delta"/g) ?? []).length >= 2);
      await other.sentio.close(200);
      await stream.ended;
      const events = stream.text().split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
      expect(events.at(-1)).toBe('[DONE]');
      const err = JSON.parse(events.at(-2)!) as Record<string, any>;
      expect(err.error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
      expect(err.request_id).toBe(stream.res.headers.get('x-request-id'));
      expect(events.filter((e) => e.includes('"delta"')).length).toBeGreaterThan(1);
      // Logged by the time close() returns (main.ts exits right after it; the line used to come later).
      other.sentio.logger.flush();
      const line = other.logs.map((l) => JSON.parse(l) as { route?: string; status?: number }).find((l) => l.route === V2);
      expect(line?.status).toBe(503);
    } finally {
      await other.close();
    }
  });

  it('a stream that starts while the server drains says Connection: close, and the client leaves the connection after it', async () => {
    const other = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, payload?: unknown) => new Promise<{ headers: http.IncomingHttpHeaders; body: string; socket: import('node:net').Socket }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: other.sentio.port, method, path, agent, headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY } }, (res) => {
        let b = '';
        res.setEncoding('utf8').on('data', (d: string) => { b += d; }).on('end', () => resolve({ headers: res.headers, body: b, socket: req.socket! }));
      });
      req.on('error', reject);
      req.end(payload === undefined ? undefined : JSON.stringify(payload));
    });
    try {
      const idle = await send('GET', '/healthz'); // a keep-alive connection, open before the drain
      expect(idle.headers['connection']).not.toBe('close');
      // A slow stream on another connection keeps the drain going.
      llm.enqueue({ kind: 'reply', content: 'one two three four five six seven eight', tokenMs: 150 });
      llm.enqueue({ kind: 'reply', content: 'a short reply' });
      const slow = await fetch(`${other.base}${V2}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify(body([user('hi')])) });
      const closing = other.sentio.close(5_000);
      const late = await send('POST', V2, body([user('hello')]));
      expect(late.socket).toBe(idle.socket);
      expect(late.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(late.headers['connection']).toBe('close');
      expect(late.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      if (!late.socket.destroyed) await new Promise((r) => late.socket.once('close', r));
      await slow.text();
      await closing;
    } finally {
      agent.destroy();
      await other.close();
    }
  });

  // The stream's first chunk restarted the clock, so an upstream that sent its headers at the first token
  // (as OpenAI does) had its whole time to first token left out.
  it('the LLM latency of a stream runs from the request to the last token, the wait for headers included', async () => {
    const sum = async (): Promise<number> => {
      const text = await (await s.get('/metrics')).text();
      return [...text.matchAll(/^sentio_llm_request_duration_seconds_sum\{[^}]*stream="true"[^}]*\} (\S+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    };
    const before = await sum();
    llm.enqueue({ kind: 'reply', ttftMs: 400 });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-1)?.data).toBe('[DONE]');
    expect((await sum()) - before).toBeGreaterThanOrEqual(0.4);
  });

  // It used to get a connection reset, logged 499 as if the client had left.
  it('a request still waiting for the LLM when the grace period ends gets a 503, logged 503', async () => {
    const other = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url });
    try {
      llm.enqueue({ kind: 'reply', ttftMs: 3_000 });
      const seen = llm.received.length;
      const res = fetch(`${other.base}${V2}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify(body([user('hi')], { stream: false })),
      });
      await waitFor(() => llm.received.length !== seen);
      expect(llm.received.length).toBe(seen + 1); // waiting for the LLM now
      await other.sentio.close(200);
      const r = await res;
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect((await r.json()).error).toMatchObject({ code: 'service_unavailable' });
      other.sentio.logger.flush();
      const line = other.logs.map((l) => JSON.parse(l) as { route?: string; status?: number }).find((l) => l.route === V2);
      expect(line?.status).toBe(503);
    } finally {
      await other.close();
    }
  });
});

describe('malformed upstream streams', () => {

  /** The server still answers, some time after the stream (a late socket error used to end the process). */
  async function stillServing(): Promise<void> {
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    const { events } = await streamChat(V2, body([user('still there?')]));
    expect(events.some((e) => e.json?.emotions)).toBe(true);
  }

  // The SSE specification: lines end in CRLF, LF or a lone CR, and a byte-order mark opening the stream is
  // dropped. A leading BOM lost the first event (its reply text went missing); lone CRs were a 502.
  it('a stream opened by a byte-order mark, or with lines ended by a lone CR (split across pieces too), is read whole', async () => {
    const parts = (eol: string) => [
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Hello ' } }]).replace(/\n/g, eol),
      chunk([{ index: 0, delta: { content: 'world' }, finish_reason: 'stop' }]).replace(/\n/g, eol),
      `data: [DONE]${eol}${eol}`,
    ];
    const cases: Array<ReadonlyArray<string | Buffer>> = [
      ['\ufeff' + parts('\n')[0]!, ...parts('\n').slice(1)],
      [Buffer.from([0xef]), Buffer.from([0xbb, 0xbf]), ...parts('\n')],
      parts('\r'),
      parts('\r\n').flatMap((p) => [p.slice(0, p.indexOf('\r') + 1), p.slice(p.indexOf('\r') + 1)]),
    ];
    for (const pieces of cases) {
      llm.enqueue({ kind: 'raw', pieces });
      const { res, events } = await streamChat(V2, body([user('hi')]));
      expect(res.status).toBe(200);
      const text = events.map((e) => e.json?.choices?.[0]?.delta?.content ?? '').join('');
      expect(text, JSON.stringify(pieces)).toBe('Hello world');
      expect(events.at(-2)!.json!.emotions.assistant).toBeDefined();
      expect(events.at(-1)!.data).toBe('[DONE]');
    }
  });

  it('an upstream that streams a second choice has it passed on, and the reply scored is choice 0 alone', async () => {
    llm.enqueue({ kind: 'raw', pieces: [
      chunk([{ index: 0, delta: { role: 'assistant', content: 'I am so happy ' } }, { index: 1, delta: { role: 'assistant', content: 'I am furious ' } }]),
      chunk([{ index: 1, delta: { content: 'and I hate this' }, finish_reason: 'stop' }]),
      chunk([{ index: 0, delta: { content: 'and grateful' }, finish_reason: 'stop' }]),
      'data: [DONE]\n\n',
    ] });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.filter((e) => e.json?.choices?.some((c: { index: number }) => c.index === 1))).toHaveLength(2);
    expect(events.at(-2)!.json!.emotions.assistant.category).toBe('joy');
  });

  // Azure OpenAI opens every stream with a chunk of no choices (prompt_filter_results): the stream used
  // to start there, so a failure right after it came as a 200 with an in-band error.
  it('chunks without choices before the first real one do not start the stream: a failure after them is a 502', async () => {
    const opener = sse({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    llm.enqueue({ kind: 'raw', pieces: [opener, sse({ error: { message: 'model overloaded', type: 'server_error' } })] });
    const { res } = await streamChat(V2, body([user('hi')]));
    expect(res.status).toBe(502);
    expect(((await res.json()) as Record<string, any>).error.code).toBe('upstream_error');
    llm.enqueue({ kind: 'raw', pieces: [opener, chunk([{ index: 0, delta: { role: 'assistant', content: 'hello there' }, finish_reason: 'stop' }]), 'data: [DONE]\n\n'] });
    const ok = await streamChat(V2, body([user('hi')]));
    expect(ok.res.status).toBe(200);
    expect(ok.events.map((e) => e.json?.choices?.[0]?.delta?.content).filter(Boolean).join('')).toBe('hello there');
    expect(ok.events.at(-1)!.data).toBe('[DONE]');
  });

  it('[DONE] without a finish_reason → an error event, and the server keeps serving', async () => {
    llm.enqueue({ kind: 'raw', pieces: [chunk([{ index: 0, delta: { content: 'hi there' } }]), 'data: [DONE]\n\n'] });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error).toMatchObject({ code: 'upstream_error' });
    expect(events.at(-1)!.data).toBe('[DONE]');
    await stillServing();
  });

  it('choices that are not an array of objects, or whose message is not a message → upstream_error, in-band or as a 502', async () => {
    const streamed = [[null], 'abc', { a: 1 }, [{ index: 0, delta: 'text' }], [{ index: 0, delta: null }],
      [{ index: 0, delta: { content: 42 } }], [{ index: 0, delta: { tool_calls: 'call' } }], [{ index: 0, delta: { tool_calls: [7] } }],
      [{ index: 'zero', delta: { content: 'x' } }], [{ index: -1, delta: { content: 'x' } }], [{ index: 0, delta: { content: 'x' }, finish_reason: 42 }],
      [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 5 } }] } }], [{ index: 0, delta: { tool_calls: [{ index: 0, function: 'f' }] } }],
      // What /openapi.json types a delta's role and a call piece's index, id and type as.
      [{ index: 0, delta: { role: 5, content: 'x' } }], [{ index: 0, delta: { tool_calls: [{ index: 'a', id: 'c1' }] } }],
      [{ index: 0, delta: { tool_calls: [{ index: 0, id: 9 }] } }], [{ index: 0, delta: { tool_calls: [{ index: 0, type: {} }] } }]];
    const good = chunk([{ index: 0, delta: { role: 'assistant', content: 'hi' } }]);
    for (const bad of streamed) {
      // After a good chunk, in-band; as the first chunk, before Sentio's stream has started, a 502.
      llm.enqueue({ kind: 'raw', pieces: [good, chunk(bad), 'data: [DONE]\n\n'] });
      const { events } = await streamChat(V2, body([user('hi')]));
      expect(events.at(-2)!.json!.error, JSON.stringify(bad)).toMatchObject({ code: 'upstream_error' });
      expect(events.at(-1)!.data).toBe('[DONE]');
      llm.enqueue({ kind: 'raw', pieces: [chunk(bad), 'data: [DONE]\n\n'] });
      const { res } = await streamChat(V2, body([user('hi')]));
      expect(res.status, JSON.stringify(bad)).toBe(502);
      expect(((await res.json()) as Record<string, any>).error.code).toBe('upstream_error');
    }
    // A complete reply without a finish_reason is passed on as such: null, not an invented "stop".
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify({ id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] })] });
    const unfinished = await s.post(V2, body([user('hi')], { stream: false }));
    expect(unfinished.status).toBe(200);
    expect(((await unfinished.json()) as Record<string, any>).choices[0].finish_reason).toBeNull();
    // logprobs: the upstream's object, or null (/openapi.json's type) for anything else it sent.
    for (const [logprobs, expected] of [[{ content: [] }, { content: [] }], ['x', null], [[1], null]] as const) {
      llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify({ id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, logprobs, finish_reason: 'stop' }] })] });
      const res = await s.post(V2, body([user('hi')], { stream: false }));
      expect(((await res.json()) as Record<string, any>).choices[0].logprobs).toEqual(expected);
      // Streamed the same (a chat review found 'x' and [1] relayed as they came).
      llm.enqueue({ kind: 'raw', pieces: [
        chunk([{ index: 0, delta: { role: 'assistant', content: 'hi' }, logprobs, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, logprobs, finish_reason: 'stop' }]), 'data: [DONE]\n\n'] });
      const { events } = await streamChat(V2, body([user('hi')]));
      const relayed = events.filter((e) => e.json?.choices?.length).map((e) => e.json!.choices[0].logprobs);
      expect(relayed, JSON.stringify(logprobs)).toEqual([expected, expected]);
    }
    const whole = [[null], [{ index: 0, message: 'text', finish_reason: 'stop' }], [{ index: 0, message: null, finish_reason: 'stop' }],
      [{ index: 0, finish_reason: 'stop' }], [{ index: 0, message: { role: 'assistant', content: 42 }, finish_reason: 'stop' }],
      [{ index: 0, message: { role: 'assistant', content: 'hi', tool_calls: {} }, finish_reason: 'stop' }],
      [{ index: 0, message: { role: 'assistant', content: 'hi', tool_calls: [5] }, finish_reason: 'tool_calls' }],
      // Clients JSON.parse a call's arguments: a number there is as malformed as a number for content.
      [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: 5 } }] }, finish_reason: 'tool_calls' }],
      [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 7, arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
      [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 7, type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
      [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: null, function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
      [{ index: 'a', message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      [{ index: 0.5, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 5 }]];
    for (const bad of whole) {
      llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify({ id: 'c', choices: bad })] });
      const res = await s.post(V2, body([user('hi')], { stream: false }));
      expect(res.status, JSON.stringify(bad)).toBe(502);
      expect(((await res.json()) as Record<string, any>).error.code).toBe('upstream_error');
    }
    await stillServing();
  });

  // JSON.stringify overflowed the stack on a reply nested 5,000 deep in a field passed through: the
  // non-streamed request was never answered, and with an Idempotency-Key its key stayed taken (fuzz review).
  it('an upstream reply nested deeper than 128 levels is 502 upstream_error (in-band once streaming), and frees its Idempotency-Key', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`; // as text: this test's own JSON.stringify would overflow too
    const whole = () => llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"hi","extra":${deep}},"finish_reason":"stop"}]}`] });
    for (const headers of [{}, { 'idempotency-key': 'deep-reply-1' }] as Array<Record<string, string>>) {
      whole();
      const res = await s.post(V2, body([user('hi')], { stream: false, context_id: 'deep-reply' }), headers);
      expect(res.status).toBe(502);
      expect(((await res.json()) as Record<string, any>).error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('deeper than 128') });
    }
    llm.enqueue({ kind: 'reply', content: 'fine now' });
    const retry = await s.post(V2, body([user('hi')], { stream: false }), { 'idempotency-key': 'deep-reply-1' });
    expect(retry.status).toBe(200);
    expect((await s.get('/v2/emotions/deep-reply')).status).toBe(404); // nothing was stored for the failed turns
    const good = chunk([{ index: 0, delta: { role: 'assistant', content: 'hi' } }]);
    const bad = `data: {"choices":[{"index":0,"delta":{"content":"x","extra":${deep}}}]}\n\n`;
    llm.enqueue({ kind: 'raw', pieces: [good, bad, 'data: [DONE]\n\n'] });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error).toMatchObject({ code: 'upstream_error' });
    llm.enqueue({ kind: 'raw', pieces: [bad, 'data: [DONE]\n\n'] });
    expect((await streamChat(V2, body([user('hi')]))).res.status).toBe(502);
    await stillServing();
  });

  it('a character split across two reads of the upstream body arrives whole, and is scored whole', async () => {
    const text = 'I love this café so much 😀';
    const bytes = Buffer.from(chunk([{ index: 0, delta: { content: text }, finish_reason: 'stop' }]));
    const cut = bytes.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
    llm.enqueue({ kind: 'raw', pieces: [bytes.subarray(0, cut), bytes.subarray(cut), 'data: [DONE]\n\n'], gapMs: 30 });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events[0]!.json!.choices[0].delta.content).toBe(text);
    // The reply's scores are those of the whole text, which differ from those of the text decoded in pieces.
    const scored = async (t: string) => ((await (await s.post('/v2/emotions/analysis', { messages: [{ content: { text: t } }] })).json()) as Record<string, any>).emotions._default.raw;
    const [whole, broken] = [await scored(text), await scored(text.replace('é', '\uFFFD\uFFFD'))];
    expect(broken).not.toEqual(whole);
    expect(events.at(-2)!.json!.emotions.assistant.raw).toEqual(whole);
  });

  it('an event that never ends, or a stream past 128 MiB, is cut off with upstream_error', async () => {
    const kib64 = 'x'.repeat(65_536);
    // One data line of 8 MiB that never ends: refused at 4 Mi characters, long before its end.
    llm.enqueue({ kind: 'raw', pieces: { count: 128, piece: (i) => (i === 0 ? `data: ${kib64}` : kib64) } });
    const { res } = await streamChat(V2, body([user('hi')]));
    expect(res.status).toBe(502); // the first event: nothing was streamed yet
    expect(((await res.json()) as Record<string, any>).error.message).toMatch(/stream event over/);
    await llm.settled(llm.last!);
    expect(llm.last!.closedEarly).toBe(true);
    // Well-formed events, 129 MiB of them: refused at 128 MiB (at 32 MiB until 2026-11-28, about 130,000
    // tokens in OpenAI's chunks, which long-output models reach).
    const event = chunk([{ index: 0, delta: { content: kib64 } }]);
    llm.enqueue({ kind: 'raw', pieces: { count: Math.ceil((129 * 1_048_576) / event.length), piece: () => event } });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error.message).toMatch(/streamed more than 134217728 bytes/);
    expect(events.length).toBeGreaterThan(1_900);
    await stillServing();
  });

  // Its socket was drained after [DONE] with no deadline: held for good, and once the pool's 1,024 were
  // held every new chat waited for one, unanswered and unlogged (stream probe, 2026-11-26).
  it('an upstream that never ends its response after [DONE] has its socket closed within the timeout', async () => {
    llm.enqueue({ kind: 'raw', open: true, pieces: [chunk([{ index: 0, delta: { content: 'hi there' }, finish_reason: 'stop' }]), 'data: [DONE]\n\n'] });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.some((e) => e.json?.error)).toBe(false);
    const r = llm.last!;
    await llm.settled(r, 2_000); // SENTIO_LLM_TIMEOUT_MS is 500 here
    expect(r.closedEarly).toBe(true);
  });

  it('an upstream that trickles an event a byte at a time, never ending a line, is timed out', async () => {
    const event = chunk([{ index: 0, delta: { content: 'never finished' } }]);
    llm.enqueue({ kind: 'raw', gapMs: 200, pieces: [chunk([{ index: 0, delta: { role: 'assistant' } }]), ...event.slice(0, 40)] });
    const started = Date.now();
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.at(-2)!.json!.error).toMatchObject({ code: 'upstream_timeout' });
    expect(Date.now() - started).toBeLessThan(4_000); // the 40 bytes would take 8 s
  });

  it('SSE comments count as the upstream making progress (keep-alives while a model thinks)', async () => {
    llm.enqueue({ kind: 'raw', gapMs: 200, pieces: [
      chunk([{ index: 0, delta: { role: 'assistant' } }]), ...Array.from({ length: 6 }, () => ': keep-alive\n'),
      chunk([{ index: 0, delta: { content: 'done thinking' }, finish_reason: 'stop' }]), 'data: [DONE]\n\n'] });
    const { events } = await streamChat(V2, body([user('hi')]));
    expect(events.some((e) => e.json?.error)).toBe(false);
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  // 24,000 small chunks went past the recording cap, so a retry called the LLM again and stored the turn
  // twice (chat review): past 1 Mi characters the record merges text deltas, and the retry is replayed.
  it('with an Idempotency-Key, a stream of 30,000 small chunks is replayed, its text deltas merged', async () => {
    const pieces = [chunk([{ index: 0, delta: { role: 'assistant', content: '' } }]),
      ...Array.from({ length: 10_000 }, (_, i) => chunk([{ index: 0, delta: { reasoning_content: `step ${i} ` } }])),
      ...Array.from({ length: 20_000 }, (_, i) => chunk([{ index: 0, delta: { content: i % 2 ? 'so happy ' : 'and "glad" \\ ' } }])),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), 'data: [DONE]\n\n'];
    const ctx = `long-${Date.now()}`;
    const send = () => streamChat(V2, body([user('think it through')], { context_id: ctx }), undefined, undefined, { 'idempotency-key': `long-${ctx}` });
    const text = (events: Event[], field: string) => events.flatMap((e) => e.json?.choices ?? []).map((c: any) => c.delta?.[field] ?? '').join('');
    llm.enqueue({ kind: 'raw', pieces });
    const first = await send();
    expect(first.events.length).toBeGreaterThan(30_000);
    const again = await send();
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(llm.received).toHaveLength(1);
    expect(again.events.length).toBeLessThan(first.events.length / 10);
    for (const field of ['content', 'reasoning_content']) expect(text(again.events, field)).toBe(text(first.events, field));
    expect(text(first.events, 'content')).toContain('and "glad" \\ so happy');
    // The role chunk, the finish with the emotions, and [DONE] are replayed as sent.
    expect(again.events.slice(-2).map((e) => e.data)).toEqual(first.events.slice(-2).map((e) => e.data));
    expect(again.events[0]!.data).toBe(first.events[0]!.data);
    const state = await (await s.get(`/v2/emotions/${ctx}`)).json();
    expect(state.trajectory.baseline.messageCount).toBe(2);
  });

  // Every event of every stream was kept for the replay: 16 streams of 18 MB took 300 MB more memory.
  it('with an Idempotency-Key, a stream whose text is over 4 Mi characters passes unrecorded and a retry runs again', async () => {
    const kib64 = 'x'.repeat(65_536);
    const pieces = [...Array.from({ length: 80 }, () => chunk([{ index: 0, delta: { content: kib64 } }])),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), 'data: [DONE]\n\n'];
    const send = async () => {
      const r = await fetch(s.base + V2, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'idempotency-key': 'big-stream' }, body: JSON.stringify(body([user('a long one')])) });
      return { replayed: r.headers.get('idempotent-replayed'), text: await r.text() };
    };
    llm.enqueue({ kind: 'raw', pieces });
    const first = await send();
    expect(first.text.length).toBeGreaterThan(5_000_000);
    expect(first.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const calls = llm.received.length;
    llm.enqueue({ kind: 'raw', pieces });
    const again = await send();
    expect(again.replayed).toBeNull();
    expect(llm.received.length).toBe(calls + 1);
  });

  it('a call waiting for one of the pool\'s sockets is timed out and can be aborted', async () => {
    const client = new LlmClient({ baseUrl: llm.url, timeoutMs: 300, maxSockets: 1 });
    try {
      // A stream that holds the only socket for 2 s, never idle for the 300 ms timeout.
      llm.enqueue({ kind: 'raw', gapMs: 100, pieces: Array.from({ length: 20 }, () => chunk([{ index: 0, delta: { content: 'x' } }])) });
      const holder = await client.stream({ model: 'm', messages: [] }, new AbortController().signal);
      const drained = (async () => { for await (const _ of holder) { /* read on */ } })().catch(() => undefined);
      let started = Date.now();
      const queued = await client.complete({ model: 'm', messages: [] }, new AbortController().signal).catch((e: unknown) => e);
      expect(queued).toMatchObject({ name: 'UpstreamError', failure: 'timeout' });
      expect(Date.now() - started).toBeLessThan(1_000);
      const ac = new AbortController();
      started = Date.now();
      const aborted = client.complete({ model: 'm', messages: [] }, ac.signal).catch((e: unknown) => e);
      setTimeout(() => ac.abort(), 50);
      expect((await aborted as Error).name).toBe('UpstreamAbortedError');
      expect(Date.now() - started).toBeLessThan(250);
      holder.abort();
      await drained;
    } finally {
      client.close();
    }
  });
});
