/** Structured JSON logs (pino). Secrets never reach a log line: request logs carry key ids, not keys. */
import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sentio' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['*.authorization', '*.apiKey', '*.api_key', '*["x-api-key"]'], censor: '[redacted]' },
    },
    destination ?? pino.destination({ sync: false }),
  );
}
