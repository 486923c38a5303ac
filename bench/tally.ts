/**
 * `npm run bench:tally [-- --since 2026-11-25T20:54] [--full]`: how often each of the load bench's five bars
 * held, counted from the results files under bench/results/ (load-*.json), so that the README's counts come
 * from a command. A run counts from the bench's rounds of V2 single messages on (2026-11-25 20:54), quick
 * runs included unless --full. Each bar is read as that run judged it (its ratios against the raw engine
 * measured beside its scenario), and Sentio/raw and batch of 32 / raw also against the raw engine's best
 * anywhere in the run (the strictest reading; for files from before the bench wrote it, the best of the
 * measurements the file holds). Runs with another --provider than cpu are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median } from './lib/stats.js';
import { BARS, judgeBars } from './lib/bars.js';
import type { BarFigures } from './lib/bars.js';

const { values: args } = parseArgs({ options: { since: { type: 'string' }, full: { type: 'boolean', default: false } } });

interface RunFile {
  machine?: { cpuFeatures?: { simd?: string } | null };
  raw?: { best?: number; beside?: { beforeBatch32?: number; afterBatch32?: number; v2Rounds?: Array<{ before: number; after: number }> } };
  summary: BarFigures & {
    provider?: string; quick?: boolean; sentio_rps: number; batch32_texts_per_s: number; sentio_vs_raw_rounds?: number[];
    raw_engine_best_in_run_texts_per_s?: number;
  };
}

const dir = 'bench/results';
const stampOf = (name: string) => name.slice('load-'.length, -'.json'.length).replace(/T(\d\d)-(\d\d)-(\d\d)-\d+Z$/, 'T$1:$2:$3');
const runs = readdirSync(dir)
  .filter((f) => f.startsWith('load-') && f.endsWith('.json'))
  .sort()
  .map((f) => ({ name: f, at: stampOf(f), file: JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as RunFile }))
  .filter((r) => r.file.summary?.sentio_vs_raw_rounds !== undefined)
  // The bars are set for the 2-core CPU machine; a --provider cuda or hybrid run on a GPU host is not one.
  .filter((r) => (r.file.summary.provider ?? 'cpu') === 'cpu')
  .filter((r) => !args.since || r.at >= args.since)
  .filter((r) => !args.full || !r.file.summary.quick);

/** The raw engine's best in a run: the summary's, or the most of the sweep and the measurements beside the scenarios. */
function rawBest(f: RunFile): number | undefined {
  if (f.summary.raw_engine_best_in_run_texts_per_s) return f.summary.raw_engine_best_in_run_texts_per_s;
  const b = f.raw?.beside;
  const all = [f.raw?.best, b?.beforeBatch32, b?.afterBatch32, ...(b?.v2Rounds ?? []).flatMap((r) => [r.before, r.after])];
  const known = all.filter((x): x is number => typeof x === 'number' && x > 0);
  return known.length ? Math.max(...known) : undefined;
}

const count = (label: string, held: (s: RunFile) => boolean | null) => {
  let yes = 0;
  let judged = 0;
  for (const r of runs) {
    const h = held(r.file);
    if (h === null) continue;
    judged++;
    if (h) yes++;
  }
  console.log(`${label.padEnd(52)} ${String(yes).padStart(3)} of ${judged}`);
};

if (runs.length === 0) {
  console.log('no load results with V2 rounds in bench/results/');
  process.exit(0);
}
console.log(`${runs.length} runs (${runs.filter((r) => r.file.summary.quick).length} quick), ${runs[0]!.at} to ${runs.at(-1)!.at}${args.full ? ', full runs only' : ''}`);
count(`Sentio/peer >= ${BARS.sentioVsPeer}`, (f) => judgeBars(f.summary).sentio_vs_peer);
count(`Sentio/raw >= ${BARS.sentioVsRaw} (raw beside the V2 rounds)`, (f) => judgeBars(f.summary).sentio_vs_raw);
count(`Sentio/raw >= ${BARS.sentioVsRaw} (the run's best raw)`, (f) => { const b = rawBest(f); return b ? f.summary.sentio_rps / b >= BARS.sentioVsRaw : null; });
count(`batch of 32 / raw >= ${BARS.batch32VsRaw} (raw beside the batch)`, (f) => judgeBars(f.summary).batch32_vs_raw);
count(`batch of 32 / raw >= ${BARS.batch32VsRaw} (the run's best raw)`, (f) => { const b = rawBest(f); return b ? f.summary.batch32_texts_per_s / b >= BARS.batch32VsRaw : null; });
count(`p99 <= ${BARS.p99Ms} ms at 70% (judged steps)`, (f) => judgeBars(f.summary).p99_at_70pct);
count(`RSS <= ${BARS.rssMb} MB`, (f) => judgeBars(f.summary).rss);
const ratios = runs.map((r) => r.file.summary.sentio_vs_raw);
console.log(`Sentio/raw: median ${median(ratios).toFixed(3)}, ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`);
const hosts = new Map<string, number>();
for (const r of runs) {
  const simd = r.file.machine?.cpuFeatures?.simd ?? 'not recorded';
  hosts.set(simd, (hosts.get(simd) ?? 0) + 1);
}
console.log(`CPU vector width recorded: ${[...hosts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
