/**
 * Chat request schemas (zod) for V1 and V2, and the parsing that turns a body into a ChatRequest:
 * limits first (cheap), then roles (400 invalid_role), then the schema, then model names.
 * Field by field: docs/chat.md.
 */
import { z } from 'zod';
import { AppError, tooManyMessages } from '../../errors.js';
import type { Limits } from '../../config.js';
import { EmotionParams } from '../schemas.js';
import { exceedsUtf8Bytes } from '../utf8.js';
import { parseOrThrow } from '../validate.js';
import { checkContextId, eqParamsOf, resolveEmotionModel, EMOTION_MODELS } from '../emotion-protocol.js';
import type { EntryShape } from '../entries.js';
import type { EqParams } from '../../core/eq.js';

/**
 * Sampling parameters passed to the LLM, with OpenAI's ranges. Null means not given, as in OpenAI's API:
 * its SDK types every one of them `T | null`, and frameworks built on it send the nulls.
 */
const SamplingParams = z
  .strictObject({
    temperature: z.number().min(0).max(2).nullish().describe('0..2'),
    max_tokens: z.number().int().min(1).max(1_000_000).nullish().describe('Most tokens to generate'),
    max_completion_tokens: z.number().int().min(1).max(1_000_000).nullish().describe('Most tokens to generate (OpenAI\'s newer name, passed on as given)'),
    top_p: z.number().gt(0).max(1).nullish().describe('(0, 1]'),
    frequency_penalty: z.number().min(-2).max(2).nullish().describe('-2..2'),
    presence_penalty: z.number().min(-2).max(2).nullish().describe('-2..2'),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(4)]).nullish().describe('Up to 4 stop sequences'),
    seed: z.number().int().nullish().describe('For reproducible sampling, where the upstream supports it'),
  });
export const ModelParams = SamplingParams.describe('Passed to the LLM');
/** What reaches the upstream: the parameters given, without the nulls. */
export type ModelParams = { [K in keyof z.infer<typeof SamplingParams>]?: Exclude<z.infer<typeof SamplingParams>[K], null> };
const MODEL_PARAM_NAMES = Object.keys(ModelParams.shape) as Array<keyof ModelParams>;

/** Deepest nesting accepted in the free-form JSON passed to the LLM: JSON.stringify recurses, and at
 * about 5,000 levels (a 10 KB body) it overflowed the stack, a 500 instead of a 400. */
const MAX_JSON_DEPTH = 64;

function nestedWithin(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return false;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
}

const FreeJson = z.unknown().refine((v) => nestedWithin(v, MAX_JSON_DEPTH), `nested deeper than ${MAX_JSON_DEPTH} levels`);
/**
 * A JSON object passed on as it came. zod's record and object types copy keys by assignment, which drops
 * a `__proto__` key (it sets the copy's prototype instead), so a tool's schema lost such a property.
 */
const FreeJsonObject = z.unknown().superRefine((v, ctx) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    ctx.addIssue({ code: 'invalid_type', expected: 'object', input: v, message: 'expected an object' });
  } else {
    for (const [key, child] of Object.entries(v)) {
      if (!nestedWithin(child, MAX_JSON_DEPTH)) ctx.addIssue({ code: 'custom', input: child, path: [key], message: `nested deeper than ${MAX_JSON_DEPTH} levels` });
    }
  }
}).meta({ type: 'object' }) as unknown as z.ZodType<Record<string, unknown>>;

const FunctionTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only'),
    description: z.string().optional(),
    parameters: FreeJsonObject.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: z.string().min(1) }) }),
]);
const ToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().min(1),
    arguments: z.string(),
    /** Added by the OpenAI SDK's tool helpers to the message they send back; not passed on. */
    parsed_arguments: FreeJson.optional(),
  }),
  /** A streamed call's position, kept by clients that assemble the deltas; not passed on. */
  index: z.number().int().min(0).optional(),
});

const name = z.string().min(1).max(64).optional();
const SystemMessage = z.strictObject({ role: z.literal('system'), content: z.string(), name });
const UserMessage = z.strictObject({ role: z.literal('user'), content: z.string(), name });
const V1AssistantMessage = z.strictObject({ role: z.literal('assistant'), content: z.string(), name });
const V2AssistantMessage = z
  .strictObject({
    role: z.literal('assistant'),
    content: z.string().nullable().optional(),
    name,
    // Empty or null as some upstreams (vLLM) return it, and clients send the message back as they got it.
    tool_calls: z.array(ToolCall).nullable().optional(),
    /** Thinking models return their reasoning apart (`reasoning_content`, newer vLLM `reasoning`); callers may send it back. */
    reasoning_content: z.string().nullable().optional(),
    reasoning: z.string().nullable().optional(),
    // Fields of OpenAI's and vLLM's response message that clients echo back.
    refusal: z.string().nullable().optional(),
    annotations: z.array(FreeJson).nullable().optional(),
    audio: FreeJson.optional(),
    /** OpenAI's older function calling, in place of tool_calls. */
    function_call: z.strictObject({ name: z.string().min(1), arguments: z.string() }).nullable().optional(),
    /** Added by the OpenAI SDK's `stream()` and `runTools()` helpers; not passed on. */
    parsed: FreeJson.optional(),
  })
  // A refusal comes back with content null, and a chat loop appends it to the history as it came.
  .refine((m) => typeof m.content === 'string' || (m.tool_calls?.length ?? 0) > 0 || Boolean(m.function_call) || typeof m.refusal === 'string', {
    message: 'an assistant message needs content, tool_calls or a refusal',
    path: ['content'],
  });
type V2Assistant = z.infer<typeof V2AssistantMessage>;
const ToolMessage = z.strictObject({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string().min(1) });

const V2Message = z.discriminatedUnion('role', [SystemMessage, UserMessage, V2AssistantMessage, ToolMessage]);
const V1Message = z.discriminatedUnion('role', [UserMessage, V1AssistantMessage]);
export type ChatMessage = z.infer<typeof V2Message> | z.infer<typeof V1Message>;

/**
 * An assistant message as the upstream gets it: what a client echoed back from a reply, less what only the
 * client's SDK added (`parsed`, `parsed_arguments`), a streamed call's `index`, and fields given as null,
 * so a strict upstream sees an ordinary history message.
 */
function forUpstream(m: ChatMessage): ChatMessage {
  if (m.role !== 'assistant') return m;
  const { parsed: _parsed, ...rest } = m as z.infer<typeof V2AssistantMessage>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== null || k === 'content') out[k] = v;
  if (Array.isArray(rest.tool_calls)) {
    out['tool_calls'] = rest.tool_calls.map(({ index: _index, function: { parsed_arguments: _args, ...fn }, ...call }) => ({ ...call, function: fn }));
  }
  return out as ChatMessage;
}

const chatRequest = <M extends z.ZodType>(message: M) =>
  z.strictObject({
    model: z.string().min(1).describe('Public LLM name (SENTIO_LLM_MODELS)'),
    emotion_model: z.string().min(1).describe('emotion-v2 or emotion-v1'),
    context_id: z.string().min(1).optional().describe('At most SENTIO_MAX_CONTEXT_ID_BYTES (128 by default) bytes; enables emotional memory'),
    messages: z.array(message).min(1),
    model_params: ModelParams.optional(),
    emotion_model_params: EmotionParams.optional(),
    stream: z.boolean().nullish(),
    stream_options: z.strictObject({ include_usage: z.boolean().nullish(), include_obfuscation: z.boolean().nullish() }).nullish()
      .describe('Not passed on. include_usage true: Sentio\'s fields come in a chunk of their own with no choices, after the finishing chunk (as OpenAI sends usage); otherwise on the finishing chunk. Chunks are not padded'),
    // null as absent, as for the model parameters: frameworks built on OpenAI's clients send the nulls.
    tools: z.array(FunctionTool).max(128).nullish(),
    tool_choice: ToolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    emotion_guidance: z.boolean().optional().describe('Sentio extension, default true: add the emotion-aware system instruction'),
    // OpenAI clients put sampling parameters at the top level; they are accepted there too.
    ...ModelParams.shape,
  });

export const V2ChatRequest = chatRequest(V2Message).describe('V2 chat completion request');
export const V1ChatRequest = chatRequest(V1Message).describe('V1 chat completion request');
type RawChatRequest = z.infer<typeof V2ChatRequest> | z.infer<typeof V1ChatRequest>;

/** What differs between /v1 and /v2 chat. */
export interface ChatDialect {
  version: 'v1' | 'v2';
  path: string;
  roles: readonly string[];
  schema: typeof V2ChatRequest | typeof V1ChatRequest;
  /** V2 reports conversationMode (and, with a context, the trajectory). */
  conversationMode: boolean;
}

export const v2Chat: ChatDialect = {
  version: 'v2',
  path: '/v2/chat/completions',
  roles: ['system', 'user', 'assistant', 'tool'],
  schema: V2ChatRequest,
  conversationMode: true,
};

export const v1Chat: ChatDialect = {
  version: 'v1',
  path: '/v1/chat/completions',
  roles: ['user', 'assistant'],
  schema: V1ChatRequest,
  conversationMode: false,
};

export interface ChatRequest {
  publicModel: string;
  upstreamModel: string;
  emotionModel: keyof typeof EMOTION_MODELS;
  shape: EntryShape;
  contextId: string | undefined;
  messages: ChatMessage[];
  /** Index in `messages` of the latest user message. */
  userIndex: number;
  /**
   * The latest user message is new in this request: no reply, tool call or tool result follows it, only
   * system messages or a last assistant message the upstream continues (a prefill).
   */
  userIsNew: boolean;
  modelParams: ModelParams;
  tools: NonNullable<RawChatRequest['tools']> | undefined;
  toolChoice: NonNullable<RawChatRequest['tool_choice']> | undefined;
  parallelToolCalls: boolean | undefined;
  stream: boolean;
  /**
   * stream_options.include_usage: the stream ends with a chunk of its own without choices (as OpenAI's usage
   * chunk), rather than with Sentio's fields on the finishing chunk, for clients that read choices[0] of every chunk.
   */
  usageChunk: boolean;
  guidance: boolean;
  eq: EqParams;
  smoothing: number;
  includeSubEmotions: boolean;
}

/** Count, size and role checks on the raw body, before the schema (so an oversized request costs little). */
function precheck(d: ChatDialect, body: Record<string, unknown>, limits: Limits): void {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return;
  if (messages.length > limits.chatMessages) {
    throw tooManyMessages(limits.chatMessages, messages.length, 'chat request');
  }
  messages.forEach((m: unknown, i) => {
    if (m === null || typeof m !== 'object') return;
    const role = (m as { role?: unknown }).role;
    if (typeof role === 'string' && !d.roles.includes(role)) {
      throw new AppError('invalid_role', `messages[${i}].role must be one of ${d.roles.join(', ')} (got "${role.slice(0, 32)}")`, { param: `messages[${i}].role` });
    }
    const content = (m as { content?: unknown }).content;
    if (typeof content === 'string' && exceedsUtf8Bytes(content, limits.messageBytes)) {
      throw new AppError('message_too_large', `messages[${i}].content exceeds ${limits.messageBytes} bytes`, { param: `messages[${i}].content` });
    }
  });
}

export function parseChatRequest(
  d: ChatDialect, body: Record<string, unknown>, limits: Limits, models: ReadonlyMap<string, string>, guidanceDefault: boolean,
): ChatRequest {
  precheck(d, body, limits);
  const req = parseOrThrow(d.schema, body) as RawChatRequest;
  const upstreamModel = models.get(req.model);
  if (upstreamModel === undefined) {
    const known = [...models.keys()].join(', ');
    throw new AppError('model_not_found', `unknown model "${req.model}"; available: ${known || 'none'}`, { param: 'model' });
  }
  const emotionModel = resolveEmotionModel(req.emotion_model, d.version, 'emotion_model');
  const contextId = req.context_id === undefined ? undefined : checkContextId(req.context_id, limits);

  const modelParams: Record<string, unknown> = {};
  for (const k of MODEL_PARAM_NAMES) {
    const inner = req.model_params?.[k] ?? undefined; // null is not given
    const top = req[k] ?? undefined;
    if (inner !== undefined && top !== undefined) {
      throw new AppError('invalid_value', `${k} is given both at the top level and in model_params; give it once`, { param: k });
    }
    if ((inner ?? top) !== undefined) modelParams[k] = inner ?? top;
  }

  let userIndex = -1;
  for (let i = req.messages.length - 1; i >= 0; i--) {
    if (req.messages[i]!.role === 'user') {
      userIndex = i;
      break;
    }
  }
  if (userIndex < 0) {
    throw new AppError('missing_field', 'messages must contain at least one user message', { param: 'messages' });
  }
  // A tool call, a tool result or a reply before the last message answered it: a continuation.
  const answered = req.messages.slice(userIndex + 1).some((m, j, after) => m.role === 'tool' || (m.role === 'assistant'
    && (j < after.length - 1 || ((m as V2Assistant).tool_calls?.length ?? 0) > 0 || Boolean((m as V2Assistant).function_call))));
  const params = req.emotion_model_params ?? {};
  return {
    publicModel: req.model,
    upstreamModel,
    emotionModel,
    shape: EMOTION_MODELS[emotionModel],
    contextId,
    messages: req.messages.map(forUpstream),
    userIndex,
    userIsNew: !answered,
    modelParams: modelParams as ModelParams,
    tools: req.tools ?? undefined,
    toolChoice: req.tool_choice ?? undefined,
    parallelToolCalls: req.parallel_tool_calls ?? undefined,
    stream: req.stream ?? false,
    usageChunk: req.stream_options?.include_usage === true,
    guidance: guidanceDefault && req.emotion_guidance !== false,
    eq: eqParamsOf(params),
    smoothing: params.smoothing ?? 0,
    includeSubEmotions: params.includeSubEmotions ?? false,
  };
}
