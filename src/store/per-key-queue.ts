/**
 * Runs the tasks given for one key one after another, and tasks for different keys at once. The context
 * stores that keep a copy of a shared context (Redis, an HTTP worker's view of the main thread) append
 * through one: each append then names the copy the one before it left, and its reply carries only what
 * changed since. Run at once, every append named the same stale copy and got back all that the others
 * had appended, which grows with the square of the appends in flight (docs/deployment.md).
 */
export class PerKeyQueue {
  readonly #last = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#last.get(key);
    const result = before ? before.then(task) : task();
    const settled = result.then(noop, noop);
    this.#last.set(key, settled);
    void settled.then(() => {
      if (this.#last.get(key) === settled) this.#last.delete(key);
    });
    return result;
  }
}

function noop(): void {}
