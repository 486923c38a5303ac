import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_KEY, TEST_KEY, startTestServer } from '../helpers/server.js';
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

  // The quota used to be charged only once the body was read and parsed: a key past it still had megabyte
  // bodies read and answered 400 (never 429, no RateLimit-* headers), and could hold connection slots by
  // sending its bodies slowly until other keys got 503 overloaded.
  it('is charged before the body is read: failed bodies count, and a key past its quota is refused at once', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '3' });
    try {
      const bad = await fetch(`${t.base}/v2/emotions/analysis`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: '{"messages": [',
      });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('ratelimit-remaining')).toBe('2');
      for (let i = 0; i < 2; i++) expect((await t.post('/v2/emotions/analysis', body)).status).toBe(200);
      const over = await fetch(`${t.base}/v2/emotions/analysis`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: `{"x": "${'a'.repeat(1_000_000)}`,
      });
      expect(over.status).toBe(429);
      expect(over.headers.get('ratelimit-remaining')).toBe('0');
      // Headers only, the body never sent: the 429 comes anyway.
      const port = Number(new URL(t.base).port);
      const answer = await new Promise<string>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1', () => sock.write(
          `POST /v2/emotions/analysis HTTP/1.1\r\nHost: x\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{`,
        ));
        let got = '';
        sock.on('data', (d) => { got += d.toString(); if (got.includes('\r\n\r\n')) { sock.destroy(); resolve(got); } });
        sock.on('error', reject);
        setTimeout(() => { sock.destroy(); resolve(got); }, 3000);
      });
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 429 Too Many Requests');
    } finally {
      await t.close();
    }
  });

  it('batch requests weigh one token per started 64 texts', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '10' });
    try {
      const r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 130 }, () => ({ content: { text: 'x' } })) });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-remaining')).toBe('7');
      // A refused batch's message names its weight, so a client counting requests sees why: 7 left, 4
      // spent, then 3 left for the next 4.
      const batch200 = { messages: Array.from({ length: 200 }, () => ({ content: { text: 'x' } })) };
      expect((await t.post('/v2/emotions/batch-analysis', batch200)).status).toBe(200);
      const refused = await t.post('/v2/emotions/batch-analysis', batch200);
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(/^rate limit of 10 requests per minute exceeded \(this request counts as 4: docs\/security.md, Rate limits\); retry after \d+ s$/);
      const single = await t.post('/v2/emotions/analysis', { messages: [{ content: { text: 'x' } }] });
      expect(single.status).toBe(200); // the refused batch's admission token was spent, its other three not
    } finally {
      await t.close();
    }
  });

  // A batch refused at its charge has spent its admission token: Retry-After counted only the rest, so a
  // client retrying on the dot came back one token short, every time, at quotas of a few tokens a second.
  it('a batch that follows Retry-After gets through', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '60' }); // a token a second
    try {
      while ((await t.get('/v2/emotions/drain')).status !== 429);
      const batch = { messages: Array.from({ length: 256 }, () => ({ content: { text: 'x' } })) }; // weighs 4
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await t.post('/v2/emotions/batch-analysis', batch);
        statuses.push(r.status);
        if (r.status !== 429) break;
        await new Promise((done) => setTimeout(done, Number(r.headers.get('retry-after')) * 1000 + 50));
      }
      // Refused at admission (under a token left) and then at its charge, or at its charge alone: then through.
      expect(statuses.at(-1), String(statuses)).toBe(200);
    } finally {
      await t.close();
    }
  });

  // A replay cost one token whatever its size: connections that replayed a 0.7 MB reply and never read it held
  // 240 MB (security review, 2026-11-26).
  it('an idempotent replay weighs a token per started 64 KiB of its reply', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '60' });
    try {
      const body = { messages: Array.from({ length: 1024 }, (_, i) => ({ content: { text: `text ${i}` } })), params: { includeSubEmotions: true } };
      const first = await t.post('/v2/emotions/batch-analysis', body, { 'idempotency-key': 'big-replay' });
      expect(first.status).toBe(200);
      const size = (await first.text()).length;
      expect(size).toBeGreaterThan(4 * 65_536);
      const before = Number(first.headers.get('ratelimit-remaining'));
      const again = await t.post('/v2/emotions/batch-analysis', body, { 'idempotency-key': 'big-replay' });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const spent = before - Number(again.headers.get('ratelimit-remaining'));
      // what its bytes weigh, less the refill of the moment between the two (a token a second here)
      expect(spent).toBeGreaterThanOrEqual(Math.ceil(size / 65_536) - 2);
      const small = { messages: [{ content: { text: 'small' } }] };
      const a = await t.post('/v2/emotions/analysis', small, { 'idempotency-key': 'small-replay' });
      const b = await t.post('/v2/emotions/analysis', small, { 'idempotency-key': 'small-replay' });
      expect(Number(a.headers.get('ratelimit-remaining')) - Number(b.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(1);
    } finally {
      await t.close();
    }
  });

  it('a batch refused for its size or its fields costs one token, and is refused for that, not for the quota', async () => {
    const t = await startTestServer({ SENTIO_RATE_LIMIT_RPM: '20' });
    try {
      const remaining = (r: Response) => r.headers.get('ratelimit-remaining');
      // 400,000 messages would weigh 6,250 tokens, more than the key ever holds: still 413, not 429.
      let r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 400_000 }, () => 0) });
      expect(r.status).toBe(413);
      expect((await r.json()).error).toMatchObject({ code: 'too_many_messages', param: 'messages' });
      expect(remaining(r)).toBe('19');
      r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 1_025 }, () => ({ content: { text: 'x' } })) });
      expect(r.status).toBe(413);
      expect(remaining(r)).toBe('18');
      r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 1_000 }, () => ({ content: { text: 7 } })) });
      expect(r.status).toBe(400);
      expect(remaining(r)).toBe('17');
      // A valid batch of 1,000 (16 tokens) fits the 17 left, then the quota is spent.
      r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 1_000 }, () => ({ content: { text: 'x' } })) });
      expect(r.status).toBe(200);
      expect(remaining(r)).toBe('1');
      r = await t.post('/v2/emotions/batch-analysis', { messages: Array.from({ length: 65 }, () => ({ content: { text: 'x' } })) });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).not.toBeNull();
    } finally {
      await t.close();
    }
  });
});
