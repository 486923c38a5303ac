import { describe, expect, it } from 'vitest';
import { startServerProcess } from '../helpers/process.js';

const KEY = 'sentio_test_shutdown_key';

describe('graceful shutdown', () => {
  it('SIGTERM under load: stops accepting, finishes every in-flight request, exits 0', async () => {
    const p = await startServerProcess({ SENTIO_API_KEYS: KEY });
    const body = JSON.stringify({ messages: Array.from({ length: 64 }, (_, i) => ({ content: { text: `message ${i}: I feel a mix of hope and worry about tomorrow` } })) });
    let stop = false;
    const results = { ok: 0, failedInFlight: 0 };
    const worker = async () => {
      while (!stop) {
        // Every request issued here was issued before SIGTERM was sent (kill and stop=true run in one tick).
        try {
          const r = await fetch(`${p.base}/v2/emotions/batch-analysis`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
          if (r.status === 200) results.ok++;
          else results.failedInFlight++;
          await r.arrayBuffer();
        } catch {
          results.failedInFlight++;
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    await new Promise((r) => setTimeout(r, 1_500));
    const inFlightAtStop = results.ok;
    p.child.kill('SIGTERM');
    stop = true;
    await Promise.all(workers);
    const code = await p.exited;
    expect(code).toBe(0);
    expect(inFlightAtStop).toBeGreaterThan(0);
    expect(results.failedInFlight).toBe(0);
    expect(p.output.some((l) => l.includes('shutting down'))).toBe(true);
    // Log lines still queued for writing at exit are written too: one access line per answered request.
    expect(p.output.filter((l) => l.includes('"msg":"request"')).length).toBe(results.ok);
    // The port no longer accepts.
    await expect(fetch(`${p.base}/healthz`)).rejects.toThrow();
  }, 90_000);

  it('refuses to start without keys, explaining how to create one', async () => {
    await expect(startServerProcess({})).rejects.toThrow(/sentio keys create/);
  });
});
