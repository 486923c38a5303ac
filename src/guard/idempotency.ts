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

export type StoredReply =
  | { kind: 'json'; status: number; body: string; headers: Record<string, string> }
  | { kind: 'stream'; events: string[] };

export type ClaimResult =
  | { outcome: 'claimed' }
  | { outcome: 'in_flight'; fingerprint: string }
  | { outcome: 'done'; fingerprint: string; reply: StoredReply };

/** Where idempotency records live: in process, or in Redis when instances share them. */
export interface IdempotencyStore {
  /**
   * Atomically claim `scope` for a request with this fingerprint, or report what holds it. A claim lives
   * until complete() or release(), or IN_FLIGHT_LEASE_MS if its holder never ends it.
   */
  claim(scope: string, fingerprint: string): Promise<ClaimResult>;
  complete(scope: string, fingerprint: string, reply: StoredReply, ttlMs: number): Promise<void>;
  release(scope: string): Promise<void>;
}

/** Longer than any request may run (body timeout, analysis, an upstream LLM stream). */
export const IN_FLIGHT_LEASE_MS = 15 * 60_000;

type Done = { fingerprint: string; reply: StoredReply; bytes: number };

/**
 * Finished records are bounded by bytes in all (`maxBytes`). When full, the API key holding the most bytes
 * loses its least recently used record: one tenant's volume pushes out its own records, not a quiet
 * tenant's. Claims of requests still running are kept apart and never evicted (an evicted claim let a
 * duplicate run a second time); there is one per request in flight, each ended by complete() or
 * release(), with a lease as the backstop.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #maxBytes: number;
  readonly #leaseMs: number;
  readonly #now: () => number;
  /** Finished records by API key id, then scope; each LRU map's first entry is its least recent. */
  readonly #done = new Map<string, Map<string, Done & { expires: number }>>();
  readonly #bytesByKey = new Map<string, number>();
  #bytes = 0;
  readonly #running = new Map<string, { fingerprint: string; expires: number }>();

  constructor(maxBytes = 64 * 1024 * 1024, opts: { inFlightLeaseMs?: number; now?: () => number } = {}) {
    this.#maxBytes = maxBytes;
    this.#leaseMs = opts.inFlightLeaseMs ?? IN_FLIGHT_LEASE_MS;
    this.#now = opts.now ?? Date.now;
  }

  async claim(scope: string, fingerprint: string): Promise<ClaimResult> {
    const now = this.#now();
    const owner = keyOf(scope);
    const records = this.#done.get(owner);
    const done = records?.get(scope);
    if (done && done.expires > now) {
      records!.delete(scope); // most recently used: to the back
      records!.set(scope, done);
      return { outcome: 'done', fingerprint: done.fingerprint, reply: done.reply };
    }
    if (done) this.#drop(owner, scope);
    const running = this.#running.get(scope);
    if (running && running.expires > now) return { outcome: 'in_flight', fingerprint: running.fingerprint };
    this.#running.set(scope, { fingerprint, expires: now + this.#leaseMs });
    return { outcome: 'claimed' };
  }

  async complete(scope: string, fingerprint: string, reply: StoredReply, ttlMs: number): Promise<void> {
    this.#running.delete(scope);
    const owner = keyOf(scope);
    // The record's objects and map entries (about 700 bytes measured), its scope and fingerprint strings
    // (UTF-16), and the reply: a reviewer measured 1.5 KB a small record where 256 + the reply counted 842.
    const bytes = 700 + 2 * (scope.length + fingerprint.length) + replySize(reply);
    if (bytes > this.#maxBytes) return;
    this.#drop(owner, scope);
    let records = this.#done.get(owner);
    if (!records) this.#done.set(owner, (records = new Map()));
    records.set(scope, { fingerprint, reply, bytes, expires: this.#now() + ttlMs });
    this.#bytesByKey.set(owner, (this.#bytesByKey.get(owner) ?? 0) + bytes);
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes) this.#evictFromLargest();
  }

  async release(scope: string): Promise<void> {
    this.#running.delete(scope);
  }

  #evictFromLargest(): void {
    let largest = '';
    let most = -1;
    for (const [owner, bytes] of this.#bytesByKey) if (bytes > most) [largest, most] = [owner, bytes];
    const oldest = this.#done.get(largest)?.keys().next().value;
    if (oldest !== undefined) this.#drop(largest, oldest);
  }

  #drop(owner: string, scope: string): void {
    const records = this.#done.get(owner);
    const r = records?.get(scope);
    if (!r) return;
    records!.delete(scope);
    this.#bytes -= r.bytes;
    const left = (this.#bytesByKey.get(owner) ?? 0) - r.bytes;
    if (records!.size === 0) {
      this.#done.delete(owner);
      this.#bytesByKey.delete(owner);
    } else this.#bytesByKey.set(owner, left);
  }
}

/** The API key id in a scope `idem:<key id>:<Idempotency-Key>` (key ids hold no colon). */
function keyOf(scope: string): string {
  return scope.slice(0, scope.indexOf(':', 5));
}

function replySize(r: StoredReply): number {
  return r.kind === 'json' ? r.body.length * 2 : r.events.reduce((n, e) => n + e.length * 2, 0);
}

const KEY_PATTERN = /^[\x21-\x7e]+$/; // visible ASCII

/** A replay costs a token per started 64 KiB of its reply (one for most), as the original batch cost one per 64 texts. */
export const REPLAY_BYTES_PER_TOKEN = 65_536;

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
    try {
      reply = await next();
    } catch (err) {
      await release();
      throw err;
    }
    if ('stream' in reply) return recordStream(reply, (events) => opts.store.complete(scope, fingerprint, { kind: 'stream', events }, opts.ttlMs).catch(() => undefined), release);
    if (reply.status >= 300) {
      await release();
      return reply;
    }
    const body = reply.rawBody ?? JSON.stringify(reply.body);
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
