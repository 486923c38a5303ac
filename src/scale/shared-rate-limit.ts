/**
 * Token buckets in shared memory for HTTP worker threads without Redis: every worker reads and updates the
 * same buckets directly (a SharedArrayBuffer), so a key keeps one quota across workers and no request
 * waits on a message round trip to the main thread just to be counted.
 *
 * Layout: an open-addressing table of SLOTS slots; slot i holds a 64-bit hash of the bucket name (0 =
 * free, claimed once with compareExchange, never freed: buckets are per API key, a small set), a lock
 * word, and the bucket's tokens and last refill time. A bucket is updated under its slot's spin lock,
 * which is held for a handful of arithmetic operations. If no slot is found within MAX_PROBES (a table
 * full of keys), the caller's fallback store is used.
 */
import type { BucketResult, RateLimitStore } from '../store/rate-limit-store.js';

const SHARED_BUCKET_SLOTS = 16_384;
const MAX_PROBES = 64;

/** The shared memory, created once on the main thread and handed to every worker. */
export interface SharedBucketMemory {
  ids: SharedArrayBuffer;
  locks: SharedArrayBuffer;
  values: SharedArrayBuffer;
}

export function allocateSharedBuckets(slots = SHARED_BUCKET_SLOTS): SharedBucketMemory {
  return {
    ids: new SharedArrayBuffer(slots * 8),
    locks: new SharedArrayBuffer(slots * 4),
    values: new SharedArrayBuffer(slots * 2 * 8),
  };
}

export class SharedMemoryRateLimitStore implements RateLimitStore {
  readonly #ids: BigInt64Array;
  readonly #locks: Int32Array;
  /** [tokens, lastRefillAt] per slot; at = 0 marks a bucket not yet used. */
  readonly #values: Float64Array;
  readonly #slots: number;
  readonly #fallback: RateLimitStore;
  readonly #hashes = new Map<string, bigint>();

  constructor(memory: SharedBucketMemory, fallback: RateLimitStore) {
    this.#ids = new BigInt64Array(memory.ids);
    this.#locks = new Int32Array(memory.locks);
    this.#values = new Float64Array(memory.values);
    this.#slots = this.#locks.length;
    this.#fallback = fallback;
  }

  async take(bucket: string, cost: number, capacity: number, refillPerMs: number, now: number): Promise<BucketResult> {
    const slot = this.#slotOf(bucket);
    if (slot < 0) return this.#fallback.take(bucket, cost, capacity, refillPerMs, now);
    this.#lock(slot);
    try {
      const v = this.#values;
      const at = v[slot * 2 + 1]!;
      const before = at === 0 ? capacity : Math.min(capacity, v[slot * 2]! + Math.max(0, now - at) * refillPerMs);
      const allowed = before >= cost;
      const tokens = allowed ? before - cost : before;
      v[slot * 2] = tokens;
      v[slot * 2 + 1] = Math.max(now, at, 1);
      return { allowed, tokens };
    } finally {
      Atomics.store(this.#locks, slot, 0);
    }
  }

  /** The bucket's slot, claiming a free one on first use; -1 when none is found within MAX_PROBES. */
  #slotOf(bucket: string): number {
    let h = this.#hashes.get(bucket);
    if (h === undefined) {
      h = hash64(bucket);
      if (this.#hashes.size > 100_000) this.#hashes.clear(); // bounded; recomputing is cheap
      this.#hashes.set(bucket, h);
    }
    const start = Number(BigInt.asUintN(32, h) % BigInt(this.#slots));
    for (let i = 0; i < MAX_PROBES; i++) {
      const slot = (start + i) % this.#slots;
      const id = Atomics.load(this.#ids, slot);
      if (id === h) return slot;
      if (id === 0n) {
        const prev: bigint = Atomics.compareExchange(this.#ids, slot, 0n, h);
        if (prev === 0n || prev === h) return slot;
      }
    }
    return -1;
  }

  #lock(slot: number): void {
    for (let spins = 0; Atomics.compareExchange(this.#locks, slot, 0, 1) !== 0; spins++) {
      // The holder runs a few arithmetic operations; yield the CPU only if it was descheduled meanwhile.
      if (spins > 100) Atomics.wait(this.#locks, slot, 1, 0.05);
    }
  }
}

/** FNV-1a over UTF-16 code units, 64 bits, never 0 (0 marks a free slot). */
function hash64(s: string): bigint {
  let lo = 0x84222325 >>> 0;
  let hi = 0xcbf29ce4 >>> 0;
  for (let i = 0; i < s.length; i++) {
    lo ^= s.charCodeAt(i);
    // multiply (hi,lo) by the 64-bit FNV prime 0x100000001b3 in 32-bit halves
    const loMul = lo * 0x1b3;
    const carry = Math.floor(loMul / 0x100000000);
    const newLo = loMul >>> 0;
    hi = (Math.imul(hi, 0x1b3) + Math.imul(lo, 0x100) + carry) >>> 0;
    lo = newLo;
  }
  const h = BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  return h === 0n ? 1n : h;
}
