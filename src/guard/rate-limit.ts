/**
 * Per-key token buckets. A key may spend its whole per-minute quota at once (capacity = RPM) and then
 * gets refilled at RPM/60 tokens a second. Weights: docs/security.md ("Rate limits").
 */
import { AppError } from '../errors.js';
import type { RequestContext } from '../http/server.js';
import type { RateLimitStore } from '../store/rate-limit-store.js';

/** Charges a request's whole cost in tokens, less what its admission took; 429 when the key lacks them. */
export type ChargeRequest = (ctx: RequestContext, cost: number) => Promise<void>;

export interface RateLimitOptions {
  store: RateLimitStore;
  defaultRpm: number;
  now?: () => number;
}

/** Tokens a request costs before its body is read: two for chat (it also spends upstream LLM time), else one. */
function admissionCost(ctx: RequestContext): number {
  return ctx.route.endsWith('/chat/completions') ? 2 : 1;
}

/** What a batch of `n` texts costs in all: one token per started 64 texts. */
export function batchCost(n: number): number {
  return Math.max(1, Math.ceil(n / 64));
}

/**
 * The per-key limit in two steps. `admit` charges admissionCost before the body is read, so a key past
 * its quota gets 429 without holding a connection slot or having a megabyte read and parsed. `charge`
 * takes what a request costs beyond that (a batch's further tokens), called by its handler once the body
 * has passed validation: a body that fails counts like any request, and a batch refused for its size is
 * answered 413, not 429 for tokens it could never spend.
 */
export function rateLimiter(opts: RateLimitOptions): {
  admit: (ctx: RequestContext) => Promise<void>;
  charge: ChargeRequest;
  /** Sets the key's RateLimit-* headers without charging (a 429 refused before its admission carries them too). */
  quota: (ctx: RequestContext) => Promise<void>;
} {
  const now = opts.now ?? Date.now;
  /** `weight`: what the whole request costs (a batch's charge takes it less what its admission took). */
  const take = async (ctx: RequestContext, cost: number, rpm: number, weight = cost): Promise<void> => {
    const refillPerMs = rpm / 60_000;
    const r = await opts.store.take(`rl:${ctx.key!.id}`, cost, rpm, refillPerMs, now());
    ctx.replyHeaders['ratelimit-limit'] = String(rpm);
    ctx.replyHeaders['ratelimit-remaining'] = String(Math.max(0, Math.floor(r.tokens)));
    ctx.replyHeaders['ratelimit-reset'] = String(Math.ceil((rpm - r.tokens) / refillPerMs / 1000));
    if (!r.allowed) {
      // Until the whole request fits: a batch refused at its charge has spent its admission token, and its
      // retry must pay that again (counting only the rest, a retry on the dot came back one token short).
      const retryAfter = Math.max(1, Math.ceil((weight - r.tokens) / refillPerMs / 1000));
      // Say what this request weighs: a client counting requests is otherwise told of a limit it has not reached.
      const counts = weight === 1 ? '' : ` (this request counts as ${weight}: docs/security.md, Rate limits)`;
      throw new AppError('rate_limit_exceeded', `rate limit of ${rpm} requests per minute exceeded${counts}; retry after ${retryAfter} s`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
  };
  const rpmOf = (ctx: RequestContext) => ctx.key!.rateLimitRpm ?? opts.defaultRpm;
  return {
    admit: async (ctx) => {
      if (!ctx.key) return;
      const rpm = rpmOf(ctx);
      await take(ctx, Math.min(admissionCost(ctx), rpm), rpm);
    },
    charge: async (ctx, cost) => {
      if (!ctx.key) return;
      const rpm = rpmOf(ctx);
      const rest = Math.min(cost, rpm) - Math.min(admissionCost(ctx), rpm);
      if (rest > 0) await take(ctx, rest, rpm, Math.min(cost, rpm));
    },
    quota: async (ctx) => {
      if (ctx.key) await take(ctx, 0, rpmOf(ctx));
    },
  };
}
