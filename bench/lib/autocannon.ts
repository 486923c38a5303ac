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
  textsPerRequest?: number;
  overallRate?: number;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    requests: [
      {
        method: spec.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        setupRequest: (req) => ({
          ...req,
          path: typeof spec.path === 'function' ? spec.path() : spec.path,
          ...(spec.body ? { body: spec.body() } : {}),
        }),
      },
    ],
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
  };
}
