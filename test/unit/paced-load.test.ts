/** The bench's paced load generator against a real HTTP server on loopback: it keeps the rate it is given,
 * reads every response, and counts waiting for a connection as latency. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runPaced } from '../../bench/lib/paced.js';

let server: http.Server | undefined;

afterEach(async () => {
  if (server) await new Promise((resolve) => server!.close(resolve)); // with no server, close's callback never came
  server = undefined;
});

/**
 * Runs `fn` once `ms` have passed by the wall clock. setTimeout alone may fire early by up to a
 * millisecond: libuv starts a timer from the loop's cached time, which can be older than the call.
 */
function answerAfter(ms: number, fn: () => void): void {
  const due = performance.now() + ms;
  const check = () => (performance.now() >= due ? fn() : setTimeout(check, 1));
  setTimeout(check, ms);
}

/** A server answering every request after `delayMs`, with a body so that framing is exercised (chunked:
 * without content-length, which the generator does not read). */
async function slowServer(delayMs: number, chunked = false): Promise<{ port: number; bodies: string[] }> {
  const bodies: string[] = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      const reply = JSON.stringify({ ok: true, echo: body });
      const headers = { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': Buffer.byteLength(reply) }) };
      answerAfter(delayMs, () => res.writeHead(req.url === '/missing' ? 404 : 200, headers).end(reply));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server!.address() as AddressInfo).port, bodies };
}

describe('runPaced', () => {
  it('offers the given rate and answers every request', async () => {
    const { port, bodies } = await slowServer(5);
    let n = 0;
    const r = await runPaced({
      name: 't', port, connections: 8, durationS: 1, rate: 200, method: 'POST', path: () => '/x',
      body: () => JSON.stringify({ n: n++, text: 'é ünïcode' }), headers: { 'content-type': 'application/json' },
    });
    expect(r.errors).toBe(0);
    expect(r.statuses['200']).toBeGreaterThanOrEqual(190);
    expect(r.statuses['200']).toBeLessThanOrEqual(201);
    expect(bodies.length).toBe(r.statuses['200']);
    expect(JSON.parse(bodies[3]!)).toEqual({ n: 3, text: 'é ünïcode' });
    expect(r.latencyMs.p50).toBeGreaterThanOrEqual(5);
    expect(r.latencyMs.p50).toBeLessThan(50);
    expect(r.offeredRps).toBe(200);
  });

  it('counts waiting for a busy connection as latency and non-2xx apart', async () => {
    // 2 connections x 1 request per 20 ms = 100/s of capacity, offered 200/s for 1 s: the backlog grows
    // to about 100 requests, so the last ones wait about half a second.
    const { port } = await slowServer(20);
    const r = await runPaced({ name: 't', port, connections: 2, durationS: 1, rate: 200, method: 'GET', path: () => '/missing', headers: {} });
    expect(r.errors).toBe(0);
    expect(r.statuses['404']).toBeGreaterThanOrEqual(190);
    expect(r.non2xx).toBe(r.statuses['404']);
    expect(r.rps).toBe(0);
    expect(r.latencyMs.max).toBeGreaterThan(300);
  });

  it('counts as requests/s only what was answered within the run, not the backlog answered after it', async () => {
    // 100/s of capacity offered 200/s for 1 s: all ~200 are answered in the end, ~100 of them in the run.
    const { port } = await slowServer(20);
    const r = await runPaced({ name: 't', port, connections: 2, durationS: 1, rate: 200, method: 'GET', path: () => '/x', headers: {} });
    expect(r.statuses['200']).toBeGreaterThanOrEqual(190);
    expect(r.rps).toBeGreaterThan(60);
    expect(r.rps).toBeLessThanOrEqual(110);
  });

  it('counts a response it cannot frame as an error and stops using that connection', async () => {
    const { port } = await slowServer(1, true);
    const started = performance.now();
    const r = await runPaced({ name: 't', port, connections: 2, durationS: 0.5, rate: 100, method: 'GET', path: () => '/x', headers: {} });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(r.statuses).toEqual({});
    expect(r.errors).toBeGreaterThanOrEqual(45);
  });
});
