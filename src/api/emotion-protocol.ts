/**
 * The emotion endpoints' protocol: the version's Dialect, model names, request parsing and the checks of
 * ids and limits (chat reads the same ids and params). emotion-routes.ts serves the endpoints with it.
 */
import type { z } from 'zod';
import { AppError, tooManyMessages } from '../errors.js';
import type { Limits } from '../config.js';
import type { MessageInput } from '../core/emotion-service.js';
import { DEFAULT_EQ_PARAMS, type EqParams } from '../core/eq.js';
import { EMOTIONS } from '../core/emotions.js';
import type { EntryShape } from './entries.js';
import type { EmotionParams, V1EmotionRequest, V2EmotionRequest } from './schemas.js';
import { exceedsUtf8Bytes } from './utf8.js';
import { parseOrThrow } from './validate.js';

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
export type EmotionModel = keyof typeof EMOTION_MODELS;

export interface ParsedRequest {
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
  checkNameable(id, 'context_id', 'context_id');
  return id;
}

/** An externalId, or a message id (an externalId or one Sentio gave), named `name` and reported as `param`. */
export function checkExternalId(id: string, limits: Limits, name: string, param: string): void {
  if (exceedsUtf8Bytes(id, limits.externalIdBytes)) {
    throw new AppError('external_id_too_long', `${name} exceeds ${limits.externalIdBytes} bytes`, { param });
  }
  checkNameable(id, name, param);
}

/**
 * Ids that a path cannot name are refused, as they would be stored and never read back: one with a lone
 * surrogate (JSON's "\ud800") has no UTF-8 form (a GET of its percent-encoding is 400, of U+FFFD another
 * id's 404), and "." and ".." are dot segments, which URL clients (fetch, browsers, curl) remove from a
 * path, percent-encoded too.
 */
function checkNameable(id: string, name: string, param: string): void {
  if (!id.isWellFormed()) throw new AppError('invalid_value', `${name} holds a lone surrogate (not Unicode text)`, { param });
  if (id === '.' || id === '..') throw new AppError('invalid_value', `${name} "${id}" is a dot segment, which URL clients remove from a path`, { param });
}

/** Count and size limits are checked before schema validation, so an oversized request costs nothing. */
function checkLimits(body: Record<string, unknown>, maxMessages: number, limits: Limits): void {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return;
  if (messages.length > maxMessages) {
    throw tooManyMessages(maxMessages, messages.length);
  }
  messages.forEach((m: unknown, i) => {
    const text = (m as { content?: { text?: unknown } } | null)?.content?.text;
    if (typeof text === 'string' && exceedsUtf8Bytes(text, limits.messageBytes)) {
      throw new AppError('message_too_large', `messages[${i}].content.text exceeds ${limits.messageBytes} bytes`, { param: `messages[${i}].content.text` });
    }
  });
}

export function parseRequest(d: Dialect, body: Record<string, unknown>, maxMessages: number, limits: Limits): ParsedRequest {
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
