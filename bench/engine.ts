/**
 * Engine benchmark (`npm run bench:engine`): throughput and latency of
 *   raw      the native engine alone, one closed-loop caller sending batches of 1, 8, 32 and 128 texts;
 *   batcher  the Engine (micro-batcher + native engine) with 1, 16 and 64 concurrent callers, one text each;
 *   baseline what a typical Node user writes: onnxruntime-node's JS API with the JS tokenizer, one call
 *            per text (bench/peer/ort-scorer.ts), at the same concurrency. With --provider cuda the
 *            baseline is the same batcher on CPU instead: the CUDA runtime (docs/gpu.md) and
 *            onnxruntime-node's cannot share a process, as both are libonnxruntime.so.1.
 * Texts are the dair-ai val split (../shared/data), cycled. Scenarios run interleaved over several rounds so
 * that a change in machine load hits all of them alike. The last line is JSON.
 *
 *   npm run bench:engine -- [--seconds 2] [--rounds 3] [--inference-threads N] [--intra-threads N]
 *                           [--provider cpu|auto|cuda] [--batches 1,8,32,128] [--quick]
 *                           [--model-dir DIR] [--baseline-model DIR | --baseline-unpacked]
 * --baseline-model also runs the raw scenarios on another model directory (the same model re-laid, an
 * earlier version), interleaved with the model under test, and prints the ratio at each batch size.
 * --baseline-unpacked does the same with the model under test run by ONNX Runtime's own GRU and pooling
 * operators instead of the addon's PackedGRU and MaskedPool (engine options packedRecurrence and
 * fusedPooling false).
 * The raw engine keeps as many batches outstanding as the batcher may (2), so "raw" is the engine's full
 * capacity at that batch size. The baseline uses onnxruntime-node's defaults except
 * intra-op threads = CPUs, what a Node user typically sets.
 *   npm run bench:engine -- --memory [--texts 200000]    RSS growth over many analysed texts
 *   npm run bench:engine -- --idle [--calls 200]          one text after an idle spell, wake steering on vs off
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { native } from '../src/engine/binding.js';
import type { ExecutionProvider, NativeHandle } from '../src/engine/binding.js';
import { createEngine } from '../src/engine/engine.js';
import { closedLoop } from './lib/closed-loop.js';
import { describeMachine } from './lib/machine.js';
import { writeResults } from './lib/results.js';
import { percentile } from './lib/stats.js';
import type { Engine, EngineOptions } from '../src/engine/engine.js';
import { readModelFiles } from '../src/engine/model-files.js';
import { threadPlan } from '../src/engine/options.js';

// bench/engine.ts runs from bench/ (tsx, vitest) or, built, from dist/bench/.
const ROOT = basename(dirname(import.meta.dirname)) === 'dist' ? join(import.meta.dirname, '..', '..') : join(import.meta.dirname, '..');

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    'inference-threads': { type: 'string', default: '0' },
    'intra-threads': { type: 'string', default: '0' },
    'model-dir': { type: 'string' },
    'baseline-model': { type: 'string' },
    'baseline-unpacked': { type: 'boolean', default: false },
    provider: { type: 'string', default: 'cpu' },
    memory: { type: 'boolean', default: false },
    idle: { type: 'boolean', default: false },
    calls: { type: 'string', default: '200' },
    texts: { type: 'string', default: '200000' },
    quick: { type: 'boolean', default: false },
    batches: { type: 'string', default: '1,8,32,128' },
  },
});

const modelDir = args['model-dir'] ?? join(ROOT, 'models', 'emotion');
const provider = args.provider as ExecutionProvider;
// One engine's capacity: hybrid is two engines (src/engine/hybrid.ts), measured by the load bench.
if (!['cpu', 'auto', 'cuda'].includes(provider)) throw new Error(`--provider must be cpu, auto or cuda (hybrid: npm run bench -- --provider hybrid), not ${provider}`);
const plan = threadPlan({
  inferenceThreads: Number(args['inference-threads']),
  intraOpThreads: Number(args['intra-threads']),
  maxBatchesInFlight: 0,
});
const seconds = args.quick ? 0.5 : Number(args.seconds);
const rawBatches = args.batches.split(',').map(Number);
const baselineKind = provider === 'cpu' ? 'ort-js' : 'sentio-cpu';
const rounds = args.quick ? 1 : Number(args.rounds);

function dairTexts(): string[] {
  const path = join(ROOT, '..', 'shared', 'data', 'dair-ai-emotion', 'val.txt');
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.slice(0, l.lastIndexOf(';')));
}

/** Accumulates one scenario over rounds. */
class Tally {
  texts = 0;
  ms = 0;
  latencies: number[] = [];
  add(texts: number, ms: number, latencies: number[]): void {
    this.texts += texts;
    this.ms += ms;
    for (const l of latencies) this.latencies.push(l);
  }
  get perSecond(): number {
    return (this.texts / this.ms) * 1000;
  }
  pct(p: number): number {
    return percentile(this.latencies.slice().sort((a, b) => a - b), p) ?? NaN;
  }
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

async function throughputBench(): Promise<void> {
  const texts = dairTexts();
  const pick = (k: number): string => texts[k % texts.length]!;
  const batch = (k: number, n: number): string[] => Array.from({ length: n }, (_, i) => pick(k + i));

  const engineOptions: EngineOptions = {
    modelDir,
    executionProvider: provider,
    inferenceThreads: plan.threads,
    intraOpThreads: plan.intraOpThreads,
  };
  const engine: Engine = await createEngine(engineOptions);
  const loadRaw = async (dir: string, rewritten = true): Promise<NativeHandle> => {
    const files = await readModelFiles(dir, { verifyChecksums: false });
    return native.load({
      modelPath: files.modelPath,
      tokenizer: files.tokenizer,
      executionProvider: provider,
      threads: plan.threads,
      intraOpThreads: plan.intraOpThreads,
      interOpThreads: 1,
      packedRecurrence: rewritten,
      fusedPooling: rewritten,
      maxRunTexts: Math.max(...rawBatches),
      maxRunTokens: engine.info.batching.maxRunTokens, // the engine's plan, not the addon's unbounded default
    });
  };
  const handle = await loadRaw(modelDir);
  const otherDir = args['baseline-model'];
  const other = otherDir !== undefined ? await loadRaw(otherDir)
    : args['baseline-unpacked'] ? await loadRaw(modelDir, false) : undefined;
  const otherName = otherDir ?? "ONNX Runtime's GRU and pooling";
  // Loaded only when used: onnxruntime-node's binding would bind to whichever libonnxruntime.so.1 is loaded.
  const peer: { analyze(texts: string[]): Promise<unknown>; close(): Promise<void> } = baselineKind === 'ort-js'
    ? await (await import('./peer/ort-scorer.js')).OrtJsScorer.load(modelDir, availableParallelism())
    : await createEngine({ ...engineOptions, executionProvider: 'cpu' });

  const raw = new Map<number, Tally>(rawBatches.map((b) => [b, new Tally()]));
  const rawOther = new Map<number, Tally>(rawBatches.map((b) => [b, new Tally()]));
  const batched = new Map<number, Tally>([1, 16, 64].map((c) => [c, new Tally()]));
  const baseline = new Map<number, Tally>([1, 16, 64].map((c) => [c, new Tally()]));

  // Warm all three paths (JIT, arenas) before measuring.
  await closedLoop(plan.maxBatchesInFlight, 300, 32, (k) => native.run(handle, batch(k, 32)));
  if (other) await closedLoop(plan.maxBatchesInFlight, 300, 32, (k) => native.run(other, batch(k, 32)));
  await closedLoop(16, 300, 1, (k) => engine.analyze([pick(k)]));
  await closedLoop(4, 300, 1, (k) => peer.analyze([pick(k)]));

  const ms = seconds * 1000;
  for (let r = 0; r < rounds; r++) {
    for (const [b, t] of raw) {
      const res = await closedLoop(plan.maxBatchesInFlight, ms, b, (k) => native.run(handle, batch(k, b)));
      t.add(res.texts, res.ms, res.latencies);
      if (other) {
        const o = await closedLoop(plan.maxBatchesInFlight, ms, b, (k) => native.run(other, batch(k, b)));
        rawOther.get(b)!.add(o.texts, o.ms, o.latencies);
      }
    }
    for (const [c, t] of batched) {
      const res = await closedLoop(c, ms, 1, (k) => engine.analyze([pick(k)]));
      t.add(res.texts, res.ms, res.latencies);
    }
    for (const [c, t] of baseline) {
      const res = await closedLoop(c, ms, 1, (k) => peer.analyze([pick(k)]));
      t.add(res.texts, res.ms, res.latencies);
    }
  }

  const info = engine.info;
  console.log(`Sentio engine bench: model ${info.model.name}@${info.model.version}, ${info.provider}, onnxruntime ${info.ortVersion}, ` +
    `${info.inferenceThreads} engine threads x ${info.intraOpThreads} intra-op, ${availableParallelism()} CPUs, node ${process.version}`);
  console.log(`batcher: maxBatchSize ${info.batching.maxBatchSize}, maxBatchTokens ${info.batching.maxBatchTokens}, ` +
    `maxWaitMs ${info.batching.maxWaitMs}, maxBatchesInFlight ${info.batching.maxBatchesInFlight}; ${rounds} rounds x ${seconds}s per scenario\n`);
  const row = (name: string, t: Tally): void =>
    console.log(`${name.padEnd(30)} ${fmt(t.perSecond).padStart(8)} texts/s   p50 ${fmt(t.pct(50), 2).padStart(7)} ms   p99 ${fmt(t.pct(99), 2).padStart(7)} ms`);
  for (const [b, t] of raw) row(`raw engine, batch ${b}`, t);
  if (other) for (const [b, t] of rawOther) row(`raw, baseline model, batch ${b}`, t);
  console.log(`(raw: ${plan.maxBatchesInFlight} batches outstanding; latency is per batch)`);
  if (other) {
    console.log(`model / baseline (${otherName}): ` +
      rawBatches.map((b) => `batch ${b} ${(raw.get(b)!.perSecond / rawOther.get(b)!.perSecond).toFixed(2)}x`).join(', '));
  }
  for (const [c, t] of batched) row(`batcher, ${c} callers`, t);
  for (const [c, t] of baseline) row(`baseline (${baselineKind}), ${c} callers`, t);

  const rawBest = Math.max(...[...raw.values()].map((t) => t.perSecond));
  const b64 = batched.get(64)!;
  const base64 = baseline.get(64)!;
  console.log('');
  for (const c of [1, 16, 64]) {
    console.log(`${c} callers: batcher / baseline = ${(batched.get(c)!.perSecond / baseline.get(c)!.perSecond).toFixed(2)}x, ` +
      `batcher / raw best = ${(batched.get(c)!.perSecond / rawBest).toFixed(2)}x`);
  }
  const summary = {
    raw_best_texts_per_s: Math.round(rawBest),
    baseline_kind: baselineKind,
    baseline_texts_per_s: Math.round(base64.perSecond),
    batcher_texts_per_s: Math.round(b64.perSecond),
    batcher_vs_baseline: Number((b64.perSecond / base64.perSecond).toFixed(3)),
    batcher_vs_raw: Number((b64.perSecond / rawBest).toFixed(3)),
    batcher_p99_ms: Number(b64.pct(99).toFixed(2)),
    batcher_p50_ms: Number(b64.pct(50).toFixed(2)),
    baseline_p99_ms: Number(base64.pct(99).toFixed(2)),
    raw: Object.fromEntries([...raw].map(([b, t]) => [`batch_${b}`, { texts_per_s: Math.round(t.perSecond), p50_ms: t.pct(50), p99_ms: t.pct(99) }])),
    batcher: Object.fromEntries([...batched].map(([c, t]) => [`callers_${c}`, { texts_per_s: Math.round(t.perSecond), p50_ms: t.pct(50), p99_ms: t.pct(99) }])),
    baseline: Object.fromEntries([...baseline].map(([c, t]) => [`callers_${c}`, { texts_per_s: Math.round(t.perSecond), p50_ms: t.pct(50), p99_ms: t.pct(99) }])),
    engine_threads: info.inferenceThreads,
    intra_op_threads: info.intraOpThreads,
    cpus: availableParallelism(),
    model_version: info.model.version,
    ...(other ? { raw_vs_baseline_model: Object.fromEntries(rawBatches.map((b) => [`batch_${b}`, Number((raw.get(b)!.perSecond / rawOther.get(b)!.perSecond).toFixed(3))])) } : {}),
  };
  await engine.close();
  await native.dispose(handle);
  if (other) await native.dispose(other);
  await peer.close();
  console.error(`results: ${writeResults('engine', { machine: describeMachine(), args, summary })}`);
  console.log(JSON.stringify(summary));
}

/** RSS growth over many analysed texts after a warm-up, through the batcher with 64 callers. */
async function memoryBench(): Promise<void> {
  const total = Number(args.texts);
  const texts = dairTexts();
  const engine = await createEngine({ modelDir, executionProvider: provider, inferenceThreads: plan.threads, intraOpThreads: plan.intraOpThreads });
  const run = async (n: number): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) {
          const k = next++;
          const ac = new AbortController(); // the server passes a signal per request; exercise that path
          await engine.analyze([`${texts[k % texts.length]!} ${k}`], { signal: ac.signal });
        }
      }),
    );
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  const settle = async (): Promise<number> => {
    gc?.();
    await new Promise((r) => setTimeout(r, 200));
    gc?.();
    return process.memoryUsage().rss;
  };
  await run(20_000); // warm-up: JIT, ORT arenas, V8 heap growth
  const before = await settle();
  const started = performance.now();
  await run(total);
  const seconds = (performance.now() - started) / 1000;
  const after = await settle();
  const growthMb = (after - before) / (1 << 20);
  console.log(`memory: ${fmt(total)} texts in ${seconds.toFixed(1)} s; RSS ${fmt(before / (1 << 20), 1)} MB -> ${fmt(after / (1 << 20), 1)} MB ` +
    `(growth ${growthMb.toFixed(1)} MB${gc ? '' : ', run with --expose-gc for a steadier figure'})`);
  await engine.close();
  const summary = { memory_texts: total, rss_before_mb: Number((before / (1 << 20)).toFixed(1)), rss_after_mb: Number((after / (1 << 20)).toFixed(1)), rss_growth_mb: Number(growthMb.toFixed(1)) };
  console.error(`results: ${writeResults('engine-memory', { machine: describeMachine(), args, summary })}`);
  console.log(JSON.stringify(summary));
}

/**
 * A lightly loaded server: one text at a time after an idle spell, while the JS thread does 0.5 ms of
 * other work (a chat turn reads the words meanwhile). Two engines, wake steering on and off, take turns
 * call by call, so machine load hits both alike; the figure is each call's time to its scores.
 */
async function idleBench(): Promise<void> {
  const calls = Number(args.calls);
  const texts = dairTexts();
  const opts = { modelDir, executionProvider: provider, inferenceThreads: plan.threads, intraOpThreads: plan.intraOpThreads };
  const engines = { on: await createEngine({ ...opts, steerWakeups: true }), off: await createEngine({ ...opts, steerWakeups: false }) };
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const result: Record<string, Record<string, number>> = {};
  for (const idleMs of [2, 10, 50]) {
    const times = { on: new Tally(), off: new Tally() };
    for (let i = 0; i < calls; i++) {
      for (const which of ['on', 'off'] as const) {
        await new Promise((r) => setTimeout(r, idleMs));
        const started = performance.now();
        const scored = engines[which].analyze([texts[i % texts.length]!], { urgent: true });
        await new Promise((r) => setImmediate(r)); // the batcher hands the text over on this turn
        busy(0.5);
        await scored;
        const ms = performance.now() - started;
        times[which].add(1, ms, [ms]);
      }
    }
    const ms3 = (x: number) => Number(x.toFixed(3));
    const row = {
      on_p50_ms: ms3(times.on.pct(50)), on_p90_ms: ms3(times.on.pct(90)),
      off_p50_ms: ms3(times.off.pct(50)), off_p90_ms: ms3(times.off.pct(90)),
      on_vs_off_p50: ms3(times.on.pct(50) / times.off.pct(50)),
    };
    result[`idle_${idleMs}ms`] = row;
    console.log(`idle ${String(idleMs).padStart(2)} ms, then 1 text + 0.5 ms JS work: steering on p50 ${row.on_p50_ms} p90 ${row.on_p90_ms} ms | ` +
      `off p50 ${row.off_p50_ms} p90 ${row.off_p90_ms} ms | on/off p50 ${row.on_vs_off_p50}`);
  }
  console.log(`wake steering active: ${engines.on.info.wakeSteering} (needs Linux and 2+ CPUs)`);
  await engines.on.close();
  await engines.off.close();
  const summary = { idle: result, wake_steering: engines.on.info.wakeSteering };
  console.error(`results: ${writeResults('engine-idle', { machine: describeMachine(), args, summary })}`);
  console.log(JSON.stringify(summary));
}

await (args.memory ? memoryBench() : args.idle ? idleBench() : throughputBench());
