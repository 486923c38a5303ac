/**
 * `npm run bench:ab -- '<json list of env objects>' [--rounds 8] [--seconds 3] [--texts 1] [--connections 64]
 * [--contexts N] [--all-answers]`: Sentio under the load bench's V2 stateless scenario (one message a request at 64
 * connections unless --texts / --connections say otherwise; the load bench's batch scenario is --texts 32
 * --connections 16; --contexts N analyses in N contexts in turn, which grow over the rounds up to the
 * stored-message bound), one server per list entry (its environment
 * overrides), all started at once and loaded in turn, round after round, in alternating order. This
 * machine's speed drifts by a quarter within minutes, so a change worth a few percent only shows in
 * ratios taken close together: each round's requests/s is divided by the first entry's in the same
 * round, and the median of those ratios is printed, with each round's, the machine's idle share and the
 * server's CPU per request. Each entry is one server process for the whole comparison, so what differs
 * between two processes is not averaged out by the rounds: the same settings listed twice (an A/A
 * control) measured x0.988-x1.017 in four comparisons on 2026-11-25, so a change under about 2% needs
 * such a control beside it; on the morning of 2026-11-26 controls read x0.905-x1.026, so how far a
 * control strays in the same run is the margin to read a change against. Example: npm run bench:ab -- '[{},{"SENTIO_BATCH_STREAM_CHUNK":"0"},{}]'
 * An entry's "_script" runs another build instead of dist/src/main.js (a copy of dist/ made before a code
 * change, kept inside the project so that it finds node_modules): '[{"_script":"dist-before/src/main.js"},{}]'
 * --all-answers counts every answer, not only 2xx, in requests/s and the CPU per request: what a refusal
 * costs, with settings that make the server refuse (e.g. '{"SENTIO_RATE_LIMIT_RPM":"1"}': every request 429).
 * Results: the printed table and JSON line, and bench/results/ab-<time>.json with every round.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { runLoad } from './lib/autocannon.js';
import { freePort, startChild } from './lib/process.js';
import type { Child } from './lib/process.js';
import { benchTexts } from './lib/texts.js';
import { median } from './lib/stats.js';
import { writeResults } from './lib/results.js';
import { describeMachine, machineTimes } from './lib/machine.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '3' },
    texts: { type: 'string', default: '1' }, connections: { type: 'string', default: '64' },
    contexts: { type: 'string', default: '0' },
    'all-answers': { type: 'boolean', default: false },
  },
});
const variants = JSON.parse(positionals[0] ?? '[{"SENTIO_BATCH_STREAM_CHUNK":"0"},{}]') as Record<string, string>[];
if (!Array.isArray(variants) || variants.length < 2) throw new Error('give a JSON list of at least two environment objects');
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
const KEY = 'sentio_bench_key';
const texts = benchTexts();
let cursor = 0;
const textsPerRequest = Number(args.texts);
const connections = Number(args.connections);
const contexts = Number(args.contexts);
const allAnswers = args['all-answers'];
let contextCursor = 0;
const path = contexts > 0
  ? () => `/v2/emotions/ab-${contextCursor++ % contexts}/analysis`
  : () => (textsPerRequest > 1 ? '/v2/emotions/batch-analysis' : '/v2/emotions/analysis');
const body = () => JSON.stringify({
  messages: Array.from({ length: textsPerRequest }, () => ({ content: { text: texts[cursor++ % texts.length]! } })),
});

interface Turn { rps: number; p99: number; idlePct: number; mainUs: number; engineUs: number; failed: number }

async function turn(child: Child, durationS: number): Promise<Turn> {
  const m0 = machineTimes();
  const s0 = child.cpuSeconds();
  const r = await runLoad({
    name: 'ab', url: `http://127.0.0.1:${child.port}`, connections, durationS,
    path, body, headers: { 'x-api-key': KEY },
  });
  const m = machineTimes();
  const s = child.cpuSeconds();
  const rps = allAnswers ? r.rps + r.non2xx / r.durationS : r.rps;
  const n = Math.max(1, rps * r.durationS);
  return {
    rps,
    p99: r.latencyMs.p99,
    idlePct: (100 * (m.idle - m0.idle)) / Math.max(1, m.total - m0.total),
    mainUs: ((s.main - s0.main) * 1e6) / n,
    engineUs: ((s.engine - s0.engine) * 1e6) / n,
    // rps counts 2xx only (unless --all-answers); p99 counts every answer, so a variant that sheds load must say so
    failed: r.errors + (allAnswers ? 0 : r.non2xx),
  };
}

async function main(): Promise<void> {
  const children: Child[] = [];
  try {
    for (const { _script: script, ...env } of variants) {
      const port = await freePort();
      children.push(await startChild(script ?? 'dist/src/main.js', [], {
        SENTIO_PORT: String(port), SENTIO_API_KEYS: KEY, SENTIO_RATE_LIMIT_RPM: '1000000000', ...env,
      }, '"sentio listening"'));
    }
    for (const c of children) await turn(c, 2); // warm-up: JIT, arenas, pools
    const turns: Turn[][] = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const order = [...children.keys()];
      if (r % 2) order.reverse();
      for (const i of order) turns[i]!.push(await turn(children[i]!, seconds));
    }
    console.log(`${rounds} rounds x ${seconds} s per server, ${textsPerRequest} text(s) a request at ${connections} connections` +
      `${contexts > 0 ? ` in ${contexts} contexts` : ''}, ` +
      `${os.cpus().length} x ${os.cpus()[0]?.model}; ratios are per round, against the first entry`);
    const summary = variants.map((env, i) => {
      const t = turns[i]!;
      const ratios = t.map((x, r) => x.rps / turns[0]![r]!.rps);
      const row = {
        env, rps: Math.round(median(t.map((x) => x.rps))), vs_first: Number(median(ratios).toFixed(3)),
        rounds_ahead: ratios.filter((x) => x > 1).length, p99_ms: median(t.map((x) => x.p99)), idle_pct: Number(median(t.map((x) => x.idlePct)).toFixed(1)),
        main_us: Math.round(median(t.map((x) => x.mainUs))), engine_us: Math.round(median(t.map((x) => x.engineUs))),
        failed: t.reduce((a, x) => a + x.failed, 0),
      };
      console.log(`${JSON.stringify(env).padEnd(44)} ${String(row.rps).padStart(6)} req/s  x${row.vs_first.toFixed(3)} (ahead in ${row.rounds_ahead}/${rounds})  p99 ${row.p99_ms} ms  ` +
        `idle ${row.idle_pct}%  CPU µs/request: main ${row.main_us}, engine ${row.engine_us}  rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}` +
        `${row.failed ? `  FAILED ${row.failed} (errors and non-2xx; p99 includes them)` : ''}`);
      return row;
    });
    console.log(JSON.stringify(summary));
    // Kept, so that a figure quoted from a comparison can be checked against its file.
    const file = writeResults('ab', {
      args: { rounds, seconds, texts: textsPerRequest, connections, contexts, allAnswers },
      machine: describeMachine(),
      variants: summary, turns,
    });
    console.log(`results: ${file}`);
  } finally {
    for (const c of children) await c.stop();
  }
}

await main();
