/** Time as the batcher sees it, injectable so that batching tests run on a fake clock (test/engine/fake-clock.ts). */
export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /**
   * Run `fn` once the current macrotask and its microtasks are done, so that every analyze() call made
   * in the same tick (e.g. by callers woken by one finished batch) lands in the same batch.
   */
  defer(fn: () => void): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  defer: (fn) => {
    setImmediate(fn);
  },
};
