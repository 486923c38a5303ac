/**
 * Request schemas (zod). The same schemas validate requests and generate /openapi.json.
 * Objects are strict: an unknown field is a 400 naming it, rather than silently ignored.
 */
import { z } from 'zod';
import { EMOTIONS } from '../core/emotions.js';

const unit = z.number().min(0).max(1);

/** Emotion parameters; on emotion endpoints as `params`, in chat as `emotion_model_params`; all four on both versions (docs/api.md). */
export const EmotionParams = z
  .strictObject({
    sensitivity: unit.optional().describe('0..1, default 0.5. Bends the intensity curve: higher makes moderate signals read as more intense (intensity, intensityLevel, the V1 intensity word).'),
    includeSubEmotions: z.boolean().optional().describe('Default false. Adds the 28 sub-emotion probabilities to each entry.'),
    thresholds: z
      .union([unit, z.strictObject(Object.fromEntries(EMOTIONS.map((e) => [e, unit.optional()])) as Record<(typeof EMOTIONS)[number], z.ZodOptional<typeof unit>>)])
      .optional()
      .describe('A probability (all emotions) or a per-emotion map; the dominant category must reach it. raw is never changed.'),
    smoothing: unit.optional().describe('0..1, default 0. With a context, blends the reported scores with its state before this request.'),
  })
  .describe('Emotion analysis parameters');
export type EmotionParams = z.infer<typeof EmotionParams>;

const Role = z.enum(['user', 'assistant', 'system']);
const Content = z.strictObject({ text: z.string() });
// ISO 8601 with a zone, to the second or finer, or to the minute ("2026-11-26T10:00Z" is ISO 8601 too;
// zod's datetime takes one precision or the other, not both).
const TO_SECOND = z.iso.datetime({ offset: true });
const TO_MINUTE = z.iso.datetime({ offset: true, precision: -1 });
const Timestamp = z
  .string()
  // The shape, published in /openapi.json; the refine below also checks the calendar (no month 13).
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, { message: 'Invalid ISO datetime' })
  .refine((s) => TO_SECOND.safeParse(s).success || TO_MINUTE.safeParse(s).success, { message: 'Invalid ISO datetime' })
  // No `format: date-time`: that is RFC 3339, which needs the seconds this accepts without.
  .meta({ description: 'ISO 8601 date-time with a zone (Z or ±hh:mm), to the minute or finer, e.g. 2026-11-21T10:00Z' });

// "." and ".." are refused (400 invalid_value): URL clients remove such dot segments from a message's path.
const ExternalId = z.string().min(1).meta({ not: { enum: ['.', '..'] } });

export const V2Message = z.strictObject({
  role: Role.optional(),
  externalId: ExternalId.optional(),
  content: Content,
  timestamp: Timestamp.optional(),
});
export const V1Message = z.strictObject({
  role: Role.optional(),
  external_id: ExternalId.optional(),
  content: Content,
  timestamp: Timestamp.optional(),
});

const emotionRequest = <M extends z.ZodType>(message: M) =>
  z.strictObject({
    model: z.string().optional(),
    params: EmotionParams.optional(),
    messages: z.array(message).min(1),
  });

export const V2EmotionRequest = emotionRequest(V2Message);
export const V1EmotionRequest = emotionRequest(V1Message);
export type V2EmotionRequest = z.infer<typeof V2EmotionRequest>;
export type V1EmotionRequest = z.infer<typeof V1EmotionRequest>;
