/**
 * `npm run bench:workers [-- --quick] [-- --workers 1,2,4] [-- --store memory|redis|both]`: throughput of a
 * request mix that never reaches the model, as SENTIO_HTTP_WORKERS grows. Each connection cycles through
 *
 *   GET  /v2/emotions/<ctx>                 stored state (aggregate, trend and baseline of --messages, 200)
 *   GET  /v2/emotions/<ctx>/message/<id>    one stored message
 *   GET  /v2/emotions/<ctx> with a bad key  401
 *   GET  /healthz                           the smallest request there is
 *
 * "workers=1" is the single-thread mode (HTTP on the main thread, as shipped by default). Servers run as
 * child processes of the built server (dist/src/main.js) with default logging to a file; autocannon runs
 * here and shares the machine's cores with the server, which caps the gain on small hosts (the summary
 * prints the core count and the load average). Every configuration is started once and measured in
 * alternating rounds (1, 2, 4, 1, 2, 4, ...); the medians are reported, so background load that drifts
 * during the run weighs on every configuration alike. "server cores" is the server process's CPU time
 * over the run's wall time. With --store redis a throw-away redis-server on loopback holds the state.
 * Results: bench/results/workers-<time>.json, then one JSON line on stdout.
 *
 * On a host shared with other work, Linux's autogroup scheduler gives each session one share of the CPU
 * however many threads it runs, which hides what extra threads buy. Measure in a session of its own with
 * a larger share (root): setsid sh -c 'echo -10 > /proc/self/autogroup; exec npm run -s bench:workers'
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { freePort, startChild } from './lib/process.js';
import { startRedis } from '../test/helpers/redis.js';
import type { Child } from './lib/process.js';
import { median } from './lib/stats.js';
import { writeResults } from './lib/results.js';
import { describeMachine } from './lib/machine.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const DURATION_S = quick ? 3 : 6;
const ROUNDS = Number(option('--rounds', quick ? '2' : '3'));
const CONNECTIONS = 64;
/** Requests in flight per connection (HTTP pipelining); 1 = none, as browsers and proxies send them. */
const PIPELINING = Number(option('--pipelining', '1'));
const WORKER_COUNTS = option('--workers', '1,2,4').split(',').map(Number);
const STORES = option('--store', 'memory') === 'both' ? ['memory', 'redis'] : [option('--store', 'memory')];
const KEY = 'sentio_bench_workers_key';
const CONTEXT = 'bench-ctx';
/** Messages in the context read back: a long conversation, so reading its state is real work. */
const CONTEXT_MESSAGES = Number(option('--messages', '200'));
const log = (s: string) => process.stderr.write(`${s}\n`);

interface MixResult {
  store: string;
  workers: number;
  round: number;
  rps: number;
  latencyMs: { p50: number; p99: number };
  statuses: Record<string, number>;
  errors: number;
  /** CPU seconds the server used per wall second of the run. */
  serverCores: number;
  rssMb: number;
}

/** User + system CPU seconds of a process so far (Linux /proc; clock ticks are 1/100 s there). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function server(workers: number, redisUrl: string | undefined): Promise<Child> {
  return startChild('dist/src/main.js', [], {
    SENTIO_PORT: String(await freePort()), SENTIO_API_KEYS: KEY, SENTIO_RATE_LIMIT_RPM: '1000000000',
    SENTIO_EXECUTION_PROVIDER: 'cpu', SENTIO_HTTP_WORKERS: String(workers), ...(redisUrl ? { SENTIO_REDIS_URL: redisUrl, SENTIO_REDIS_PREFIX: `bench${workers}:` } : {}),
  }, '"sentio listening"');
}

async function seed(base: string): Promise<void> {
  for (let i = 0; i < CONTEXT_MESSAGES; i += 50) {
    const batch = Array.from({ length: Math.min(50, CONTEXT_MESSAGES - i) }, (_, k) => ({
      externalId: `m${i + k}`, content: { text: `message ${i + k}: the day went better than I feared` },
    }));
    const r = await fetch(`${base}/v2/emotions/${CONTEXT}/analysis`, {
      method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: batch }),
    });
    if (r.status !== 200) throw new Error(`seeding the context failed: ${r.status} ${await r.text()}`);
  }
}

async function runMix(base: string): Promise<Pick<MixResult, 'rps' | 'latencyMs' | 'statuses' | 'errors'>> {
  const good = { 'x-api-key': KEY };
  const r = await autocannon({
    url: base,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: DURATION_S,
    requests: [
      { method: 'GET', path: `/v2/emotions/${CONTEXT}`, headers: good },
      { method: 'GET', path: `/v2/emotions/${CONTEXT}/message/m7`, headers: good },
      { method: 'GET', path: `/v2/emotions/${CONTEXT}`, headers: { 'x-api-key': 'sentio_not_a_key_0000000000' } },
      { method: 'GET', path: '/healthz' },
    ],
  });
  const statuses = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]));
  // The mix answers 200 (three of four) and 401 (the bad key); any other status is an error, not throughput.
  const answered = (statuses['200'] ?? 0) + (statuses['401'] ?? 0);
  const unexpected = Object.entries(statuses).filter(([k]) => k !== '200' && k !== '401').reduce((a, [, v]) => a + v, 0);
  return { rps: answered / Math.max(r.duration, 1e-9), latencyMs: { p50: r.latency.p50, p99: r.latency.p99 }, statuses, errors: r.errors + unexpected };
}

async function main(): Promise<void> {
  const cores = os.cpus().length;
  const load = os.loadavg()[0]!.toFixed(1);
  log(`bench:workers (${quick ? 'quick' : 'full'}): ${cores} × ${os.cpus()[0]?.model}, load average ${load}, node ${process.version}, ` +
    `${CONNECTIONS} connections × ${PIPELINING} pipelined, context of ${CONTEXT_MESSAGES} messages, ${ROUNDS} rounds of ${DURATION_S} s per configuration`);
  const results: MixResult[] = [];
  for (const store of STORES) {
    const redis = store === 'redis' ? await startRedis() : undefined;
    const servers = new Map<number, Child>();
    try {
      for (const workers of WORKER_COUNTS) {
        const child = await server(workers, redis?.url);
        servers.set(workers, child);
        const base = `http://127.0.0.1:${child.port}`;
        await seed(base);
        await runMix(base).catch(() => undefined); // warm-up: JIT, connection pools
      }
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [workers, child] of servers) {
          const cpuBefore = cpuSeconds(child.child.pid!);
          const started = performance.now();
          const m = await runMix(`http://127.0.0.1:${child.port}`);
          const serverCores = (cpuSeconds(child.child.pid!) - cpuBefore) / ((performance.now() - started) / 1000);
          const result: MixResult = { store, workers, round, ...m, serverCores, rssMb: child.rssMb() };
          results.push(result);
          log(`${store.padEnd(6)} round ${round} workers=${String(workers).padEnd(2)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${m.latencyMs.p50} ms p99 ${m.latencyMs.p99} ms  ` +
            `server cores ${serverCores.toFixed(2)}  statuses ${JSON.stringify(m.statuses)} errors ${m.errors}  rss ${result.rssMb.toFixed(0)} MB`);
        }
      }
    } finally {
      for (const child of servers.values()) await child.stop();
      await redis?.stop();
    }
  }
  const summary = STORES.map((store) => {
    const byWorkers = WORKER_COUNTS.map((w) => {
      const rows = results.filter((r) => r.store === store && r.workers === w);
      return { workers: w, rps: median(rows.map((r) => r.rps)), serverCores: median(rows.map((r) => r.serverCores)) };
    });
    const one = byWorkers.find((r) => r.workers === 1)?.rps ?? byWorkers[0]?.rps ?? NaN;
    return {
      store,
      medianRps: Object.fromEntries(byWorkers.map((r) => [r.workers, Math.round(r.rps)])),
      ratioToOneWorker: Object.fromEntries(byWorkers.map((r) => [r.workers, Number((r.rps / one).toFixed(2))])),
      serverCores: Object.fromEntries(byWorkers.map((r) => [r.workers, Number(r.serverCores.toFixed(2))])),
    };
  });
  for (const s of summary) {
    log(`${s.store}: median req/s ${JSON.stringify(s.medianRps)}  ratio to 1 worker ${JSON.stringify(s.ratioToOneWorker)}  server cores ${JSON.stringify(s.serverCores)}`);
  }
  const machine = { ...describeMachine(), cores, loadAverage: Number(load), connections: CONNECTIONS, pipelining: PIPELINING, contextMessages: CONTEXT_MESSAGES, durationS: DURATION_S, rounds: ROUNDS };
  writeResults('workers', { machine, results, summary });
  process.stdout.write(`${JSON.stringify({ bench: 'workers', machine, summary })}\n`);
}

main().catch((err: unknown) => {
  log(`bench:workers failed: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
