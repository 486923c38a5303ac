/**
 * Scores models/emotion/model.onnx through onnxruntime-node with the JS tokenizer.
 *   npm run eval:model -- --data FILE --format dair|goemotions|emobank [--model DIR] [--threads 2] [--batch 64]
 *     [--style chat]   (dair only: each sentence as a chat user would type it, see lib/chat-style.ts)
 * Prints progress lines, then one JSON line last.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chatStyle } from './lib/chat-style.js';
import { readDair, readEmoBank, readGoEmotions } from './lib/datasets.js';
import { OrtEmotionModel, argmaxRow } from './lib/ort-model.js';
import { classification, f1, pearson, round } from './lib/scores.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    format: { type: 'string' },
    model: { type: 'string', default: join(process.cwd(), 'models', 'emotion') },
    threads: { type: 'string', default: '2' },
    batch: { type: 'string', default: '64' },
    repeat: { type: 'string', default: '3' },
    style: { type: 'string' },
  },
});

async function main(): Promise<void> {
  if (!values.data || !values.format) throw new Error('usage: --data FILE --format dair|goemotions|emobank');
  const batch = Number(values.batch);
  const model = await OrtEmotionModel.load(values.model, Number(values.threads));
  const { texts, score } = load(values.format, values.data, model);
  const out = await model.runAll(texts, batch); // also the warm-up for the timing below
  const result: Record<string, unknown> = { format: values.format, n: texts.length, model: model.manifest.version };
  if (values.style) result.style = values.style;
  Object.assign(result, score(out));
  // Speed: whole passes (tokenize + pad + run) in batches of `batch`, each padded to its own longest text.
  const rates: number[] = [];
  for (let r = 0; r < Number(values.repeat); r++) {
    const t0 = process.hrtime.bigint();
    await model.runAll(texts, batch);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push(texts.length / s);
    console.error(`pass ${r + 1}: ${Math.round(texts.length / s)} texts/s`);
  }
  rates.sort((a, b) => a - b);
  result.texts_per_s = Math.round(rates[Math.floor(rates.length / 2)] ?? 0);
  result.texts_per_s_best = Math.round(rates[rates.length - 1] ?? 0);
  result.batch = batch;
  result.threads = Number(values.threads);
  await model.dispose();
  console.log(JSON.stringify(result));
}

type Scorer = (out: Awaited<ReturnType<OrtEmotionModel['runAll']>>) => Record<string, unknown>;

function load(format: string, path: string, model: OrtEmotionModel): { texts: string[]; score: Scorer } {
  const m = model.manifest.outputs;
  if (values.style !== undefined && !(values.style === 'chat' && format === 'dair')) throw new Error('--style chat goes with --format dair');
  if (format === 'dair') {
    const rows = readDair(path);
    const labels = m.emotions.labels;
    const gold = rows.map((r) => labels.indexOf(r.label));
    if (gold.some((g) => g < 0)) throw new Error('dair file has a label the manifest does not know');
    return {
      texts: rows.map((r, i) => (values.style === 'chat' ? chatStyle(r.text, i) : r.text)),
      score: (out) => classification(gold, rows.map((_, i) => argmaxRow(out.emotions, i, labels.length)), labels),
    };
  }
  if (format === 'goemotions') {
    const rows = readGoEmotions(path);
    const labels = m.sub_emotions.labels;
    const thresholds = labels.map((l) => m.sub_emotions.thresholds[l] ?? 0.5);
    return {
      texts: rows.map((r) => r.text),
      score: (out) => {
        const per: Record<string, number> = {};
        let sum = 0;
        labels.forEach((label, j) => {
          let tp = 0;
          let fp = 0;
          let fn = 0;
          rows.forEach((r, i) => {
            const p = (out.sub[i * labels.length + j] ?? 0) >= (thresholds[j] ?? 0.5);
            const g = r.labels.includes(j);
            if (p && g) tp++;
            else if (p) fp++;
            else if (g) fn++;
          });
          per[label] = round(f1(tp, fp, fn));
          sum += f1(tp, fp, fn);
        });
        return { macro_f1: round(sum / labels.length), per_label_f1: per };
      },
    };
  }
  if (format === 'emobank') {
    const rows = readEmoBank(path, 'test');
    return {
      texts: rows.map((r) => r.text),
      score: (out) => ({
        valence_r: round(pearson(rows.map((_, i) => out.va[2 * i] ?? 0), rows.map((r) => r.v))),
        arousal_r: round(pearson(rows.map((_, i) => out.va[2 * i + 1] ?? 0), rows.map((r) => r.a))),
      }),
    };
  }
  throw new Error(`unknown --format ${format}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
