/**
 * Idempotency-Key on POST (DECISIONS.md "Idempotency"): scoped per API key, kept as long as contexts.
 * The first request with a key claims it; a retry with the same key and byte-identical body (same
 * method and path) gets the stored response with `Idempotent-Replayed: true`; a different body is 422;
 * a retry while the first still runs is 409. Only successful responses are stored: a request that
 * failed ran to no effect and may be retried with the same key.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from '../errors.js';
import type { Middleware, Reply } from '../http/server.js';
import type { SseStream } from '../http/sse.js';

export type StoredReply =
  | { kind: 'json'; status: number; body: string; headers: Record<string, string> }
  | { kind: 'stream'; events: string[] };

export type ClaimResult =
  | { outcome: 'claimed' }
  | { outcome: 'in_flight'; fingerprint: string }
  | { outcome: 'done'; fingerprint: string; reply: StoredReply };

/** Where idempotency records live: in process, or in Redis when instances share them. */
export interface IdempotencyStore {
  /** Atomically claim `scope` for a request with this fingerprint, or report what holds it. */
  claim(scope: string, fingerprint: string, ttlMs: number): Promise<ClaimResult>;
  complete(scope: string, fingerprint: string, reply: StoredReply, ttlMs: number): Promise<void>;
  release(scope: string): Promise<void>;
}

type Entry = { fingerprint: string; reply?: StoredReply };

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries: LRUCache<string, Entry>;

  /** `maxBytes` bounds the stored responses; the least recently used records go first. */
  constructor(maxBytes = 64 * 1024 * 1024) {
    this.#entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (e) => 256 + (e.reply ? replySize(e.reply) : 0),
      ttlAutopurge: false,
    });
  }

  async claim(scope: string, fingerprint: string, ttlMs: number): Promise<ClaimResult> {
    const e = this.#entries.get(scope);
    if (!e) {
      this.#entries.set(scope, { fingerprint }, { ttl: ttlMs });
      return { outcome: 'claimed' };
    }
    return e.reply ? { outcome: 'done', fingerprint: e.fingerprint, reply: e.reply } : { outcome: 'in_flight', fingerprint: e.fingerprint };
  }

  async complete(scope: string, fingerprint: string, reply: StoredReply, ttlMs: number): Promise<void> {
    this.#entries.set(scope, { fingerprint, reply }, { ttl: ttlMs });
  }

  async release(scope: string): Promise<void> {
    this.#entries.delete(scope);
  }
}

function replySize(r: StoredReply): number {
  return r.kind === 'json' ? r.body.length * 2 : r.events.reduce((n, e) => n + e.length * 2, 0);
}

const KEY_PATTERN = /^[\x21-\x7e]+$/; // visible ASCII

export function idempotencyMiddleware(opts: { store: IdempotencyStore; ttlMs: number; maxKeyBytes: number }): Middleware {
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
    const claim = await opts.store.claim(scope, fingerprint, opts.ttlMs);
    if (claim.outcome !== 'claimed') {
      if (claim.fingerprint !== fingerprint) {
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
      }
      if (claim.outcome === 'in_flight') {
        throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed', { headers: { 'retry-after': '1' } });
      }
      ctx.replyHeaders['idempotent-replayed'] = 'true';
      return replay(claim.reply);
    }
    let reply: Reply;
    try {
      reply = await next();
    } catch (err) {
      await opts.store.release(scope);
      throw err;
    }
    if ('stream' in reply) return recordStream(reply, (events) => opts.store.complete(scope, fingerprint, { kind: 'stream', events }, opts.ttlMs), () => opts.store.release(scope));
    if (reply.status >= 300) {
      await opts.store.release(scope);
      return reply;
    }
    const body = reply.rawBody ?? JSON.stringify(reply.body);
    // The work is done: if the record cannot be stored now (Redis lost mid-request), still answer it; the
    // in-flight claim then runs out with its lease and a retry runs again.
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

/** Pass the stream through while keeping a copy of its events; store it only if it ran to the end. */
function recordStream(reply: { stream: (sse: SseStream) => Promise<void> }, store: (events: string[]) => Promise<void>, release: () => Promise<void>): Reply {
  return {
    stream: async (sse) => {
      const events: string[] = [];
      sse.tap = (data) => events.push(data);
      try {
        await reply.stream(sse);
      } catch (err) {
        await release();
        throw err;
      }
      if (events.at(-1) === '[DONE]' && !events.some((e) => e.startsWith('{"error"'))) await store(events);
      else await release();
    },
  };
}
