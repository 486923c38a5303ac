/**
 * SseStream on a real uWS response. Idempotency records a stream through its tap and stores it only if
 * it reached [DONE]; a chat turn is stored before its last two events, so a reader that leaves then must
 * still leave a complete record (a retry replays it instead of calling the LLM and storing the turn again).
 */
import net from 'node:net';
import uWS from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseStream } from '../../src/http/sse.js';

let app: uWS.TemplatedApp;
let listen: uWS.us_listen_socket;
let port = 0;
let produced: Promise<{ tapped: string[]; closedBeforeEnd: boolean }>;

beforeAll(async () => {
  app = uWS.App();
  app.get('/stream', (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const sse = new SseStream(res, 'req_sse', {}, () => aborted, () => false);
    const tapped: string[] = [];
    sse.tap = (d) => tapped.push(d);
    produced = (async () => {
      await sse.send('{"n":1}');
      // The reader leaves here; the producer, its work already done, sends the rest.
      for (let i = 0; i < 200 && !sse.closed; i++) await new Promise((r) => setTimeout(r, 10));
      const closedBeforeEnd = sse.closed;
      await sse.send('{"n":2}');
      await sse.send('[DONE]');
      sse.end();
      return { tapped, closedBeforeEnd };
    })();
  });
  port = await new Promise<number>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('cannot listen'));
      listen = socket;
      resolve(uWS.us_socket_local_port(socket));
    });
  });
});

afterAll(() => {
  uWS.us_listen_socket_close(listen);
});

describe('SseStream', () => {
  it('taps every event the producer sends, also those after the reader has gone', async () => {
    const received = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n'));
      let data = '';
      socket.on('data', (b) => {
        data += b.toString();
        if (data.includes('data: {"n":1}\n\n')) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.on('error', reject);
    });
    expect(received).toContain('text/event-stream');
    const { tapped, closedBeforeEnd } = await produced;
    expect(closedBeforeEnd).toBe(true);
    expect(tapped).toEqual(['{"n":1}', '{"n":2}', '[DONE]']);
  });
});

describe('SseStream, a producer that never waits', () => {
  // An upstream's body already buffered resolves every await of the relay at once: the sends alone must give
  // the event loop its turns (one such stream held it for 150-330 ms).
  it('lets the event loop turn while the socket takes every write', async () => {
    const res = {
      onWritable: () => undefined, cork: (f: () => void) => f(), write: () => true,
      writeStatus: () => res, writeHeader: () => res, end: () => res,
    };
    const sse = new SseStream(res as unknown as uWS.HttpResponse, 'req_burst', {}, () => false, () => false);
    let last = performance.now();
    let longest = 0;
    let producing = true;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (producing) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < 400) {
      await sse.send(`{"choices":[{"index":0,"delta":{"content":"${'x'.repeat(200)}"}}]}`);
      sent++;
    }
    producing = false;
    longest = Math.max(longest, performance.now() - last);
    expect(sent).toBeGreaterThan(100);
    // Without the turns the gap is the whole 400 ms; with them a few ms, GC and a busy CI machine allowing.
    expect(longest).toBeLessThan(150);
  });
});
