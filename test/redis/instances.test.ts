/**
 * Two Sentio instances against one real Redis, as behind a load balancer: every request may land on
 * either, and they must behave as one server. Then Redis dies and comes back mid-test.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisEngine } from '../../src/app.js';
import { testEngine } from '../helpers/engine.js';
import { FakeLlm } from '../helpers/fake-llm.js';
import { startRedis } from '../helpers/redis.js';
import type { RedisServer } from '../helpers/redis.js';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let redis: RedisServer;
let engineA: AnalysisEngine;
let engineB: AnalysisEngine;
let a: TestServer;
let b: TestServer;
const opened: TestServer[] = [];

/** The engine stays open when one server closes; afterAll closes it. */
function borrowed(engine: AnalysisEngine): AnalysisEngine {
  return {
    labels: engine.labels,
    analyze: (texts, opts) => engine.analyze(texts, opts),
    describe: () => engine.describe(),
    close: async () => {},
  };
}

async function pair(env: Record<string, string> = {}): Promise<[TestServer, TestServer]> {
  const shared = { SENTIO_REDIS_URL: redis.url, SENTIO_REDIS_PREFIX: `it${randomBytes(4).toString('hex')}:`, ...env };
  const x = await startTestServer(shared, { engine: borrowed(engineA) });
  const y = await startTestServer(shared, { engine: borrowed(engineB) });
  opened.push(x, y);
  return [x, y];
}

beforeAll(async () => {
  redis = await startRedis();
  // Two engines, as two instances would have: a busy engine on one must not hold up the other.
  [engineA, engineB] = await Promise.all([testEngine(), testEngine()]);
  [a, b] = await pair();
});

afterAll(async () => {
  for (const s of opened) await s.close();
  await engineA?.close();
  await engineB?.close();
  await redis?.stop();
});

const msg = (text: string, externalId?: string) => ({ ...(externalId ? { externalId } : {}), content: { text } });

describe('two instances, one Redis', () => {
  it('a context written through one instance is read through the other', async () => {
    const r = await a.post('/v2/emotions/shared-ctx/analysis', { messages: [msg('I am delighted with how this turned out', 'm1')] });
    expect(r.status).toBe(200);
    const state = await b.get('/v2/emotions/shared-ctx');
    expect(state.status).toBe(200);
    expect((await state.json()).trajectory.baseline.messageCount).toBe(1);
    const lookup = await b.get('/v2/emotions/shared-ctx/message/m1');
    expect(lookup.status).toBe(200);
    const j = await lookup.json();
    expect(j.metadata).toEqual({ context_id: 'shared-ctx', message_id: 'm1' });
    expect((await a.get('/v1/emotions/shared-ctx/message/m1')).status).toBe(200);
  });

  it('concurrent appends through both instances all land', async () => {
    const n = 60;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) =>
      (i % 2 ? a : b).post('/v2/emotions/race/analysis', { messages: [msg(`message number ${i}, feeling fine`, `r${i}`)] })));
    for (const r of replies) expect(r.status).toBe(200);
    const state = await (await a.get('/v2/emotions/race')).json();
    expect(state.trajectory.baseline.messageCount).toBe(n);
    const lookups = await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 ? b : a).get(`/v2/emotions/race/message/r${i}`)));
    const bad = await Promise.all(lookups.filter((r) => r.status !== 200).map((r) => r.text()));
    expect(bad).toEqual([]);
  });

  it('an Idempotency-Key is replayed by the other instance, 422 on another body, 409 while in flight', async () => {
    const key = crypto.randomUUID();
    const body = { messages: [msg('once only, please', 'once')] };
    const first = await a.post('/v2/emotions/idem-ctx/analysis', body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    const replay = await b.post('/v2/emotions/idem-ctx/analysis', body, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(await first.text());
    expect((await (await b.get('/v2/emotions/idem-ctx')).json()).trajectory.baseline.messageCount).toBe(1);
    const other = await b.post('/v2/emotions/idem-ctx/analysis', { messages: [msg('something else')] }, { 'idempotency-key': key });
    expect(other.status).toBe(422);

    // A request still running on A (a chat its upstream answers after 2 s; its key is claimed before the
    // call) makes the retry on B a 409, then a replay of A's answer.
    const llm = await FakeLlm.start();
    try {
      const [c, d] = await pair({ SENTIO_LLM_BASE_URL: llm.url });
      llm.enqueue({ kind: 'reply', ttftMs: 2_000 });
      const key2 = crypto.randomUUID();
      const turn = { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'still running?' }] };
      const slow = c.post('/v2/chat/completions', turn, { 'idempotency-key': key2 });
      await waitFor(() => llm.received.length > 0, { everyMs: 5 });
      expect(llm.received).toHaveLength(1);
      const dup = await d.post('/v2/chat/completions', turn, { 'idempotency-key': key2 });
      expect(dup.status).toBe(409);
      expect((await dup.json()).error.code).toBe('idempotency_key_in_use');
      expect((await slow).status).toBe(200);
      const after = await d.post('/v2/chat/completions', turn, { 'idempotency-key': key2 });
      expect(after.headers.get('idempotent-replayed')).toBe('true');
      expect(llm.received).toHaveLength(1);
    } finally {
      await llm.close();
    }
  });

  it('a key has one quota across instances', async () => {
    const [x, y] = await pair({ SENTIO_RATE_LIMIT_RPM: '6' });
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await (i % 2 ? x : y).get('/v2/emotions/nothing-here');
      expect(r.status).toBe(404);
      remaining.push(Number(r.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([5, 4, 3, 2, 1, 0]);
    expect((await x.get('/v2/emotions/nothing-here')).status).toBe(429);
    expect((await y.get('/v2/emotions/nothing-here')).status).toBe(429);
  });

  it('contexts expire by Redis TTL for both instances', async () => {
    const [x, y] = await pair({ SENTIO_CONTEXT_TTL_SECONDS: '1' });
    expect((await x.post('/v2/emotions/brief/analysis', { messages: [msg('here for a moment')] })).status).toBe(200);
    expect((await y.get('/v2/emotions/brief')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await y.get('/v2/emotions/brief')).status).toBe(404);
    expect((await x.get('/v2/emotions/brief')).status).toBe(404);
  });
});

describe('Redis lost mid-run', () => {
  it('context operations answer 503 fast, stateless and batch keep working, then it recovers by itself', async () => {
    expect((await a.post('/v2/emotions/before/analysis', { messages: [msg('all good so far')] })).status).toBe(200);
    expect(await (await b.get('/metrics')).text()).toMatch(/^sentio_context_store_up 1$/m);
    await redis.kill();
    try {
      const started = performance.now();
      const write = await a.post('/v2/emotions/before/analysis', { messages: [msg('is anyone there?')] });
      expect(write.status).toBe(503);
      expect(write.headers.get('retry-after')).toBe('1');
      expect((await write.json()).error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
      expect((await b.get('/v2/emotions/before')).status).toBe(503);
      expect((await b.get('/v1/emotions/before/message/x')).status).toBe(503);
      expect(performance.now() - started).toBeLessThan(2_000);

      const stateless = await a.post('/v2/emotions/analysis', { messages: [msg('I feel great')] });
      expect(stateless.status).toBe(200);
      expect(stateless.headers.get('ratelimit-limit')).toBe('600'); // rate limiting fell back to a local bucket
      expect((await b.post('/v2/emotions/batch-analysis', { messages: [msg('one'), msg('two')] })).status).toBe(200);
      expect((await b.post('/v1/emotions/analyse', { messages: [msg('v1 too')] })).status).toBe(200);
      // An Idempotency-Key cannot be honoured without the shared record.
      const idem = await a.post('/v2/emotions/analysis', { messages: [msg('retry me')] }, { 'idempotency-key': crypto.randomUUID() });
      expect(idem.status).toBe(503);
      expect((await a.get('/healthz')).status).toBe(200);
      // What a dashboard reads of it: the store is down, and the contexts count is the last one read (above).
      const down = await (await b.get('/metrics')).text();
      expect(down).toMatch(/^sentio_context_store_up 0$/m);
      expect(down).toMatch(/^sentio_contexts_stored [1-9]\d*$/m);
    } finally {
      await redis.restart();
    }
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await a.post('/v2/emotions/after/analysis', { messages: [msg('back again')] })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect(await (await a.get('/metrics')).text()).toMatch(/^sentio_context_store_up 1$/m);
    let read = 0;
    while (Date.now() < deadline) {
      read = (await b.get('/v2/emotions/after')).status;
      if (read === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(read).toBe(200);
    // The restarted Redis kept nothing (no persistence in this test): the old context is gone, not stale.
    expect((await b.get('/v2/emotions/before')).status).toBe(404);
  });
});
