/**
 * Response schemas (zod): the shapes the handlers build, published in /openapi.json so that a generated
 * client gets typed responses, and checked against real responses by test/http/responses.test.ts.
 * Objects Sentio builds are strict (a field added without its schema fails that test); what an upstream
 * LLM says (a choice's message) is passed through and only its known fields are described.
 * service-interface.md ("Emotion entry", "Emotions map", ...) and docs/api.md say what each field means.
 */
import { z } from 'zod';
import { EMOTIONS, SUB_EMOTIONS } from '../core/emotions.js';
import { CONVERSATION_MODES } from '../core/conversation-mode.js';
import { EmotionParams } from './schemas.js';
import { ERRORS } from '../errors.js';
import type { ErrorCode } from '../errors.js';

const unit = z.number().min(0).max(1);
const count = z.int().min(0);

const Raw = z
  .strictObject(Object.fromEntries(EMOTIONS.map((e) => [e, unit])) as Record<(typeof EMOTIONS)[number], typeof unit>)
  .describe('The six emotion probabilities, summing to 1 (unrounded)');
const SubEmotions = z
  .strictObject(Object.fromEntries(SUB_EMOTIONS.map((e) => [e, unit])) as Record<(typeof SUB_EMOTIONS)[number], typeof unit>)
  .describe('The 28 GoEmotions probabilities; only with params.includeSubEmotions');
const Category = z.enum(EMOTIONS).describe('The dominant emotion');
const Valence = z.number().min(-1).max(1);

const V1Entry = z.strictObject({
  text: z.string().describe('"<intensity word> <category>", e.g. "strong anger"'),
  category: Category,
  raw: Raw,
  subEmotions: SubEmotions.optional(),
});

const V2Entry = z.strictObject({
  category: Category,
  text: z.string().describe('The analysed text (several messages joined with a newline)'),
  raw: Raw,
  intensity: unit,
  intensityLevel: z.enum(['critical', 'high', 'moderate', 'subtle', 'minimal']),
  valence: Valence,
  arousal: unit,
  complexity: z.enum(['simple', 'layered', 'paradoxical', 'transcendent']),
  wonderIndex: unit,
  discoveryLevel: z.enum(['routine', 'normal', 'significant', 'breakthrough', 'transcendent']),
  subEmotions: SubEmotions.optional(),
});

/** V2 batch entries and the V2 stored state's `system` entry. */
const V2BriefEntry = z.strictObject({ category: Category, intensity: unit, valence: Valence, arousal: unit, subEmotions: SubEmotions.optional() });

/** `model` picks the entry's shape on either path version (docs/api.md). */
const Entry = z.union([V2Entry, V1Entry]);
const BatchEntry = z.union([V2BriefEntry, V1Entry]);
const Model = z.enum(['emotion-v1', 'emotion-v2']);

const Trend = z.strictObject({ direction: z.enum(['improving', 'declining', 'stable', 'volatile']), valenceTrend: z.number().min(-2).max(2) });

export function emotionResponses(version: 'v1' | 'v2') {
  const analysisObject = z.literal(version === 'v2' ? 'emotions.analysis' : 'emotions.analyse');
  const batchUsage = z.strictObject({ total_tokens: count, analyse_tokens: count });
  return {
    stateless: z.strictObject({ object: analysisObject, model: Model, emotions: z.strictObject({ _default: Entry }) }),
    context: z.strictObject({
      object: analysisObject,
      model: Model,
      metadata: z.strictObject({ context_id: z.string() }),
      emotions: z.strictObject({ user: Entry }),
      ...(version === 'v2' ? { trajectory: z.strictObject({ trend: Trend }) } : {}),
    }),
    state: z.strictObject({
      object: z.literal('emotions.state'),
      model: z.literal(`emotion-${version}`),
      // A GET takes no params: the stored state never carries sub-emotions.
      emotions: z.strictObject({ system: version === 'v2' ? V2BriefEntry.omit({ subEmotions: true }) : V1Entry.omit({ subEmotions: true }) }),
      ...(version === 'v2'
        ? {
          trajectory: z.strictObject({
            baseline: z.strictObject({
              averageIntensity: unit,
              baselineValence: Valence,
              averageArousal: unit,
              dominantCategory: Category,
              messageCount: count,
            }),
            trend: Trend,
          }),
        }
        : {}),
      metadata: z.strictObject({ context_id: z.string() }),
    }),
    message: z.strictObject({
      object: z.literal('emotions.state'),
      model: z.literal(`emotion-${version}`),
      metadata: z.strictObject({ context_id: z.string(), message_id: z.string() }),
      emotions: z.strictObject({ user: version === 'v2' ? V2Entry : V1Entry }),
    }),
    batch: version === 'v2'
      ? z.strictObject({ object: z.literal('emotions.batch_analysis'), model: Model, emotions: z.array(BatchEntry), usage: batchUsage })
      : z.strictObject({
        object: z.literal('emotions.batch_analyse'),
        model: Model,
        params: EmotionParams,
        emotions: z.array(BatchEntry),
        metadata: z.strictObject({}),
        usage: batchUsage,
      }),
  };
}

const ConversationMode = z.strictObject({
  mode: z.enum(CONVERSATION_MODES),
  confidence: unit,
  responseStrategy: z.strictObject({ tone: z.string(), approach: z.string() }),
});

/** The assistant's entry: V2 four fields and raw; V1 labelled `calm` when the reply carries no marked emotion (docs/chat.md). */
const AssistantEntry = z.union([
  z.strictObject({ category: Category, intensity: unit, valence: Valence, arousal: unit, raw: Raw, subEmotions: SubEmotions.optional() }),
  V1Entry.extend({
    category: z.enum([...EMOTIONS, 'calm']),
    text: z.string().describe('"calm", or "<intensity word> <category>", with " and <second emotion>" when one holds a quarter of raw'),
  }),
]);

const ChatEmotions = z.strictObject({
  user: Entry,
  assistant: AssistantEntry.optional().describe('Absent when the reply has no text (tool calls only)'),
});

const ChatUsage = z.strictObject({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count.describe('prompt_tokens + completion_tokens (the LLM\'s; analyse_tokens are apart)'),
  prompt_tokens_details: z.looseObject({}).optional().describe('The upstream\'s, as it gave it'),
  completion_tokens_details: z.looseObject({}).optional().describe('The upstream\'s, as it gave it (reasoning_tokens, ...)'),
  analyse_tokens: count,
});

/** Sentio's fields after the choices: the same in a completion and in a stream's last chunk. */
function chatTail(version: 'v1' | 'v2') {
  return {
    emotion_model: Model,
    emotions: ChatEmotions,
    ...(version === 'v2'
      ? { conversationMode: ConversationMode, trajectory: z.strictObject({ trend: Trend }).optional().describe('With context_id, once the context has a trend') }
      : {}),
    usage: ChatUsage,
  };
}

// What an upstream says is passed through, so these objects are open; the fields typed are the ones the
// upstream client checks (src/llm/client.ts, isChoice), a reply failing them being a 502.
const text = z.string().nullable().optional();
const ToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional().describe('"function"'),
  function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional().describe('JSON text, as the upstream wrote it') }).optional(),
});
/** A stream's piece of a tool call: the upstream's, where proxies (LiteLLM) send absent fields as null. */
const ToolCallPiece = z.looseObject({
  index: count.optional(),
  id: text,
  type: text,
  function: z.looseObject({ name: text, arguments: text }).optional(),
});
const AssistantMessage = z
  .looseObject({ role: z.literal('assistant'), content: text, tool_calls: z.array(ToolCall).nullable().optional() })
  .describe('The upstream\'s message, passed through: refusal, reasoning_content, annotations and the like as it gave them');
const Delta = z
  .looseObject({ role: text, content: text, tool_calls: z.array(ToolCallPiece).nullable().optional() })
  .describe('The upstream\'s delta, passed through: refusal, reasoning_content and the like as it gave them');

/** GET /v1/models and /v2/models: the public chat model names, in OpenAI's list shape. */
export const ModelList = z
  .strictObject({
    object: z.literal('list'),
    data: z.array(z.strictObject({
      id: z.string().describe('A public model name of SENTIO_LLM_MODELS, for chat\'s `model`'),
      object: z.literal('model'),
      created: z.int().describe('When this server started (Unix seconds)'),
      owned_by: z.literal('sentio'),
    })),
  })
  .describe('The chat models this server serves (SENTIO_LLM_MODELS), for OpenAI clients that list models');

export function chatResponses(version: 'v1' | 'v2') {
  const head = {
    id: z.string(),
    created: z.int(),
    model: z.string().describe('The public model name the request used'),
    system_fingerprint: z.string().nullable().optional().describe('The upstream\'s, when it gave one'),
    service_tier: z.string().nullable().optional().describe('The upstream\'s, when it gave one'),
  };
  const chunk = z
    .strictObject({
      ...head,
      object: z.literal('chat.completion.chunk'),
      choices: z.array(z.looseObject({ index: count.optional(), delta: Delta.optional(), logprobs: z.looseObject({}).nullable().optional(), finish_reason: z.string().nullable().optional() })),
      ...z.strictObject(chatTail(version)).partial().shape,
    })
    .describe('A chunk: the upstream\'s, relayed; the last one carries Sentio\'s fields, on the finishing chunk\'s choices, or with none when the request set stream_options.include_usage');
  return {
    completion: z.strictObject({
      ...head,
      object: z.literal('chat.completion'),
      choices: z.array(z.strictObject({
        index: count,
        message: AssistantMessage,
        logprobs: z.looseObject({}).nullable().describe('The upstream\'s, or null'),
        finish_reason: z.string().nullable().describe('The upstream\'s, or null where it gave none'),
      })),
      ...chatTail(version),
    }),
    chunk,
    /** What a `data:` event holds: a chunk, or the error that ends a stream once it has begun. */
    event: z.union([chunk, ErrorResponse])
      .describe('One data: event of a stream: the upstream\'s chunks relayed, the last with Sentio\'s fields (with include_usage, a chunk of its own with no choices), then [DONE]; an error after the stream began (the upstream failing, the server shutting down) is an Error body, then [DONE]'),
  };
}

export const HealthResponse = z.strictObject({ status: z.literal('ok') });
export const ReadyResponse = z.looseObject({ status: z.literal('ready') }).describe('With the engine\'s provider, model and threads');

/** Every error, in the decided shape (docs/errors.md); streamed chat sends it as an event once the stream has begun. */
export const ErrorResponse = z.strictObject({
  error: z.strictObject({
    type: z.enum([...new Set(Object.values(ERRORS).map((e) => e.type))] as [string, ...string[]]),
    code: z.enum(Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    param: z.string().optional(),
  }),
  request_id: z.string(),
});
