/** Start a real Sentio on an ephemeral loopback port, with the real model, and talk HTTP to it. */
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import type { Config } from '../../src/config.js';
import { startSentio } from '../../src/app.js';
import type { AnalysisEngine, Sentio } from '../../src/app.js';
import type { RateLimitStore } from '../../src/store/rate-limit-store.js';
import { createLogger } from '../../src/log.js';
import { EngineMetrics } from '../../src/metrics.js';
import { testEngine } from './engine.js';
import { recordServerLog } from './log-audit.js';
import { redisTestEnv } from './redis-env.js';
import { TS_LOADER } from './worker-loader.js';

export const TEST_KEY = 'sentio_test_key_0123456789abcdef';
export const OTHER_KEY = 'sentio_test_key_other_fedcba9876';

export interface TestServer {
  sentio: Sentio;
  config: Config;
  base: string;
  /** Every log line the server wrote. */
  logs: string[];
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestServer(
  env: Record<string, string> = {},
  opts: { engine?: AnalysisEngine; now?: () => number; rateLimits?: RateLimitStore } = {},
): Promise<TestServer> {
  const config = loadConfig({
    SENTIO_PORT: '0',
    SENTIO_HOST: '127.0.0.1',
    SENTIO_API_KEYS: `${TEST_KEY},${OTHER_KEY}`,
    SENTIO_LOG_LEVEL: 'info',
    ...redisTestEnv(),
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        logs.push(line);
        recordServerLog(line);
      }
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  let engineMetrics: EngineMetrics | undefined;
  // The engine main.ts would build from this configuration (SENTIO_QUEUE_MAX, SENTIO_BATCHING, ... apply), on CPU.
  const engine = opts.engine ?? (await testEngine({ ...config.engine, executionProvider: 'cpu', onBatch: (run) => engineMetrics?.observeBatch(run) }));
  engineMetrics = new EngineMetrics(() => engine.stats?.() ?? { queuedTexts: 0, inFlightBatches: 0 });
  const sentio = await startSentio(config, { engine, logger, now: opts.now, engineMetrics, readerExecArgv: TS_LOADER, ...(opts.rateLimits ? { rateLimits: opts.rateLimits } : {}) });
  const base = `http://127.0.0.1:${sentio.port}`;
  const auth = { 'x-api-key': TEST_KEY };
  return {
    sentio,
    config,
    base,
    logs,
    post: (path, body, headers = {}) =>
      fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, headers = {}) => fetch(base + path, { headers: { ...auth, ...headers } }),
    close: () => sentio.close(2_000),
  };
}
