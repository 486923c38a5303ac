/**
 * Open-loop load at a fixed rate, for latency against offered load. autocannon's `overallRate` gives each
 * connection a quota per second and sends it as fast as the server answers, then waits for the next
 * second: every second starts with a closed-loop burst, so its latencies are those of a saturated server
 * at any rate. It also records each latency with coordinated-omission correction at a 1 ms interval
 * (`Math.ceil(1 / rate)` of a per-connection rate), adding a sample per millisecond of every response.
 * Here request i is due at start + i / rate. A 1 ms timer issues every request that has come due: it
 * goes out on the first free connection of a fixed pool, or waits for one. Its latency counts from when
 * it was issued, so waiting for a connection is part of it. It does not count from when it was due: this
 * process shares the two CPUs with the server and is sometimes run late (tens of milliseconds near
 * saturation), which a client population on other machines would not be; that lateness is reported on
 * its own (issuedLateMs), and the requests it held back still reach the server in one burst.
 */
import net from 'node:net';
import type { LoadResult } from './autocannon.js';
import { percentile, round } from './stats.js';

export interface PacedSpec {
  name: string;
  port: number;
  connections: number;
  durationS: number;
  rate: number;
  method: 'GET' | 'POST';
  path: () => string;
  body?: () => string;
  headers: Record<string, string>;
  /** Headers that change from request to request (e.g. several tenants' keys in turn); they override `headers`. */
  varyingHeaders?: () => Record<string, string>;
  textsPerRequest?: number;
}

interface Conn {
  socket: net.Socket;
  /** When the request in flight was issued (performance.now()), or null when the connection is free. */
  issuedAt: number | null;
  buf: Buffer;
  dead: boolean;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One HTTP/1.1 response's status and total length in `buf`, or null while incomplete. */
function parseResponse(buf: Buffer): { status: number; length: number } | null {
  const end = buf.indexOf(HEADER_END);
  if (end < 0) return null;
  const head = buf.toString('latin1', 0, end);
  const status = Number(head.slice(9, 12));
  const m = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (!m) throw new Error(`paced load: a response without content-length (${head.split('\r\n')[0]})`);
  const length = end + HEADER_END.length + Number(m[1]);
  return buf.length >= length ? { status, length } : null;
}

export async function runPaced(spec: PacedSpec): Promise<LoadResult> {
  const lines = (headers: Record<string, string>) => Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const fixed = lines(spec.headers);
  const request = (): string => {
    const body = spec.body?.() ?? '';
    const head = spec.varyingHeaders ? lines({ ...spec.headers, ...spec.varyingHeaders() }) : fixed;
    return `${spec.method} ${spec.path()} HTTP/1.1\r\nhost: 127.0.0.1:${spec.port}\r\n${head}` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  const latencies: number[] = [];
  const lateness: number[] = []; // how long after it was due each request was issued
  const statuses: Record<string, number> = {};
  let errors = 0;
  const waiting: number[] = []; // issue times of requests with no free connection yet
  const free: Conn[] = [];

  /** Successes answered before the run's end: requests/s counts these, not the ones answered while draining. */
  let okInRun = 0;
  let stopAt = Infinity;
  let retired = 0;
  /** A connection that failed or closed: its request in flight is an error, and it takes no more. */
  const retire = (c: Conn) => {
    if (c.dead) return;
    c.dead = true;
    retired++;
    if (c.issuedAt !== null) errors++;
    c.issuedAt = null;
    const i = free.indexOf(c);
    if (i >= 0) free.splice(i, 1);
    c.socket.destroy();
  };
  const send = (c: Conn, issuedAt: number) => {
    c.issuedAt = issuedAt;
    c.socket.write(request());
  };
  const conns = await Promise.all(Array.from({ length: spec.connections }, () => new Promise<Conn>((resolve, reject) => {
    const socket = net.connect(spec.port, '127.0.0.1', () => resolve(c));
    const c: Conn = { socket, issuedAt: null, buf: Buffer.alloc(0), dead: false };
    socket.setNoDelay(true);
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      c.buf = c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk;
      let r: ReturnType<typeof parseResponse>;
      try {
        r = parseResponse(c.buf);
      } catch {
        retire(c); // a response this reader cannot frame: that connection is done
        return;
      }
      if (!r || c.issuedAt === null) return;
      const answeredAt = performance.now();
      latencies.push(answeredAt - c.issuedAt);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status >= 200 && r.status < 300 && answeredAt <= stopAt) okInRun++;
      c.buf = c.buf.subarray(r.length);
      c.issuedAt = null;
      const next = waiting.shift();
      if (next !== undefined) send(c, next);
      else free.push(c);
    });
  })));
  for (const c of conns) {
    c.socket.removeAllListeners('error');
    c.socket.on('error', () => retire(c));
    c.socket.on('close', () => retire(c));
    free.push(c);
  }

  const interval = 1000 / spec.rate;
  const start = performance.now();
  stopAt = start + spec.durationS * 1000;
  let issued = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const now = performance.now();
      for (; start + issued * interval <= Math.min(now, stopAt); issued++) {
        lateness.push(now - (start + issued * interval));
        // Free connections are taken in turn, oldest first: with the newest first, the ones at the bottom
        // sat idle for the whole 10 s step, and uWS closes a connection idle that long (10-11 s, measured),
        // so a late burst that reached one raced its close (13 requests failed in the 10:53 run's 30% step).
        const c = free.shift();
        if (c) send(c, now);
        else waiting.push(now);
      }
      if (now >= stopAt) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  // What is still owed is answered (or given up after 10 s) before the connections close.
  const drainBy = performance.now() + 10_000;
  while (retired < conns.length && (waiting.length || free.length + retired < conns.length) && performance.now() < drainBy) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const unanswered = waiting.length + conns.filter((c) => c.issuedAt !== null).length;
  for (const c of conns) {
    c.dead = true; // closing them is not an error
    c.socket.destroy();
  }

  const pct = (p: number, a = latencies) => round(percentile(a, p) ?? 0, 2);
  latencies.sort((a, b) => a - b);
  lateness.sort((a, b) => a - b);
  const ok = Object.entries(statuses).reduce((n, [s, k]) => (s.startsWith('2') ? n + k : n), 0);
  return {
    name: spec.name,
    connections: spec.connections,
    durationS: spec.durationS,
    offeredRps: spec.rate,
    rps: okInRun / spec.durationS,
    textsPerS: (okInRun / spec.durationS) * (spec.textsPerRequest ?? 1),
    latencyMs: { p50: pct(50), p90: pct(90), p99: pct(99), max: round(latencies.at(-1) ?? 0, 2) },
    issuedLateMs: { p50: pct(50, lateness), p99: pct(99, lateness) },
    errors: errors + unanswered,
    non2xx: latencies.length - ok,
    statuses,
  };
}
