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
  },
});
