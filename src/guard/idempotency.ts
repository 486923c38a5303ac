/**
 * Idempotency-Key on POST (DECISIONS.md "Idempotency"): scoped per API key, kept as long as contexts.
 * The first request with a key claims it; a retry with the same key and byte-identical body (same
 * method and path) gets the stored response with `Idempotent-Replayed: true`; a different body is 422;
 * a retry while the first still runs is 409. Only successful responses are stored: a request that
 * failed ran to no effect and may be retried with the same key.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Middleware, Reply } from '../http/server.js';
import type { SseStream } from '../http/sse.js';
import type { ChargeRequest } from './rate-limit.js';
import { StreamRecord } from './stream-record.js';
import { replySize } from '../store/idempotency-store.js';
import type { IdempotencyStore, StoredReply } from '../store/idempotency-store.js';

const KEY_PATTERN = /^[\x21-\x7e]+$/; // visible ASCII

/** A replay costs a token per started 64 KiB of its reply (one for most), as the original batch cost one per 64 texts. */
const REPLAY_BYTES_PER_TOKEN = 65_536;

export function idempotencyMiddleware(opts: { store: IdempotencyStore; ttlMs: number; maxKeyBytes: number; charge?: ChargeRequest }): Middleware {
  return async (ctx, _body, raw, next) => {
    const idemKey = ctx.headers['idempotency-key'];
    if (ctx.method !== 'POST' || idemKey === undefined || !ctx.key) return next();
    if (idemKey.length > opts.maxKeyBytes || !KEY_PATTERN.test(idemKey)) {
      throw new AppError('idempotency_key_invalid', `Idempotency-Key must be 1 to ${opts.maxKeyBytes} visible ASCII characters`, { param: 'Idempotency-Key' });
    }
    const scope = `idem:${ctx.key.id}:${idemKey}`;
    const fingerprint = createHash('sha256')
      .update(`${ctx.method} ${ctx.route} ${JSON.stringify(ctx.params)}\n`)
      .update(raw ?? Buffer.alloc(0))
      .digest('hex');
    const claim = await opts.store.claim(scope, fingerprint);
    if (claim.outcome !== 'claimed') {
      if (claim.fingerprint !== fingerprint) {
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request (another body, or another path)');
      }
      if (claim.outcome === 'in_flight') {
        throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed', { headers: { 'retry-after': '1' } });
      }
      // A replay cost one token whatever its size: a 0.7 MB batch reply replayed to 590 connections that never
      // read held 240 MB for 16 s (security review). It now costs what its bytes weigh.
      await opts.charge?.(ctx, Math.ceil(replySize(claim.reply) / 2 / REPLAY_BYTES_PER_TOKEN));
      ctx.replyHeaders['idempotent-replayed'] = 'true';
      return replay(claim.reply);
    }
    // A write that fails (Redis lost mid-request) must not replace the request's own answer or error: the
    // Redis store sends it again once Redis is back, and until then a retry gets 409.
    const release = () => opts.store.release(scope).catch(() => undefined);
    // The same key and body always name the same effect: a retry after a failure carries the first try's token.
    ctx.idempotencyToken = createHash('sha256').update(`${scope}\n${fingerprint}`).digest('hex');
    let reply: Reply;
    let body: string;
    try {
      reply = await next();
      if ('stream' in reply) return recordStream(reply, (events) => opts.store.complete(scope, fingerprint, { kind: 'stream', events }, opts.ttlMs).catch(() => undefined), release);
      if (reply.status >= 300) {
        await release();
        return reply;
      }
      body = reply.rawBody ?? JSON.stringify(reply.body); // a reply that cannot be serialised failed too
    } catch (err) {
      await release();
      throw err;
    }
    // The work is done: if the record cannot be stored now, still answer it.
    await opts.store.complete(scope, fingerprint, { kind: 'json', status: reply.status, body, headers: reply.headers ?? {} }, opts.ttlMs)
      .catch(() => undefined);
    return { ...reply, rawBody: body };
  };
}

function replay(stored: StoredReply): Reply {
  if (stored.kind === 'json') return { status: stored.status, body: undefined, rawBody: stored.body, headers: stored.headers };
  return {
    stream: async (sse) => {
      for (const e of stored.events) await sse.send(e);
      sse.end();
    },
  };
}

/**
 * Pass the stream through while keeping a copy of its events (StreamRecord); store it only if it ran to
 * the end, and release the key if the copy grew too long to keep (a retry then runs again).
 */
function recordStream(reply: { stream: (sse: SseStream) => Promise<void> }, store: (events: string[]) => Promise<void>, release: () => Promise<void>): Reply {
  return {
    stream: async (sse) => {
      const record = new StreamRecord();
      sse.tap = (data) => record.add(data);
      try {
        await reply.stream(sse);
      } catch (err) {
        await release();
        throw err;
      }
      const recorded = record.events();
      if (recorded?.at(-1) === '[DONE]' && !recorded.some((e) => e.startsWith('{"error"'))) await store(recorded);
      else await release();
    },
  };
}
