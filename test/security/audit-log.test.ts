import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLogFile } from '../helpers/log-audit.js';
import { OTHER_KEY, startTestServer, TEST_KEY } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

describe('audit log', () => {
  it('one JSON line per request with the decided fields and no secrets or texts', async () => {
    const secretText = 'my private diary entry about feeling lonely 7f3a9c';
    const r = await s.post('/v2/emotions/audit-ctx/analysis', { messages: [{ externalId: 'm1', content: { text: secretText } }] });
    const id = r.headers.get('x-request-id');
    await fetch(`${s.base}/v1/emotions/analyse`, { method: 'POST', headers: { authorization: `Bearer ${OTHER_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ content: { text: secretText } }] }) });
    await fetch(`${s.base}/v1/emotions/analyse`, { method: 'POST', headers: { authorization: 'Bearer sentio_live_not_a_real_key_123', 'content-type': 'application/json' }, body: '{}' });
    await s.post('/v2/emotions/analysis', `{"messages": [{"content": {"text": "${secretText}"`); // invalid JSON echoing the text
    s.sentio.logger.flush();
    await new Promise((res) => setTimeout(res, 100));
    const lines = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = lines.find((l) => l['request_id'] === id);
    expect(line).toBeDefined();
    expect(line).toMatchObject({ method: 'POST', route: '/v2/emotions/:contextId/analysis', status: 200 });
    expect(typeof line!['time']).toBe('string');
    expect(line!['key_id']).toMatch(/^env_[0-9a-f]{12}$/);
    expect(line!['latency_ms']).toBeGreaterThan(0);
    expect(line!['analysed_tokens']).toBeGreaterThan(5);
    expect(lines.filter((l) => l['msg'] === 'request')).toHaveLength(4);
    // The same lines reach the run-wide log that the end-of-run audit searches (test/helpers/log-audit.ts).
    const runLog = runLogFile();
    expect(runLog).toBeDefined();
    expect(readFileSync(runLog!, 'utf8')).toContain(id!);
    const all = s.logs.join('\n');
    for (const secret of [TEST_KEY, OTHER_KEY, 'sentio_live_not_a_real_key_123', secretText, 'Bearer', 'authorization']) {
      expect(all).not.toContain(secret);
    }
  });
});
