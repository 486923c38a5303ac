import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

describe('smoke', () => {
  it('v2 stateless', async () => {
    const r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 'I am so happy today!' } }] });
    const j = await r.json();
    console.log(r.status, JSON.stringify(j), r.headers.get('x-request-id'));
    expect(r.status).toBe(200);
  });
  it('v1 context + get', async () => {
    let r = await s.post('/v1/emotions/ctx1/analyse', { messages: [{ external_id: 'm1', content: { text: 'I am furious with you' } }] });
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.post('/v2/emotions/ctx1/analysis', { messages: [{ externalId: 'm2', content: { text: 'ok now I feel better, thanks' } }] });
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.get('/v2/emotions/ctx1');
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.get('/v1/emotions/ctx1/message/m1');
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.post('/v2/emotions/batch-analysis', { messages: [{ content: { text: 'a' } }, { content: { text: 'I am scared' } }] });
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.post('/v2/emotions/analysis', { messages: [{ content: { text: 5 } }] });
    console.log(r.status, JSON.stringify(await r.json()));
    r = await s.post('/v2/emotions/analysis', '[1,2]');
    console.log(r.status, JSON.stringify(await r.json()));
    r = await fetch(s.base + '/v2/emotions/analysis', { method: 'POST', body: '{}' });
    console.log(r.status, JSON.stringify(await r.json()));
    r = await fetch(s.base + '/v2/nothing');
    console.log(r.status, JSON.stringify(await r.json()));
    console.log(s.logs.slice(-2));
  });
});
