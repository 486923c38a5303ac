/**
 * The five emotion endpoints of one API version. The version's wire differences (paths, object names,
 * the message id field) come from its Dialect in api/v1 or api/v2; the work is EmotionService's.
 */
import type { z } from 'zod';
import { AppError } from '../errors.js';
import type { Limits } from '../config.js';
import type { EmotionService, MessageInput } from '../core/emotion-service.js';
import { DEFAULT_EQ_PARAMS, type EqParams } from '../core/eq.js';
import { EMOTIONS, round4 } from '../core/emotions.js';
import { batchCost, type ChargeRequest } from '../guard/rate-limit.js';
import type { RequestContext, Route } from '../http/server.js';
import { entryFor, v1Entry, v2Brief, type EntryShape } from './entries.js';
import type { EmotionParams, V1EmotionRequest, V2EmotionRequest } from './schemas.js';
import { exceedsUtf8Bytes } from './utf8.js';
import { parseOrThrow } from './validate.js';
import { emotionResponses } from './responses.js';

export interface Dialect {
  version: 'v1' | 'v2';
  paths: { stateless: string; context: string; state: string; message: string; batch: string };
  objects: { analysis: string; batch: string };
  schema: z.ZodType<V1EmotionRequest | V2EmotionRequest>;
  /** Name of the message id field, for `param` in errors. */
  externalIdField: 'external_id' | 'externalId';
  externalIdOf(message: V1EmotionRequest['messages'][number] | V2EmotionRequest['messages'][number]): string | undefined;
}

export const EMOTION_MODELS = { 'emotion-v1': 'v1', 'emotion-v2': 'v2' } as const satisfies Record<string, EntryShape>;
type EmotionModel = keyof typeof EMOTION_MODELS;

export interface EmotionRouteDeps {
  service: EmotionService;
  limits: Limits;
  /** The rate limit's charge for what a request costs beyond its admission (a batch's further tokens). */
  charge: ChargeRequest;
}

interface ParsedRequest {
  model: EmotionModel;
  shape: EntryShape;
  messages: MessageInput[];
  params: EmotionParams;
  eq: EqParams;
  smoothing: number;
  includeSubEmotions: boolean;
}

/** Resolve the model name: missing means the path's version, unknown is 400 invalid_model. */
export function resolveEmotionModel(model: string | undefined, version: 'v1' | 'v2', param = 'model'): EmotionModel {
  const name = model ?? `emotion-${version}`;
  if (!Object.hasOwn(EMOTION_MODELS, name)) {
    throw new AppError('invalid_model', `unknown emotion model "${name}"; use emotion-v1 or emotion-v2`, { param });
  }
  return name as EmotionModel;
}

export function eqParamsOf(params: EmotionParams | undefined): EqParams {
  const t = params?.thresholds;
  const thresholds = typeof t === 'number' ? Object.fromEntries(EMOTIONS.map((e) => [e, t])) : (t ?? {});
  return { sensitivity: params?.sensitivity ?? DEFAULT_EQ_PARAMS.sensitivity, thresholds };
}

export function checkContextId(id: string, limits: Limits): string {
  if (exceedsUtf8Bytes(id, limits.contextIdBytes)) {
    throw new AppError('context_id_too_long', `context_id exceeds ${limits.contextIdBytes} bytes`, { param: 'context_id' });
  }
  checkWellFormed(id, 'context_id', 'context_id');
  return id;
}

/** An externalId, or a message id (an externalId or one Sentio gave), named `name` and reported as `param`. */
function checkExternalId(id: string, limits: Limits, name: string, param: string): void {
  if (exceedsUtf8Bytes(id, limits.externalIdBytes)) {
    throw new AppError('external_id_too_long', `${name} exceeds ${limits.externalIdBytes} bytes`, { param });
  }
  checkWellFormed(id, name, param);
}

/**
 * An id with a lone surrogate (JSON's "\ud800") has no UTF-8 form, so no path can name it: it was stored
 * and could never be read back (a GET of its percent-encoding is 400, of U+FFFD another id's 404).
 */
function checkWellFormed(id: string, name: string, param: string): void {
  if (!id.isWellFormed()) throw new AppError('invalid_value', `${name} holds a lone surrogate (not Unicode text)`, { param });
}

/** Count and size limits are checked before schema validation, so an oversized request costs nothing. */
function checkLimits(body: Record<string, unknown>, maxMessages: number, limits: Limits): void {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return;
  if (messages.length > maxMessages) {
    throw new AppError('too_many_messages', `at most ${maxMessages} messages per request (got ${messages.length})`, { param: 'messages' });
  }
  messages.forEach((m: unknown, i) => {
    const text = (m as { content?: { text?: unknown } } | null)?.content?.text;
    if (typeof text === 'string' && exceedsUtf8Bytes(text, limits.messageBytes)) {
      throw new AppError('message_too_large', `messages[${i}].content.text exceeds ${limits.messageBytes} bytes`, { param: `messages[${i}].content.text` });
    }
  });
}

function parseRequest(d: Dialect, body: Record<string, unknown>, maxMessages: number, limits: Limits): ParsedRequest {
  checkLimits(body, maxMessages, limits);
  const req = parseOrThrow(d.schema, body);
  const model = resolveEmotionModel(req.model, d.version);
  const messages = req.messages.map((m, i): MessageInput => {
    const externalId = d.externalIdOf(m);
    if (externalId !== undefined) checkExternalId(externalId, limits, d.externalIdField, `messages[${i}].${d.externalIdField}`);
    return { role: m.role ?? 'user', text: m.content.text, externalId, timestamp: m.timestamp };
  });
  const params = req.params ?? {};
  return {
    model,
    shape: EMOTION_MODELS[model],
    messages,
    params,
    eq: eqParamsOf(params),
    smoothing: params.smoothing ?? 0,
    includeSubEmotions: params.includeSubEmotions ?? false,
  };
}

function tokensOf(ctx: RequestContext, n: number): number {
  ctx.analysedTokens += n;
  return n;
}

export function emotionRoutes(d: Dialect, deps: EmotionRouteDeps): Route[] {
  const { service, limits } = deps;
  const defaultModel: EmotionModel = `emotion-${d.version}`;
  const defaultShape = EMOTION_MODELS[defaultModel];
  const responses = emotionResponses(d.version);

  return [
    {
      method: 'post', pattern: d.paths.stateless, auth: true, requestSchema: d.schema, responseSchema: responses.stateless,
      summary: `Stateless analysis (${d.version})`,
      handler: async (ctx, body) => {
        const r = parseRequest(d, body!, limits.messages, limits);
        const a = await service.analyzeStateless(r.messages, { eq: r.eq, smoothing: 0 }, ctx.signal);
        tokensOf(ctx, a.scores.tokens);
        return {
          status: 200,
          body: { object: d.objects.analysis, model: r.model, emotions: { _default: entryFor(r.shape, a, r) } },
        };
      },
    },
    {
      method: 'post', pattern: d.paths.context, auth: true, requestSchema: d.schema, responseSchema: responses.context,
      summary: `Context-based analysis (${d.version})`,
      handler: async (ctx, body) => {
        const contextId = checkContextId(ctx.params[0]!, limits);
        const r = parseRequest(d, body!, limits.messages, limits);
        const a = await service.analyzeContext(contextId, r.messages, { eq: r.eq, smoothing: r.smoothing }, ctx.signal, ctx.idempotencyToken);
        tokensOf(ctx, a.scores.tokens);
        const out: Record<string, unknown> = {
          object: d.objects.analysis,
          model: r.model,
          metadata: { context_id: contextId },
          emotions: { user: entryFor(r.shape, a, r) },
        };
        if (d.version === 'v2') out['trajectory'] = { trend: trendOut(a.trend) };
        return { status: 200, body: out };
      },
    },
    {
      method: 'get', pattern: d.paths.state, auth: true, responseSchema: responses.state, summary: `Stored emotional state (${d.version})`,
      handler: async (ctx) => {
        const contextId = checkContextId(ctx.params[0]!, limits);
        const s = await service.getState(contextId);
        const out: Record<string, unknown> = { object: 'emotions.state', model: defaultModel };
        if (d.version === 'v2') {
          out['emotions'] = { system: v2Brief(s.system.eq) };
          out['trajectory'] = {
            baseline: {
              averageIntensity: round4(s.baseline.averageIntensity),
              baselineValence: round4(s.baseline.baselineValence),
              averageArousal: round4(s.baseline.averageArousal),
              dominantCategory: s.baseline.dominantCategory,
              messageCount: s.baseline.messageCount,
            },
            trend: trendOut(s.trend),
          };
        } else {
          out['emotions'] = { system: v1Entry(s.system) };
        }
        out['metadata'] = { context_id: contextId };
        return { status: 200, body: out };
      },
    },
    {
      method: 'get', pattern: d.paths.message, auth: true, responseSchema: responses.message, summary: `Emotions of one message (${d.version})`,
      handler: async (ctx) => {
        const contextId = checkContextId(ctx.params[0]!, limits);
        const messageId = ctx.params[1]!;
        checkExternalId(messageId, limits, 'message_id', 'message_id');
        const a = await service.getMessage(contextId, messageId);
        return {
          status: 200,
          body: {
            object: 'emotions.state',
            model: defaultModel,
            metadata: { context_id: contextId, message_id: messageId },
            emotions: { user: entryFor(defaultShape, a) },
          },
        };
      },
    },
    {
      method: 'post', pattern: d.paths.batch, auth: true, requestSchema: d.schema, responseSchema: responses.batch,
      summary: `Batch analysis (${d.version})`,
      handler: async (ctx, body) => {
        const r = parseRequest(d, body!, limits.batchMessages, limits);
        await deps.charge(ctx, batchCost(r.messages.length));
        const items = await service.analyzeBatch(r.messages, { eq: r.eq, smoothing: 0 }, ctx.signal);
        const tokens = tokensOf(ctx, items.reduce((n, a) => n + a.scores.tokens, 0));
        const usage = { total_tokens: tokens, analyse_tokens: tokens };
        const emotions = items.map((a) =>
          r.shape === 'v1' ? v1Entry(a, r) : { ...v2Brief(a.eq), ...(r.includeSubEmotions ? { subEmotions: entryFor('v2', a, r)['subEmotions'] } : {}) },
        );
        const out: Record<string, unknown> =
          d.version === 'v1'
            ? { object: d.objects.batch, model: r.model, params: r.params, emotions, metadata: {}, usage }
            : { object: d.objects.batch, model: r.model, emotions, usage };
        return { status: 200, body: out };
      },
    },
  ];
}

function trendOut(t: { direction: string; valenceTrend: number }): { direction: string; valenceTrend: number } {
  return { direction: t.direction, valenceTrend: round4(t.valenceTrend) };
}
