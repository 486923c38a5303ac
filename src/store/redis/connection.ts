/**
 * One ioredis client shared by the Redis-backed stores, set up to fail fast: no offline queue (a command
 * issued while disconnected fails at once), a short command timeout, no re-sending of commands that were
 * in flight when the connection dropped (an append sent twice would land twice), and reconnection that
 * never gives up but backs off to at most RECONNECT_MAX_MS, so the instance recovers by itself.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../context-store.js';

export interface RedisConnectionOptions {
  url: string;
  /** Every key starts with this. */
  prefix: string;
  /** A command not answered within this is failed (StoreUnavailableError → 503). */
  commandTimeoutMs: number;
  logger?: Logger | undefined;
}

/** Reconnect delays: 50 ms doubling to this cap, with jitter so restarted fleets do not reconnect in step. */
const RECONNECT_BASE_MS = 50;
const RECONNECT_MAX_MS = 2_000;
/** How long the first connection may take before start-up gives up. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Redis replies that mean "not serving this instance now" rather than "your command is wrong": a full Redis
 * under noeviction (OOM) and credentials rotated under a running instance among them (each had been a 500
 * on every request, the rate limiter's included).
 */
const TRANSIENT_REPLY = /^(LOADING|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|BUSY|NOREPLICAS|OOM|NOAUTH|WRONGPASS|NOPERM)\b/;

export class RedisStartupError extends Error {
  override name = 'RedisStartupError';
  readonly code = 'REDIS_UNREACHABLE';
}

function reconnectDelayMs(attempt: number): number {
  const capped = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(attempt, 10));
  return Math.round(capped * (0.75 + Math.random() * 0.25));
}

/** The URL with any password replaced (before the host, or as ioredis's `?password=`), for logs and errors. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString();
  } catch {
    return '(unparsable SENTIO_REDIS_URL)';
  }
}

export class RedisConnection {
  readonly client: Redis;
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly #logger: Logger | undefined;
  /** A loss was logged, so its end is too (a killed connection comes back without an error in between), and why it stays down. */
  #lost = false;
  readonly #url: string;
  #lastError: string | undefined;
  #up = false;
  #closed = false;
  /** open() has succeeded: before it, a 'ready' is the first connection, not a return. */
  #opened = false;
  #connections = 0;

  private constructor(opts: RedisConnectionOptions) {
    this.prefix = opts.prefix;
    this.commandTimeoutMs = opts.commandTimeoutMs;
    this.#logger = opts.logger;
    this.#url = redactRedisUrl(opts.url);
    this.client = new Redis(opts.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: opts.commandTimeoutMs,
      connectTimeout: Math.max(opts.commandTimeoutMs, 1_000),
      keepAlive: 10_000,
      retryStrategy: (attempt) => (this.#closed ? null : reconnectDelayMs(attempt)),
    });
    // Without a listener ioredis prints every failed reconnection attempt; log state changes instead, and
    // each new reason while down (a rotated password said nothing after "connection lost"), the first one
    // too when the loss itself came without an error (a clean close: "connection closed").
    this.client.on('error', (err: Error) => {
      if (!this.#up && this.#lost && err.message !== this.#lastError && !this.#closed) {
        this.#logger?.warn({ redis: this.#url, reason: err.message }, 'redis still unavailable');
      }
      this.#lastError = err.message;
    });
    this.client.on('ready', () => {
      this.#connections++;
      if (this.#opened && !this.#up && (this.#lastError !== undefined || this.#lost)) this.#logger?.warn({ redis: this.#url }, 'redis connection restored');
      this.#up = true;
      this.#lost = false;
      // An error belongs to the outage it came in: the next loss (a killed connection) has its own, or none.
      this.#lastError = undefined;
    });
    this.client.on('close', () => {
      if (this.#up && !this.#closed) {
        this.#logger?.error({ redis: this.#url, reason: this.#lastError ?? 'connection closed' }, 'redis connection lost: state requests answer 503 until it returns');
        this.#lost = true;
      }
      this.#up = false;
    });
  }

  /** Connect, or throw RedisStartupError naming the server and the reason. */
  static async open(opts: RedisConnectionOptions): Promise<RedisConnection> {
    const conn = new RedisConnection(opts);
    let timer: NodeJS.Timeout | undefined;
    let reached = false;
    try {
      await Promise.race([
        conn.client.connect(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
        }),
      ]);
      reached = true;
      await conn.client.ping();
      // ioredis carries on in database 0 when its SELECT fails (an index past the server's databases).
      const db = new URL(opts.url).pathname.slice(1);
      if (db) await conn.client.select(Number(db));
    } catch (err) {
      conn.#closed = true;
      conn.client.disconnect();
      const reason = conn.#lastError ?? (err as Error).message;
      // Reached but refused (a database index past the server's, a command the account may not run) is not unreachable.
      throw new RedisStartupError(reached
        ? `Redis at ${conn.#url} (SENTIO_REDIS_URL) refused the connection's set-up: ${(err as Error).message}`
        : `cannot reach Redis at ${conn.#url} (SENTIO_REDIS_URL): ${reason}`);
    } finally {
      clearTimeout(timer);
    }
    conn.#opened = true;
    conn.#logger?.info({ redis: conn.#url, prefix: conn.prefix }, 'redis connected');
    return conn;
  }

  /** How many times the connection has become ready: a change means Redis came back since. */
  get connections(): number {
    return this.#connections;
  }

  /** Whether commands can be sent now. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /** Run a command; failures that mean "Redis is not serving" become StoreUnavailableError. */
  async run<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    try {
      return await command(this.client);
    } catch (err) {
      throw toStoreError(err);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.client.status === 'ready') {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }
}

/**
 * A ReplyError other than the transient ones is a bug in our command; everything else is "unavailable".
 * Neither keeps ioredis's error as its cause: that carries the command's arguments, texts included, into
 * any log line that records the error.
 */
function toStoreError(err: unknown): unknown {
  const e = err as { name?: string; message?: string } | null;
  const message = `redis: ${e?.message ?? String(err)}`;
  if (e?.name === 'ReplyError' && !TRANSIENT_REPLY.test(e.message ?? '')) return new Error(message);
  return new StoreUnavailableError(message);
}
