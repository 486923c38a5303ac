/**
 * The chat endpoints against a real Sentio and a fake OpenAI-compatible upstream, both on loopback:
 * request validation, model mapping, passthrough, emotions, guidance, tools, memory and upstream errors.
 */
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, TEST_KEY } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { FakeLlm } from '../helpers/fake-llm.js';

let s: TestServer;
let llm: FakeLlm;

const V2 = '/v2/chat/completions';
const V1 = '/v1/chat/completions';
const EMOTIONS = ['fear', 'sadness', 'joy', 'anger', 'love', 'surprise'];

function v2(messages: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages, ...extra };
}
function v1(messages: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v1', messages, ...extra };
}
const user = (content: string) => ({ role: 'user', content });

async function errorOf(r: Response): Promise<{ type: string; code: string; message: string; param?: string }> {
  const j = (await r.json()) as { error: { type: string; code: string; message: string; param?: string }; request_id: string };
  expect(j.request_id).toBe(r.headers.get('x-request-id'));
  return j.error;
}

beforeAll(async () => {
  llm = await FakeLlm.start();
  s = await startTestServer({
    SENTIO_LLM_BASE_URL: llm.url,
    SENTIO_LLM_API_KEY: 'upstream-secret',
    SENTIO_LLM_MODELS: 'llm-k2-thinking-turbo=kimi-k2-turbo-upstream,llm-k2-thinking=kimi-k2-upstream',
    SENTIO_LLM_TIMEOUT_MS: '500',
  });
});
afterAll(async () => {
  await s?.close();
  await llm?.close();
});
beforeEach(() => llm.reset());

describe('V2 chat, non-streaming', () => {
  it('returns an OpenAI-shaped completion with user and assistant emotions, mode and usage', async () => {
    const r = await s.post(V2, v2([{ role: 'system', content: 'You are kind.' }, user('I am so happy, I got the job!')]));
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    const j = (await r.json()) as Record<string, any>;
    expect(j.object).toBe('chat.completion');
    expect(j.id).toBe(`chatcmpl-${r.headers.get('x-request-id')!.slice(4)}`);
    expect(Number.isInteger(j.created)).toBe(true);
    expect(j.model).toBe('llm-k2-thinking-turbo');
    expect(j.emotion_model).toBe('emotion-v2');
    expect(j.choices).toHaveLength(1);
    expect(j.choices[0].index).toBe(0);
    expect(j.choices[0].message.role).toBe('assistant');
    expect(typeof j.choices[0].message.content).toBe('string');
    expect(j.choices[0].finish_reason).toBe('stop');

    const u = j.emotions.user;
    expect(u.text).toBe('I am so happy, I got the job!');
    for (const k of ['category', 'raw', 'intensity', 'intensityLevel', 'valence', 'arousal', 'complexity', 'wonderIndex', 'discoveryLevel']) {
      expect(u).toHaveProperty(k);
    }
    expect(Object.keys(u.raw).sort()).toEqual([...EMOTIONS].sort());
    const sum = EMOTIONS.reduce((a, e) => a + u.raw[e], 0);
    expect(sum).toBeCloseTo(1, 3);
    const a = j.emotions.assistant;
    expect(Object.keys(a).sort()).toEqual(['arousal', 'category', 'intensity', 'raw', 'valence']);
    expect(EMOTIONS).toContain(a.category);

    expect(typeof j.conversationMode.mode).toBe('string');
    expect(j.conversationMode.confidence).toBeGreaterThan(0);
    expect(j.conversationMode.confidence).toBeLessThanOrEqual(1);
    expect(typeof j.conversationMode.responseStrategy.tone).toBe('string');
    expect(typeof j.conversationMode.responseStrategy.approach).toBe('string');

    expect(j.usage.prompt_tokens).toBeGreaterThan(0);
    expect(j.usage.completion_tokens).toBeGreaterThan(0);
    expect(j.usage.analyse_tokens).toBeGreaterThan(0);
    expect(j.trajectory).toBeUndefined();
  });

  it('maps the public model name, sends the upstream key and passes model_params, tools and tool_choice through', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const r = await s.post(V2, v2([user('What is the weather in Oslo?')], {
      model: 'llm-k2-thinking',
      model_params: { temperature: 0.3, max_tokens: 50, top_p: 0.9, frequency_penalty: 0.5, presence_penalty: -0.5 },
      tools,
      tool_choice: 'auto',
    }));
    expect(r.status).toBe(200);
    const got = llm.last!;
    expect(got.path).toBe('/v1/chat/completions');
    expect(got.headers['authorization']).toBe('Bearer upstream-secret');
    expect(got.headers['x-request-id']).toBe(r.headers.get('x-request-id'));
    expect(got.body['model']).toBe('kimi-k2-upstream');
    expect(got.body).toMatchObject({ temperature: 0.3, max_tokens: 50, top_p: 0.9, frequency_penalty: 0.5, presence_penalty: -0.5, tool_choice: 'auto' });
    expect(got.body['tools']).toEqual(tools);
    expect(got.body['stream']).toBe(false);
    // Sentio's own fields never reach the upstream
    for (const k of ['emotion_model', 'emotion_model_params', 'context_id', 'model_params', 'emotion_guidance']) expect(got.body).not.toHaveProperty(k);
  });

  it('reuses the upstream connection (keep-alive pool)', async () => {
    await s.post(V2, v2([user('one')]));
    await s.post(V2, v2([user('two')]));
    expect(llm.received[1]!.remotePort).toBe(llm.received[0]!.remotePort);
  });

  it('accepts OpenAI-style top-level sampling parameters, but not the same one twice', async () => {
    let r = await s.post(V2, v2([user('hello')], { temperature: 0.2, max_tokens: 10 }));
    expect(r.status).toBe(200);
    expect(llm.last!.body).toMatchObject({ temperature: 0.2, max_tokens: 10 });
    r = await s.post(V2, v2([user('hello')], { temperature: 0.2, model_params: { temperature: 0.5 } }));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_value', param: 'temperature' });
  });

  it('validates model_params types and ranges', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ temperature: 3 }, 'model_params.temperature', 'invalid_value'],
      [{ temperature: 'hot' }, 'model_params.temperature', 'invalid_type'],
      [{ max_tokens: 0 }, 'model_params.max_tokens', 'invalid_value'],
      [{ max_tokens: 1.5 }, 'model_params.max_tokens', 'invalid_type'],
      [{ top_p: 0 }, 'model_params.top_p', 'invalid_value'],
      [{ frequency_penalty: -2.5 }, 'model_params.frequency_penalty', 'invalid_value'],
      [{ presence_penalty: 2.5 }, 'model_params.presence_penalty', 'invalid_value'],
      [{ top_k: 5 }, 'model_params.top_k', 'unknown_field'],
    ];
    for (const [params, param, code] of cases) {
      const r = await s.post(V2, v2([user('hi')], { model_params: params }));
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(await errorOf(r)).toMatchObject({ type: 'invalid_request_error', code, param });
    }
    expect(llm.received).toHaveLength(0);
  });

  it('adds the emotion-aware system instruction after the caller\'s system message', async () => {
    await s.post(V2, v2([{ role: 'system', content: 'You are a pirate.' }, user('I feel so lonely and sad today')]));
    const msgs = llm.last!.body.messages!;
    expect(msgs[0]).toEqual({ role: 'system', content: 'You are a pirate.' });
    expect(msgs[1]!.role).toBe('system');
    expect(String(msgs[1]!.content)).toMatch(/Current state: \w+ \w+/);
    expect(String(msgs[1]!.content)).toMatch(/Tone: /);
    expect(String(msgs[1]!.content)).not.toContain('lonely'); // never quotes the user
    expect(msgs[2]).toEqual(user('I feel so lonely and sad today'));
    expect(msgs).toHaveLength(3);
  });

  // The emotion model reads some crisis messages as love or joy; the instruction then said "subtle love"
  // beside crisis intervention (chat review, 2026-11-28).
  it('in crisis intervention, the instruction names no category that contradicts the crisis', async () => {
    // Model 1.5.1 reads short crisis statements as sadness ("I want to kill myself tonight": love 0.41 with
    // 1.4.0); this farewell, from the crisis held-out set, it still reads as joy (0.93).
    const text = "you're the only one who talks to me Mira. i wanted to say goodbye properly before i go tonight. thank you for being my friend";
    const scored = await (await s.post('/v2/emotions/analysis', { messages: [{ content: { text } }] })).json();
    expect(['love', 'joy', 'surprise']).toContain(scored.emotions._default.category); // the model's misreading, which this guards
    const r = await s.post(V2, v2([user(text)]));
    expect((await r.json()).conversationMode.mode).toBe('crisis_intervention');
    const guidance = String(llm.last!.body.messages![0]!.content);
    expect(guidance).toContain('- Current state: distress (their words signal a possible crisis); tone ');
    expect(guidance).not.toMatch(/love|joy|surprise|tone (very )?positive/);
    expect(guidance).toContain('Safety first');
  });

  // After "I want to end it all" and "ok" (read as joy) the trend is improving; the instruction said so beside
  // the crisis approach (a chat review, 2026-11-28).
  it('in crisis intervention, the instruction does not call the mood improving', async () => {
    const context = `crisis-trend-${Date.now()}`;
    let j: Record<string, any> = {};
    for (const text of ['I want to end it all', 'ok', "what's the weather like tomorrow"]) {
      j = await (await s.post(V2, v2([user(text)], { context_id: context }))).json();
    }
    expect(j.conversationMode.mode).toBe('crisis_intervention');
    expect(j.trajectory.trend.direction).toBe('improving');
    const guidance = String(llm.last!.body.messages![0]!.content);
    expect(guidance).toContain('Safety first');
    expect(guidance).not.toContain('improving');
  });

  it('puts the instruction first when the caller has no system message', async () => {
    await s.post(V2, v2([user('hi'), { role: 'assistant', content: 'Hello!' }, user('how are you?')]));
    const msgs = llm.last!.body.messages!;
    expect(msgs.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('leaves the messages untouched with emotion_guidance: false', async () => {
    const messages = [{ role: 'system', content: 'Be brief.' }, user('I feel so lonely')];
    const r = await s.post(V2, v2(messages, { emotion_guidance: false }));
    expect(r.status).toBe(200);
    expect(llm.last!.body.messages).toEqual(messages);
    const j = (await r.json()) as Record<string, any>;
    expect(j.emotions.user.text).toBe('I feel so lonely'); // analysed all the same
  });

  it('returns tool calls with finish_reason tool_calls and no assistant emotions when there is no text', async () => {
    llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const r = await s.post(V2, v2([user('Weather in Oslo?')], { tools }));
    expect(r.status).toBe(200);
    const j = (await r.json()) as Record<string, any>;
    expect(j.choices[0].finish_reason).toBe('tool_calls');
    expect(j.choices[0].message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
    expect(j.choices[0].message.content).toBeNull();
    expect(j.emotions.user).toBeDefined();
    expect(j.emotions.assistant).toBeUndefined();
  });

  // A thinking model that spends max_tokens on its reasoning answers with empty content: the turn still has an
  // assistant, scored as the empty text (as an empty user message is), so clients find emotions.assistant.
  it('scores an empty reply without tool calls as the empty text', async () => {
    llm.enqueue({ kind: 'reply', content: '', finishReason: 'length' });
    const r = await s.post(V2, v2([user('Tell me a long story')]));
    expect(r.status).toBe(200);
    const j = (await r.json()) as Record<string, any>;
    expect(j.choices[0].message.content).toBe('');
    expect(j.choices[0].finish_reason).toBe('length');
    const alone = ((await (await s.post('/v2/emotions/analysis', { messages: [{ content: { text: '' } }] })).json()) as Record<string, any>).emotions._default;
    const { category, intensity, valence, arousal, raw } = alone;
    expect(j.emotions.assistant).toEqual({ category, intensity, valence, arousal, raw });
  });

  it('scores a refusal as the reply, and leaves a legacy function_call unscored like tool calls', async () => {
    const completion = (message: Record<string, unknown>, finish: string) =>
      JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }] });
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [completion({ refusal: 'I am sorry, I cannot help with that.' }, 'stop')] });
    const refused = (await (await s.post(V2, v2([user('Help me pick a lock')]))).json()) as Record<string, any>;
    const alone = ((await (await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'I am sorry, I cannot help with that.' } }] })).json()) as Record<string, any>).emotions._default;
    expect(refused.emotions.assistant.raw).toEqual(alone.raw);
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [completion({ function_call: { name: 'f', arguments: '{}' } }, 'function_call')] });
    const called = (await (await s.post(V2, v2([user('Look this up')]))).json()) as Record<string, any>;
    expect(called.choices[0].message.function_call).toEqual({ name: 'f', arguments: '{}' });
    expect(called.emotions.assistant).toBeUndefined();
  });

  it('accepts tool results (tool role with tool_call_id, assistant with tool_calls) and forwards them', async () => {
    const messages = [
      user('Weather in Oslo?'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
    ];
    const r = await s.post(V2, v2(messages, { tools: [{ type: 'function', function: { name: 'get_weather' } }], emotion_guidance: false }));
    expect(r.status).toBe(200);
    expect(llm.last!.body.messages).toEqual(messages);
    const j = (await r.json()) as Record<string, any>;
    expect(j.emotions.user.text).toBe('Weather in Oslo?');
    const missingId = await s.post(V2, v2([user('x'), { role: 'tool', content: '1' }]));
    expect(missingId.status).toBe(400);
    expect(await errorOf(missingId)).toMatchObject({ code: 'missing_field', param: 'messages[1].tool_call_id' });
  });

  it('estimates usage when the upstream reports none', async () => {
    llm.enqueue({ kind: 'reply', content: 'abcd efgh ijkl', usage: false });
    const r = await s.post(V2, v2([user('hello there')], { emotion_guidance: false }));
    const j = (await r.json()) as Record<string, any>;
    expect(j.usage.completion_tokens).toBe(4); // 14 bytes / 4, rounded up
    expect(j.usage.prompt_tokens).toBe(3 + 4 + 3); // priming + one message + 11 bytes / 4
    expect(j.usage.analyse_tokens).toBeGreaterThan(0);
  });

  it('estimates tool calls as their names and arguments, the same streamed in fragments or not', async () => {
    const calls = [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }, { id: 'call_2', name: 'get_time', arguments: '{"tz":"Europe/Oslo"}' }];
    const expected = Math.ceil(calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0) / 4);
    llm.enqueue({ kind: 'reply', toolCalls: calls, usage: false });
    const plain = (await (await s.post(V2, v2([user('weather and time?')], { emotion_guidance: false }))).json()) as Record<string, any>;
    expect(plain.usage.completion_tokens).toBe(expected);
    llm.enqueue({ kind: 'reply', toolCalls: calls, usage: false }); // streamed: each call's arguments in two fragments
    const streamed = await (await s.post(V2, v2([user('weather and time?')], { emotion_guidance: false, stream: true }))).text();
    const last = streamed.split('\n\n').map((e) => e.slice('data: '.length)).filter((d) => d.includes('"usage"')).at(-1)!;
    expect((JSON.parse(last) as Record<string, any>).usage.completion_tokens).toBe(expected);
  });

  // A thinking model's 3,000 bytes of reasoning were estimated as nothing, and Moonshot's usage, sent inside
  // the last streamed choice, was relayed and then replaced by the estimate (chat review, 2026-11-27).
  it('estimates reasoning as reply text, and reads a streamed usage from inside the last choice', async () => {
    const reasoning = 'r'.repeat(3_001); // with the reply's 3 bytes, 3,004: one ceiling gives 751, two 752
    const completion = { id: 'up', object: 'chat.completion', created: 1, model: 'up', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi.', reasoning_content: reasoning }, finish_reason: 'stop' }] };
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify(completion)] });
    const plain = (await (await s.post(V2, v2([user('hello')], { emotion_guidance: false }))).json()) as Record<string, any>;
    expect(plain.usage.completion_tokens).toBe(751); // a token per 4 bytes of reply and reasoning together
    const chunk = (choice: object) => `data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, ...choice }] })}\n\n`;
    const pieces = (usage?: object) => [chunk({ delta: { role: 'assistant', reasoning_content: reasoning } }),
      chunk({ delta: { content: 'Hi.' }, finish_reason: 'stop', ...(usage ? { usage } : {}) }), 'data: [DONE]\n\n'];
    const lastUsage = async () => {
      const text = await (await s.post(V2, v2([user('hello')], { emotion_guidance: false, stream: true }))).text();
      const last = text.split('\n\n').map((e) => e.slice('data: '.length)).filter((d) => d.includes('"analyse_tokens"')).at(-1)!;
      return (JSON.parse(last) as Record<string, any>).usage;
    };
    llm.enqueue({ kind: 'raw', pieces: pieces() });
    expect((await lastUsage()).completion_tokens).toBe(751);
    llm.enqueue({ kind: 'raw', pieces: pieces({ prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 }) });
    expect(await lastUsage()).toMatchObject({ prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 });
  });

  it('a long reply reaches the client whole, and is scored and stored as its first 8 KiB', async () => {
    const reply = 'I am so glad you asked, this is wonderful news. '.repeat(600); // 28,800 bytes
    const id = `long-reply-${Date.now()}`;
    for (const stream of [false, true]) {
      llm.enqueue({ kind: 'reply', content: reply });
      const r = await s.post(V2, v2([user('tell me everything')], { context_id: id, stream, emotion_guidance: false }));
      const got = stream
        ? (await r.text()).split('\n\n').map((e) => e.slice('data: '.length)).filter((d) => d.startsWith('{"id"'))
          .map((d) => (JSON.parse(d) as Record<string, any>).choices[0]?.delta?.content ?? '').join('')
        : ((await r.json()) as Record<string, any>).choices[0].message.content;
      expect(got).toBe(reply);
    }
    const stored = [...((await s.sentio.service.history(id)) ?? [])].filter((m) => m.role === 'assistant');
    expect(stored).toHaveLength(2);
    for (const m of stored) {
      expect(Buffer.byteLength(m.text)).toBeLessThanOrEqual(8_192);
      expect(reply.startsWith(m.text)).toBe(true);
      expect(m.text.length).toBeGreaterThan(8_000);
    }
  });

  it('V1-shaped entries when emotion_model is emotion-v1 in a V2 chat', async () => {
    const r = await s.post(V2, v2([user('I am furious with my landlord')], { emotion_model: 'emotion-v1' }));
    expect(r.status).toBe(200);
    const j = (await r.json()) as Record<string, any>;
    expect(j.emotion_model).toBe('emotion-v1');
    expect(Object.keys(j.emotions.user).sort()).toEqual(['category', 'raw', 'text']);
    expect(j.emotions.user.text).toMatch(/^(extreme|strong|moderate|mild|slight) \w+$/);
    expect(['calm', ...EMOTIONS]).toContain(j.emotions.assistant.category);
    expect(j.conversationMode).toBeDefined();
  });

  it('includes sub-emotions when asked, and applies sensitivity', async () => {
    const body = (sensitivity: number) => v2([user('I am thrilled and a bit nervous about the trip')], { emotion_model_params: { sensitivity, includeSubEmotions: true }, emotion_guidance: false });
    const lo = (await (await s.post(V2, body(0))).json()) as Record<string, any>;
    const hi = (await (await s.post(V2, body(1))).json()) as Record<string, any>;
    expect(Object.keys(lo.emotions.user.subEmotions)).toHaveLength(28);
    expect(Object.keys(lo.emotions.assistant.subEmotions)).toHaveLength(28);
    expect(hi.emotions.user.intensity).toBeGreaterThan(lo.emotions.user.intensity);
    const bad = await s.post(V2, v2([user('x')], { emotion_model_params: { sensitivity: 2 } }));
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toMatchObject({ param: 'emotion_model_params.sensitivity' });
    const unknown = await s.post(V2, v2([user('x')], { emotion_model_params: { mood: 1 } }));
    expect(await errorOf(unknown)).toMatchObject({ code: 'unknown_field', param: 'emotion_model_params.mood' });
  });
});

describe('request validation', () => {
  it('unknown model → 404 model_not_found; unknown emotion_model → 400 invalid_model', async () => {
    let r = await s.post(V2, v2([user('hi')], { model: 'gpt-9' }));
    expect(r.status).toBe(404);
    expect(await errorOf(r)).toMatchObject({ type: 'not_found_error', code: 'model_not_found', param: 'model' });
    r = await s.post(V2, v2([user('hi')], { emotion_model: 'emotion-v9' }));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_model', param: 'emotion_model' });
    expect(llm.received).toHaveLength(0);
  });

  it('missing fields and wrong types are 400 with the field named', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ emotion_model: 'emotion-v2', messages: [user('x')] }, 'missing_field', 'model'],
      [{ model: 'llm-k2-thinking', messages: [user('x')] }, 'missing_field', 'emotion_model'],
      [{ model: 'llm-k2-thinking', emotion_model: 'emotion-v2' }, 'missing_field', 'messages'],
      [v2('hello' as unknown as unknown[]), 'invalid_type', 'messages'],
      [v2([{ role: 'user', content: 5 }]), 'invalid_type', 'messages[0].content'],
      [v2([{ content: 'no role' }]), 'missing_field', 'messages[0].role'],
      [v2([{ role: null, content: 'x' }]), 'invalid_type', 'messages[0].role'],
      [v2([{ role: 5, content: 'x' }]), 'invalid_type', 'messages[0].role'],
      [v2([user('x')], { stream: 'yes' }), 'invalid_type', 'stream'],
      [v2([user('x')], { surprise: 1 }), 'unknown_field', 'surprise'],
      [v2([{ role: 'system', content: 'only a system prompt' }]), 'missing_field', 'messages'],
      [v2([]), 'invalid_value', 'messages'],
      // A union (a word, or an object naming a function) judges an object by its object form: it was "Invalid input".
      [v2([user('x')], { tool_choice: {} }), 'missing_field', 'tool_choice.type'],
      [v2([user('x')], { tool_choice: { type: 'function' } }), 'missing_field', 'tool_choice.function'],
      [v2([user('x')], { tool_choice: 5 }), 'invalid_type', 'tool_choice'],
    ];
    for (const [body, code, param] of cases) {
      const r = await s.post(V2, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(await errorOf(r)).toMatchObject({ type: 'invalid_request_error', code, param });
    }
    expect(await errorOf(await s.post(V2, v2([user('x')], { tool_choice: [] })))).toMatchObject({ message: 'tool_choice: expected string or object' });
  });

  it('a tool\'s parameters reach the upstream as sent, a __proto__ key included; parameters that are not an object are a 400', async () => {
    const send = (body: string) => fetch(s.base + V2, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body });
    const head = '{"model":"llm-k2-thinking","emotion_model":"emotion-v2","messages":[{"role":"user","content":"x"}],';
    // Written by hand: an object literal's __proto__ would set its prototype, not a key.
    const parameters = '{"__proto__":{"type":"string"},"type":"object"}';
    let r = await send(`${head}"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`);
    expect(r.status).toBe(200);
    expect(JSON.stringify((llm.last!.body['tools'] as Array<{ function: { parameters: unknown } }>)[0]!.function.parameters)).toBe(parameters);
    for (const bad of ['"object"', '[1]', 'null', '7']) {
      r = await send(`${head}"tools":[{"type":"function","function":{"name":"f","parameters":${bad}}}]}`);
      expect(r.status, bad).toBe(400);
      expect(await errorOf(r)).toMatchObject({ code: 'invalid_type', param: 'tools[0].function.parameters' });
    }
  });

  // JSON.stringify of the upstream body recursed into these and overflowed the stack at ~5,000 levels: 500.
  it('free-form JSON passed to the LLM (tool parameters, annotations) nested past 64 levels is a 400', async () => {
    // Written by hand: JSON.stringify here would overflow as the server's did.
    const nest = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const send = (body: string) => fetch(s.base + V2, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body });
    const head = '{"model":"llm-k2-thinking","emotion_model":"emotion-v2",';
    const tools = (depth: number) => `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${nest(depth)}}}}]`;
    // 100 levels pass the body's bound (128, src/http/body.ts) and meet the free-form one; 5,000 meet the body's.
    let r = await send(`${head}"messages":[{"role":"user","content":"x"}],${tools(100)}}`);
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_value', param: 'tools[0].function.parameters.properties' });
    r = await send(`${head}"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y","annotations":[${nest(100)}]},{"role":"user","content":"z"}]}`);
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_value', param: 'messages[1].annotations[0]' });
    r = await send(`${head}"messages":[{"role":"user","content":"x"}],${tools(5000)}}`);
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_json' });
    expect((await send(`${head}"messages":[{"role":"user","content":"x"}],${tools(60)}}`)).status).toBe(200);
  });

  it('roles: V2 refuses unknown roles, V1 accepts only user and assistant', async () => {
    let r = await s.post(V2, v2([{ role: 'developer', content: 'x' }, user('hi')]));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_role', param: 'messages[0].role' });
    r = await s.post(V1, v1([{ role: 'system', content: 'x' }, user('hi')]));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_role', param: 'messages[0].role' });
    r = await s.post(V1, v1([user('hi'), { role: 'tool', content: 'x', tool_call_id: 'c' }]));
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_role', param: 'messages[1].role' });
    r = await s.post(V1, v1([user('hi'), { role: 'assistant', content: 'hello' }, user('bye')]));
    expect(r.status).toBe(200);
  });

  it('limits: 256 messages, 8 KiB per message, 128-byte context_id', async () => {
    const many = Array.from({ length: 257 }, (_, i) => user(`m${i}`));
    let r = await s.post(V2, v2(many));
    expect(r.status).toBe(413);
    expect(await errorOf(r)).toMatchObject({ type: 'payload_too_large_error', code: 'too_many_messages', param: 'messages' });
    r = await s.post(V2, v2(many.slice(0, 256), { emotion_guidance: false }));
    expect(r.status).toBe(200);
    r = await s.post(V2, v2([user('x'), { role: 'assistant', content: 'é'.repeat(4097) }, user('y')]));
    expect(r.status).toBe(413);
    expect(await errorOf(r)).toMatchObject({ code: 'message_too_large', param: 'messages[1].content' });
    r = await s.post(V2, v2([user('x')], { context_id: 'c'.repeat(129) }));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'context_id_too_long', param: 'context_id' });
    // a lone surrogate: the context was created, and no GET could ever name it
    r = await s.post(V2, v2([user('x')], { context_id: 'ls\ud800' }));
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ code: 'invalid_value', param: 'context_id' });
  });

  it('both chat routes are in /openapi.json with their request schema', async () => {
    const doc = (await (await s.get('/openapi.json')).json()) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
    for (const path of [V1, V2]) expect(doc.paths[path]?.post?.requestBody).toBeDefined();
  });

  it('requires an API key', async () => {
    const r = await fetch(s.base + V2, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(v2([user('hi')])) });
    expect(r.status).toBe(401);
  });
});

describe('V1 chat', () => {
  it('V1 entries, the assistant labelled calm when the reply is unmarked, no conversationMode', async () => {
    llm.enqueue({ kind: 'reply', content: 'The train leaves at 10:15 from platform 4.' });
    const r = await s.post(V1, v1([user('I am so excited for my trip tomorrow!')], { model_params: { temperature: 0.7, max_tokens: 64 } }));
    expect(r.status).toBe(200);
    const j = (await r.json()) as Record<string, any>;
    expect(j.object).toBe('chat.completion');
    expect(j.emotion_model).toBe('emotion-v1');
    expect(j.conversationMode).toBeUndefined();
    expect(Object.keys(j.emotions.user).sort()).toEqual(['category', 'raw', 'text']);
    expect(j.emotions.assistant).toMatchObject({ category: 'calm', text: 'calm' });
    expect(Object.keys(j.emotions.assistant.raw).sort()).toEqual([...EMOTIONS].sort());
    expect(Object.keys(j.usage).sort()).toEqual(['analyse_tokens', 'completion_tokens', 'prompt_tokens', 'total_tokens']);
    expect(j.usage.total_tokens).toBe(j.usage.prompt_tokens + j.usage.completion_tokens);
    expect(llm.last!.body).toMatchObject({ temperature: 0.7, max_tokens: 64 });
  });

  it('applies thresholds to the dominant category', async () => {
    const body = (thresholds: unknown) => v1([user('I am so happy today')], { emotion_model_params: { thresholds }, emotion_guidance: false });
    const free = (await (await s.post(V1, body({}))).json()) as Record<string, any>;
    const top = free.emotions.user.category as string;
    const raw = free.emotions.user.raw as Record<string, number>;
    const blocked = (await (await s.post(V1, body({ [top]: Math.min(1, raw[top]! + 0.01) }))).json()) as Record<string, any>;
    expect(blocked.emotions.user.category).not.toBe(top);
  });
});

describe('memory', () => {
  it('with context_id, the turn joins the context: the emotion endpoints see it and the trajectory builds up', async () => {
    const id = `chat-ctx-${Date.now()}`;
    let r = await s.post(V2, v2([user('I am feeling a bit down today')], { context_id: id }));
    expect(r.status).toBe(200);
    let j = (await r.json()) as Record<string, any>;
    // One message of the user's is no trend yet; the reply stored beside it does not make one.
    expect(j.trajectory.trend).toEqual({ direction: 'stable', valenceTrend: 0 });
    let state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.baseline.messageCount).toBe(2); // user + assistant
    r = await s.post(V2, v2([user('I am feeling a bit down today'), { role: 'assistant', content: 'I am sorry.' }, user('Thanks, I feel much better now!')], { context_id: id }));
    j = (await r.json()) as Record<string, any>;
    state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.baseline.messageCount).toBe(4);
    expect(j.trajectory.trend.direction).toBe('improving');
    expect(state.trajectory.trend).toEqual(j.trajectory.trend);
  });

  it("the trajectory and state follow the user's messages, not the replies stored between them", async () => {
    const id = `chat-user-trend-${Date.now()}`;
    const said = ['I feel so sad and alone today', 'Nothing is getting better, I still feel hopeless', 'I am so tired and sad, I cried all night'];
    let j: Record<string, any> = {};
    for (const text of said) {
      llm.enqueue({ kind: 'reply', content: 'I am so happy to help you today! That sounds wonderful.' });
      j = (await (await s.post(V2, v2([user(text)], { context_id: id }))).json()) as Record<string, any>;
      // What makes this a test: each sad message gets a cheerful reply, so over every stored message the
      // valence swings by about 0.9 each step, which reads as volatile.
      expect(j.emotions.user.valence).toBeLessThan(-0.2);
      expect(j.emotions.assistant.valence).toBeGreaterThan(0.3);
    }
    expect(j.trajectory.trend.direction).toBe('stable');
    expect(Math.abs(j.trajectory.trend.valenceTrend)).toBeLessThan(0.15);
    const state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.trend).toEqual(j.trajectory.trend);
    expect(state.trajectory.baseline.messageCount).toBe(6);
    // The state and the baseline are the user's too: sad, where the replies would have pulled them positive.
    expect(state.trajectory.baseline.baselineValence).toBeLessThan(-0.2);
    expect(state.trajectory.baseline.dominantCategory).toBe('sadness');
    expect(state.emotions.system.valence).toBeLessThan(-0.2);
  });

  it('a tool-result continuation does not store the same user message twice', async () => {
    // The second text holds a lone surrogate, stored as U+FFFD: the continuation must still find it.
    for (const [n, text] of ['Look this up', 'Look \ud83d this up'].entries()) {
      const id = `chat-tools-${n}-${Date.now()}`;
      llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] });
      await s.post(V2, v2([user(text)], { context_id: id, tools: [{ type: 'function', function: { name: 'f' } }] }));
      const r = await s.post(V2, v2([
        user(text),
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'found' },
      ], { context_id: id, tools: [{ type: 'function', function: { name: 'f' } }] }));
      expect(((await r.json()) as Record<string, any>).emotions.user.text).toBe(text.toWellFormed());
      const state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
      expect(state.trajectory.baseline.messageCount, text).toBe(2); // the user once, the second turn's text reply once
    }
  });

  // A chat review: a user message followed by a system message or a prefill was not stored, so a new
  // context's state was the reply's mood (joy) where the user was heartbroken.
  it("the user's message is stored when only system messages or a prefill follow it, or a continuation's context lacks it", async () => {
    const sad = 'I am heartbroken, my partner left me';
    const cases: Array<[string, unknown[]]> = [
      ['system', [user(sad), { role: 'system', content: 'Answer in one sentence.' }]],
      ['prefill', [user(sad), { role: 'assistant', content: 'I am so happy' }]],
      ['continuation', [
        user(sad),
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'found' },
      ]],
    ];
    for (const [name, messages] of cases) {
      const id = `chat-user-stored-${name}-${Date.now()}`;
      llm.enqueue({ kind: 'reply', content: 'I am so happy to help you today! That sounds wonderful.' });
      const r = await s.post(V2, v2(messages, { context_id: id, tools: [{ type: 'function', function: { name: 'f' } }] }));
      expect(r.status, name).toBe(200);
      const state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
      expect(state.trajectory.baseline.messageCount, name).toBe(2);
      expect(state.emotions.system.category, name).toBe('sadness');
    }
    // A reply before the last message answered the user in an earlier turn: stored then, not again.
    const id = `chat-user-answered-${Date.now()}`;
    llm.enqueue({ kind: 'reply', content: 'I am sorry.' }, { kind: 'reply', content: 'Noted.' });
    await s.post(V2, v2([user(sad)], { context_id: id }));
    await s.post(V2, v2([user(sad), { role: 'assistant', content: 'I am sorry.' }, { role: 'system', content: 'Be brief.' }], { context_id: id }));
    const state = (await (await s.get(`/v2/emotions/${id}`)).json()) as Record<string, any>;
    expect(state.trajectory.baseline.messageCount).toBe(3);
  });

  it('V1 smoothing blends the reported user emotion towards the context state', async () => {
    const id = `chat-smooth-${Date.now()}`;
    const first = (await (await s.post(V1, v1([user('I am absolutely furious and disgusted')], { context_id: id, emotion_guidance: false }))).json()) as Record<string, any>;
    const text = 'What a lovely, happy, wonderful day!';
    const plain = (await (await s.post(V1, v1([user(text)], { emotion_guidance: false }))).json()) as Record<string, any>;
    const smoothed = (await (await s.post(V1, v1([user(text)], { context_id: id, emotion_model_params: { smoothing: 0.9 }, emotion_guidance: false }))).json()) as Record<string, any>;
    // (1 − s)·current + s·state, the state being the context's one user message (the reply stored beside it
    // is not the user's): an asymmetric s, so that swapped weights would show.
    for (const k of ['anger', 'joy', 'sadness']) {
      expect(smoothed.emotions.user.raw[k], k).toBeCloseTo(0.1 * plain.emotions.user.raw[k] + 0.9 * first.emotions.user.raw[k], 4);
    }
    expect(Math.abs(plain.emotions.user.raw.joy - first.emotions.user.raw.joy)).toBeGreaterThan(0.3);
  });

  it('an earlier crisis message in the context keeps crisis_intervention for the next turns', async () => {
    const id = `chat-crisis-${Date.now()}`;
    let j = (await (await s.post(V2, v2([user('I want to end it all')], { context_id: id }))).json()) as Record<string, any>;
    expect(j.conversationMode.mode).toBe('crisis_intervention');
    j = (await (await s.post(V2, v2([user('ok')], { context_id: id }))).json()) as Record<string, any>;
    expect(j.conversationMode.mode).toBe('crisis_intervention');
    expect(j.conversationMode.confidence).toBeLessThan(0.95);
  });

  // Three faults an outside probe found (2026-11-26), each of which let a crisis go unanswered or linger.
  describe('crisis signals across turns', () => {
    const mode = async (messages: unknown[], extra: Record<string, unknown> = {}) =>
      ((await (await s.post(V2, v2(messages, extra))).json()) as Record<string, any>).conversationMode as { mode: string; confidence: number };
    // A third-tier phrase: a crisis only when the emotion model reads the message as distressed or flat.
    const roof = 'I am on the roof right now';

    it('smoothing (how scores are shown) does not move a crisis message out of the crisis rules', async () => {
      const id = `chat-roof-smooth-${Date.now()}`;
      for (const t of ['What a wonderful day, I love it!', 'I am so happy and grateful', 'Best news ever, we won!']) await mode([user(t)], { context_id: id });
      expect((await mode([user(roof)])).mode).toBe('crisis_intervention');
      const smoothed = await mode([user(roof)], { context_id: id, emotion_model_params: { smoothing: 0.8 } });
      expect(smoothed.mode).toBe('crisis_intervention');
    });

    it('a third-tier crisis said earlier is judged as it was said, and decays', async () => {
      const first = await mode([user(roof)]);
      expect(first.mode).toBe('crisis_intervention');
      // As the request's own history (scored again here) and from a context (its stored scores).
      const fromHistory = await mode([user(roof), { role: 'assistant', content: 'I am here with you.' }, user('ok')]);
      expect(fromHistory).toMatchObject({ mode: 'crisis_intervention', confidence: Math.round(first.confidence * 0.9 * 100) / 100 });
      const id = `chat-roof-ctx-${Date.now()}`;
      await mode([user(roof)], { context_id: id });
      expect(await mode([user('ok')], { context_id: id })).toMatchObject({ mode: 'crisis_intervention', confidence: fromHistory.confidence });
    });

    it('long messages, read on the reading thread once it is up, count as short ones read on the loop: the latest, the history, the context', async () => {
      const day = 'We spent the afternoon sorting old photos and talking about the summer at the lake. '.repeat(8);
      const crisis = `${day}I want to end it all tonight.`;
      // The first long turn is read on the loop while it starts the thread.
      expect((await mode([user(crisis)])).mode).toBe('crisis_intervention');
      const ready = Date.now() + 10_000;
      while (!s.logs.some((l) => l.includes('text reading thread ready')) && Date.now() < ready) await new Promise((r) => setTimeout(r, 50));
      expect(s.logs.some((l) => l.includes('text reading thread ready'))).toBe(true);
      expect((await mode([user(crisis)])).mode).toBe('crisis_intervention');
      expect((await mode([user(day)])).mode).not.toBe('crisis_intervention');
      expect((await mode([user(crisis), { role: 'assistant', content: 'I am here with you.' }, user('ok')])).mode).toBe('crisis_intervention');
      const id = `chat-long-ctx-${Date.now()}`;
      await mode([user(crisis)], { context_id: id });
      expect((await mode([user('ok')], { context_id: id })).mode).toBe('crisis_intervention');
    });

    it('the same short reply said again counts as a message said since: the mode returns to normal after three', async () => {
      const id = `chat-ok-ok-${Date.now()}`;
      expect((await mode([user('I want to end it all')], { context_id: id })).mode).toBe('crisis_intervention');
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) seen.push((await mode([user('ok')], { context_id: id })).mode);
      expect(seen).toEqual(['crisis_intervention', 'crisis_intervention', 'crisis_intervention', seen[3]]);
      expect(seen[3]).not.toBe('crisis_intervention');
    });
  });
});

describe('upstream failures', () => {
  it('429 → 429 upstream_rate_limited with the upstream Retry-After', async () => {
    llm.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(await errorOf(r)).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' });
  });

  it('an upstream Retry-After is passed on as whole seconds within [1, 86400]', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'retry-after': '99999999999999999999999' }, '86400'],
      [{ 'retry-after': new Date(Date.now() + 90_000).toUTCString() }, ''],
      [{ 'retry-after-ms': '1500' }, '2'],
      [{ 'retry-after': '0' }, '1'],
      [{ 'retry-after': 'soon' }, '1'],
    ];
    for (const [headers, want] of cases) {
      llm.enqueue({ kind: 'status', status: 429, headers });
      const r = await s.post(V2, v2([user('hi')]));
      expect(r.status).toBe(429);
      const got = r.headers.get('retry-after') ?? '';
      if (want) {
        expect(got, JSON.stringify(headers)).toBe(want);
      } else {
        // An HTTP date 90 s ahead (whole seconds): 88–91 s left once it arrives.
        expect(Number(got)).toBeGreaterThanOrEqual(88);
        expect(Number(got)).toBeLessThanOrEqual(91);
      }
      await r.text();
    }
  });

  it('500 → 502 upstream_error (with a 503\'s Retry-After); 400 → 400 upstream_rejected with the upstream message', async () => {
    llm.enqueue({ kind: 'status', status: 500 });
    let r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(502);
    expect(r.headers.get('retry-after')).toBeNull();
    // the user's message was scored all the same: its tokens are counted (they were lost with the reply)
    s.sentio.logger.flush();
    await new Promise((res) => setTimeout(res, 50));
    const line = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'request' && l['request_id'] === r.headers.get('x-request-id'));
    expect(line).toMatchObject({ status: 502, analysed_tokens: 2 }); // [CLS] and "hi"
    expect(await errorOf(r)).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    // Refusals of Sentio's own upstream account reach the caller without the upstream's text, which names
    // the account: part of the key, the internal model name, the organisation.
    for (const [status, message] of [[401, 'Incorrect API key provided: sk-upstr*******cret'], [404, 'The model `kimi-k2-upstream` does not exist'],
      [429, 'Rate limit reached for kimi-k2-upstream in organization org-sentio-internal'], [500, 'worker gpu-7 at 10.0.0.12 crashed']] as const) {
      llm.enqueue({ kind: 'status', status, body: { error: { message } } });
      r = await s.post(V2, v2([user('hi')]));
      const text = await r.text();
      expect(r.status, String(status)).toBe(status === 429 ? 429 : 502);
      for (const secret of ['sk-upstr', 'kimi-k2-upstream', 'org-sentio', 'gpu-7']) expect(text, String(status)).not.toContain(secret);
    }
    // An upstream that says when to come back has that passed on.
    llm.enqueue({ kind: 'status', status: 503, headers: { 'retry-after': '30' } });
    r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(502);
    expect(r.headers.get('retry-after')).toBe('30');
    expect(await errorOf(r)).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    llm.enqueue({ kind: 'status', status: 400, body: { error: { message: 'max_tokens is too large for this model' } } });
    r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(400);
    const e = await errorOf(r);
    expect(e.code).toBe('upstream_rejected');
    expect(e.message).toContain('max_tokens is too large');
  });

  it('every upstream status maps as docs/errors.md says: 408/504 → 504, 413/422 → 400, 403 → 502', async () => {
    for (const [status, want, code] of [
      [408, 504, 'upstream_timeout'], [504, 504, 'upstream_timeout'],
      [413, 400, 'upstream_rejected'], [422, 400, 'upstream_rejected'],
      [403, 502, 'upstream_error'], [502, 502, 'upstream_error'],
    ] as const) {
      llm.enqueue({ kind: 'status', status });
      const r = await s.post(V2, v2([user('hi')]));
      expect(r.status, String(status)).toBe(want);
      expect((await errorOf(r)).code, String(status)).toBe(code);
    }
  });

  it('a hanging upstream → 504 upstream_timeout after SENTIO_LLM_TIMEOUT_MS, and the upstream request is dropped', async () => {
    llm.enqueue({ kind: 'hang' });
    const t0 = performance.now();
    const r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(504);
    expect(await errorOf(r)).toMatchObject({ code: 'upstream_timeout' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(450);
    await llm.settled(llm.last!);
    expect(llm.last!.closedEarly).toBe(true);
  });

  it('a connection that dies → 502', async () => {
    llm.enqueue({ kind: 'die', afterChunks: 0 });
    const r = await s.post(V2, v2([user('hi')]));
    expect(r.status).toBe(502);
    expect(await errorOf(r)).toMatchObject({ code: 'upstream_error' });
  });

  it('the modes chosen reach /metrics, crisis signals by kind, each series there from the start', async () => {
    const read = async () => {
      const text = await (await s.get('/metrics')).text();
      const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
      return {
        crisis: value('sentio_chat_conversation_modes_total{mode="crisis_intervention"}'),
        celebratory: value('sentio_chat_conversation_modes_total{mode="celebratory"}'),
        intent: value('sentio_chat_crisis_signals_total{kind="suicidal_intent"}'),
        thirdParty: value('sentio_chat_crisis_signals_total{kind="third_party"}'),
      };
    };
    const before = await read();
    expect(Number.isFinite(before.thirdParty)).toBe(true); // a series with no turn behind it yet
    expect((await s.post(V2, v2([user('I want to kill myself tonight')]))).status).toBe(200);
    expect((await s.post(V1, v1([user('We just got engaged!! I am so happy')]))).status).toBe(200);
    const after = await read();
    expect(after.crisis - before.crisis).toBe(1);
    expect(after.intent - before.intent).toBe(1);
    expect(after.celebratory - before.celebratory).toBe(1);
    expect(after.thirdParty).toBe(before.thirdParty);
  });

  it('upstream latency and failures reach /metrics', async () => {
    // Its own traffic: one success, one 429 and one timeout (the counts it reads do not rest on other tests).
    const count = (text: string, series: RegExp) => Number(series.exec(text)?.[1] ?? 0);
    const ok = /^sentio_llm_request_duration_seconds_count\{model="llm-k2-thinking-turbo",stream="false",outcome="ok"\} (\d+)$/m;
    const limited = /^sentio_llm_errors_total\{kind="upstream_rate_limited"\} (\d+)$/m;
    const timedOut = /^sentio_llm_errors_total\{kind="upstream_timeout"\} (\d+)$/m;
    const before = await (await s.get('/metrics')).text();
    expect((await s.post(V2, v2([user('hi')]))).status).toBe(200);
    llm.enqueue({ kind: 'status', status: 429 });
    expect((await s.post(V2, v2([user('hi')]))).status).toBe(429);
    llm.enqueue({ kind: 'hang' });
    expect((await s.post(V2, v2([user('hi')]))).status).toBe(504);
    const text = await (await s.get('/metrics')).text();
    expect(count(text, ok) - count(before, ok)).toBe(1);
    expect(count(text, limited) - count(before, limited)).toBe(1);
    expect(count(text, timedOut) - count(before, timedOut)).toBe(1);
    // The failed calls' time too, apart: an upstream that times out must not look fast.
    const failed = [...text.matchAll(/^sentio_llm_errors_total\{kind="[a-z_]+"\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    expect(failed).toBeGreaterThan(0);
    const observed = [...text.matchAll(/^sentio_llm_request_duration_seconds_count\{[^}]*outcome="error"[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    expect(observed).toBe(failed);
  });

  // With guidance off, a user analysis refused by a full engine queue aborts the upstream call, and that was
  // counted as an upstream failure (kind "overloaded"); so was a failure after a stream's last chunk.
  it("sentio_llm_errors_total counts the upstream's failures only, not Sentio's own", async () => {
    const t = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_QUEUE_MAX: '1', SENTIO_CHAT_GUIDANCE: 'false' });
    try {
      // Each kind has a series from the start, so that an alert on its rate sees the first failure.
      const fresh = await (await t.get('/metrics')).text();
      for (const kind of ['upstream_error', 'upstream_timeout', 'upstream_rate_limited']) expect(fresh).toContain(`sentio_llm_errors_total{kind="${kind}"} 0`);
      const chat = (stream: boolean) => t.post('/v2/chat/completions', {
        model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', stream, messages: [{ role: 'user', content: 'a sentence for the emotion model to read' }],
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 === 0)));
      const overloaded = results.filter((r) => r.status === 503 || r.body.includes('"overloaded"'));
      expect(overloaded.length, 'the queue limit of 1 refused none: the test would prove nothing').toBeGreaterThan(0);
      // A request the upstream refuses (400) is the caller's fault, answered 400 upstream_rejected: not counted either.
      llm.enqueue({ kind: 'status', status: 400, body: { error: { message: 'context too long' } } });
      expect((await chat(false)).status).toBe(400);
      const text = await (await t.get('/metrics')).text();
      expect(text).not.toMatch(/sentio_llm_errors_total\{kind="overloaded"\} [1-9]/);
      expect(text).not.toMatch(/sentio_llm_errors_total\{kind="upstream_rejected"\} [1-9]/);
    } finally {
      await t.close();
    }
  });

  // An upstream that closes idle keep-alive connections without saying when (uvicorn, vLLM: 5 s, no
  // Keep-Alive header) leaves Sentio's pool holding sockets it has closed. Here every second request on a
  // connection meets a closed socket, the way a request sent at the idle boundary does.
  it('a pooled connection the upstream has closed is not a 502: the request goes again, once, on a new connection', async () => {
    const connections: net.Socket[] = [];
    let poison = false;
    let requests = 0;
    const upstream = net.createServer((sock) => {
      connections.push(sock);
      let served = 0;
      let buffered = '';
      sock.on('data', (d) => {
        buffered += d.toString('latin1');
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = '';
        requests++;
        if (served++ > 0 || poison) {
          sock.destroy();
          return;
        }
        const body = JSON.stringify({
          id: 'c', object: 'chat.completion', created: 1, model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Glad to hear it.' }, finish_reason: 'stop' }],
        });
        sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const s2 = await startTestServer({ SENTIO_LLM_BASE_URL: `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}/v1` });
    const ok = async (r: Response) => {
      expect(r.status, await r.clone().text()).toBe(200);
      await r.text();
    };
    try {
      // Two at once on an empty pool: two connections, each served once, both back in the pool.
      for (const r of await Promise.all([0, 1].map(() => s2.post(V2, v2([user('I am happy today')]))))) await ok(r);
      expect(connections.length).toBe(2);
      // Each of the next two meets a closed pooled socket; its resend must not take the other pooled one,
      // closed as well, but a connection of its own.
      for (let i = 0; i < 2; i++) await ok(await s2.post(V2, v2([user('I am happy today')])));
      expect(connections.length).toBe(4);
      // The same failure from an upstream that read the request and died on it: sent twice, never more.
      await ok(await s2.post(V2, v2([user('I am happy today')]))); // a new pooled connection, served once
      poison = true;
      const before = requests;
      const r = await s2.post(V2, v2([user('I am happy today')]));
      expect(r.status).toBe(502);
      expect(requests - before).toBe(2);
    } finally {
      await s2.close();
      for (const c of connections) c.destroy();
      upstream.close();
    }
  });

  it('an unreachable upstream → 502; no upstream configured → 503 llm_not_configured', async () => {
    // Port 1 (tcpmux) is not served on loopback: a closed fake's port could be taken again meanwhile.
    const s2 = await startTestServer({ SENTIO_LLM_BASE_URL: 'http://127.0.0.1:1/v1' });
    try {
      const r = await s2.post(V2, v2([user('hi')]));
      expect(r.status).toBe(502);
      expect(await errorOf(r)).toMatchObject({ code: 'upstream_error' });
    } finally {
      await s2.close();
    }
    const s3 = await startTestServer({});
    try {
      for (const path of [V1, V2]) {
        const r = await s3.post(path, v2([user('hi')]));
        expect(r.status).toBe(503);
        expect(await errorOf(r)).toMatchObject({ type: 'service_unavailable_error', code: 'llm_not_configured' });
        const models = await s3.get(path.replace('/chat/completions', '/models'));
        expect(models.status).toBe(503);
        expect(await errorOf(models)).toMatchObject({ code: 'llm_not_configured' });
      }
      expect((await s3.post('/v2/emotions/analysis', { messages: [{ content: { text: 'fine' } }] })).status).toBe(200);
    } finally {
      await s3.close();
    }
  });
});
