/**
 * The emotion model through onnxruntime-node with the JS tokenizer: what a plain Node user would run,
 * and what the eval script and the quality test score.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { WordPieceTokenizer } from '../../src/tokenizer/wordpiece.js';

export interface Manifest {
  name: string;
  version: string;
  max_length: number;
  outputs: {
    emotions: { labels: string[] };
    sub_emotions: { labels: string[]; thresholds: Record<string, number> };
    valence_arousal: { labels: string[] };
  };
}

/** Outputs for one batch, row-major: emotions [n, 6], sub [n, 28], va [n, 2]. */
export interface BatchOutput {
  n: number;
  emotions: Float32Array;
  sub: Float32Array;
  va: Float32Array;
}

export class OrtEmotionModel {
  private constructor(
    readonly session: ort.InferenceSession,
    readonly tokenizer: WordPieceTokenizer,
    readonly manifest: Manifest,
  ) {}

  static async load(dir: string, threads = 2): Promise<OrtEmotionModel> {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const tokenizer = WordPieceTokenizer.load(join(dir, 'tokenizer.json'));
    const session = await ort.InferenceSession.create(join(dir, 'model.onnx'), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return new OrtEmotionModel(session, tokenizer, manifest);
  }

  /** Tokenizes and runs one batch, padded to its own longest text. */
  async run(texts: readonly string[]): Promise<BatchOutput> {
    const seqs = texts.map((t) => this.tokenizer.encode(t));
    const width = Math.max(1, ...seqs.map((s) => s.length));
    const ids = new BigInt64Array(seqs.length * width); // zero-filled: pad id 0, mask 0
    const mask = new BigInt64Array(seqs.length * width);
    seqs.forEach((seq, row) => {
      seq.forEach((id, col) => {
        ids[row * width + col] = BigInt(id);
        mask[row * width + col] = 1n;
      });
    });
    const dims = [seqs.length, width];
    const out = await this.session.run({
      input_ids: new ort.Tensor('int64', ids, dims),
      attention_mask: new ort.Tensor('int64', mask, dims),
    });
    return {
      n: seqs.length,
      emotions: floats(out, 'emotions'),
      sub: floats(out, 'sub_emotions'),
      va: floats(out, 'valence_arousal'),
    };
  }

  /** Runs every text in batches of `batchSize`, in order; returns the concatenated outputs. */
  async runAll(texts: readonly string[], batchSize = 64): Promise<BatchOutput> {
    const parts: BatchOutput[] = [];
    for (let i = 0; i < texts.length; i += batchSize) parts.push(await this.run(texts.slice(i, i + batchSize)));
    const cat = (key: 'emotions' | 'sub' | 'va'): Float32Array => {
      const all = new Float32Array(parts.reduce((s, p) => s + p[key].length, 0));
      let off = 0;
      for (const p of parts) {
        all.set(p[key], off);
        off += p[key].length;
      }
      return all;
    };
    return { n: texts.length, emotions: cat('emotions'), sub: cat('sub'), va: cat('va') };
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

function floats(out: ort.InferenceSession.OnnxValueMapType, name: string): Float32Array {
  const t = out[name];
  if (!t || !(t.data instanceof Float32Array)) throw new Error(`model output ${name} missing or not float32`);
  return t.data;
}

/** Index of the largest of the `width` values in row `row`. */
export function argmaxRow(values: Float32Array, row: number, width: number): number {
  let best = 0;
  for (let j = 1; j < width; j++) {
    if ((values[row * width + j] ?? -Infinity) > (values[row * width + best] ?? -Infinity)) best = j;
  }
  return best;
}
