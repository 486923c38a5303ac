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
    projects: [
      { extends: true, test: { name: 'memory', include: ['test/**/*.test.ts'] } },
      {
        // The server tests once more with contexts, rate limits and idempotency records in a real Redis
        // (test/helpers/redis-env.ts). Tests that never build a store (engine, model, tokenizer, unit),
        // the Redis tests themselves and the process-level shutdown test run only in "memory".
        extends: true,
        test: {
          name: 'redis',
          include: ['test/**/*.test.ts'],
          exclude: ['test/{unit,tokenizer,engine,model,native,redis,scale}/**', 'test/ops/shutdown.test.ts'],
          env: { SENTIO_TEST_STORE: 'redis' },
          globalSetup: ['test/helpers/redis-global-setup.ts'],
        },
      },
    ],
  },
});
