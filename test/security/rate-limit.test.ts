import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_KEY, startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '5' }); });
afterAll(async () => { await s.close(); });

const body = { messages: [{ content: { text: 'hello' } }] };

describe('rate limits', () => {
  it('token bucket per key: RateLimit-* on success, 429 with Retry-After past the quota', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.post('/v2/emotions/analysis', body);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBe('5');
      remaining.push(Number(r.headers.get('ratelimit-remaining')));
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const r = await s.post('/v2/emotions/analysis', body);
    expect(r.status).toBe(429);
    const j = await r.json();
    expect(j.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const retry = Number(r.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(12); // one token refills in 60/5 s
    expect(r.headers.get('ratelimit-limit')).toBe('5');
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
    // GETs count against the same key; another key has its own bucket.
    expect((await s.get('/v2/emotions/whatever')).status).toBe(429);
    const other = await s.post('/v2/emotions/analysis', body, { 'x-api-key': OTHER_KEY });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('batch requests weigh one token per started 64 texts', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '10' });
    try {
      const r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 130 }, () => ({ content: { text: 'x' } })) });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-remaining')).toBe('7');
    } finally {
      await t.close();
    }
  });
});
