/**
 * The conventional Node way to serve the model, used as the benchmarks' peer baseline: onnxruntime-node's
 * JS API and the JS tokenizer, one inference call per request, no batching.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { WordPieceTokenizer } from '../../src/tokenizer/wordpiece.js';

export interface PeerScores {
  emotions: Float32Array;
  subEmotions: Float32Array;
  valence: number;
  arousal: number;
  tokens: number;
}

export class OrtJsScorer {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: WordPieceTokenizer,
    readonly labels: { emotions: string[]; subEmotions: string[] },
  ) {}

  static async load(modelDir: string, threads = 2): Promise<OrtJsScorer> {
    const manifest = JSON.parse(readFileSync(path.join(modelDir, 'manifest.json'), 'utf8')) as {
      outputs: { emotions: { labels: string[] }; sub_emotions: { labels: string[] } };
    };
    const session = await ort.InferenceSession.create(path.join(modelDir, 'model.onnx'), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    const tokenizer = WordPieceTokenizer.load(path.join(modelDir, 'tokenizer.json'));
    return new OrtJsScorer(session, tokenizer, {
      emotions: manifest.outputs.emotions.labels,
      subEmotions: manifest.outputs.sub_emotions.labels,
    });
  }

  /** One padded batch through the JS API. */
  async analyze(texts: string[]): Promise<PeerScores[]> {
    const encoded = texts.map((t) => this.tokenizer.encode(t));
    const seq = Math.max(1, ...encoded.map((e) => e.length));
    const ids = new BigInt64Array(texts.length * seq);
    const mask = new BigInt64Array(texts.length * seq);
    encoded.forEach((e, i) => {
      e.forEach((id, j) => {
        ids[i * seq + j] = BigInt(id);
        mask[i * seq + j] = 1n;
      });
    });
    const out = await this.session.run({
      input_ids: new ort.Tensor('int64', ids, [texts.length, seq]),
      attention_mask: new ort.Tensor('int64', mask, [texts.length, seq]),
    });
    const em = out['emotions']!.data as Float32Array;
    const sub = out['sub_emotions']!.data as Float32Array;
    const va = out['valence_arousal']!.data as Float32Array;
    return encoded.map((e, i) => ({
      emotions: em.subarray(i * 6, i * 6 + 6),
      subEmotions: sub.subarray(i * 28, i * 28 + 28),
      valence: va[i * 2]!,
      arousal: va[i * 2 + 1]!,
      tokens: e.length,
    }));
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
