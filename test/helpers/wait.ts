/**
 * Polls `done` every `everyMs` until it holds or `ms` have passed, and says whether it held: a test waits on
 * what it can observe (a request upstream, a log line, the engine at work), not on a fixed sleep that is too
 * short on a slow host and too long on a fast one. The caller asserts on the outcome.
 */
export async function waitFor(done: () => boolean | Promise<boolean>, { ms = 10_000, everyMs = 10 } = {}): Promise<boolean> {
  for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, everyMs))) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
  }
}
