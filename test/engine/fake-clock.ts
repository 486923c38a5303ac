/** A manual clock for batcher tests: time moves only when the test says so, and deferred work runs on flush(). */
import type { Clock } from '../../src/engine/clock.js';

interface Timer {
  at: number;
  fn: () => void;
}

/** Let every pending promise callback run (a real macrotask turn). */
export const settleMicrotasks = (): Promise<void> => new Promise((r) => setImmediate(r));

export class FakeClock implements Clock {
  #now = 0;
  #nextId = 1;
  #timers = new Map<number, Timer>();
  #deferred: (() => void)[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  defer(fn: () => void): void {
    this.#deferred.push(fn);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Run deferred callbacks and settle promises until nothing more is deferred. */
  async flush(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      await settleMicrotasks();
      if (this.#deferred.length === 0) return;
      const batch = this.#deferred.splice(0);
      for (const fn of batch) fn();
    }
    throw new Error('FakeClock.flush: deferred work keeps rescheduling itself');
  }

  /** Move time forward, firing due timers in order, flushing after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await this.flush();
    for (;;) {
      let next: [number, Timer] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.#now = next[1].at;
      next[1].fn();
      await this.flush();
    }
    this.#now = target;
    await this.flush();
  }
}
