/** Structured JSON logs (pino). Secrets never reach a log line: request logs carry key ids, not keys. */
import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

/**
 * stdout is written in blocks of this many bytes (under sonic-boom's 16 KiB write limit), or every
 * FLUSH_MS, whichever comes first, and in full at exit: one write a request line cost about 5% of the
 * single-message throughput under load, in system calls and thread-pool wake-ups on the shared cores
 * (`npm run bench:ab`, docs/deployment.md#logs).
 */
const BLOCK_BYTES = 16_000;
const FLUSH_MS = 100;

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sentio' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['*.authorization', '*.apiKey', '*.api_key', '*["x-api-key"]'], censor: '[redacted]' },
    },
    destination ?? pino.destination({ sync: false, minLength: BLOCK_BYTES, periodicFlush: FLUSH_MS }),
  );
}
