/**
 * Entry point (`npm start`). SIGHUP reloads the key file once the server runs; without a listener Node's
 * default would end the process: while its modules load and the model warms up (before that listener
 * exists) and during a drain (after it is gone). So one is set before anything else is loaded.
 */
import { repeatsFirst } from './signals.js'; // no imports of its own: loads in no time
import type { StopSignal } from './signals.js';

process.on('SIGHUP', () => undefined);

// A stop asked for while the server starts (modules, model, warm-up: seconds) ends the start with 0, as a
// drain of nothing would; without these listeners Node would end the process at once with 143. A second
// one exits at once, as while draining (the first delivered again is not one: signals.ts).
let startupSignal: StopSignal | undefined;
const onStartupSignal = (signal: string): void => {
  if (startupSignal === undefined) startupSignal = { signal, at: performance.now() };
  else if (!repeatsFirst(startupSignal, signal)) {
    // The logger does not exist yet: the start-up errors' stream says why the start ended 1.
    process.stderr.write(`sentio: a second stop signal (${signal}) while starting: exiting at once\n`);
    process.exit(1);
  }
};
process.on('SIGTERM', onStartupSignal);
process.on('SIGINT', onStartupSignal);

try {
  const { serve } = await import('./serve.js');
  await serve({
    stopAsked: () => startupSignal,
    started: () => {
      process.off('SIGTERM', onStartupSignal);
      process.off('SIGINT', onStartupSignal);
    },
  });
} catch (err) {
  process.stderr.write(`sentio: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}
