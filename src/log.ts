/** Structured JSON logs (pino). Secrets never reach a log line: request logs carry key ids, not keys. */
import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

/**
 * stdout gets the lines in blocks of about BLOCK_CHARS, at the latest FLUSH_MS after a line, and in full
 * at exit, each block one synchronous write (pino's own default destination writes synchronously too).
 * Lines are collected here and joined once a block: sonic-boom's own buffering (minLength) appended each
 * line to a growing string and measured its byte length, a copy of up to 16 KB a line that was half the
 * main thread's allocations under single-message load; a write system call per line, or a block handed
 * to the thread pool, cost several percent of that load's throughput on two cores
 * (`npm run bench:ab`, docs/deployment.md#logs).
 */
const BLOCK_CHARS = 16_000;
const FLUSH_MS = 100;

let timeMs = NaN;
let timeField = '';

/**
 * pino's isoTime, formatted once a millisecond: `Date#toISOString` for every line cost about 1% of the
 * main thread under single-message load, where several lines share each millisecond.
 */
function isoTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeField;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sentio' },
      timestamp: isoTime,
      redact: { paths: ['*.authorization', '*.apiKey', '*.api_key', '*["x-api-key"]'], censor: '[redacted]' },
      serializers: { err: errorFields },
    },
    destination ?? new BlockDestination(pino.destination({ sync: true })),
  );
}

/**
 * An error as its type, message, code, stack and causes, never its other fields: a library's error may
 * carry what it was sent (ioredis's, the command's arguments: a request's texts, 28 KB of them in one
 * logged line), where pino's own serializer copies every field.
 */
export function errorFields(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const out: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out['code'] = code;
  if (err.cause !== undefined && depth < 3) out['cause'] = errorFields(err.cause, depth + 1);
  return out;
}

type Destination = ReturnType<typeof pino.destination>;

const open = new Set<BlockDestination>();

/** Collects lines into blocks for `out`; pino calls flush(cb) for logger.flush(). */
export class BlockDestination {
  readonly #out: Destination;
  #lines: string[] = [];
  #chars = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(out: Destination) {
    this.#out = out;
    // pino flushes its destination at exit only when that writes asynchronously; this one holds a block.
    if (open.size === 0) process.once('exit', () => { for (const d of open) d.flushSync(); });
    open.add(this);
  }

  write(line: string): boolean {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= BLOCK_CHARS) this.#push();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => this.#push(), FLUSH_MS);
      this.#timer.unref();
    }
    return true;
  }

  flush(cb?: (err?: Error) => void): void {
    this.#push();
    this.#out.flush(cb);
  }

  flushSync(): void {
    try {
      this.#push();
      this.#out.flushSync();
    } catch {
      // stdout already closed: nothing left to write to
    }
  }

  #push(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#chars === 0) return;
    const block = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.#out.write(block);
  }
}
