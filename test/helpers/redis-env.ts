/** Which store backend the test servers use: the "redis" vitest project sets SENTIO_TEST_STORE=redis. */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by test/helpers/redis-global-setup.ts in the vitest project that runs the suite on Redis. */
    redisUrl: string;
  }
}

/**
 * Environment that puts a test server's state in Redis when the suite runs in the "redis" vitest
 * project (SENTIO_TEST_STORE=redis), else nothing. Each server gets its own key prefix, so servers
 * started one after another see fresh state, as they do with the in-process stores.
 */
export function redisTestEnv(): Record<string, string> {
  if (process.env['SENTIO_TEST_STORE'] !== 'redis') return {};
  // Counted at every scrape, so that tests reading sentio_contexts_stored twice read two counts.
  return { SENTIO_REDIS_URL: inject('redisUrl'), SENTIO_REDIS_PREFIX: `t${randomBytes(6).toString('hex')}:`, SENTIO_REDIS_COUNT_SECONDS: '0' };
}
