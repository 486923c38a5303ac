import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The suites share two cores and one model file; running files one after another keeps timing
    // assertions (event-loop lag, latency bounds) meaningful.
    fileParallelism: false,
    pool: 'forks',
    // Collects every test server's log and fails the run if a key or a message text was logged.
    globalSetup: ['test/helpers/log-audit.ts'],
    projects: [
      { extends: true, test: { name: 'memory', include: ['test/**/*.test.ts'] } },
      {
        // The server tests once more with contexts, rate limits and idempotency records in a real Redis
        // (test/helpers/redis-env.ts). Tests that build no store from the environment (core, engine, model,
        // tokenizer, unit) and the Redis and worker tests (they set up their own state backends) run only in
        // "memory".
        extends: true,
        test: {
          name: 'redis',
          include: ['test/**/*.test.ts'],
          exclude: ['test/{unit,core,tokenizer,engine,model,native,redis,scale}/**'],
          env: { SENTIO_TEST_STORE: 'redis' },
          globalSetup: ['test/helpers/log-audit.ts', 'test/helpers/redis-global-setup.ts'],
        },
      },
    ],
  },
});
