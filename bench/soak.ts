/**
 * `npm run bench:soak [-- --minutes 10 --window 30 --contexts 500 --store redis]`: a mixed workload
 * (stateless, context, batch of 8, GET state) against one Sentio child with the default settings, for a
 * configurable time, reported per window so RSS and latency drift show. Context writes go round a set of
 * ids, so histories keep growing through the run (a set larger than the store's bound would leave every
 * context at one message, which says nothing about memory). `--store redis` keeps Sentio's state in a
 * throw-away redis-server, as several instances would share it, and reports that server's memory too.
 * Writes bench/results/soak-<time>.json and ends with one JSON line.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { benchTexts } from './lib/texts.js';
import { runLoad } from './lib/autocannon.js';
import { freePort, startChild } from './lib/process.js';
import { startRedis } from '../test/helpers/redis.js';
import { writeResults } from './lib/results.js';
import { describeMachine } from './lib/machine.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' }, window: { type: 'string', default: '30' },
    contexts: { type: 'string', default: '500' }, store: { type: 'string', default: 'memory' },
  },
});
const minutes = Number(values.minutes);
const windowS = Number(values.window);
const contexts = Number(values.contexts);
const store = values.store;
if (store !== 'memory' && store !== 'redis') throw new Error(`--store must be memory or redis, not ${store}`);
const KEY = 'sentio_soak_key';
const texts = benchTexts();
let cursor = 0;
const nextText = () => texts[cursor++ % texts.length]!;

/** Bytes the redis-server holds for its data (INFO memory's used_memory). */
async function redisUsedMb(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Math.round(Number(/used_memory:(\d+)/.exec(info)?.[1]) / 1e5) / 10;
}

/** Contexts the server's store holds, from /metrics (sentio_contexts_stored). */
async function storedContexts(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'x-api-key': KEY } })).text();
  return Number(/^sentio_contexts_stored (\d+)/m.exec(text)?.[1] ?? NaN);
}

async function main(): Promise<void> {
  const port = await freePort();
  const redis = store === 'redis' ? await startRedis() : undefined;
  const client = redis ? new Redis(redis.url, { lazyConnect: true }) : undefined;
  await client?.connect();
  const child = await startChild('dist/src/main.js', [], {
    SENTIO_PORT: String(port), SENTIO_API_KEYS: KEY, SENTIO_RATE_LIMIT_RPM: '1000000000', SENTIO_EXECUTION_PROVIDER: 'cpu',
    ...(redis ? { SENTIO_REDIS_URL: redis.url } : {}),
  }, '"sentio listening"');
  // Each request picks one of four kinds in turn; paths and bodies vary.
  let n = 0;
  // The ids of the last 64 context writes that were answered 200. A write still out when a window ends is
  // cut off with its connection and never stored, so a GET must not assume that every id sent exists.
  const written: string[] = [];
  const mix = [
    { method: 'POST' as const, path: () => '/v2/emotions/analysis', body: () => JSON.stringify({ messages: [{ content: { text: nextText() } }] }) },
    {
      method: 'POST' as const,
      path: () => `/v2/emotions/soak-${++n % contexts}/analysis`,
      body: () => JSON.stringify({ messages: [{ externalId: `m${n}`, content: { text: nextText() } }] }),
      onAnswered: (status: number, path: string) => {
        if (status !== 200) return;
        messages++;
        written.push(path.split('/')[3]!);
        if (written.length > 64) written.shift();
      },
    },
    { method: 'POST' as const, path: () => '/v2/emotions/batch-analysis', body: () => JSON.stringify({ messages: Array.from({ length: 8 }, () => ({ content: { text: nextText() } })) }) },
    // The oldest of those 64, well within the store's bounds, so it exists: a 404 is a
    // lost write. A connection's own write was answered before its GET, so `written` is never empty here.
    { method: 'GET' as const, path: () => `/v1/emotions/${written[0]}` },
  ];
  const windows: Array<{ t: number; rps: number; p50: number; p99: number; rssMb: number; peakRssMb: number; storedContexts: number; storedMessages: number; redisMb?: number; errors: number }> = [];
  let messages = 0; // context writes answered 200: the messages the store holds (each write adds one)
  const started = Date.now();
  while (Date.now() - started < minutes * 60_000) {
    const r = await runLoad({
      name: 'soak', url: `http://127.0.0.1:${child.port}`, connections: 16, durationS: windowS, headers: { 'x-api-key': KEY },
      path: '/', mix, buildEachRequest: true,
    });
    const w = {
      t: Math.round((Date.now() - started) / 1000), rps: Math.round(r.rps), p50: r.latencyMs.p50, p99: r.latencyMs.p99,
      rssMb: Math.round(child.rssMb()), peakRssMb: Math.round(child.peakRssMb()),
      storedContexts: await storedContexts(child.port), storedMessages: messages, ...(client ? { redisMb: await redisUsedMb(client) } : {}), errors: r.errors + r.non2xx,
    };
    windows.push(w);
    const redisPart = w.redisMb === undefined ? '' : ` redis ${w.redisMb} MB`;
    process.stderr.write(`t=${w.t}s ${w.rps} req/s p50 ${w.p50} p99 ${w.p99} ms rss ${w.rssMb} MB (peak ${w.peakRssMb}) contexts ${w.storedContexts} messages ${w.storedMessages}${redisPart} errors+non2xx ${w.errors} ${JSON.stringify(r.statuses)} errors ${r.errors}\n`);
  }
  await child.stop();
  client?.disconnect();
  await redis?.stop();
  const first = windows[0]!;
  const last = windows[windows.length - 1]!;
  const tail = windows.slice(Math.floor(windows.length / 2));
  const summary = {
    minutes, windows: windows.length, store, contexts,
    rss_mb_first: first.rssMb, rss_mb_last: last.rssMb, rss_mb_peak: last.peakRssMb,
    stored_messages_last: last.storedMessages,
    // the spread (max − min) over the second half: GC sawtooth when flat, growth when it keeps rising
    rss_range_second_half_mb: Math.max(...tail.map((w) => w.rssMb)) - Math.min(...tail.map((w) => w.rssMb)),
    p99_ms_first: first.p99, p99_ms_last: last.p99, rps_first: first.rps, rps_last: last.rps,
    ...(first.redisMb !== undefined ? { redis_mb_first: first.redisMb, redis_mb_last: last.redisMb } : {}),
    errors: windows.reduce((a, w) => a + w.errors, 0),
  };
  const file = writeResults('soak', { machine: describeMachine(), settings: { minutes, windowS, contexts, store, connections: 16 }, windows, summary });
  process.stderr.write(`results: ${file}\n`);
  console.log(JSON.stringify(summary));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
