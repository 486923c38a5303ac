/**
 * `npm run bench:tenants -- [--rounds 3] [--seconds 8] [--bulk-connections 4] [--bulk-texts 256] [--rate 50]
 * [--light-keys 1] [--baseline fifo|no-lane|<json env>] [--quick]`:
 * API keys share one Sentio. Key A sends batches of long texts (about 100 words each) at
 * --bulk-connections; "key B", at the same time, sends one short text a request at --rate requests/s in
 * all, from --light-keys keys in turn (many light tenants, each with rate ÷ N), paced (so that its
 * latency is measured at a set load, and a faster answer does not buy it more of the machine), as an
 * interactive client would. Two servers run side by side, loaded in turn round after round: the
 * defaults (fair order between keys and the priority lane) and a baseline, first come, first served
 * (`fifo`: SENTIO_BATCH_FAIR=0), fair order without the lane (`no-lane`: SENTIO_BATCH_LANE=0), or the
 * defaults with the environment given as JSON (e.g. '{"SENTIO_RUN_MAX_TOKENS":"0"}').
 * Printed per server: B's latency p50/p99 and requests/s, A's texts/s, and B alone (no bulk load) for
 * reference; then the ratios, the baseline's p99 over the default's and the default's bulk texts/s over
 * the baseline's. Results: bench/results/tenants-<time>.json, then one JSON line on stdout.
 */
import { parseArgs } from 'node:util';
import { runLoad } from './lib/autocannon.js';
import type { LoadResult } from './lib/autocannon.js';
import { freePort, startChild } from './lib/process.js';
import type { Child } from './lib/process.js';
import { benchTexts } from './lib/texts.js';
import { median, round } from './lib/stats.js';
import { writeResults } from './lib/results.js';
import { describeMachine } from './lib/machine.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '8' },
    'bulk-connections': { type: 'string', default: '4' }, 'bulk-texts': { type: 'string', default: '256' },
    rate: { type: 'string', default: '50' }, 'light-keys': { type: 'string', default: '1' },
    baseline: { type: 'string', default: 'fifo' },
    quick: { type: 'boolean', default: false },
  },
});
const quick = args.quick === true;
const rounds = quick ? 1 : Number(args.rounds);
const seconds = quick ? 5 : Number(args.seconds);
const bulkConnections = Number(args['bulk-connections']);
const bulkTexts = Number(args['bulk-texts']);
const BULK_KEY = 'sentio_bench_bulk_key';
const lightKeys = Number(args['light-keys']);
if (!Number.isInteger(lightKeys) || lightKeys < 1) throw new Error('--light-keys takes a whole number ≥ 1');
const INTERACTIVE_KEYS = Array.from({ length: lightKeys }, (_, i) => `sentio_bench_interactive_key_${i}`);
let keyTurn = 0;
const BASELINES: Record<string, Record<string, string>> = { fifo: { SENTIO_BATCH_FAIR: '0' }, 'no-lane': { SENTIO_BATCH_LANE: '0' } };
/** The baseline server's name in the output and its environment, from --baseline. */
function baselineOf(arg: string): { name: string; env: Record<string, string> } {
  if (arg.startsWith('{')) return { name: 'baseline', env: JSON.parse(arg) as Record<string, string> };
  const env = BASELINES[arg];
  if (!env) throw new Error(`--baseline takes ${Object.keys(BASELINES).join(', ')} or a JSON object of environment variables`);
  return { name: arg, env };
}
const { name: baseline, env: baselineEnv } = baselineOf(args.baseline!);
const interactiveRate = Number(args.rate);
// Enough connections for B's requests at 125 ms each: a paced request that finds none free waits in
// this process, and that wait (counted in its latency) would grow without bound.
const INTERACTIVE_CONNECTIONS = Math.max(16, Math.ceil(interactiveRate / 8));

const texts = benchTexts();
let cursor = 0;
const next = () => texts[cursor++ % texts.length]!;
const longText = () => Array.from({ length: 5 }, next).join(' and ');
const bulkBody = () => JSON.stringify({ messages: Array.from({ length: bulkTexts }, () => ({ content: { text: longText() } })) });
const oneBody = () => JSON.stringify({ messages: [{ content: { text: next() } }] });

const log = (msg: string) => process.stderr.write(`${msg}\n`);

const interactive = (child: Child, durationS: number) => runLoad({
  name: 'interactive', url: `http://127.0.0.1:${child.port}`, connections: INTERACTIVE_CONNECTIONS, durationS,
  path: '/v2/emotions/analysis', body: oneBody, overallRate: interactiveRate,
  varyingHeaders: () => ({ 'x-api-key': INTERACTIVE_KEYS[keyTurn++ % lightKeys]! }),
});
const bulk = (child: Child, durationS: number) => runLoad({
  name: 'bulk', url: `http://127.0.0.1:${child.port}`, connections: bulkConnections, durationS,
  path: '/v2/emotions/batch-analysis', body: bulkBody, headers: { 'x-api-key': BULK_KEY }, textsPerRequest: bulkTexts,
});

interface Round { interactive: LoadResult; bulk: LoadResult }

async function main(): Promise<void> {
  const servers: { name: string; env: Record<string, string>; child?: Child; rounds: Round[]; alone?: LoadResult }[] = [
    { name: 'fair', env: {}, rounds: [] },
    { name: baseline, env: baselineEnv, rounds: [] },
  ];
  try {
    for (const s of servers) {
      const port = await freePort();
      s.child = await startChild('dist/src/main.js', [], {
        SENTIO_PORT: String(port), SENTIO_API_KEYS: [BULK_KEY, ...INTERACTIVE_KEYS].join(','), SENTIO_RATE_LIMIT_RPM: '1000000000', ...s.env,
      }, '"sentio listening"');
    }
    for (const s of servers) {
      await interactive(s.child!, 2); // warm-up
      s.alone = await interactive(s.child!, quick ? 3 : 5);
      log(`${s.name}: key B alone ${round(s.alone.rps)} req/s, p50 ${s.alone.latencyMs.p50} ms, p99 ${s.alone.latencyMs.p99} ms`);
    }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...servers].reverse() : servers;
      for (const s of order) {
        const [i, b] = await Promise.all([interactive(s.child!, seconds), bulk(s.child!, seconds)]);
        s.rounds.push({ interactive: i, bulk: b });
        log(`${s.name} round ${r + 1}: key B ${round(i.rps)} req/s, p50 ${i.latencyMs.p50} ms, p99 ${i.latencyMs.p99} ms, `
          + `${i.errors + i.non2xx} failed; key A ${round(b.textsPerS)} texts/s, p99 ${b.latencyMs.p99} ms, ${b.errors + b.non2xx} failed`);
      }
    }
    const summary = Object.fromEntries(servers.map((s) => [s.name, {
      interactive_rps: round(median(s.rounds.map((x) => x.interactive.rps))),
      interactive_p50_ms: median(s.rounds.map((x) => x.interactive.latencyMs.p50)),
      interactive_p99_ms: median(s.rounds.map((x) => x.interactive.latencyMs.p99)),
      bulk_texts_per_s: round(median(s.rounds.map((x) => x.bulk.textsPerS))),
      failed: s.rounds.reduce((a, x) => a + x.interactive.errors + x.interactive.non2xx + x.bulk.errors + x.bulk.non2xx, 0),
      alone_p50_ms: s.alone!.latencyMs.p50, alone_p99_ms: s.alone!.latencyMs.p99,
    }]));
    const fair = summary['fair']!;
    const base = summary[baseline]!;
    const ratios = {
      interactive_p99_baseline_over_fair: round(base.interactive_p99_ms / fair.interactive_p99_ms, 2),
      interactive_p50_baseline_over_fair: round(base.interactive_p50_ms / fair.interactive_p50_ms, 2),
      bulk_texts_fair_over_baseline: round(fair.bulk_texts_per_s / base.bulk_texts_per_s, 3),
    };
    log(`key B (one text a request, ${interactiveRate}/s paced${lightKeys > 1 ? ` over ${lightKeys} keys` : ''}) beside key A (${bulkTexts} long texts a request, ${bulkConnections} connections):`);
    for (const [name, x] of Object.entries(summary)) {
      log(`  ${name.padEnd(7)} B p50 ${x.interactive_p50_ms} ms, p99 ${x.interactive_p99_ms} ms, ${x.interactive_rps} req/s; A ${x.bulk_texts_per_s} texts/s; B alone p50 ${x.alone_p50_ms} ms${x.failed ? `; FAILED ${x.failed}` : ''}`);
    }
    log(`ratios: B's p99 ${baseline}/fair ${ratios.interactive_p99_baseline_over_fair}, p50 ${ratios.interactive_p50_baseline_over_fair}; `
      + `A's texts/s fair/${baseline} ${ratios.bulk_texts_fair_over_baseline}`);
    const machine = { ...describeMachine(), quick };
    const result = { bench: 'tenants', machine, rounds, seconds, bulkConnections, bulkTexts, interactiveRate, lightKeys, baseline, interactiveConnections: INTERACTIVE_CONNECTIONS, summary, ratios,
      raw: servers.map((s) => ({ name: s.name, env: s.env, alone: s.alone, rounds: s.rounds })) };
    log(`results: ${writeResults('tenants', result)}`);
    process.stdout.write(`${JSON.stringify({ baseline, ...summary, ...ratios })}\n`);
  } finally {
    for (const s of servers) await s.child?.stop();
  }
}

await main();
