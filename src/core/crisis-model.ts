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
  /** Each bucket's entry (chars 0..2^18, words 2^18..2^19), -1 for a bucket without a weight: 2 MB. */
  readonly #index: Int32Array;
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
    const cols = new Uint32Array(copy, 0, n);
    this.#idf = new Float32Array(copy, 4 * n, n);
    this.#coef = new Float32Array(copy, 8 * n, n);
    this.#index = new Int32Array(2 * BUCKETS).fill(-1);
    for (let i = 0; i < n; i++) {
      if (i > 0 && cols[i]! <= cols[i - 1]!) throw new Error('models/crisis/model.bin: buckets out of order');
      if (cols[i]! >= 2 * BUCKETS) throw new Error('models/crisis/model.bin: bucket out of range');
      this.#index[cols[i]!] = i;
    }
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
    const chars = empty(CHARS);
    const words = empty(WORDS);
    if (t) {
      for (const token of t.split(' ')) {
        const cps = Array.from(` ${token} `, (c) => c.codePointAt(0)!);
        // Each start's n-grams of 2 to 5 code points, the hash carried from one length to the next.
        for (let i = 0; i + MIN_NGRAM <= cps.length; i++) {
          let h = fnvStart(99 /* "c" */);
          for (let j = i; j < i + MAX_NGRAM && j < cps.length; j++) {
            h = fnvStep(h, cps[j]!);
            if (j + 1 - i >= MIN_NGRAM) count(chars, h);
          }
        }
      }
      const ws = wordsOf(t);
      let prev = 0; // the previous word's hash, carried on through a space into the bigram
      for (let i = 0; i < ws.length; i++) {
        const w = fnvRun(fnvStart(119 /* "w" */), ws[i]!);
        count(words, w);
        if (i > 0) count(words, fnvRun(fnvStep(prev, 32), ws[i]!));
        prev = w;
      }
    }
    return 1 / (1 + Math.exp(-(this.#intercept + this.#block(chars, 0) + this.#block(words, BUCKETS))));
  }

  /** coef . x for one kind's unit-length tf-idf vector. */
  #block(counts: BucketCounts, offset: number): number {
    let dot = 0;
    let sq = 0;
    for (let k = 0; k < counts.used; k++) {
      const bucket = counts.touched[k]!;
      const c = counts.counts[bucket]!;
      const i = this.#index[bucket + offset]!;
      if (i < 0) continue;
      const v = (1 + Math.log(c)) * this.#idf[i]!;
      dot += v * this.#coef[i]!;
      sq += v * v;
    }
    return sq > 0 ? dot / Math.sqrt(sq) : 0;
  }
}

/** One kind's n-gram counts for the text being read: a count per bucket, and the buckets in first-seen order. */
interface BucketCounts {
  counts: Uint32Array;
  touched: Uint32Array;
  used: number;
}

function bucketCounts(): BucketCounts {
  return { counts: new Uint32Array(BUCKETS), touched: new Uint32Array(1024), used: 0 };
}

/** Reused by every text (one at a time: probability() is synchronous), 1 MB each, instead of two Maps per text. */
const CHARS = bucketCounts();
const WORDS = bucketCounts();

/** The counts, emptied of the last text's (each text starts from them: one that threw midway leaves no trace). */
function empty(m: BucketCounts): BucketCounts {
  for (let k = 0; k < m.used; k++) m.counts[m.touched[k]!] = 0;
  m.used = 0;
  return m;
}

function count(m: BucketCounts, h: number): void {
  const b = h & (BUCKETS - 1);
  const c = m.counts[b]!;
  m.counts[b] = c + 1;
  if (c === 0) {
    if (m.used === m.touched.length) {
      const grown = new Uint32Array(Math.min(2 * m.used, BUCKETS));
      grown.set(m.touched);
      m.touched = grown;
    }
    m.touched[m.used++] = b;
  }
}

/** FNV-1a (32 bit) over a namespace code point, then the n-gram's code points, one step each. */
function fnvStart(namespace: number): number {
  return fnvStep(2166136261, namespace);
}

function fnvStep(h: number, cp: number): number {
  return Math.imul(h ^ cp, 16777619) >>> 0;
}

function fnvRun(h: number, cps: readonly number[]): number {
  for (const cp of cps) h = fnvStep(h, cp);
  return h;
}

/** Runs of 2+ letters, digits or _, as code points. */
function wordsOf(t: string): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  for (const ch of t) {
    const cp = ch.codePointAt(0)!;
    // ASCII without the Unicode pattern (most text): a-z (lower-cased), 0-9, _
    if (cp < 128 ? (cp >= 97 && cp <= 122) || (cp >= 48 && cp <= 57) || cp === 95 || (cp >= 65 && cp <= 90) : WORD_CHAR.test(ch)) cur.push(cp);
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
