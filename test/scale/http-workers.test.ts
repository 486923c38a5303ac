/**
 * SENTIO_HTTP_WORKERS > 1: several uWS apps on worker threads share one port and the main thread's one
 * engine; without Redis they share the main thread's stores, with Redis they share Redis. Every request
 * goes on a fresh connection so the kernel spreads them over the workers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisEngine } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { EngineStats } from '../../src/engine/engine.js';
import { createLogger } from '../../src/log.js';
import { EngineMetrics } from '../../src/metrics.js';
import { startHttpWorkers } from '../../src/scale/http-workers.js';
import type { SentioWorkers } from '../../src/scale/http-workers.js';
import { testEngine } from '../helpers/engine.js';
import { startRedis } from '../helpers/redis.js';
import type { RedisServer } from '../helpers/redis.js';
import { TEST_KEY } from '../helpers/server.js';
import { TS_LOADER } from '../helpers/worker-loader.js';

async function startWorkers(env: Record<string, string>, engine?: AnalysisEngine): Promise<SentioWorkers & { base: string; engine: AnalysisEngine }> {
  const config = loadConfig({
    SENTIO_PORT: '0', SENTIO_HOST: '127.0.0.1', SENTIO_API_KEYS: TEST_KEY, SENTIO_LOG_LEVEL: 'warn', SENTIO_HTTP_WORKERS: '2', ...env,
  });
  let engineMetrics: EngineMetrics | undefined;
  const e = engine ?? (await testEngine({ onBatch: (run) => engineMetrics?.observeBatch(run) }));
  engineMetrics = new EngineMetrics(() => e.stats?.() ?? { queuedTexts: 0, inFlightBatches: 0 });
  const w = await startHttpWorkers(config, { engine: e, engineMetrics, logger: createLogger('warn'), execArgv: TS_LOADER });
  return Object.assign(w, { base: `http://127.0.0.1:${w.port}`, engine: e });
}

/** Each request on its own connection, so consecutive requests may land on different workers. */
function call(base: string, path: string, init: { body?: unknown; headers?: Record<string, string>; key?: string | null } = {}): Promise<Response> {
  const headers: Record<string, string> = { connection: 'close', ...(init.key === null ? {} : { 'x-api-key': init.key ?? TEST_KEY }), ...init.headers };
  if (init.body === undefined) return fetch(base + path, { headers });
  return fetch(base + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(init.body) });
}

/** Resolves once the engine's queue holds at least n texts: a request's work is under way, watched rather than timed. */
async function queueHolds(engine: AnalysisEngine, n: number): Promise<void> {
  for (const until = Date.now() + 10_000; (engine.stats?.().queuedTexts ?? 0) < n;) {
    expect(Date.now(), `the engine queue never held ${n} texts`).toBeLessThan(until);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** The real engine's counters (AnalysisEngine types only the gauges /metrics needs). */
const stats = (engine: AnalysisEngine) => engine.stats!() as EngineStats;

const msg = (text: string, externalId?: string) => ({ ...(externalId ? { externalId } : {}), content: { text } });

describe('HTTP workers without Redis (stores on the main thread)', () => {
  let s: SentioWorkers & { base: string; engine: AnalysisEngine };
  let engine: AnalysisEngine;
  beforeAll(async () => { s = await startWorkers({ SENTIO_RATE_LIMIT_RPM: '100000' }); engine = s.engine; });
  afterAll(async () => { await s?.close(2_000); });

  it('serves analysis through the main thread engine, and 401/404 on every worker', async () => {
    const r = await call(s.base, '/v2/emotions/analysis', { body: { messages: [msg('I am so happy today!')] } });
    expect(r.status).toBe(200);
    const j = await r.json();
    expect(j.emotions._default.category).toBe('joy');
    const batch = await call(s.base, '/v2/emotions/batch-analysis', { body: { messages: [msg('furious about this'), msg('I love you')] } });
    expect(batch.status).toBe(200);
    expect((await batch.json()).emotions).toHaveLength(2);
    for (let i = 0; i < 20; i++) {
      expect((await call(s.base, '/v2/emotions/x', { key: null })).status).toBe(401);
      expect((await call(s.base, '/v2/emotions/x', { key: 'wrong_key_0123456789' })).status).toBe(401);
      expect((await call(s.base, '/v2/emotions/x')).status).toBe(404);
    }
    // That each worker answered some of them (all of 60 to one of two workers by chance: 1 in 10^17), and
    // that any scrape sums them all.
    const text = await (await call(s.base, '/metrics')).text();
    for (const [status, total] of [['401', 40], ['404', 20]] as const) {
      const n = [...text.matchAll(new RegExp(`^sentio_http_requests_total\\{[^}]*status="${status}"\\} (\\d+)$`, 'gm'))].reduce((a, m) => a + Number(m[1]), 0);
      expect(n, status).toBe(total);
    }
    const perWorker = [...text.matchAll(/^sentio_http_worker_requests_total\{worker="(\d)"\} (\d+)$/gm)].map((m) => Number(m[2]));
    expect(perWorker).toHaveLength(2);
    for (const n of perWorker) expect(n).toBeGreaterThan(0);
    expect((await call(s.base, '/healthz', { key: null })).status).toBe(200);
    const ready = await (await call(s.base, '/readyz', { key: null })).json();
    expect(ready.status).toBe('ready');
  });

  it("every worker's /metrics reports the main thread's engine: batches, inference time, queue", async () => {
    const count = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    for (let i = 0; i < 6; i++) {
      expect((await call(s.base, '/v2/emotions/analysis', { body: { messages: [msg(`metrics ${i}`)] } })).status).toBe(200);
    }
    // Fresh connections: scrapes land on both workers, and each must see the one engine's figures.
    for (let i = 0; i < 6; i++) {
      const text = await (await call(s.base, '/metrics')).text();
      expect(count(text, 'sentio_engine_batch_size_texts_count')).toBeGreaterThanOrEqual(6);
      expect(count(text, 'sentio_engine_inference_duration_seconds_count')).toBeGreaterThanOrEqual(6);
      expect(count(text, 'sentio_engine_onnx_runs_total')).toBeGreaterThanOrEqual(6);
      expect(count(text, 'sentio_engine_queue_depth_texts')).toBe(0);
      expect(count(text, 'sentio_engine_batches_in_flight')).toBe(0);
      expect(count(text, 'sentio_engine_request_duration_seconds_count')).not.toBeNaN(); // the worker's own
    }
  });

  // Each worker counted alone and a scrape reaches one of them: counters went 1, 1, 2, 3, 2, 4 from scrape
  // to scrape, which Prometheus reads as resets. Any worker now answers with every worker's sums.
  it('/metrics from any worker sums every worker: counters only rise, process figures are not multiplied', async () => {
    const value = (text: string, series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? Number.NaN);
    const scrapes: string[] = [];
    for (let i = 0; i < 12; i++) scrapes.push(await (await call(s.base, '/metrics')).text());
    const counts = scrapes.map((t) => value(t, 'sentio_http_requests_total{route="/metrics",method="GET",status="200"}'));
    const first = Number.isNaN(counts[0]!) ? 0 : counts[0]!;
    // Every scrape before is counted by the time the next one is answered: exactly one more each time.
    expect(counts.slice(1)).toEqual(Array.from({ length: 11 }, (_, i) => first + i + 1));
    const last = scrapes.at(-1)!;
    expect(value(last, 'sentio_process_start_time_seconds')).toBeGreaterThan(1e9);
    const rss = value(last, 'sentio_process_resident_memory_bytes');
    expect(rss).toBeLessThan(2 * (await import('node:process')).memoryUsage.rss()); // one process's, not one per worker
    expect(last).toMatch(/^sentio_engine_batch_size_texts_count /m);
  });

  it('contexts are one store across workers: concurrent appends all land', async () => {
    const n = 40;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) =>
      call(s.base, '/v2/emotions/w-ctx/analysis', { body: { messages: [msg(`message ${i}`, `w${i}`)] } })));
    for (const r of replies) expect(r.status).toBe(200);
    for (let i = 0; i < 6; i++) {
      const state = await (await call(s.base, '/v2/emotions/w-ctx')).json();
      expect(state.trajectory.baseline.messageCount).toBe(n);
    }
    const lookups = await Promise.all(Array.from({ length: n }, (_, i) => call(s.base, `/v2/emotions/w-ctx/message/w${i}`)));
    expect(lookups.map((r) => r.status)).toEqual(Array.from({ length: n }, () => 200));
  });

  it('idempotency records are shared: replay from any worker', async () => {
    const key = crypto.randomUUID();
    const body = { messages: [msg('only once', 'once')] };
    const first = await call(s.base, '/v2/emotions/w-idem/analysis', { body, headers: { 'idempotency-key': key } });
    const text = await first.text();
    for (let i = 0; i < 6; i++) {
      const again = await call(s.base, '/v2/emotions/w-idem/analysis', { body, headers: { 'idempotency-key': key } });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(text);
    }
    expect((await (await call(s.base, '/v2/emotions/w-idem')).json()).trajectory.baseline.messageCount).toBe(1);
  });

  it('a client that goes away mid-analysis is cancelled on the main thread, and the worker keeps serving', async () => {
    const ac = new AbortController();
    const long = 'so much going on today and I do not know what to feel about any of it '.repeat(8);
    const pending = fetch(`${s.base}/v2/emotions/batch-analysis`, {
      method: 'POST', signal: ac.signal,
      headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: Array.from({ length: 1000 }, (_, i) => msg(`${i} ${long}`)) }),
    }).catch((e: unknown) => e);
    await queueHolds(engine, 500);
    const before = stats(engine);
    ac.abort();
    expect(await pending).toBeInstanceOf(Error);
    // The client's rejection alone says nothing about the main thread: its engine must count the call
    // aborted, drop the texts still queued and empty its queue well before it could have scored them all.
    for (const until = Date.now() + 3_000; ;) {
      const now = stats(engine);
      if (now.aborted > before.aborted && now.dropped > before.dropped && now.queuedTexts === 0) break;
      expect(Date.now(), `not cancelled on the main thread: ${JSON.stringify(now)}`).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 5));
    }
    const r = await call(s.base, '/v2/emotions/analysis', { body: { messages: [msg('still here')] } });
    expect(r.status).toBe(200);
  });
});

describe('HTTP workers: engine errors cross the thread boundary with their meaning', () => {
  it('a full engine queue is still 503 overloaded with Retry-After', async () => {
    const engine = await testEngine({ maxQueue: 100 });
    const s = await startWorkers({}, engine);
    try {
      const long = 'I cannot believe how much everything has changed, honestly, it is strange. '.repeat(10);
      const texts = (n: number) => ({ messages: Array.from({ length: n }, (_, i) => msg(`${i} ${long}`)) });
      // Seconds of engine work first (admitted: the queue is empty); while most of it is still queued,
      // a request that cannot fit.
      const big = call(s.base, '/v2/emotions/batch-analysis', { body: texts(1000) });
      await queueHolds(engine, 500);
      const refused = await call(s.base, '/v2/emotions/batch-analysis', { body: texts(50) });
      expect((await big).status).toBe(200);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect((await refused.json()).error.code).toBe('overloaded');
    } finally {
      await s.close(2_000);
    }
  });
});

describe('HTTP workers: one quota across workers', () => {
  it('without Redis', async () => {
    const s = await startWorkers({ SENTIO_RATE_LIMIT_RPM: '8' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await call(s.base, '/v2/emotions/none')).status);
      expect(statuses.filter((c) => c === 404)).toHaveLength(8);
      expect(statuses.filter((c) => c === 429)).toHaveLength(4);
    } finally {
      await s.close(2_000);
    }
  });
});

describe('HTTP workers with Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => { redis = await startRedis(); });
  afterAll(async () => { await redis?.stop(); });

  it('every worker uses Redis: shared contexts and quota, 503 while Redis is down, then recovery', async () => {
    const s = await startWorkers({ SENTIO_REDIS_URL: redis.url, SENTIO_RATE_LIMIT_RPM: '50' });
    try {
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        call(s.base, '/v2/emotions/rw/analysis', { body: { messages: [msg(`hello ${i}`)] } })));
      for (const r of replies) expect(r.status).toBe(200);
      expect((await (await call(s.base, '/v2/emotions/rw')).json()).trajectory.baseline.messageCount).toBe(10);
      const remaining = Number((await call(s.base, '/v2/emotions/rw')).headers.get('ratelimit-remaining'));
      expect(remaining).toBe(50 - 12);

      await redis.kill();
      try {
        expect((await call(s.base, '/v2/emotions/rw')).status).toBe(503);
        expect((await call(s.base, '/v2/emotions/analysis', { body: { messages: [msg('fine')] } })).status).toBe(200);
        // Each worker has its own connection; the gauge reads 0 when any of them is down.
        expect(await (await call(s.base, '/metrics')).text()).toMatch(/^sentio_context_store_up 0$/m);
      } finally {
        await redis.restart();
      }
      const deadline = Date.now() + 15_000;
      let ok = 0;
      while (Date.now() < deadline && ok < 6) {
        ok = (await call(s.base, '/v2/emotions/rw2/analysis', { body: { messages: [msg('back')] } })).status === 200 ? ok + 1 : 0;
        if (ok === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ok).toBe(6);
      expect(await (await call(s.base, '/metrics')).text()).toMatch(/^sentio_context_store_up 1$/m);
    } finally {
      await s.close(2_000);
    }
  });

  it('refuses to start when Redis cannot be reached, naming it', async () => {
    const engine = await testEngine();
    try {
      const err = await startWorkers({ SENTIO_REDIS_URL: 'redis://127.0.0.1:1' }, engine).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    } finally {
      await engine.close();
    }
  });
});
