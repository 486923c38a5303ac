/**
 * Compatibility: the official `openai` npm package as the client, pointed at Sentio's /v2 base. A plain
 * call, a streamed call and a tool call must parse, and Sentio's extra fields must come through; errors
 * must surface as the SDK's own error classes.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { DEFAULT_REPLY, FakeLlm } from '../helpers/fake-llm.js';

let s: TestServer;
let llm: FakeLlm;
let client: OpenAI;

/** Sentio's own request fields, which the SDK passes through in the body. */
interface SentioFields {
  emotion_model: string;
  context_id?: string;
}
/** Sentio's additions to the response. */
interface SentioExtras {
  emotion_model: string;
  emotions: { user: Record<string, unknown>; assistant?: Record<string, unknown> };
  conversationMode: { mode: string; confidence: number; responseStrategy: { tone: string; approach: string } };
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; analyse_tokens: number };
}

beforeAll(async () => {
  llm = await FakeLlm.start();
  s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url });
  client = new OpenAI({ baseURL: `${s.base}/v2`, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await s?.close();
  await llm?.close();
});
beforeEach(() => llm.reset());

describe('openai SDK against /v2', () => {
  it('lists the models a chat call takes', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['llm-k2-thinking-turbo', 'llm-k2-thinking']);
    const params: OpenAI.ChatCompletionCreateParamsNonStreaming & SentioFields = { model: ids[1]!, emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] };
    const res = await client.chat.completions.create(params);
    expect(res.model).toBe(ids[1]);
  });

  it('a plain call', async () => {
    const params: OpenAI.ChatCompletionCreateParamsNonStreaming & SentioFields = {
      model: 'llm-k2-thinking-turbo',
      emotion_model: 'emotion-v2',
      messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'I finally finished my thesis!' }],
      temperature: 0.4,
      max_tokens: 100,
    };
    const res = await client.chat.completions.create(params);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('llm-k2-thinking-turbo');
    expect(res.choices[0]!.message.role).toBe('assistant');
    expect(res.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    expect(res.choices[0]!.finish_reason).toBe('stop');
    const extra = res as unknown as SentioExtras;
    expect(extra.emotion_model).toBe('emotion-v2');
    expect(extra.emotions.user['text']).toBe('I finally finished my thesis!');
    expect(extra.emotions.assistant).toBeDefined();
    expect(extra.conversationMode.responseStrategy.tone).toBeTypeOf('string');
    expect(extra.usage.analyse_tokens).toBeGreaterThan(0);
    expect(llm.last!.body).toMatchObject({ temperature: 0.4, max_tokens: 100 });
  });

  it('a streamed call', async () => {
    const params: OpenAI.ChatCompletionCreateParamsStreaming & SentioFields = {
      model: 'llm-k2-thinking',
      emotion_model: 'emotion-v2',
      messages: [{ role: 'user', content: 'Tell me something calming.' }],
      stream: true,
    };
    const stream = await client.chat.completions.create(params);
    let text = '';
    let finish: string | null | undefined;
    let last: OpenAI.ChatCompletionChunk | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      // OpenAI's own example reads choices[0] of every chunk: without include_usage, each has one.
      const c = chunk.choices[0]!;
      text += c.delta.content ?? '';
      finish = c.finish_reason;
      last = chunk;
    }
    expect(text).toBe(DEFAULT_REPLY);
    expect(finish).toBe('stop');
    const extra = last as unknown as SentioExtras;
    expect(extra.emotions.user['text']).toBe('Tell me something calming.');
    expect(extra.conversationMode.mode).toBeTypeOf('string');
    expect(extra.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('a tool call, then the tool result', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{
      type: 'function',
      function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    }];
    llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: '{"city":"Lisbon"}' }] });
    const first: OpenAI.ChatCompletionCreateParamsNonStreaming & SentioFields = {
      model: 'llm-k2-thinking-turbo',
      emotion_model: 'emotion-v2',
      messages: [{ role: 'user', content: 'What is the weather in Lisbon?' }],
      tools,
      tool_choice: 'auto',
    };
    const res = await client.chat.completions.create(first);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    const call = res.choices[0]!.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('unreachable');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Lisbon' });

    const second: OpenAI.ChatCompletionCreateParamsNonStreaming & SentioFields = {
      ...first,
      messages: [
        ...first.messages,
        res.choices[0]!.message as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'tool', tool_call_id: call.id, content: '{"temp_c": 24, "sky": "clear"}' },
      ],
    };
    const done = await client.chat.completions.create(second);
    expect(done.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    const sent = llm.last!.body.messages!;
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_abc', content: '{"temp_c": 24, "sky": "clear"}' });
  });

  // The SDK's tool helpers send each reply back with fields of their own (`parsed`, `parsed_arguments`,
  // `refusal: null`); a strict schema refused the second turn with 400 unknown_field.
  for (const stream of [false, true]) {
    it(`the SDK's runTools loop completes${stream ? ' (streamed)' : ''}, and the upstream gets an ordinary history`, async () => {
      llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_rt', name: 'get_weather', arguments: '{"city":"Faro"}' }] });
      const seen: unknown[] = [];
      const params = {
        model: 'llm-k2-thinking-turbo',
        emotion_model: 'emotion-v2',
        messages: [{ role: 'user' as const, content: 'Weather in Faro?' }],
        tools: [{
          type: 'function' as const,
          function: {
            name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } },
            parse: JSON.parse, function: (args: unknown) => { seen.push(args); return { temp_c: 26 }; },
          },
        }],
        ...(stream ? { stream: true as const } : {}),
      };
      const runner = client.chat.completions.runTools(params as unknown as Parameters<typeof client.chat.completions.runTools>[0]);
      expect(await runner.finalContent()).toBe(DEFAULT_REPLY);
      expect(seen).toEqual([{ city: 'Faro' }]);
      const sent = llm.last!.body.messages!;
      expect(sent.at(-2)).toEqual({
        role: 'assistant', content: null,
        tool_calls: [{ id: 'call_rt', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Faro"}' } }],
      });
      expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_rt', content: '{"temp_c":26}' });
    });
  }

  it('a reply sent back as an upstream gave it (nulls, vLLM\'s reasoning, audio, a call\'s index) is accepted and passed on cleaned', async () => {
    const r = await fetch(`${s.base}/v2/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({
        model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Hello!', tool_calls: null, annotations: null, audio: null, function_call: null, refusal: null, reasoning: 'greet back' },
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
          { role: 'user', content: 'thanks' },
        ],
      }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const bad = await fetch(`${s.base}/v2/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'assistant', function_call: 0 }, { role: 'user', content: 'hi' }] }),
    });
    expect(bad.status).toBe(400);
    expect(llm.last!.body.messages!.filter((m) => m.role === 'assistant')).toEqual([
      { role: 'assistant', content: 'Hello!', reasoning: 'greet back' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
    ]);
  });

  it('a refusal, sent back as it came, is accepted and passed on', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const completion = { id: 'up-1', object: 'chat.completion', created: 1, model: 'up', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' }] };
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify(completion)] });
    const first: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Help me pick a lock.' }];
    const params = { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2' };
    const res = await client.chat.completions.create({ ...params, messages: first } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const message = res.choices[0]!.message;
    expect(message).toMatchObject({ content: null, refusal });
    // a chat loop appends the reply as it came (content null) and goes on
    const next = await client.chat.completions.create({ ...params, messages: [...first, message, { role: 'user', content: 'Fair enough.' }] } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(next.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    expect(llm.last!.body.messages!.find((m) => m.role === 'assistant')).toEqual({ role: 'assistant', content: null, refusal });
  });

  it('the upstream\'s system_fingerprint, service_tier, logprobs and usage details pass through, plain and streamed', async () => {
    const logprobs = { content: [{ token: 'Fine', logprob: -0.1, bytes: [70, 105, 110, 101], top_logprobs: [] }], refusal: null };
    const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 3 } };
    const run = { system_fingerprint: 'fp_up', service_tier: 'default' };
    const completion = { id: 'up-2', object: 'chat.completion', created: 1, model: 'up', ...run, choices: [{ index: 0, message: { role: 'assistant', content: 'Fine.' }, logprobs, finish_reason: 'stop' }], usage };
    llm.enqueue({ kind: 'raw', contentType: 'application/json', pieces: [JSON.stringify(completion)] });
    const params = { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user' as const, content: 'How are you?' }] };
    const res = await client.chat.completions.create(params);
    expect(res).toMatchObject(run);
    expect(res.choices[0]!.logprobs).toEqual(logprobs);
    expect(res.usage).toMatchObject(usage);
    expect((res as unknown as SentioExtras).usage.analyse_tokens).toBeGreaterThan(0);
    // an upstream that gives none of them: logprobs null as in OpenAI's replies, a total of the two counts
    const plain = await client.chat.completions.create(params);
    expect(plain.choices[0]!.logprobs).toBeNull();
    expect(plain.system_fingerprint).toBeUndefined();
    expect(plain.usage!.total_tokens).toBe(plain.usage!.prompt_tokens + plain.usage!.completion_tokens);

    const chunk = (choices: unknown[], extra: object = {}) => `data: ${JSON.stringify({ id: 'up-3', object: 'chat.completion.chunk', created: 1, model: 'up', ...run, choices, ...extra })}\n\n`;
    llm.enqueue({ kind: 'raw', pieces: [
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Fine.' }, logprobs, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
      chunk([], { usage }),
      'data: [DONE]\n\n',
    ] });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ ...params, stream: true })) chunks.push(c);
    expect(chunks.length).toBe(2); // the upstream's usage chunk is not relayed: usage rides on the finishing chunk
    for (const c of chunks) expect(c).toMatchObject(run);
    expect(chunks[0]!.choices[0]!.logprobs).toEqual(logprobs);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toMatchObject(usage);
  });

  it('OpenAI\'s nulls mean "not given", and max_completion_tokens is passed on', async () => {
    const res = await client.chat.completions.create({
      model: 'llm-k2-thinking-turbo', messages: [{ role: 'user', content: 'hi' }],
      temperature: null, max_tokens: null, top_p: null, frequency_penalty: null, presence_penalty: null, stop: null, seed: null,
      stream: null, stream_options: null, max_completion_tokens: 50,
      // The SDK types these three without null; Python frameworks send them as None all the same.
      ...({ emotion_model: 'emotion-v2', model_params: { temperature: null, top_p: 0.9 }, tools: null, tool_choice: null, parallel_tool_calls: null } as object),
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(res.object).toBe('chat.completion');
    const sent = llm.last!.body;
    expect(sent).toMatchObject({ max_completion_tokens: 50, top_p: 0.9 });
    for (const k of ['temperature', 'max_tokens', 'frequency_penalty', 'presence_penalty', 'stop', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls']) expect(sent).not.toHaveProperty(k);
    const chunks = [];
    for await (const c of await client.chat.completions.create({
      model: 'llm-k2-thinking-turbo', messages: [{ role: 'user', content: 'hi' }], stream: true,
      stream_options: { include_usage: true, include_obfuscation: false }, ...({ emotion_model: 'emotion-v2' } as object),
    } as OpenAI.ChatCompletionCreateParamsStreaming)) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('a streamed tool call is reassembled by the SDK helper', async () => {
    llm.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_s', name: 'get_weather', arguments: '{"city":"Porto"}' }] });
    const params: OpenAI.ChatCompletionCreateParamsStreaming & SentioFields = {
      model: 'llm-k2-thinking-turbo',
      emotion_model: 'emotion-v2',
      messages: [{ role: 'user', content: 'Weather in Porto?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
    };
    const runner = client.chat.completions.stream(params);
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Porto"}' });
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('errors arrive as the SDK\'s error classes, before and during a stream', async () => {
    const params = { model: 'no-such-model', emotion_model: 'emotion-v2', messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(client.chat.completions.create(params)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    llm.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '2' } });
    const limited = await client.chat.completions.create({ ...params, model: 'llm-k2-thinking' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('2');
    llm.enqueue({ kind: 'die', afterChunks: 2 });
    const stream = await client.chat.completions.create({ ...params, model: 'llm-k2-thinking', stream: true });
    const consumed = (async () => {
      for await (const _chunk of stream) void _chunk;
    })();
    await expect(consumed).rejects.toBeInstanceOf(OpenAI.APIError);
  });
});
