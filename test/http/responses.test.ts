/**
 * Every success body a real server sends matches the response schema /openapi.json publishes for its route
 * (src/api/responses.ts), in every shape a route has: both entry models on both path versions, sub-emotions,
 * a context with and without a trend, batches, chat with and without a stream, a tool-call-only reply.
 * The schemas are strict, so a field added to a response without its schema fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { FakeLlm } from '../helpers/fake-llm.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { chatResponses, emotionResponses, ErrorResponse, HealthResponse, ModelList, ReadyResponse } from '../../src/api/responses.js';

let s: TestServer;
let llm: FakeLlm;
let doc: { paths: Record<string, Record<string, { responses: { '200': { content: Record<string, { schema: unknown; 'x-sentio-event-schema'?: unknown }> } } }>> };

beforeAll(async () => {
  llm = await FakeLlm.start();
  s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_MODELS: 'chat-model=upstream-model' });
  doc = await (await s.get('/openapi.json')).json();
});
afterAll(async () => {
  await s?.close();
  await llm?.close();
});

/** The body of a 200, checked against `schema`; a mismatch fails with zod's account of where. */
async function conforms(r: Response | Promise<Response>, schema: ZodType): Promise<Record<string, any>> {
  const res = await r;
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  const parsed = schema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(body)).toEqual([]);
  return body;
}

const texts = ['I finally got the job and I cannot stop smiling', 'I am so scared of tomorrow', 'Why would they lie to me like that?'];
const v2Msgs = (ids = false) => texts.map((t, i) => ({ content: { text: t }, ...(ids ? { externalId: `m${i}` } : {}) }));
const v1Msgs = (ids = false) => texts.map((t, i) => ({ content: { text: t }, ...(ids ? { external_id: `m${i}` } : {}) }));

describe('emotion endpoints', () => {
  const V2 = emotionResponses('v2');
  const V1 = emotionResponses('v1');

  it('V2: stateless, context (before and after a trend), state, message and batch, with either model', async () => {
    for (const params of [{}, { params: { includeSubEmotions: true } }, { model: 'emotion-v1' }]) {
      const one = await conforms(s.post('/v2/emotions/analysis', { messages: v2Msgs(), ...params }), V2.stateless);
      expect(one.emotions._default.category).toBeTypeOf('string');
      await conforms(s.post('/v2/emotions/batch-analysis', { messages: v2Msgs(), ...params }), V2.batch);
    }
    const sub = await conforms(s.post('/v2/emotions/analysis', { messages: v2Msgs(), params: { includeSubEmotions: true } }), V2.stateless);
    expect(Object.keys(sub.emotions._default.subEmotions)).toHaveLength(28);
    for (let i = 0; i < 4; i++) {
      await conforms(s.post('/v2/emotions/shapes-v2/analysis', { messages: [{ content: { text: texts[i % 3]! }, externalId: `m${i}` }] }), V2.context);
    }
    const ctx = await conforms(s.post('/v2/emotions/shapes-v2/analysis', { messages: v2Msgs(), model: 'emotion-v1' }), V2.context);
    expect(ctx.trajectory.trend.direction).toBeTypeOf('string');
    const state = await conforms(s.get('/v2/emotions/shapes-v2'), V2.state);
    expect(state.trajectory.baseline.messageCount).toBe(7);
    await conforms(s.get('/v2/emotions/shapes-v2/message/m1'), V2.message);
  });

  it('V1: the same five, with either model', async () => {
    for (const params of [{}, { params: { thresholds: 0.3, includeSubEmotions: true } }, { model: 'emotion-v2' }]) {
      await conforms(s.post('/v1/emotions/analyse', { messages: v1Msgs(), ...params }), V1.stateless);
      await conforms(s.post('/v1/emotions/batch-analyse', { messages: v1Msgs(), ...params }), V1.batch);
      await conforms(s.post('/v1/emotions/shapes-v1/analyse', { messages: v1Msgs(true), ...params }), V1.context);
    }
    await conforms(s.get('/v1/emotions/shapes-v1'), V1.state);
    await conforms(s.get('/v1/emotions/shapes-v1/message/m2'), V1.message);
  });

  it('a schema refuses a body that breaks it (the check can fail)', async () => {
    const body = await conforms(s.post('/v2/emotions/analysis', { messages: v2Msgs() }), V2.stateless);
    expect(V2.stateless.safeParse({ ...body, extra: 1 }).success).toBe(false);
    expect(V2.stateless.safeParse({ ...body, emotions: { _default: { ...body.emotions._default, valence: 2 } } }).success).toBe(false);
    expect(V1.stateless.safeParse(body).success).toBe(false); // a V2 object name
  });
});

describe('chat', () => {
  const chatBody = (extra: Record<string, unknown>) => ({ model: 'chat-model', messages: [{ role: 'user', content: 'I feel so alone tonight' }], ...extra });

  /** A stream's events, each checked against the chunk schema; returns the parsed events before [DONE]. */
  async function streamConforms(path: string, body: unknown, schema: ZodType): Promise<Array<Record<string, any>>> {
    const r = await s.post(path, body);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = (await r.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    expect(data.at(-1)).toBe('[DONE]');
    const events = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, any>);
    for (const e of events) {
      const parsed = schema.safeParse(e);
      expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(e)).toEqual([]);
    }
    return events;
  }

  for (const version of ['v1', 'v2'] as const) {
    const path = `/${version}/chat/completions`;
    const { completion, chunk, event } = chatResponses(version);

    it(`${version}: completions with either emotion model, a context, sub-emotions and a tool-call-only reply`, async () => {
      for (const emotion_model of ['emotion-v1', 'emotion-v2']) {
        const j = await conforms(s.post(path, chatBody({ emotion_model, emotion_model_params: { includeSubEmotions: true } })), completion);
        expect(j.emotions.assistant).toBeDefined();
      }
      for (let i = 0; i < 3; i++) await conforms(s.post(path, chatBody({ emotion_model: `emotion-${version}`, context_id: `chat-shapes-${version}` })), completion);
      llm.enqueue({ kind: 'reply', content: '', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }], finishReason: 'tool_calls' });
      const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
      const t = await conforms(s.post(path, chatBody({ emotion_model: `emotion-${version}`, tools })), completion);
      expect(t.emotions.assistant).toBeUndefined();
    });

    // The published event schema described chunks only, so a client validating events refused the error
    // that ends a failed stream (fuzz review).
    it(`${version}: a stream that fails after it began ends with an event the published schema allows`, async () => {
      llm.enqueue({ kind: 'die', afterChunks: 2 });
      const events = await streamConforms(path, chatBody({ emotion_model: `emotion-${version}`, stream: true }), event);
      expect(events.at(-1)!.error.code).toBe('upstream_error');
      expect(chunk.safeParse(events.at(-1)).success).toBe(false);
    });

    it(`${version}: every event of a stream`, async () => {
      const events = await streamConforms(path, chatBody({ emotion_model: `emotion-${version}`, stream: true, context_id: `chat-stream-${version}` }), chunk);
      expect(events.length).toBeGreaterThan(2);
      expect(events.at(-1)!.emotions.user).toBeDefined();
      expect(events.at(-1)!.usage.analyse_tokens).toBeGreaterThan(0);
      if (version === 'v2') expect(events.at(-1)!.conversationMode.mode).toBeTypeOf('string');
      // A choice's delta and finish_reason are typed, as the upstream client checks them (an audit found them untyped).
      expect(chunk.safeParse({ ...events[0], choices: [{ index: 0, delta: { content: 5 } }] }).success).toBe(false);
      expect(chunk.safeParse({ ...events[0], choices: [{ index: 0, delta: {}, finish_reason: 1 }] }).success).toBe(false);
    });
  }

  it('the model lists beside both chat paths name the public models', async () => {
    for (const path of ['/v1/models', '/v2/models']) {
      const list = await conforms(s.get(path), ModelList);
      expect(list.data.map((m: { id: string }) => m.id), path).toEqual(['chat-model']);
      expect(list.data[0].created, path).toBeGreaterThan(1_700_000_000);
    }
  });
});

describe('/openapi.json', () => {
  it('publishes each route\'s response schema, the stream events\' included', async () => {
    const ok = (path: string, method: string) => doc.paths[path]![method]!.responses['200'].content;
    const v2Entry = (ok('/v2/emotions/analysis', 'post')['application/json']!.schema as any).properties.emotions.properties._default;
    const variants = v2Entry.anyOf.map((v: { required: string[] }) => v.required.sort());
    expect(variants).toContainEqual(['arousal', 'category', 'complexity', 'discoveryLevel', 'intensity', 'intensityLevel', 'raw', 'text', 'valence', 'wonderIndex']);
    expect(variants).toContainEqual(['category', 'raw', 'text']);
    const state = ok('/v2/emotions/{contextId}', 'get')['application/json']!.schema as any;
    expect(state.properties.trajectory.properties.baseline.required).toContain('baselineValence');
    const chat = ok('/v2/chat/completions', 'post');
    expect((chat['application/json']!.schema as any).properties.conversationMode.properties.mode.enum).toContain('crisis_intervention');
    const events = (chat['text/event-stream']!['x-sentio-event-schema'] as any).anyOf;
    expect(events.map((e: any) => e.properties.object?.const ?? e.required.join())).toEqual(['chat.completion.chunk', 'error,request_id']);
    expect((ok('/v1/chat/completions', 'post')['application/json']!.schema as any).properties).not.toHaveProperty('conversationMode');
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path === '/metrics' || path === '/openapi.json') continue;
      for (const [method, op] of Object.entries(methods)) {
        if (method === 'head') continue;
        const schema = op.responses['200'].content['application/json']?.schema as { properties?: object } | undefined;
        expect(schema?.properties, `${method} ${path}`).toBeDefined();
      }
    }
  });

  it('errors, in the shape components/schemas/Error publishes', async () => {
    const cases: Array<[Promise<Response>, number]> = [
      [s.post('/v2/emotions/analysis', { messages: [] }), 400],
      [s.post('/v2/emotions/analysis', { messages: v2Msgs() }, { 'x-api-key': 'nope' }), 401],
      [s.get('/v2/emotions/never-seen'), 404],
      [s.get('/v3/nothing'), 404],
      [s.post('/v2/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }), 400],
    ];
    for (const [r, status] of cases) {
      const res = await r;
      const body = await res.json();
      expect(res.status).toBe(status);
      const parsed = ErrorResponse.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(body)).toEqual([]);
    }
    expect((doc as any).components.schemas.Error.properties.error.properties.code.enum).toContain('context_not_found');
  });

  it('is a valid OpenAPI 3.1 document (checked against the specification\'s own schema)', async () => {
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('names the response headers, and a real reply carries every one it says is always there', async () => {
    const op = (doc.paths['/v2/emotions/analysis']!['post'] as any).responses['200'];
    expect(Object.keys(op.headers).sort()).toEqual(['idempotent-replayed', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-inference-time', 'x-request-id']);
    expect(Object.keys((doc.paths['/healthz']!['get'] as any).responses['200'].headers)).toEqual(['x-request-id']);
    expect(Object.keys((doc as any).components.headers)).toContain('retry-after');
    for (const [path, method, send] of [
      ['/v2/emotions/analysis', 'post', () => s.post('/v2/emotions/analysis', { messages: v2Msgs() })],
      ['/v1/emotions/{context_id}', 'get', async () => {
        await s.post('/v1/emotions/headers-v1/analyse', { messages: v1Msgs() });
        return s.get('/v1/emotions/headers-v1');
      }],
      ['/healthz', 'get', () => s.get('/healthz')],
    ] as const) {
      const res = await send();
      expect(res.status).toBe(200);
      const documented = (doc.paths[path]![method] as any).responses['200'].headers as Record<string, { required?: boolean }>;
      for (const [name, h] of Object.entries(documented)) if (h.required) expect(res.headers.get(name), `${path} ${name}`).not.toBeNull();
      for (const name of res.headers.keys()) {
        if (['content-type', 'content-length', 'date', 'uwebsockets', 'connection', 'keep-alive'].includes(name)) continue;
        expect(documented, `${path}: ${name} is sent but not documented`).toHaveProperty([name]);
      }
    }
  });

  // An audit found each 400 described only as "the body or a path parameter is not valid", the 429's and
  // 409's headers optional, and HEAD's responses without headers.
  it('lists each error\'s code under its status, and marks the headers it always carries as required', async () => {
    type Op = { responses: Record<string, { description: string; headers?: Record<string, { required?: boolean }> }> };
    const op = (path: string, method: string) => (doc.paths as unknown as Record<string, Record<string, Op>>)[path]![method]!;
    const described = async (path: string, method: string, res: Response) => {
      const body = method === 'head' ? undefined : ((await res.json()) as { error: { code: string } });
      const documented = op(path, method).responses[String(res.status)];
      expect(documented, `${method} ${path} ${res.status} is not listed`).toBeDefined();
      if (body) expect(documented!.description, `${method} ${path}`).toContain(body.error.code);
      for (const [name, h] of Object.entries(documented!.headers ?? {})) if (h.required) expect(res.headers.get(name), `${method} ${path} ${res.status} ${name}`).not.toBeNull();
      return documented!;
    };
    const msg = { content: { text: 'hi' } };
    const posts: Array<[string, string, unknown, Record<string, string>?]> = [
      ['/v2/emotions/analysis', '/v2/emotions/analysis', '{'],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', {}],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', { messages: 'x' }],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', { messages: [{ ...msg, timestamp: 'yesterday' }] }],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', { messages: [msg], extra: 1 }],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', { messages: [msg], model: 'nope' }],
      ['/v1/emotions/analyse', '/v1/emotions/analyse', { messages: [{ ...msg, external_id: 'x'.repeat(200) }] }],
      ['/v2/emotions/analysis', '/v2/emotions/analysis', { messages: [msg] }, { 'idempotency-key': 'a b' }],
      ['/v2/emotions/{contextId}/analysis', '/v2/emotions/%E0%A4/analysis', { messages: [msg] }],
      ['/v2/chat/completions', '/v2/chat/completions', { model: 'chat-model', messages: [{ role: 'robot', content: 'hi' }] }],
      ['/v2/chat/completions', '/v2/chat/completions', { model: 'chat-model', emotion_model: 'nope', messages: [{ role: 'user', content: 'hi' }] }],
      ['/v2/chat/completions', '/v2/chat/completions', { model: 'chat-model', context_id: 'x'.repeat(200), messages: [{ role: 'user', content: 'hi' }] }],
    ];
    for (const [path, url, body, headers] of posts) expect((await described(path, 'post', await s.post(url, body, headers))).description).not.toBe('');
    await described('/v2/emotions/{contextId}', 'get', await s.get(`/v2/emotions/${'x'.repeat(200)}`));
    await described('/v2/emotions/{contextId}/message/{messageId}', 'get', await s.get(`/v2/emotions/c/message/${'x'.repeat(200)}`));
    // HEAD's responses are GET's, headers included (a 401's WWW-Authenticate).
    const head = await fetch(`${s.base}/v2/emotions/some-context`, { method: 'HEAD' });
    expect(head.status).toBe(401);
    expect((await described('/v2/emotions/{contextId}', 'head', head)).headers).toHaveProperty(['www-authenticate', 'required'], true);
    expect(op('/v2/emotions/analysis', 'post').responses['409']!.headers).toHaveProperty(['retry-after', 'required'], true);
    const limited = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '1' });
    try {
      await limited.post('/v2/emotions/analysis', { messages: [msg] });
      const res = await limited.post('/v2/emotions/analysis', { messages: [msg] });
      expect(res.status).toBe(429);
      const documented = await described('/v2/emotions/analysis', 'post', res);
      expect(Object.entries(documented.headers!).filter(([, h]) => h.required).map(([n]) => n).sort())
        .toEqual(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-request-id']);
    } finally {
      await limited.close();
    }
  });

  it('states this server\'s id limits per parameter, a unique operationId per operation, and no format the server does not follow', async () => {
    const other = await startTestServer({ SENTIO_MAX_CONTEXT_ID_BYTES: '16', SENTIO_MAX_EXTERNAL_ID_BYTES: '8' });
    try {
      const d = await (await other.get('/openapi.json')).json();
      const params = (path: string, method: string) => d.paths[path][method].parameters as Array<{ name: string; in: string; description: string; schema: any }>;
      // V1 spells the context id context_id: it was described with the external id's limit.
      for (const [path, method] of [['/v1/emotions/{context_id}', 'get'], ['/v2/emotions/{contextId}', 'get'], ['/v1/emotions/{context_id}/analyse', 'post']]) {
        expect(params(path!, method!).find((p) => p.in === 'path')!.description, path).toContain('at most 16 bytes');
      }
      expect(params('/v2/emotions/{contextId}/message/{messageId}', 'get').find((p) => p.name === 'messageId')!.description).toContain('at most 8 bytes');
      const key = params('/v2/emotions/analysis', 'post').find((p) => p.name === 'Idempotency-Key')!.schema;
      expect(new RegExp(key.pattern).test('a b')).toBe(false); // the server answers 400 idempotency_key_invalid
      expect(new RegExp(key.pattern).test('5f0c-retry_1')).toBe(true);
      const ids = Object.values(d.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toContain('postV2EmotionsContextIdAnalysis');
      // The error statuses each route can answer, for client generators, beside the default
      const statuses = (path: string, method: string) => Object.keys(d.paths[path][method].responses).filter((k) => k !== '200' && k !== 'default');
      for (const chat of ['/v1/chat/completions', '/v2/chat/completions']) {
        expect(statuses(chat, 'post')).toEqual(expect.arrayContaining(['400', '401', '404', '409', '413', '415', '422', '429', '502', '503', '504']));
      }
      expect(statuses('/v2/emotions/{contextId}', 'get')).toEqual(['400', '401', '404', '429', '503']);
      // HEAD answers what GET does, without a body (an unknown context: 404; no key: 401)
      expect(statuses('/v2/emotions/{contextId}', 'head')).toEqual(['400', '401', '404', '429', '503']);
      expect(statuses('/v2/emotions/{contextId}/analysis', 'post')).not.toContain('404');
      expect(statuses('/metrics', 'get')).toEqual(['401', '429']); // a scrape is never shed
      expect(statuses('/readyz', 'get')).toEqual(['503']);
      // A timestamp to the minute is accepted, which RFC 3339's date-time (JSON Schema's format) is not.
      expect((await other.post('/v2/emotions/analysis', { messages: [{ content: { text: 'hi' }, timestamp: '2026-11-21T10:00Z' }] })).status).toBe(200);
      expect(JSON.stringify(d)).not.toContain('"format":"date-time"');
    } finally {
      await other.close();
    }
  });

  it('health and readiness', async () => {
    await conforms(s.get('/healthz'), HealthResponse);
    await conforms(s.get('/readyz'), ReadyResponse);
  });
});
