/**
 * Where Idempotency-Key records live in process (guard/idempotency.ts is the middleware that uses them;
 * store/redis/idempotency-store.ts keeps them in Redis when instances share them).
 */

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
   * until complete() or release(), or for a lease if its holder never ends it (in process
   * IN_FLIGHT_LEASE_MS; in Redis a short one its living holder renews).
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

export function replySize(r: StoredReply): number {
  return r.kind === 'json' ? r.body.length * 2 : r.events.reduce((n, e) => n + e.length * 2, 0);
}
