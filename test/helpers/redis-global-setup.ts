/** vitest globalSetup of the "redis" project: one throw-away redis-server for the whole run. */
import type { TestProject } from 'vitest/node';
import { startRedis } from './redis.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedis();
  project.provide('redisUrl', redis.url);
  return () => redis.stop();
}
