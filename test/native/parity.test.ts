/**
 * Correctness of the whole engine path (C++ tokenizer, padding, sub-batching, output split) against the
 * way a Node user would run the same model: onnxruntime-node's JS API with the JS tokenizer, one text
 * per run. All 2,000 dair-ai val texts must agree within 1e-5, and a text must score the same alone or
 * inside a batch of mixed lengths (where it is padded). On CPU the addon runs the model's two GRU nodes
 * with its packed kernel (native/packed_gru.h); onnxruntime-node runs ONNX Runtime's own GRU, so these
 * tests are also that kernel's check, and the addon with the kernel off must agree with it as well. The
 * same holds for the branches' pooling, which the addon runs as its MaskedPool operator
 * (native/masked_pool_op.h).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import type { Engine, TextScores } from '../../src/engine/engine.js';
import { native } from '../../src/engine/binding.js';
import type { NativeHandle } from '../../src/engine/binding.js';
import { WordPieceTokenizer } from '../../src/tokenizer/wordpiece.js';
import { MODEL_DIR, dairTexts, loadNative } from './helpers.js';

const TOL = 1e-5;
const OUTPUTS = ['emotions', 'sub_emotions', 'valence_arousal'];
const texts = dairTexts();
// The addon rewrites the graph for its kernel only on x86-64 with AVX2 and FMA (below that the baseline
// kernel is slower than ONNX Runtime's GRU); /proc/cpuinfo lists the flags the addon checks at run time.
const cpuinfo = process.platform === 'linux' ? readFileSync('/proc/cpuinfo', 'utf8') : '';
const cpuFlags = new Set(/^flags\s*:(.*)$/m.exec(cpuinfo)?.[1]?.trim().split(/\s+/) ?? []);
const VECTORIZED = process.arch === 'x64' && cpuFlags.has('avx2') && cpuFlags.has('fma');
const AVX512 = ['avx512f', 'avx512bw', 'avx512dq', 'avx512vl'].every((f) => cpuFlags.has(f));

interface Reference {
  emotions: Float32Array;
  sub: Float32Array;
  va: Float32Array;
  tokens: number;
}

let engine: Engine;
let handle: NativeHandle;
let session: ort.InferenceSession;
let tokenizer: WordPieceTokenizer;

async function reference(text: string): Promise<Reference> {
  const ids = tokenizer.encode(text);
  const shape = [1, ids.length];
  const out = await session.run({
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (i) => BigInt(i)), shape),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
  });
  return {
    emotions: out['emotions']!.data as Float32Array,
    sub: out['sub_emotions']!.data as Float32Array,
    va: out['valence_arousal']!.data as Float32Array,
    tokens: ids.length,
  };
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

function diffScores(s: TextScores, r: Reference): number {
  return Math.max(maxDiff(s.emotions, r.emotions), maxDiff(s.subEmotions, r.sub), maxDiff([s.valence, s.arousal], r.va));
}

beforeAll(async () => {
  engine = await createEngine({ modelDir: MODEL_DIR, executionProvider: 'cpu', intraOpThreads: 2 });
  handle = await loadNative({ warmup: false });
  session = await ort.InferenceSession.create(join(MODEL_DIR, 'model.onnx'), { intraOpNumThreads: 2, interOpNumThreads: 1 });
  tokenizer = WordPieceTokenizer.load(join(MODEL_DIR, 'tokenizer.json'));
});
afterAll(async () => {
  await engine?.close();
  if (handle) await native.dispose(handle);
  await session?.release();
});

describe('engine vs onnxruntime-node JS API', () => {
  it('agrees within 1e-5 on all 2,000 dair-ai val texts', async () => {
    expect(texts).toHaveLength(2000);
    const scores = await engine.analyze(texts);
    let worst = 0;
    let worstText = '';
    for (let i = 0; i < texts.length; i++) {
      const ref = await reference(texts[i]!);
      expect(scores[i]!.tokens).toBe(ref.tokens);
      const d = diffScores(scores[i]!, ref);
      if (d > worst) [worst, worstText] = [d, texts[i]!];
    }
    expect(worst, `worst text: ${worstText}`).toBeLessThan(TOL);
  });

  it('labels come from the manifest', () => {
    expect(engine.labels.emotions).toHaveLength(6);
    expect(engine.labels.subEmotions).toHaveLength(28);
    expect(engine.info.provider).toBe('cpu');
  });
});

describe('packed recurrence', () => {
  it.runIf(cpuinfo !== '' && !VECTORIZED)('keeps the GRU nodes as they are on a CPU without AVX2 and FMA', () => {
    expect(engine.info.packedRecurrences).toBe(0);
    expect(native.info(handle).packedKernels).toBeNull();
  });

  it.runIf(VECTORIZED)("runs both GRU nodes packed, and agrees with ONNX Runtime's GRU in the addon on every text", async () => {
    expect(engine.info.packedRecurrences).toBe(2);
    expect(native.info(handle).packedRecurrences).toBe(2);
    expect(native.info(handle).packedKernels).toBe(AVX512 ? 'avx512' : 'avx2');
    const unpacked = await loadNative({ warmup: false, packedRecurrence: false });
    try {
      expect(native.info(unpacked).packedRecurrences).toBe(0);
      expect(native.info(unpacked).packedKernels).toBeNull();
      // One call: the addon cuts it into length-sorted runs, the two handles alike or not.
      const all = [...texts, '', '!', 'word '.repeat(400), 'a\u0301'];
      const [a, b] = await Promise.all([native.run(handle, all), native.run(unpacked, all)]);
      for (const name of OUTPUTS) {
        expect(maxDiff(a.outputs[name]!, b.outputs[name]!), name).toBeLessThan(TOL);
      }
    } finally {
      await native.dispose(unpacked);
    }
  });

  it.runIf(VECTORIZED)('agrees with the AVX2 and the baseline kernels too (SENTIO_PACKED_GRU_ISA caps the one picked)', async () => {
    const sample = [...texts.slice(0, 400), 'word '.repeat(400)];
    const want = await native.run(handle, sample);
    for (const isa of ['avx2', 'base']) {
      process.env['SENTIO_PACKED_GRU_ISA'] = isa;
      const capped = await loadNative({ warmup: true }); // the kernel reads the cap at the first run
      delete process.env['SENTIO_PACKED_GRU_ISA'];
      try {
        expect(native.info(capped).packedRecurrences).toBe(2);
        expect(native.info(capped).packedKernels).toBe(isa);
        const got = await native.run(capped, sample);
        for (const name of OUTPUTS) {
          expect(maxDiff(got.outputs[name]!, want.outputs[name]!), `${isa} ${name}`).toBeLessThan(TOL);
        }
      } finally {
        await native.dispose(capped);
      }
    }
  });

  it('scores a short text the same alone and in one run padded to a 128-token text', async () => {
    const long = texts.reduce((x, y) => (y.length > x.length ? y : x)).repeat(4);
    const longAlone = await native.run(handle, [long]);
    for (const short of ['ok', 'i am fine', texts[3]!]) {
      const shortAlone = await native.run(handle, [short]);
      const runs = native.info(handle).runs;
      const pair = await native.run(handle, [long, short]);
      expect(native.info(handle).runs - runs, 'the pair is one padded run').toBe(1);
      expect(pair.tokenCounts[0]).toBe(128);
      for (const name of OUTPUTS) {
        const whole = pair.outputs[name]!;
        const width = whole.length / 2;
        expect(maxDiff(whole.subarray(0, width), longAlone.outputs[name]!)).toBeLessThan(TOL);
        expect(maxDiff(whole.subarray(width), shortAlone.outputs[name]!)).toBeLessThan(TOL);
      }
    }
  });
});

describe('fused pooling', () => {
  it("runs the four branches' pooling as MaskedPool, and agrees with ONNX Runtime's operators in the addon on every text", async () => {
    expect(engine.info.fusedPoolings).toBe(4);
    expect(native.info(handle).fusedPoolings).toBe(4);
    const unfused = await loadNative({ warmup: false, fusedPooling: false });
    try {
      expect(native.info(unfused).fusedPoolings).toBe(0);
      expect(native.info(unfused).packedRecurrences).toBe(native.info(handle).packedRecurrences);
      // One call, cut into length-sorted runs: texts padded inside runs, and the longest alone.
      const all = [...texts, '', '!', 'word '.repeat(400), 'a\u0301', '\u{1F600}'.repeat(30)];
      const [a, b] = await Promise.all([native.run(handle, all), native.run(unfused, all)]);
      for (const name of OUTPUTS) {
        expect(maxDiff(a.outputs[name]!, b.outputs[name]!), name).toBeLessThan(TOL);
      }
    } finally {
      await native.dispose(unfused);
    }
  });

  it('loads a model whose pooling it would misread without the fusion, the packed recurrence kept', async () => {
    // One member's softmax fill becomes the attention bias (two values, not one): a graph ONNX Runtime
    // runs (the bias broadcasts over the positions), which the rewrite still matches by its operators.
    // MaskedPool refuses that fill, so the first run at load fails and the model loads without it.
    const model = readFileSync(join(MODEL_DIR, 'model.onnx'));
    const from = Buffer.from('/six.0/attn/Add_output_0\n\x0fonnx::Where_153', 'latin1');
    const at = model.indexOf(from);
    expect(at).toBeGreaterThan(0);
    expect(model.indexOf(from, at + 1)).toBe(-1);
    Buffer.from('six.0.attn.bias', 'latin1').copy(model, at + from.length - 15);
    const dir = mkdtempSync(join(tmpdir(), 'sentio-pool-'));
    writeFileSync(join(dir, 'model.onnx'), model);
    const [fallback, reference] = await Promise.all([
      loadNative({ warmup: true, modelPath: join(dir, 'model.onnx') }),
      loadNative({ warmup: false, modelPath: join(dir, 'model.onnx'), fusedPooling: false }),
    ]);
    try {
      expect(native.info(fallback).fusedPoolings).toBe(0);
      expect(native.info(fallback).packedRecurrences).toBe(native.info(handle).packedRecurrences);
      const sample = texts.slice(0, 200);
      const [a, b] = await Promise.all([native.run(fallback, sample), native.run(reference, sample)]);
      for (const name of OUTPUTS) expect(maxDiff(a.outputs[name]!, b.outputs[name]!), name).toBeLessThan(TOL);
    } finally {
      await Promise.all([native.dispose(fallback), native.dispose(reference)]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('batch invariance', () => {
  it('scores a text the same alone and padded inside a mixed-length batch', async () => {
    // Four texts always share one padded run (the addon's smallest sub-batch), so short ones get padding.
    const byLength = [...texts].sort((a, b) => a.length - b.length);
    const picks = [byLength[0]!, byLength[1999]!, byLength[700]!, byLength[5]!, byLength[1500]!, byLength[20]!, byLength[1990]!, byLength[3]!];
    const alone = await Promise.all(picks.map((t) => native.run(handle, [t])));
    for (let g = 0; g < picks.length; g += 4) {
      const group = picks.slice(g, g + 4);
      const together = await native.run(handle, group);
      group.forEach((_, k) => {
        for (const name of OUTPUTS) {
          const whole = together.outputs[name]!;
          const width = whole.length / group.length;
          expect(maxDiff(whole.subarray(k * width, (k + 1) * width), alone[g + k]!.outputs[name]!)).toBeLessThan(TOL);
        }
      });
    }
  });

  it('scores a text the same alone and inside a 64-text batch through the engine', async () => {
    const batch = texts.slice(100, 164);
    const together = await engine.analyze(batch);
    for (let i = 0; i < batch.length; i += 9) {
      const [alone] = await engine.analyze([batch[i]!]);
      expect(diffScores(together[i]!, { emotions: alone!.emotions, sub: alone!.subEmotions, va: Float32Array.of(alone!.valence, alone!.arousal), tokens: 0 })).toBeLessThan(TOL);
    }
  });

  it('gives identical results for the same text repeated in one batch', async () => {
    const t = texts[42]!;
    const r = await engine.analyze([t, 'short', t, texts[7]!, t]);
    expect(maxDiff(r[0]!.emotions, r[2]!.emotions)).toBeLessThan(TOL);
    expect(maxDiff(r[0]!.subEmotions, r[4]!.subEmotions)).toBeLessThan(TOL);
  });
});
