/** Small figures the benches share. */

/** The nearest-rank p-th percentile (0–100) of ascending `sorted`; undefined when it is empty. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
