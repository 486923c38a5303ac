import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer({ SENTIO_MAX_IN_FLIGHT: '32', SENTIO_RATE_LIMIT_RPM: '10000000' }); });
afterAll(async () => { await s.close(); });

const batch = JSON.stringify({ messages: Array.from({ length: 64 }, (_, i) => ({ content: { text: `text ${i}: honestly I am so tired of all of this, but tomorrow might be better` } })) });

describe('overload', () => {
  it('sheds load past capacity with 503 + Retry-After, stays bounded, and recovers at once', async () => {
    // Capacity first: one client, back to back.
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 1_000) {
      expect((await s.post('/v2/emotions/batch-analysis', batch)).status).toBe(200);
      n++;
    }
    const capacityRps = n / ((performance.now() - t0) / 1000);

    const rssBefore = process.memoryUsage().rss;
    const counts = new Map<string, number>();
    const okLatencies: number[] = [];
    let sent = 0;
    const deadline = performance.now() + 4_000;
    const client = async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        sent++;
        const r = await s.post('/v2/emotions/batch-analysis', batch);
        const j = (await r.json()) as { error?: { code: string } };
        const key = r.status === 200 ? '200' : `${r.status} ${j.error?.code} retry-after=${r.headers.get('retry-after')}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        if (r.status === 200) okLatencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: 200 }, client));
    const answered = [...counts.values()].reduce((a, b) => a + b, 0);
    const offeredRps = sent / 4;
    expect(offeredRps).toBeGreaterThan(3 * capacityRps);
    expect(answered).toBe(sent);
    for (const key of counts.keys()) expect(['200', '503 overloaded retry-after=1']).toContain(key);
    expect(counts.get('503 overloaded retry-after=1') ?? 0).toBeGreaterThan(0);
    expect(counts.get('200') ?? 0).toBeGreaterThan(0);
    okLatencies.sort((a, b) => a - b);
    const p99 = okLatencies[Math.floor(okLatencies.length * 0.99)]!;
    expect(p99).toBeLessThan(5_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(300 * 1024 * 1024);

    const after = performance.now();
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'are you back?' } }] });
    expect(r.status).toBe(200);
    expect(performance.now() - after).toBeLessThan(500);
    console.log(`overload: capacity ${capacityRps.toFixed(1)} req/s, offered ${offeredRps.toFixed(0)} req/s, ${JSON.stringify(Object.fromEntries(counts))}, accepted p99 ${p99.toFixed(0)} ms`);
  }, 60_000);
});
