/**
 * Entry point (`npm start`). SIGHUP reloads the key file once the server runs; without a listener Node's
 * default would end the process: while its modules load and the model warms up (before that listener
 * exists) and during a drain (after it is gone). So one is set before anything else is loaded.
 */
process.on('SIGHUP', () => undefined);

try {
  const { serve } = await import('./serve.js');
  await serve();
} catch (err) {
  process.stderr.write(`sentio: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}
