/**
 * The five emotion endpoints of one API version. The version's wire differences (paths, object names,
 * the message id field) come from its Dialect in api/v1 or api/v2 (parsed by emotion-protocol.ts); the
 * work is EmotionService's.
 */
import type { Limits } from '../config.js';
import type { EmotionService } from '../core/emotion-service.js';
import { round4 } from '../core/emotions.js';
import { batchCost, type ChargeRequest } from '../guard/rate-limit.js';
import type { RequestContext, Route } from '../http/server.js';
import { entryFor, trendOut, v1Entry, v2Brief } from './entries.js';
import { EMOTION_MODELS, checkContextId, checkExternalId, parseRequest, type Dialect, type EmotionModel } from './emotion-protocol.js';
import { emotionResponses } from './responses.js';

export interface EmotionRouteDeps {
  service: EmotionService;
  limits: Limits;
  /** The rate limit's charge for what a request costs beyond its admission (a batch's further tokens). */
  charge: ChargeRequest;
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
      method: 'post', pattern: d.paths.stateless, auth: true, maxMessages: limits.messages, requestSchema: d.schema, responseSchema: responses.stateless,
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
      method: 'post', pattern: d.paths.context, auth: true, maxMessages: limits.messages, requestSchema: d.schema, responseSchema: responses.context,
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
      method: 'post', pattern: d.paths.batch, auth: true, maxMessages: limits.batchMessages, requestSchema: d.schema, responseSchema: responses.batch,
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
