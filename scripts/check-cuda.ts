/**
 * Proves the CUDA path on a GPU host: loads the engine once with executionProvider 'cuda' (a load that
 * cannot get CUDA fails here instead of falling back) and once with 'cpu', runs the same texts through
 * both and compares every output. Exits 1 when CUDA is not what ran or the outputs disagree.
 *   npm run check:cuda -- [--data FILE] [--model DIR] [--batch 64] [--threads 4] [--tolerance 1e-3]
 * FILE is a dair-ai style `text;label` file. Without --data: ../shared/data/dair-ai-emotion/val.txt where
 * it exists (a development checkout), else the 315 texts of the model's tokenizer fixtures, which ship with
 * it (empty, emoji, CJK, very long...). On CUDA each engine thread has its own session, so all batches are
 * submitted at once and --threads sessions run them concurrently, as under load. The last line printed is JSON.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { native } from '../src/engine/binding.js';
import type { ExecutionProvider, NativeHandle } from '../src/engine/binding.js';
import { readModelFiles } from '../src/engine/model-files.js';
import { readGoldenFixtures } from '../src/tokenizer/golden-fixtures.js';
import { readDair } from './lib/datasets.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    model: { type: 'string', default: join(process.cwd(), 'models', 'emotion') },
    batch: { type: 'string', default: '64' },
    threads: { type: 'string', default: '4' },
    tolerance: { type: 'string', default: '1e-3' },
  },
});

const dairVal = join(process.cwd(), '..', 'shared', 'data', 'dair-ai-emotion', 'val.txt');
const dataFile = values.data ?? (existsSync(dairVal) ? dairVal : undefined);
const texts = dataFile ? readDair(dataFile).map((r) => r.text) : readGoldenFixtures(values.model!).cases.map((c) => c.text);
const batch = Number(values.batch);
const tolerance = Number(values.tolerance);

const files = await readModelFiles(values.model!, { verifyChecksums: true });

async function load(provider: ExecutionProvider): Promise<NativeHandle> {
  return native.load({
    modelPath: files.modelPath,
    tokenizer: files.tokenizer,
    executionProvider: provider,
    threads: Number(values.threads),
    intraOpThreads: 0,
    interOpThreads: 1,
    maxRunTexts: batch,
  });
}

/** Every output of every text, in batches of `batch` submitted at once, concatenated per output name. */
async function runAll(handle: NativeHandle): Promise<Map<string, number[]>> {
  const all = new Map<string, number[]>();
  const runs = [];
  for (let i = 0; i < texts.length; i += batch) runs.push(native.run(handle, texts.slice(i, i + batch)));
  for (const { outputs } of await Promise.all(runs)) {
    for (const [name, values] of Object.entries(outputs)) {
      const into = all.get(name) ?? [];
      for (const v of values) into.push(v);
      all.set(name, into);
    }
  }
  return all;
}

let cuda: NativeHandle;
try {
  cuda = await load('cuda');
} catch (err) {
  console.error(`CUDA is not usable here: ${(err as Error).message}`);
  console.log(JSON.stringify({ ok: false, error: (err as Error).message }));
  process.exit(1);
}
const cpu = await load('cpu');
const cudaInfo = native.info(cuda);
const [onGpu, onCpu] = [await runAll(cuda), await runAll(cpu)];

const perOutput: Record<string, { max_abs_diff: number; mean_abs_diff: number }> = {};
let worst = 0;
for (const [name, ref] of onCpu) {
  const got = onGpu.get(name) ?? [];
  if (got.length !== ref.length) throw new Error(`output ${name}: ${got.length} values on CUDA, ${ref.length} on CPU`);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(got[i]! - ref[i]!);
    if (!(d <= max)) max = d; // NaN lands here too and fails the check
    sum += d;
  }
  perOutput[name] = { max_abs_diff: max, mean_abs_diff: sum / ref.length };
  if (!(max <= worst)) worst = max;
}

// The six core emotions are the first output in the manifest's order; the dominant one must agree.
const coreName = cudaInfo.outputs[0]!.name;
const width = cudaInfo.outputs[0]!.width;
const argmax = (row: number[], at: number): number => {
  let best = 0;
  for (let j = 1; j < width; j++) if (row[at + j]! > row[at + best]!) best = j;
  return best;
};
let disagree = 0;
for (let t = 0; t < texts.length; t++) {
  if (argmax(onGpu.get(coreName)!, t * width) !== argmax(onCpu.get(coreName)!, t * width)) disagree++;
}

await native.dispose(cuda);
await native.dispose(cpu);
const ok = cudaInfo.provider === 'cuda' && worst <= tolerance;
console.log(`provider ${cudaInfo.provider}, onnxruntime ${cudaInfo.ortVersion}, ${cudaInfo.threads} engine threads; ${texts.length} texts from ${dataFile ?? 'the tokenizer fixtures'} in batches of ${batch}`);
for (const [name, d] of Object.entries(perOutput)) {
  console.log(`  ${name.padEnd(16)} max |cuda - cpu| ${d.max_abs_diff.toExponential(2)}  mean ${d.mean_abs_diff.toExponential(2)}`);
}
console.log(`  dominant emotion differs on ${disagree} of ${texts.length} texts; tolerance ${tolerance}: ${ok ? 'pass' : 'FAIL'}`);
console.log(JSON.stringify({ ok, provider: cudaInfo.provider, ort_version: cudaInfo.ortVersion, texts: texts.length, max_abs_diff: worst, dominant_disagreements: disagree, outputs: perOutput }));
process.exitCode = ok ? 0 : 1;
