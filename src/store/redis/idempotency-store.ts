/**
 * Idempotency records in Redis, so a key claimed on one instance is seen as in flight on every other.
 * A claim is SET NX PX inside a script that also returns the current record when the key is taken (one
 * atomic step: no window in which the holder could finish or release between "taken" and "read it").
 *
 * An in-flight claim lives a short lease (LEASE_MS), which the instance holding it renews while its
 * request runs: if the instance dies, the key answers 409 for at most the lease (it was 15 minutes, the
 * longest a request may run, before renewals), and a request longer than the lease keeps its claim.
 * complete() and release() only touch the record when it is still this instance's claim (compared byte
 * for byte), so a request that outlived its lease (renewals that did not land: Redis away for longer)
 * cannot overwrite or delete the claim of the retry that took over.
 *
 * Redis unreachable: claim() throws StoreUnavailableError (503), because an Idempotency-Key cannot be
 * honoured without the shared record. A release() or complete() that Redis did not take (the connection
 * dropped) is kept and sent again every RETRY_MS until it lands or its claim's lease is over: lost, the
 * claim would answer 409 to every retry for the whole lease, though the request had failed (or finished).
 * Sending one twice is harmless, as each only touches the record while it is still this instance's claim.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { IN_FLIGHT_LEASE_MS } from '../idempotency-store.js';
import type { ClaimResult, IdempotencyStore, StoredReply } from '../idempotency-store.js';
import { decode, encode } from './codec.js';
import type { RedisConnection } from './connection.js';

// KEYS: scope. ARGV: claim, leaseMs. Returns nil when claimed, else the current record.
const CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])
`;
// KEYS: scope. ARGV: our claim ('' when unknown), record, ttlMs. Stores unless another claim took over.
const COMPLETE = `
local current = redis.call('GET', KEYS[1])
if current and ARGV[1] ~= '' and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;
// KEYS: scope. ARGV: our claim. Deletes only our own in-flight claim.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
// KEYS: scope. ARGV: our claim, leaseMs. Extends only our own in-flight claim.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** A held claim's lease, renewed every third of it: what a dead instance's keys answer 409 for at most. */
const LEASE_MS = 60_000;

/** How often writes Redis did not take are sent again, and how many are kept (the oldest go first). */
const RETRY_MS = 1_000;
/** How long closing keeps sending the writes Redis has not taken: a few of its retries, within an orchestrator's patience. */
const CLOSE_RETRY_MS = 3_000;
const MAX_PENDING = 10_000;

/** A release (no record) or a completion that Redis did not take, to send again until `until`. */
interface PendingWrite {
  claim: Buffer | string;
  record?: Buffer;
  ttlMs?: number;
  until: number;
}

/** What is stored under a scope: f = request fingerprint, o = owner of an in-flight claim, r = reply. */
interface IdempotencyRecord {
  f: string;
  o?: string;
  r?: StoredReply;
}

interface IdempotencyCommands {
  sentioIdemClaimBuffer(scope: string, claim: Buffer, leaseMs: string): Promise<Buffer | null>;
  sentioIdemComplete(scope: string, claim: Buffer | string, record: Buffer, ttlMs: string): Promise<number>;
  sentioIdemRelease(scope: string, claim: Buffer): Promise<number>;
  sentioIdemRenew(scope: string, claim: Buffer, leaseMs: string): Promise<number>;
}

export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #redis: RedisConnection;
  readonly #leaseMs: number;
  /** Claims this instance holds, by scope: the exact bytes written, for compare-and-set. */
  readonly #claims = new Map<string, Buffer>();
  readonly #pending = new Map<string, PendingWrite>();
  #retryTimer: NodeJS.Timeout | undefined;
  #renewTimer: NodeJS.Timeout | undefined;
  readonly #renewMs: number;
  #closed = false;
  readonly #closeRetryMs: number;
  readonly #logger: Logger | undefined;

  /** `renewMs` 0 leaves claims to their lease (tests: a holder whose renewals do not land). */
  constructor(redis: RedisConnection, opts: { inFlightLeaseMs?: number; renewMs?: number; closeRetryMs?: number; logger?: Logger | undefined } = {}) {
    this.#redis = redis;
    this.#leaseMs = opts.inFlightLeaseMs ?? LEASE_MS;
    this.#renewMs = opts.renewMs ?? Math.floor(this.#leaseMs / 3);
    this.#closeRetryMs = opts.closeRetryMs ?? CLOSE_RETRY_MS;
    this.#logger = opts.logger;
    redis.client.defineCommand('sentioIdemClaim', { numberOfKeys: 1, lua: CLAIM });
    redis.client.defineCommand('sentioIdemComplete', { numberOfKeys: 1, lua: COMPLETE });
    redis.client.defineCommand('sentioIdemRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.client.defineCommand('sentioIdemRenew', { numberOfKeys: 1, lua: RENEW });
  }

  get #commands(): IdempotencyCommands {
    return this.#redis.client as unknown as IdempotencyCommands;
  }

  async claim(scope: string, fingerprint: string): Promise<ClaimResult> {
    const claim = encode({ f: fingerprint, o: randomBytes(12).toString('base64') } satisfies IdempotencyRecord);
    // The lease, not the retention: a claim that ran out while its request still ran let a duplicate run.
    const lease = String(this.#leaseMs);
    // A retry that comes before the pending release (or completion) of its first try was sent again:
    // that goes first, or it would find the first try's claim (409). If Redis refuses it, it stays pending
    // and this claim is never sent.
    const pending = this.#pending.get(scope);
    if (pending) await this.#land(scope, pending);
    let current: Buffer | null;
    try {
      current = await this.#redis.run(() => this.#commands.sentioIdemClaimBuffer(this.#redis.prefix + scope, claim, lease));
    } catch (err) {
      // A stalled Redis may still apply the claim: nobody would own it, and the key would answer 409 for
      // the whole lease. The release goes out behind it on the same connection, so Redis applies it after.
      this.#send(scope, { claim, until: Date.now() + this.#leaseMs }).catch(() => undefined);
      throw err;
    }
    if (current === null) {
      this.#claims.set(scope, claim);
      this.#scheduleRenewal();
      return { outcome: 'claimed' };
    }
    const record = decode<IdempotencyRecord>(current);
    return record.r ? { outcome: 'done', fingerprint: record.f, reply: record.r } : { outcome: 'in_flight', fingerprint: record.f };
  }

  async complete(scope: string, fingerprint: string, reply: StoredReply, ttlMs: number): Promise<void> {
    const claim = this.#claims.get(scope) ?? '';
    this.#claims.delete(scope);
    const record = encode({ f: fingerprint, r: reply } satisfies IdempotencyRecord);
    // Kept past the claim's lease: landing late, the reply still spares a retry from running the request again.
    await this.#send(scope, { claim, record, ttlMs, until: Date.now() + Math.max(this.#leaseMs, IN_FLIGHT_LEASE_MS) });
  }

  async release(scope: string): Promise<void> {
    const claim = this.#claims.get(scope);
    this.#claims.delete(scope);
    if (claim) await this.#send(scope, { claim, until: Date.now() + this.#leaseMs });
  }

  /**
   * Shutdown (or a failed HTTP worker closing): the claims still held belong to requests the server cut
   * short with a 503, which will not finish here, so they are given back (a retry on another instance
   * got 409 for the claim's lease); then the writes still pending are sent again, each second, for up to
   * `closeRetryMs` (a Redis frozen for a few seconds at the drain kept keys answering 409 for their lease, then 15 minutes).
   * What Redis has not taken by then is dropped, and counted in a log line.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    clearTimeout(this.#renewTimer);
    this.#renewTimer = undefined;
    for (const [scope, claim] of this.#claims) this.#pending.set(scope, { claim, until: Date.now() + this.#leaseMs });
    this.#claims.clear();
    const deadline = Date.now() + this.#closeRetryMs;
    await this.#retry();
    while (this.#pending.size > 0 && Date.now() + RETRY_MS <= deadline) {
      await new Promise((res) => setTimeout(res, RETRY_MS));
      await this.#retry();
    }
    if (this.#pending.size > 0) {
      this.#logger?.warn({ idempotency_writes: this.#pending.size },
        // "may": a claim that failed while Redis was down queued its release too, though it may never have reached Redis.
        'closing without every Idempotency-Key write in Redis: those keys may answer 409 until their lease ends');
    }
    this.#pending.clear();
  }

  /** Sends a write; one that Redis does not take is kept for the retries, and the caller still sees it fail. */
  async #send(scope: string, w: PendingWrite): Promise<void> {
    this.#pending.delete(scope); // this write supersedes an older one for the scope
    try {
      await this.#write(scope, w);
    } catch (err) {
      this.#keep(scope, w);
      throw err;
    }
  }

  #write(scope: string, w: PendingWrite): Promise<number> {
    const key = this.#redis.prefix + scope;
    return this.#redis.run(() => (w.record
      ? this.#commands.sentioIdemComplete(key, w.claim, w.record, String(w.ttlMs))
      : this.#commands.sentioIdemRelease(key, w.claim as Buffer)));
  }

  /** Sends a pending write again; once Redis takes it, it is no longer pending (unless superseded meanwhile). */
  async #land(scope: string, w: PendingWrite): Promise<void> {
    await this.#write(scope, w);
    if (this.#pending.get(scope) === w) this.#pending.delete(scope);
  }

  #keep(scope: string, w: PendingWrite): void {
    this.#pending.set(scope, w);
    if (this.#pending.size > MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value!);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#retryTimer || this.#pending.size === 0 || this.#closed) return;
    this.#retryTimer = setTimeout(() => {
      void this.#retry().then(() => {
        this.#retryTimer = undefined;
        this.#schedule();
      });
    }, RETRY_MS).unref();
  }

  /** While claims are held, their leases are renewed every `renewMs`; one Redis did not take is tried at the next. */
  #scheduleRenewal(): void {
    if (this.#renewTimer || this.#renewMs <= 0 || this.#claims.size === 0 || this.#closed) return;
    this.#renewTimer = setTimeout(() => {
      const lease = String(this.#leaseMs);
      const renewals = [...this.#claims].map(([scope, claim]) =>
        this.#redis.run(() => this.#commands.sentioIdemRenew(this.#redis.prefix + scope, claim, lease)).catch(() => 0));
      void Promise.all(renewals).then(() => {
        this.#renewTimer = undefined;
        this.#scheduleRenewal();
      });
    }, this.#renewMs).unref();
  }

  /** One pass over the pending writes, oldest first, stopping at the first that Redis still refuses. */
  async #retry(): Promise<void> {
    for (const [scope, w] of [...this.#pending]) {
      if (this.#pending.get(scope) !== w) continue; // superseded meanwhile
      if (Date.now() > w.until) {
        this.#pending.delete(scope); // the claim's lease is over: Redis has dropped it
        continue;
      }
      try {
        await this.#land(scope, w);
      } catch {
        return;
      }
    }
  }
}
