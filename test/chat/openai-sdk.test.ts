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
  usage: { prompt_tokens: number; completion_tokens: number; analyse_tokens: number };
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
      const c = chunk.choices[0];
      if (c?.delta.content) text += c.delta.content;
      if (c?.finish_reason) finish = c.finish_reason;
      last = chunk;
    }
    expect(text).toBe(DEFAULT_REPLY);
    expect(finish).toBe('stop');
    const extra = last as unknown as SentioExtras & { choices: unknown[] };
    expect(extra.choices).toEqual([]);
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
