/** One autocannon run, reduced to the figures the benches report. */
import autocannon from 'autocannon';

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
  /** A fresh body per request (varied texts), or none for GETs. */
  body?: () => string;
  path: string | (() => string);
  /** A mixed workload: each connection cycles through these (overrides method, path and body). */
  mix?: Array<{ method: 'GET' | 'POST'; path: () => string; body?: () => string }>;
  textsPerRequest?: number;
  overallRate?: number;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    requests: (spec.mix ?? [{ method: spec.method ?? 'POST', path: () => (typeof spec.path === 'function' ? spec.path() : spec.path), body: spec.body }]).map((r) => ({
      method: r.method,
      headers: { 'content-type': 'application/json', ...spec.headers },
      // autocannon sizes each entry's request once; varying only path and body keeps lengths right.
      setupRequest: (req) => ({ ...req, path: r.path(), ...(r.body ? { body: r.body() } : {}) }),
    })),
  });
  const seconds = Math.max(result.duration, 1e-9);
  const ok = result['2xx'];
  return {
    name: spec.name,
    connections: spec.connections,
    durationS: spec.durationS,
    offeredRps: spec.overallRate ?? null,
    rps: ok / seconds,
    textsPerS: (ok / seconds) * (spec.textsPerRequest ?? 1),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count])),
  };
}
