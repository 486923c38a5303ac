/**
 * The load bench's five bars (issue 8), judged on the figures its JSON line reports, rounded as there: the
 * bench says them at the end of a run, and `npm run bench:tally` counts them over the results files.
 */
export interface BarFigures {
  sentio_vs_peer: number;
  sentio_vs_raw: number;
  batch32_vs_raw: number;
  p99_ms_at_70pct: number;
  /** False when no 70% step fell within 65–75% of the maxima around it; absent in files before 2026-11-27 08:30, which judged every step. */
  p99_at_70pct_judged?: boolean;
  failed_at_70pct?: number;
  rss_mb: number;
}

export const BARS = { sentioVsPeer: 1.3, sentioVsRaw: 0.6, batch32VsRaw: 0.8, p99Ms: 50, rssMb: 400 } as const;

/** Each bar's verdict; the p99's is null when its step was not judged. */
export function judgeBars(f: BarFigures): { sentio_vs_peer: boolean; sentio_vs_raw: boolean; batch32_vs_raw: boolean; p99_at_70pct: boolean | null; rss: boolean } {
  return {
    sentio_vs_peer: f.sentio_vs_peer >= BARS.sentioVsPeer,
    sentio_vs_raw: f.sentio_vs_raw >= BARS.sentioVsRaw,
    batch32_vs_raw: f.batch32_vs_raw >= BARS.batch32VsRaw,
    // A latency counts every answer: a p99 flattered by fast refusals is no pass.
    p99_at_70pct: f.p99_at_70pct_judged === false ? null : f.p99_ms_at_70pct <= BARS.p99Ms && (f.failed_at_70pct ?? 0) === 0,
    rss: f.rss_mb <= BARS.rssMb,
  };
}
