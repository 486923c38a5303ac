import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

const SIX = ['anger', 'fear', 'joy', 'love', 'sadness', 'surprise'];
const WORDS = ['extreme', 'strong', 'moderate', 'mild', 'slight'];

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

function expectV1Entry(e: Record<string, unknown>) {
  expect(Object.keys(e).sort()).toEqual(['category', 'raw', 'text']);
  expect(SIX).toContain(e['category']);
  const [word, cat] = (e['text'] as string).split(' ');
  expect(WORDS).toContain(word);
  expect(cat).toBe(e['category']);
  const raw = e['raw'] as Record<string, number>;
  expect(Object.keys(raw).sort()).toEqual(SIX);
  expect(Object.values(raw).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
}

describe('V1 emotion endpoints', () => {
  it('stateless: emotions.analyse with a _default V1 entry', async () => {
    const r = await s.post('/v1/emotions/analyse', { model: 'emotion-v1', params: {}, messages: [{ role: 'user', content: { text: 'I am scared of the dark' } }] });
    expect(r.status).toBe(200);
    const j = await r.json();
    expect(Object.keys(j).sort()).toEqual(['emotions', 'model', 'object']);
    expect(j.object).toBe('emotions.analyse');
    expect(j.model).toBe('emotion-v1');
    expectV1Entry(j.emotions._default);
  });

  it('context analysis, stored state (system entry) and lookup by external_id', async () => {
    const ctx = `v1-${Date.now()}`;
    const r = await s.post(`/v1/emotions/${ctx}/analyse`, { model: 'emotion-v1', params: {}, messages: [{ role: 'user', external_id: 'e1', content: { text: 'I miss my grandmother so much' } }] });
    expect(r.status).toBe(200);
    const j = await r.json();
    expect(Object.keys(j).sort()).toEqual(['emotions', 'metadata', 'model', 'object']);
    expect(j.object).toBe('emotions.analyse');
    expect(j.metadata).toEqual({ context_id: ctx });
    expectV1Entry(j.emotions.user);

    const st = await (await s.get(`/v1/emotions/${ctx}`)).json();
    expect(Object.keys(st).sort()).toEqual(['emotions', 'metadata', 'model', 'object']);
    expect(st.object).toBe('emotions.state');
    expect(st.model).toBe('emotion-v1');
    expectV1Entry(st.emotions.system);

    const m = await (await s.get(`/v1/emotions/${ctx}/message/e1`)).json();
    expect(m.metadata).toEqual({ context_id: ctx, message_id: 'e1' });
    expectV1Entry(m.emotions.user);
    expect(m.emotions.user.raw).toEqual(j.emotions.user.raw);
  });

  it('batch: order, params echoed, empty metadata, usage', async () => {
    const params = { thresholds: 0 };
    const r = await s.post('/v1/emotions/batch-analyse', { model: 'emotion-v1', params, messages: [{ content: { text: 'yay!' } }, { content: { text: 'ugh, I hate this' } }] });
    const j = await r.json();
    expect(Object.keys(j).sort()).toEqual(['emotions', 'metadata', 'model', 'object', 'params', 'usage']);
    expect(j.object).toBe('emotions.batch_analyse');
    expect(j.params).toEqual(params);
    expect(j.metadata).toEqual({});
    expect(j.emotions).toHaveLength(2);
    j.emotions.forEach(expectV1Entry);
    expect(j.usage.analyse_tokens).toBeGreaterThan(2);
  });

  it('batch: entries come back in input order (texts with distinct categories tell the order)', async () => {
    const texts = ['I am terrified of the dark', 'I love my family so much', 'This makes me so angry', 'What a wonderful day'];
    const r = await s.post('/v1/emotions/batch-analyse', { model: 'emotion-v1', params: {}, messages: texts.map((text) => ({ content: { text } })) });
    expect(r.status).toBe(200);
    const j = await r.json();
    expect(j.emotions.map((e: { category: string }) => e.category)).toEqual(['fear', 'love', 'anger', 'joy']);
    // And each entry is that text's own analysis, not just a matching category.
    const alone = (await (await s.post('/v1/emotions/analyse', { messages: [{ content: { text: texts[2] } }] })).json()).emotions._default;
    for (const k of SIX) expect(j.emotions[2].raw[k]).toBeCloseTo(alone.raw[k], 4);
  });

  it('thresholds: an emotion below its threshold cannot be the category', async () => {
    const text = 'I am so happy and grateful today';
    const plain = (await (await s.post('/v1/emotions/analyse', { messages: [{ content: { text } }] })).json()).emotions._default;
    const top = plain.category as string;
    const raw = plain.raw as Record<string, number>;
    const second = Object.entries(raw).sort((a, b) => b[1] - a[1])[1]![0];
    const gated = (await (await s.post('/v1/emotions/analyse', { params: { thresholds: { [top]: 1 } }, messages: [{ content: { text } }] })).json()).emotions._default;
    expect(gated.category).toBe(second);
    expect(gated.raw).toEqual(raw); // thresholds change the category, never the scores
    const all = (await (await s.post('/v1/emotions/analyse', { params: { thresholds: 1 }, messages: [{ content: { text } }] })).json()).emotions._default;
    expect(all.category).toBe(top); // none qualifies: the plain argmax
  });

  it('smoothing blends the reported scores with the context state', async () => {
    const ctx = `v1-smooth-${Date.now()}`;
    const first = (await (await s.post(`/v1/emotions/${ctx}/analyse`, { messages: [{ content: { text: 'I am absolutely furious with them' } }] })).json()).emotions.user;
    const calm = 'What a lovely peaceful morning, I love it';
    const alone = (await (await s.post('/v1/emotions/analyse', { messages: [{ content: { text: calm } }] })).json()).emotions._default;
    // An asymmetric s, so that swapped weights show: docs/api.md and docs/context-and-trajectory.md give
    // (1 − s)·current + s·state, the state here being the one earlier message.
    const smoothed = (await (await s.post(`/v1/emotions/${ctx}/analyse`, { params: { smoothing: 0.8 }, messages: [{ content: { text: calm } }] })).json()).emotions.user;
    for (const k of SIX) {
      expect(smoothed.raw[k]).toBeCloseTo(0.2 * alone.raw[k] + 0.8 * first.raw[k], 4);
    }
    // The two texts differ enough that the direction matters well beyond that precision.
    expect(Math.abs(first.raw.anger - alone.raw.anger)).toBeGreaterThan(0.3);
    const unsmoothed = (await (await s.post(`/v1/emotions/${ctx}-b/analyse`, { params: { smoothing: 0 }, messages: [{ content: { text: calm } }] })).json()).emotions.user;
    expect(unsmoothed.raw.joy).toBeCloseTo(alone.raw.joy, 6);
  });
});
