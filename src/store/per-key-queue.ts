/**
 * Runs the tasks given for one key one after another, and tasks for different keys at once. The context
 * stores that keep a copy of a shared context (Redis, an HTTP worker's view of the main thread) append
 * through one: each append then names the copy the one before it left, and its reply carries only what
 * changed since. Run at once, every append named the same stale copy and got back all that the others
 * had appended, which grows with the square of the appends in flight (docs/deployment.md).
 */
export class PerKeyQueue {
  readonly #last = new Map<string, Promise<unknown>>();

  /**
   * With `wait`, a task still waiting for its turn after `wait.ms` fails with `wait.error()` and never
   * runs: behind a store that has stopped answering, each queued append had waited out the whole command
   * timeout of every append before it (the tenth answered after ten timeouts).
   */
  run<T>(key: string, task: () => Promise<T>, wait?: { ms: number; error: () => Error }): Promise<T> {
    const before = this.#last.get(key);
    let result: Promise<T>;
    let done: Promise<unknown>; // settles when this task has run, or been skipped: the next one's turn
    if (!before) done = result = task();
    else if (!wait) done = result = before.then(task);
    else {
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const turn = before.then(() => {
        clearTimeout(timer);
        if (timedOut) throw wait.error();
        return task();
      });
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(wait.error());
        }, wait.ms);
      });
      result = Promise.race([turn, late]);
      done = turn;
      late.catch(noop);
    }
    const settled = done.then(noop, noop);
    this.#last.set(key, settled);
    void settled.then(() => {
      if (this.#last.get(key) === settled) this.#last.delete(key);
    });
    return result;
  }
}

function noop(): void {}
