/**
 * Guards the suite's store switch: in the "redis" vitest project every test server keeps its state in
 * Redis (and would fail loudly without it), in "memory" in the process. Runs in both projects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

const onRedis = process.env['SENTIO_TEST_STORE'] === 'redis';
let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

describe(`test servers keep state ${onRedis ? 'in Redis' : 'in process'}`, () => {
  it('uses the backend of its vitest project', async () => {
    expect(Boolean(s.config.redisUrl)).toBe(onRedis);
    expect(s.logs.some((l) => l.includes('"msg":"redis connected"'))).toBe(onRedis);
    const r = await s.post('/v2/emotions/backend-check/analysis', { messages: [{ content: { text: 'hello' } }] });
    expect(r.status).toBe(200);
    expect((await s.get('/v2/emotions/backend-check')).status).toBe(200);
  });
});
