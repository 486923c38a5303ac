import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeLlm } from '../helpers/fake-llm.js';
import { OTHER_KEY, startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
// A fake upstream for the chat cases: it counts the requests that really ran, and fails on demand.
let llm: FakeLlm;
beforeAll(async () => {
  llm = await FakeLlm.start();
  s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  await s?.close();
  await llm?.close();
});
beforeEach(() => llm.reset());

const chat = (content: string, stream: boolean) =>
  ({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content }], stream });

describe('Idempotency-Key', () => {
  it('replays the first response and does not analyse or store again', async () => {
    const ctx = `idem-${Date.now()}`;
    const body = { messages: [{ externalId: 'only', content: { text: 'I am thrilled about the news' } }] };
    const key = crypto.randomUUID();
    const first = await s.post(`/v2/emotions/${ctx}/analysis`, body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = await first.text();
    const second = await s.post(`/v2/emotions/${ctx}/analysis`, body, { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(firstBody);
    const state = await (await s.get(`/v2/emotions/${ctx}`)).json();
    expect(state.trajectory.baseline.messageCount).toBe(1);
  });

  it('a different body with the same key is 422; another path counts as a different body', async () => {
    const key = crypto.randomUUID();
    expect((await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'a' } }] }, { 'idempotency-key': key })).status).toBe(200);
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'b' } }] }, { 'idempotency-key': key });
    expect(r.status).toBe(422);
    expect((await r.json()).error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    const p = await s.post('/v1/emotions/analyse', { messages: [{ content: { text: 'a' } }] }, { 'idempotency-key': key });
    expect(p.status).toBe(422);
  });

  it('is scoped per API key', async () => {
    const key = crypto.randomUUID();
    const body = { messages: [{ content: { text: 'scoped' } }] };
    await s.post('/v2/emotions/analysis', body, { 'idempotency-key': key });
    const other = await s.post('/v2/emotions/analysis', body, { 'idempotency-key': key, 'x-api-key': OTHER_KEY });
    expect(other.status).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a retry while the first request still runs is 409', async () => {
    // The first request holds its key from before its upstream call until it is answered: the upstream
    // answers it only after 2 s, long after the retry (a busy engine held it for a host-dependent time).
    llm.enqueue({ kind: 'reply', ttftMs: 2_000 });
    const key = crypto.randomUUID();
    const body = chat('still running?', false);
    const first = s.post('/v2/chat/completions', body, { 'idempotency-key': key });
    await waitFor(() => llm.received.length > 0, { everyMs: 5 });
    expect(llm.received).toHaveLength(1);
    const dup = await s.post('/v2/chat/completions', body, { 'idempotency-key': key });
    expect(dup.status).toBe(409);
    expect(dup.headers.get('retry-after')).toBe('1');
    expect((await dup.json()).error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_use' });
    expect((await first).status).toBe(200);
    const replay = await s.post('/v2/chat/completions', body, { 'idempotency-key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(llm.received).toHaveLength(1);
  });

  it('a record lasts SENTIO_CONTEXT_TTL_SECONDS: replayed within it, run afresh after it', async () => {
    const t = await startTestServer({ SENTIO_CONTEXT_TTL_SECONDS: '2' });
    try {
      const key = crypto.randomUUID();
      const body = { messages: [{ content: { text: 'remember me briefly' } }] };
      expect((await t.post('/v2/emotions/analysis', body, { 'idempotency-key': key })).headers.get('idempotent-replayed')).toBeNull();
      expect((await t.post('/v2/emotions/analysis', body, { 'idempotency-key': key })).headers.get('idempotent-replayed')).toBe('true');
      await new Promise((r) => setTimeout(r, 2_500));
      const after = await t.post('/v2/emotions/analysis', body, { 'idempotency-key': key });
      expect(after.status).toBe(200);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('a failed request is not stored: the same key may be retried', async () => {
    const key = crypto.randomUUID();
    expect((await s.post('/v2/emotions/analysis', { messages: [] }, { 'idempotency-key': key })).status).toBe(400);
    // A stored 400 would be replayed as a 400 too: only the header tells a rerun from a replay.
    const again = await s.post('/v2/emotions/analysis', { messages: [] }, { 'idempotency-key': key });
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a transient failure is not stored: the retry with the same key runs, succeeds, and is then the one replayed', async () => {
    const key = crypto.randomUUID();
    llm.enqueue({ kind: 'status', status: 500 });
    const failed = await s.post('/v2/chat/completions', chat('hello there', false), { 'idempotency-key': key });
    expect(failed.status).toBe(502);
    const retry = await s.post('/v2/chat/completions', chat('hello there', false), { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const text = await retry.text();
    expect(llm.received).toHaveLength(2); // the retry reached the upstream
    const replay = await s.post('/v2/chat/completions', chat('hello there', false), { 'idempotency-key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(text);
    expect(llm.received).toHaveLength(2);
  });
});

describe('Idempotency-Key on chat', () => {
  it('a non-streamed chat is replayed byte for byte, without a second upstream call', async () => {
    const key = crypto.randomUUID();
    const first = await s.post('/v2/chat/completions', chat('I got the job!', false), { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const text = await first.text();
    const second = await s.post('/v2/chat/completions', chat('I got the job!', false), { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(text); // the same completion id, reply and emotions
    expect(llm.received).toHaveLength(1);
  });

  it('a streamed chat that ran to [DONE] is replayed as the same event stream, without a second upstream call', async () => {
    const key = crypto.randomUUID();
    const first = await s.post('/v2/chat/completions', chat('I got the job!', true), { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const events = await first.text();
    expect(events.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const second = await s.post('/v2/chat/completions', chat('I got the job!', true), { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // Every event as first sent: a rerun would differ at least in its completion id (one per request).
    expect(await second.text()).toBe(events);
    expect(llm.received).toHaveLength(1);
  });
});
