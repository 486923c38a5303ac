/**
 * The learned crisis signal: a logistic regression over hashed character and word n-grams, trained by
 * models/crisis/train.py on the crisis sentences written for this project. It reads phrasings the rules
 * (crisis.ts) have no pattern for, and is measured on sets written blind (models/crisis/MODEL.md).
 *
 * The features must stay identical to train.py's (its docstring defines them); golden.json pins them.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPathCandidates } from '../repo-paths.js';

const BUCKETS = 1 << 18;
const MIN_NGRAM = 2;
const MAX_NGRAM = 5;
const QUOTES = /[\u2018\u2019\u02bc`\u00b4]/g;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

interface Manifest {
  threshold: number;
  intercept: number;
  entries: number;
  files: { 'model.bin': { sha256: string } };
}

export class CrisisModel {
  /** Buckets with a weight (chars 0..2^18, words 2^18..2^19), ascending: binary-searched, 4 bytes each. */
  readonly #cols: Uint32Array;
  readonly #idf: Float32Array;
  readonly #coef: Float32Array;
  readonly #intercept: number;
  readonly threshold: number;

  constructor(bin: Buffer, manifest: Manifest) {
    const sha = createHash('sha256').update(bin).digest('hex');
    if (sha !== manifest.files['model.bin'].sha256) throw new Error('models/crisis/model.bin does not match its manifest checksum');
    if (bin.toString('latin1', 0, 4) !== 'SCR1') throw new Error('models/crisis/model.bin: unknown format');
    const n = bin.readUInt32LE(4);
    if (n !== manifest.entries || bin.length !== 8 + 12 * n) throw new Error('models/crisis/model.bin: wrong size');
    const copy = new Uint8Array(bin.subarray(8)).buffer; // aligned
    this.#cols = new Uint32Array(copy, 0, n);
    this.#idf = new Float32Array(copy, 4 * n, n);
    this.#coef = new Float32Array(copy, 8 * n, n);
    for (let i = 1; i < n; i++) if (this.#cols[i]! <= this.#cols[i - 1]!) throw new Error('models/crisis/model.bin: buckets out of order');
    this.#intercept = manifest.intercept;
    this.threshold = manifest.threshold;
  }

  static load(dir: string): CrisisModel {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    return new CrisisModel(readFileSync(join(dir, 'model.bin')), manifest);
  }

  /** Probability that the text speaks of a crisis. */
  probability(text: string): number {
    const t = text.toLowerCase().replace(QUOTES, "'").split(/\s+/).filter(Boolean).join(' ');
    const chars = new Map<number, number>();
    const words = new Map<number, number>();
    if (t) {
      for (const token of t.split(' ')) {
        const cps = Array.from(` ${token} `, (c) => c.codePointAt(0)!);
        for (let n = MIN_NGRAM; n <= MAX_NGRAM; n++) {
          for (let i = 0; i + n <= cps.length; i++) count(chars, fnv1a(99 /* "c" */, cps, i, i + n));
        }
      }
      const ws = wordsOf(t);
      for (let i = 0; i < ws.length; i++) {
        count(words, fnv1a(119 /* "w" */, ws[i]!, 0, ws[i]!.length));
        if (i + 1 < ws.length) count(words, fnv1a(119, [...ws[i]!, 32, ...ws[i + 1]!], 0, ws[i]!.length + 1 + ws[i + 1]!.length));
      }
    }
    return 1 / (1 + Math.exp(-(this.#intercept + this.#block(chars, 0) + this.#block(words, BUCKETS))));
  }

  /** coef . x for one kind's unit-length tf-idf vector. */
  #block(counts: Map<number, number>, offset: number): number {
    let dot = 0;
    let sq = 0;
    for (const [bucket, c] of counts) {
      const i = this.#find(bucket + offset);
      if (i < 0) continue;
      const v = (1 + Math.log(c)) * this.#idf[i]!;
      dot += v * this.#coef[i]!;
      sq += v * v;
    }
    return sq > 0 ? dot / Math.sqrt(sq) : 0;
  }

  #find(col: number): number {
    const cols = this.#cols;
    let lo = 0;
    let hi = cols.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = cols[mid]!;
      if (v === col) return mid;
      if (v < col) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

function count(m: Map<number, number>, h: number): void {
  const b = h & (BUCKETS - 1);
  m.set(b, (m.get(b) ?? 0) + 1);
}

/** FNV-1a (32 bit) over a namespace code point, then code points [from, to). */
function fnv1a(namespace: number, cps: readonly number[], from: number, to: number): number {
  let h = Math.imul(2166136261 ^ namespace, 16777619) >>> 0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ cps[i]!, 16777619) >>> 0;
  return h;
}

/** Runs of 2+ letters, digits or _, as code points. */
function wordsOf(t: string): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  for (const ch of t) {
    if (WORD_CHAR.test(ch)) cur.push(ch.codePointAt(0)!);
    else {
      if (cur.length >= 2) out.push(cur);
      cur = [];
    }
  }
  if (cur.length >= 2) out.push(cur);
  return out;
}

const CANDIDATES = repoPathCandidates('models', 'crisis');
let shared: CrisisModel | undefined;

/** The model shipped in models/crisis, loaded on first use. */
export function crisisModel(): CrisisModel {
  if (!shared) {
    const dir = CANDIDATES.find((d) => existsSync(join(d, 'model.bin')));
    if (!dir) throw new Error(`crisis model missing: none of ${CANDIDATES.join(', ')} holds model.bin`);
    shared = CrisisModel.load(dir);
  }
  return shared;
}
