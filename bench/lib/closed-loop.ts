/**
 * `callers` closed-loop callers, each calling `once(k)` (k = a running text index) until `ms` passes;
 * returns texts done, elapsed ms and per-call latencies.
 */
export async function closedLoop(
  callers: number,
  ms: number,
  textsPerCall: number,
  once: (k: number) => Promise<unknown>,
): Promise<{ texts: number; ms: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  let done = 0;
  const start = performance.now();
  const stopAt = start + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < stopAt) {
        const k = next;
        next += textsPerCall;
        const t0 = performance.now();
        await once(k);
        latencies.push(performance.now() - t0);
        done += textsPerCall;
      }
    }),
  );
  return { texts: done, ms: performance.now() - start, latencies };
}
