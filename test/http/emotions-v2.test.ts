import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

const SIX = ['anger', 'fear', 'joy', 'love', 'sadness', 'surprise'];
const LEVELS = ['critical', 'high', 'moderate', 'subtle', 'minimal'];
const COMPLEXITY = ['simple', 'layered', 'paradoxical', 'transcendent'];
const DISCOVERY = ['routine', 'normal', 'significant', 'breakthrough', 'transcendent'];

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

function expectV2Entry(e: Record<string, unknown>, text: string) {
  expect(Object.keys(e).sort()).toEqual(
    ['arousal', 'category', 'complexity', 'discoveryLevel', 'intensity', 'intensityLevel', 'raw', 'text', 'valence', 'wonderIndex'].sort(),
  );
  expect(e['text']).toBe(text);
  expect(SIX).toContain(e['category']);
  const raw = e['raw'] as Record<string, number>;
  expect(Object.keys(raw).sort()).toEqual(SIX);
  const sum = Object.values(raw).reduce((a, b) => a + b, 0);
  expect(sum).toBeCloseTo(1, 5);
  for (const v of Object.values(raw)) expect(v).toBeGreaterThanOrEqual(0);
  expect(e['category']).toBe(Object.entries(raw).sort((a, b) => b[1] - a[1])[0]![0]);
  expect(e['intensity']).toBeGreaterThanOrEqual(0);
  expect(e['intensity']).toBeLessThanOrEqual(1);
  expect(LEVELS).toContain(e['intensityLevel']);
  // The level is the one the shown number falls in (docs/eq-dimensions.md's thresholds).
  const shown = e['intensity'] as number;
  expect(e['intensityLevel']).toBe(shown >= 0.8 ? 'critical' : shown >= 0.6 ? 'high' : shown >= 0.35 ? 'moderate' : shown >= 0.15 ? 'subtle' : 'minimal');
  expect(e['valence']).toBeGreaterThanOrEqual(-1);
  expect(e['valence']).toBeLessThanOrEqual(1);
  expect(e['arousal']).toBeGreaterThanOrEqual(0);
  expect(e['arousal']).toBeLessThanOrEqual(1);
  expect(COMPLEXITY).toContain(e['complexity']);
  expect(e['wonderIndex']).toBeGreaterThanOrEqual(0);
  expect(e['wonderIndex']).toBeLessThanOrEqual(1);
  expect(DISCOVERY).toContain(e['discoveryLevel']);
}

async function analyze(text: string, params?: Record<string, unknown>) {
  const r = await s.post('/v2/emotions/analysis', { model: 'emotion-v2', messages: [{ role: 'user', content: { text } }], ...(params ? { params } : {}) });
  expect(r.status).toBe(200);
  const j = (await r.json()) as { emotions: { _default: Record<string, unknown> } };
  return j.emotions._default;
}

describe('POST /v2/emotions/analysis (stateless)', () => {
  it('returns the V2 envelope and entry', async () => {
    const r = await s.post('/v2/emotions/analysis', { model: 'emotion-v2', messages: [{ role: 'user', content: { text: 'I am so happy today!' } }] });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    const j = await r.json();
    expect(Object.keys(j).sort()).toEqual(['emotions', 'model', 'object']);
    expect(j.object).toBe('emotions.analysis');
    expect(j.model).toBe('emotion-v2');
    expect(Object.keys(j.emotions)).toEqual(['_default']);
    expectV2Entry(j.emotions._default, 'I am so happy today!');
    expect(j.emotions._default.category).toBe('joy');
  });

  it('defaults the model to the path version and accepts a missing role', async () => {
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'hello' } }] });
    const j = await r.json();
    expect(j.model).toBe('emotion-v2');
  });

  it('with emotion-v1 on a V2 path returns V1-shaped entries', async () => {
    const r = await s.post('/v2/emotions/analysis', { model: 'emotion-v1', messages: [{ content: { text: 'I am furious' } }] });
    const j = await r.json();
    expect(j.model).toBe('emotion-v1');
    expect(Object.keys(j.emotions._default).sort()).toEqual(['category', 'raw', 'text']);
  });

  it('includeSubEmotions adds the 28 sub-emotion probabilities', async () => {
    const e = await analyze('Thank you so much, this is wonderful', { includeSubEmotions: true });
    const sub = e['subEmotions'] as Record<string, number>;
    expect(Object.keys(sub)).toHaveLength(28);
    expect(sub).toHaveProperty('gratitude');
    expect(sub).toHaveProperty('neutral');
    for (const v of Object.values(sub)) expect(v >= 0 && v <= 1).toBe(true);
    expect(sub['gratitude']).toBeGreaterThan(0.5);
    const plain = await analyze('Thank you so much, this is wonderful');
    expect(plain).not.toHaveProperty('subEmotions');
  });

  it('sensitivity bends intensity: higher sensitivity, higher intensity; 0.5 is the default', async () => {
    const text = 'I am a bit worried about the exam';
    const lo = await analyze(text, { sensitivity: 0 });
    const mid = await analyze(text, { sensitivity: 0.5 });
    const def = await analyze(text);
    const hi = await analyze(text, { sensitivity: 1 });
    expect(def['intensity']).toBe(mid['intensity']);
    expect(lo['intensity'] as number).toBeLessThan(mid['intensity'] as number);
    expect(hi['intensity'] as number).toBeGreaterThan(mid['intensity'] as number);
  });

  it('several messages are read together, weighted by tokens', async () => {
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'I love you' } }, { content: { text: 'so much' } }] });
    const j = await r.json();
    expect(j.emotions._default.text).toBe('I love you\nso much');
  });

  it('the entry is the token-weighted mean of each text scored alone (a short text barely moves a long one)', async () => {
    const short = 'Furious.';
    const long = 'We spent the whole afternoon at the beach with the kids, building sandcastles and laughing, and it was honestly one of the happiest and most wonderful days I can remember';
    expect(long.split(' ').length).toBeGreaterThanOrEqual(30);
    // Token counts as the API reports them: a one-message batch's usage.
    const tokensOf = async (text: string) => {
      const r = await s.post('/v2/emotions/batch-analysis', { messages: [{ content: { text } }] });
      return ((await r.json()) as { usage: { analyse_tokens: number } }).usage.analyse_tokens;
    };
    const [ts, tl] = [await tokensOf(short), await tokensOf(long)];
    expect(tl).toBeGreaterThan(5 * ts); // weights far enough from equal that a plain mean shows
    const [a, b] = [(await analyze(short))['raw'] as Record<string, number>, (await analyze(long))['raw'] as Record<string, number>];
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: short } }, { content: { text: long } }] });
    const both = ((await r.json()) as { emotions: { _default: { raw: Record<string, number> } } }).emotions._default.raw;
    for (const k of SIX) expect(both[k]).toBeCloseTo((ts * a[k]! + tl * b[k]!) / (ts + tl), 3);
    expect(Math.abs(a['anger']! - b['anger']!)).toBeGreaterThan(0.3); // the texts disagree
  });

  it('an empty text beside worded ones does not dilute them; alone it is minimal', async () => {
    const raw = async (...texts: string[]) => {
      const r = await s.post('/v2/emotions/analysis', { messages: texts.map((text) => ({ content: { text } })) });
      return ((await r.json()) as { emotions: { _default: Record<string, any> } }).emotions._default;
    };
    const alone = await raw('I am furious about this');
    const withEmpty = await raw('I am furious about this', '', '   ');
    // Not diluted: an empty text averaged in would move every score. Equal within float rounding only, as
    // the engine may run the text beside the empty ones (a batch of other rows rounds differently).
    for (const [emotion, p] of Object.entries(alone.raw as Record<string, number>)) expect(withEmpty.raw[emotion]).toBeCloseTo(p, 6);
    expect(withEmpty.category).toBe('anger');
    const empty = await raw('');
    expect(empty.intensityLevel).toBe('minimal');
    expect(Object.values(empty.raw as Record<string, number>).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    expect((await raw('', '')).raw).toEqual(empty.raw);
  });
});

describe('EQ dimensions on sentences', () => {
  it('an awe-struck discovery has more wonder and discovery than a routine remark', async () => {
    const awe = await analyze('Wait, what?! I just discovered that octopuses have three hearts. That is absolutely mind-blowing, how is that even possible?!');
    const routine = await analyze('I put the dishes in the dishwasher.');
    expect(awe['wonderIndex'] as number).toBeGreaterThan(routine['wonderIndex'] as number);
    expect(DISCOVERY.indexOf(awe['discoveryLevel'] as string)).toBeGreaterThan(DISCOVERY.indexOf(routine['discoveryLevel'] as string));
  });

  it('bittersweet text is not simple', async () => {
    const e = await analyze("I'm so proud of her but I'll miss her terribly");
    expect(e['complexity']).not.toBe('simple');
  });

  // Scores 0.1499995 (model 1.5.1; found by searching dair-ai and GoEmotions text for one), shown as 0.15:
  // such a text was labelled minimal while the level was decided on the unrounded value, though 0.15 is
  // subtle.
  it('the level follows the intensity as shown, at a threshold too', async () => {
    const e = await analyze('when my close friend was involved in an accident and passed away instantly he had gone to buy a new car and had asked me to wait at his home so that i could see his new car');
    expect(e['intensity']).toBe(0.15);
    expect(e['intensityLevel']).toBe('subtle');
  });

  it('a flat statement has minimal or subtle intensity', async () => {
    const e = await analyze('The meeting is at 3pm');
    expect(['minimal', 'subtle']).toContain(e['intensityLevel']);
  });

  it('stronger wording is more intense', async () => {
    const mild = await analyze('I am a bit annoyed');
    const strong = await analyze('I am absolutely furious!!!');
    expect(strong['category']).toBe('anger');
    expect(strong['intensity'] as number).toBeGreaterThan(mild['intensity'] as number);
    // up to model 1.3.1 the sub-emotion branch read "furious" as neutral: 0.445 (moderate), and plain
    // "I am furious" (0.338) scored under the annoyance (0.389)
    expect(['high', 'critical']).toContain(strong['intensityLevel']);
    expect((await analyze('I am furious'))['intensity'] as number).toBeGreaterThan(mild['intensity'] as number);
  });

  it('emoji add to intensity: a lone angry face reads high, and more of them never less intense', async () => {
    const words = await analyze("I'm furious");
    const one = await analyze("I'm furious 😡");
    const three = await analyze("I'm furious 😡😡😡");
    const alone = await analyze('😡');
    expect(one['intensity'] as number).toBeGreaterThanOrEqual(words['intensity'] as number);
    expect(three['intensity'] as number).toBeGreaterThanOrEqual(one['intensity'] as number);
    expect(['high', 'critical']).toContain(alone['intensityLevel']);
  });

  it('valence follows polarity', async () => {
    const pos = await analyze('This is the best day of my life, I love it');
    const neg = await analyze('Everything is awful and I feel miserable');
    expect(pos['valence'] as number).toBeGreaterThan(0.2);
    expect(neg['valence'] as number).toBeLessThan(-0.2);
  });
});

describe('context analysis, state and lookup (V2)', () => {
  it('stores messages, reports the trend, the state and each message', async () => {
    const ctx = `ctx-v2-${Date.now()}`;
    const texts = ['I feel terrible and hopeless today', 'Things are a little better now', 'I am feeling great, thank you so much!'];
    let last: Record<string, unknown> = {};
    for (const [i, text] of texts.entries()) {
      const r = await s.post(`/v2/emotions/${ctx}/analysis`, { model: 'emotion-v2', messages: [{ role: 'user', externalId: `m${i}`, content: { text }, timestamp: '2026-11-21T10:00:00Z' }] });
      expect(r.status).toBe(200);
      last = await r.json();
      expect(Object.keys(last).sort()).toEqual(['emotions', 'metadata', 'model', 'object', 'trajectory']);
      expect(last['object']).toBe('emotions.analysis');
      expect(last['metadata']).toEqual({ context_id: ctx });
      expectV2Entry((last['emotions'] as { user: Record<string, unknown> }).user, text);
    }
    const trend = (last['trajectory'] as { trend: { direction: string; valenceTrend: number } }).trend;
    expect(trend.direction).toBe('improving');
    expect(trend.valenceTrend).toBeGreaterThan(0);

    const st = await s.get(`/v2/emotions/${ctx}`);
    expect(st.status).toBe(200);
    const state = await st.json();
    expect(state.object).toBe('emotions.state');
    expect(state.metadata).toEqual({ context_id: ctx });
    expect(Object.keys(state.emotions.system).sort()).toEqual(['arousal', 'category', 'intensity', 'valence']);
    expect(typeof state.trajectory.baseline.averageIntensity).toBe('number');
    expect(typeof state.trajectory.baseline.baselineValence).toBe('number');
    expect(state.trajectory.baseline.messageCount).toBe(3);
    expect(['improving', 'declining', 'stable', 'volatile']).toContain(state.trajectory.trend.direction);

    const m = await s.get(`/v2/emotions/${ctx}/message/m0`);
    expect(m.status).toBe(200);
    const mj = await m.json();
    expect(mj.object).toBe('emotions.state');
    expect(mj.metadata).toEqual({ context_id: ctx, message_id: 'm0' });
    expectV2Entry(mj.emotions.user, texts[0]!);
    expect(mj.emotions.user.valence).toBeLessThan(0);
  });

  it('the state follows every write: repeated reads agree, and the next read after an analysis includes it', async () => {
    const ctx = `ctx-poll-${Date.now()}`;
    const add = async (text: string) => expect((await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [{ content: { text } }] })).status).toBe(200);
    const read = async () => {
      const r = await s.get(`/v2/emotions/${ctx}`);
      expect(r.status).toBe(200);
      return (await r.json()) as { emotions: { system: { valence: number } }; trajectory: { baseline: { messageCount: number; baselineValence: number } } };
    };
    await add('I am so happy and grateful today, everything is wonderful');
    await add('What a lovely surprise, thank you all so much');
    const first = await read();
    expect(await read()).toEqual(first);
    expect(first.trajectory.baseline.messageCount).toBe(2);
    await add('Now I feel miserable, lonely and completely hopeless');
    const after = await read();
    expect(after.trajectory.baseline.messageCount).toBe(3);
    expect(after.emotions.system.valence).toBeLessThan(first.emotions.system.valence);
    expect(after.trajectory.baseline.baselineValence).toBeLessThan(first.trajectory.baseline.baselineValence);
  });

  // The direction was decided on the unrounded trend: 0.149996 showed as 0.15 with direction stable.
  // These two texts' valences differ by 0.1499965 with model 1.5.1.
  it('the trend direction follows the valenceTrend as shown, at its threshold too', async () => {
    const ctx = `trend-edge-${Date.now()}`;
    for (const text of ['I like this kid', 'Wow spongebob was right!']) {
      expect((await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [{ content: { text } }] })).status).toBe(200);
    }
    const trend = (await (await s.get(`/v2/emotions/${ctx}`)).json()).trajectory.trend;
    expect(trend.valenceTrend).toBe(0.15);
    expect(trend.direction).toBe('improving');
  });

  it('assistant and system messages are stored and counted; the baseline and trend follow the user\'s', async () => {
    const ctx = `roles-${Date.now()}`;
    const r = await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [
      { externalId: 'u1', content: { text: 'I feel so sad and alone' } },
      { role: 'assistant', externalId: 'a1', content: { text: 'That is wonderful news, I am so happy for you!' } },
      { role: 'system', externalId: 's1', content: { text: 'Be kind.' } },
      { role: 'user', externalId: 'u2', content: { text: 'everything is terrible and I am miserable' } },
    ] });
    expect(r.status).toBe(200);
    expect(Object.keys((await r.json()).emotions)).toEqual(['user']); // the request's entry, whatever its roles
    const valence = async (id: string) => (await (await s.get(`/v2/emotions/${ctx}/message/${id}`)).json()).emotions.user.valence as number;
    const [u1, a1, s1, u2] = [await valence('u1'), await valence('a1'), await valence('s1'), await valence('u2')];
    const state = await (await s.get(`/v2/emotions/${ctx}`)).json();
    expect(state.trajectory.baseline.messageCount).toBe(4);
    expect(state.trajectory.baseline.baselineValence).toBeCloseTo((u1 + u2) / 2, 3);
    expect(Math.abs((u1 + a1 + s1 + u2) / 4 - (u1 + u2) / 2)).toBeGreaterThan(0.05); // the test can tell them apart
    expect(state.trajectory.trend.valenceTrend).toBeCloseTo(u2 - u1, 3); // two user messages: their difference
  });

  it('stateless and batch analysis store nothing (the spec\'s ephemeral data)', async () => {
    const stored = async () => Number(/^sentio_contexts_stored (\d+)$/m.exec(await (await s.get('/metrics')).text())![1]);
    const before = await stored();
    expect((await s.post('/v2/emotions/analysis', { messages: [{ externalId: 'e1', content: { text: 'just passing through' } }] })).status).toBe(200);
    expect((await s.post('/v2/emotions/batch-analysis', { messages: [{ externalId: 'e2', content: { text: 'and again' } }] })).status).toBe(200);
    expect((await s.post('/v1/emotions/analyse', { messages: [{ external_id: 'e3', content: { text: 'once more' } }] })).status).toBe(200);
    expect(await stored()).toBe(before);
  });

  it('a declining conversation is reported as declining', async () => {
    const ctx = `ctx-down-${Date.now()}`;
    let j: { trajectory: { trend: { direction: string } } } | undefined;
    for (const text of ['Today was wonderful, I am so happy', 'Hmm, things went a bit wrong', 'Now everything is ruined and I am devastated']) {
      j = await (await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [{ content: { text } }] })).json();
    }
    expect(j!.trajectory.trend.direction).toBe('declining');
  });

  it('a lone surrogate in a text comes back as U+FFFD, in the analysis and from either store', async () => {
    const ctx = `ctx-v2-surrogate-${Date.now()}`;
    const r = await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [{ externalId: 'm0', content: { text: 'half \ud83d of a smile' } }] });
    expect(r.status).toBe(200);
    // Strict JSON decoders (serde_json) refuse a lone surrogate's escape: no reply carries one.
    const raw = await r.text();
    expect(raw).not.toMatch(/\\ud83d/i);
    expect(JSON.parse(raw).emotions.user.text).toBe('half \ufffd of a smile');
    const stateless = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'half \ud83d of a smile' } }] });
    expect(((await stateless.json()) as { emotions: { _default: { text: string } } }).emotions._default.text).toBe('half \ufffd of a smile');
    const m = (await (await s.get(`/v2/emotions/${ctx}/message/m0`)).json()) as { emotions: { user: { text: string } } };
    expect(m.emotions.user.text).toBe('half \ufffd of a smile');
  });

  it('unknown context and message are 404 with their codes', async () => {
    let r = await s.get('/v2/emotions/never-seen');
    expect(r.status).toBe(404);
    let j = await r.json();
    expect(j.error).toMatchObject({ type: 'not_found_error', code: 'context_not_found' });
    expect(j.request_id).toBe(r.headers.get('x-request-id'));
    const ctx = `ctx-404-${Date.now()}`;
    await s.post(`/v2/emotions/${ctx}/analysis`, { messages: [{ externalId: 'a', content: { text: 'hi' } }] });
    r = await s.get(`/v2/emotions/${ctx}/message/b`);
    j = await r.json();
    expect(r.status).toBe(404);
    expect(j.error.code).toBe('message_not_found');
  });

  it('path parameters are percent-decoded', async () => {
    const r = await s.post('/v2/emotions/user%2042%20%C3%A9/analysis', { messages: [{ content: { text: 'hi' } }] });
    expect((await r.json()).metadata.context_id).toBe('user 42 é');
  });
});

describe('POST /v2/emotions/batch-analysis', () => {
  it('keeps input order, four fields per entry, usage', async () => {
    const texts = ['I am terrified of the dark', 'I love my family so much', 'This makes me so angry', 'What a wonderful day'];
    const r = await s.post('/v2/emotions/batch-analysis', { model: 'emotion-v2', messages: texts.map((text) => ({ content: { text } })) });
    expect(r.status).toBe(200);
    const j = await r.json();
    expect(Object.keys(j).sort()).toEqual(['emotions', 'model', 'object', 'usage']);
    expect(j.object).toBe('emotions.batch_analysis');
    expect(j.emotions).toHaveLength(4);
    for (const e of j.emotions) expect(Object.keys(e).sort()).toEqual(['arousal', 'category', 'intensity', 'valence']);
    expect(j.emotions.map((e: { category: string }) => e.category)).toEqual(['fear', 'love', 'anger', 'joy']);
    expect(j.usage.analyse_tokens).toBeGreaterThan(texts.length);
    expect(j.usage.total_tokens).toBe(j.usage.analyse_tokens);
    // Each batch entry equals the stateless analysis of that text alone.
    const alone = await analyze(texts[1]!);
    expect(j.emotions[1].intensity).toBeCloseTo(alone['intensity'] as number, 3);
  });
});
