/** One autocannon run, reduced to the figures the benches report; a run at a set rate is paced instead. */
import autocannon from 'autocannon';
import { runPaced } from './paced.js';

export interface LoadResult {
  name: string;
  connections: number;
  durationS: number;
  /** Offered rate when the run was rate-limited (requests/s), else null. */
  offeredRps: number | null;
  rps: number;
  /** Texts analysed per second (rps × texts per request). */
  textsPerS: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Paced runs: how late after its due time this process issued a request (not in latencyMs). */
  issuedLateMs?: { p50: number; p99: number };
  errors: number;
  non2xx: number;
  /** Responses by status code. */
  statuses: Record<string, number>;
  rssMb?: number;
}

export interface LoadSpec {
  name: string;
  url: string;
  connections: number;
  durationS: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Paced runs only: headers that change from request to request, overriding `headers`. */
  varyingHeaders?: () => Record<string, string>;
  /** A fresh body per request (varied texts), or none for GETs. */
  body?: () => string;
  path: string | (() => string);
  /** A mixed workload: each connection cycles through these (overrides method, path and body). */
  mix?: Array<{
    method: 'GET' | 'POST';
    path: () => string;
    body?: () => string;
    /** Told each answer's status and the path it answered (with buildEachRequest only). */
    onAnswered?: (status: number, path: string) => void;
  }>;
  textsPerRequest?: number;
  /** Requests/s offered, spread evenly (bench/lib/paced.ts says why not autocannon's own rate limit). */
  overallRate?: number;
  /** Build every request as it is sent (the soak: fresh ids all through a long run) instead of before. */
  buildEachRequest?: boolean;
}

/** Distinct requests each connection cycles through. */
const PER_CONNECTION = 32;

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const entries: NonNullable<LoadSpec['mix']> = spec.mix ?? [{ method: spec.method ?? 'POST', path: () => (typeof spec.path === 'function' ? spec.path() : spec.path), body: spec.body }];
  const headers = { 'content-type': 'application/json', ...spec.headers };
  if (spec.overallRate) {
    if (spec.mix) throw new Error('a paced run takes one kind of request, not a mix');
    const e = entries[0]!;
    return runPaced({
      name: spec.name, port: Number(new URL(spec.url).port), connections: spec.connections, durationS: spec.durationS,
      rate: spec.overallRate, method: e.method, path: e.path, ...(e.body ? { body: e.body } : {}), headers,
      ...(spec.textsPerRequest ? { textsPerRequest: spec.textsPerRequest } : {}),
      ...(spec.varyingHeaders ? { varyingHeaders: spec.varyingHeaders } : {}),
    });
  }
  if (spec.varyingHeaders) throw new Error('varying headers need a paced run');
  if (!spec.buildEachRequest && entries.some((e) => e.onAnswered)) throw new Error('onAnswered needs buildEachRequest');
  // Every connection gets its own requests, built before the run: autocannon then sends stored bytes. A
  // setupRequest callback made it rebuild each request, which cost the shared CPU about half as much
  // again per request as the prebuilt bytes do.
  const varying = (r: (typeof entries)[number]) => ({ path: r.path(), ...(r.body ? { body: r.body() } : {}) });
  const build = (n = PER_CONNECTION): autocannon.Request[] => Array.from({ length: n }, (_, j) => {
    const r = entries[j % entries.length]!;
    return { method: r.method, headers, ...varying(r) };
  });
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    ...(spec.buildEachRequest
      ? {
        requests: entries.map(({ onAnswered, ...r }) => ({
          method: r.method,
          headers,
          // autocannon sizes each entry's request once; varying only path and body keeps lengths right.
          // Its context is the connection's, which has one request out at a time: the answer is to `sent`.
          setupRequest: (req: autocannon.Request, context: { sent?: string }) => {
            const v = varying(r);
            context.sent = v.path;
            return { ...req, ...v };
          },
          ...(onAnswered
            ? { onResponse: (status: number, _body: string, context: { sent?: string }) => onAnswered(status, context.sent!) }
            : {}),
        })),
      }
      // autocannon copies the options into every connection: the shared list stays one request long
      : { requests: build(1), setupClient: (client: autocannon.Client) => client.setRequests(build()) }),
  });
  const seconds = Math.max(result.duration, 1e-9);
  const ok = result['2xx'];
  return {
    name: spec.name,
    connections: spec.connections,
    durationS: spec.durationS,
    offeredRps: null,
    rps: ok / seconds,
    textsPerS: (ok / seconds) * (spec.textsPerRequest ?? 1),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors, // autocannon counts each timeout as an error already
    non2xx: result.non2xx,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count])),
  };
}
