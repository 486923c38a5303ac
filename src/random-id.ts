/**
 * Random ids (request ids, generated message ids) drawn from a pool of random bytes refilled 4 KB at a
 * time: a randomBytes() call per id was a visible share of a small request's CPU (5% of the main thread
 * under context analysis, where each stored message gets an id).
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let offset = pool.length;

/** `bytes` random bytes (at most the pool's 4,096), as hex. */
export function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
