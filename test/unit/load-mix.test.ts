/** The bench's autocannon wrapper with a mix built per request: each answer reaches onAnswered with the
 * path it answered (the soak's GETs rely on it to read only contexts whose write was stored). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/lib/autocannon.js';

let server: http.Server | undefined;

afterEach(async () => {
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

describe('runLoad with onAnswered', () => {
  it('pairs every answer with the path of the request it answers', async () => {
    // Status by path, each after a random delay, so that answers on different connections interleave.
    const answered = new Map<string, number>();
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = Number(req.url!.split('/')[2]) % 3 === 0 ? 404 : 200;
        setTimeout(() => {
          answered.set(req.url!, status);
          res.writeHead(status, { 'content-length': 2 }).end('{}');
        }, Math.random() * 4);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;

    let n = 0;
    const told: Array<[number, string]> = [];
    const r = await runLoad({
      name: 't', url: `http://127.0.0.1:${port}`, connections: 4, durationS: 1, path: '/', buildEachRequest: true,
      mix: [
        { method: 'POST', path: () => `/w/${++n}`, body: () => '{}', onAnswered: (status, path) => told.push([status, path]) },
        { method: 'GET', path: () => `/r/${++n}` },
      ],
    });

    expect(r.errors).toBe(0);
    expect(told.length).toBeGreaterThan(20);
    expect(told.some(([s]) => s === 404)).toBe(true);
    for (const [status, path] of told) {
      expect(path.startsWith('/w/')).toBe(true);
      expect(answered.get(path)).toBe(status);
    }
  });

  it('refuses onAnswered on prebuilt requests, which could not say which path was answered', async () => {
    await expect(runLoad({
      name: 't', url: 'http://127.0.0.1:9', connections: 1, durationS: 1, path: '/',
      mix: [{ method: 'GET', path: () => '/', onAnswered: () => {} }],
    })).rejects.toThrow('onAnswered needs buildEachRequest');
  });
});
