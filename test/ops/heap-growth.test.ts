/** SENTIO_HEAP_GROWTH_PERCENT: how far V8 may grow the heap past its live data (docs/deployment.md). */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServerProcess } from '../helpers/process.js';

const KEY = 'sentio_test_heap_growth_key';

describe('heap growth setting', () => {
  it('defaults to 100 (the heap may double its live data), 0 leaves V8 its own heuristic, and bad values name the variable', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY }).heapGrowthPercent).toBe(100);
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: '50' }).heapGrowthPercent).toBe(50);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: '-1' })).toThrow(/SENTIO_HEAP_GROWTH_PERCENT/);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: 'lots' })).toThrow(/SENTIO_HEAP_GROWTH_PERCENT/);
  });

  it('a server process started with it answers and exits 0; a bad value stops start-up, naming it', async () => {
    const p = await startServerProcess({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: '50' });
    try {
      const r = await fetch(`${p.base}/v2/emotions/analysis`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ messages: [{ content: { text: 'what a lovely surprise' } }] }),
      });
      expect(r.status).toBe(200);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
    await expect(startServerProcess({ SENTIO_API_KEYS: KEY, SENTIO_HEAP_GROWTH_PERCENT: '5000' })).rejects.toThrow(/SENTIO_HEAP_GROWTH_PERCENT/);
  }, 60_000);
});
