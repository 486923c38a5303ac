/**
 * Reads chat messages' words on a thread of their own, so that the event loop serving every other request
 * does not wait on them. The crisis rules and the learned crisis signal cost about 0.1–0.2 ms for a chat-sized
 * message but 7–21 ms for an 8 KB one on a 2-core Zen 3, and a chat turn reads up to four messages (the latest
 * and three earlier ones): up to about 80 ms during which the loop answered nothing. Short texts stay on the
 * loop (INLINE_CHARS).
 *
 * Should the thread fail to start or stop (it should not: readText is pure), the texts it had not answered
 * are read on the loop, as they were before this thread existed, and the next long read starts it again;
 * after MAX_FAILURES it stays on the loop. A turn never fails or skips its crisis reading for it.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { readText } from './conversation-mode.js';
import type { TextReading } from './conversation-mode.js';

export interface ReadRequest {
  id: number;
  texts: string[];
}

export type ReadResponse = { id: number; readings: TextReading[] } | { id: number; error: string };

interface Pending {
  texts: string[];
  resolve(readings: TextReading[]): void;
  reject(err: Error): void;
}

const MAX_FAILURES = 3;
/**
 * Texts this short in all are read on the loop: at most about 1.3 ms there (0.1–0.5 ms for ordinary words),
 * while the trip to the thread and back, whose caches have gone cold between turns, added 0.15–0.35 ms to a
 * lone chat turn whose reading had finished beside the engine's scoring.
 */
const INLINE_CHARS = 512;

export interface TextReaderOptions {
  logger?: Logger | undefined;
  /** false: read on the event loop (SENTIO_CHAT_READ_THREAD=0, the benchmark's baseline). */
  thread?: boolean | undefined;
  /** Node options for the thread (tests running the TypeScript sources pass their loader). */
  execArgv?: string[] | undefined;
  /** The thread's entry (tests). */
  url?: URL | undefined;
}

/**
 * Reads on the loop's next turn: what the caller queued this turn goes first (chat's scoring, which the
 * batcher hands to the engine on the next turn, so that the engine scores while the loop reads).
 */
function readOnLoop(texts: readonly string[]): Promise<TextReading[]> {
  return new Promise((resolve, reject) => setImmediate(() => {
    try {
      resolve(texts.map((t) => readText(t)));
    } catch (err) {
      reject(err as Error);
    }
  }));
}

export class TextReader {
  readonly #url: URL;
  readonly #execArgv: string[] | undefined;
  readonly #logger: Logger | undefined;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  /** Resolves true once the thread has warmed up, false if it is lost first; undefined while none runs. */
  #ready: Promise<boolean> | undefined;
  #isReady = false;
  #nextId = 0;
  #failures = 0;
  #closed = false;

  constructor(opts: TextReaderOptions = {}) {
    this.#url = opts.url ?? new URL(import.meta.url.endsWith('.ts') ? './text-reader-worker.ts' : './text-reader-worker.js', import.meta.url);
    this.#execArgv = opts.execArgv;
    this.#logger = opts.logger;
    this.#closed = opts.thread === false;
  }

  /** Whether long reads go to the thread (false when configured off, once closed, or given up on). */
  get threaded(): boolean {
    return !this.#closed && this.#failures < MAX_FAILURES;
  }

  /** Whether the thread is up and reading the long texts. */
  get running(): boolean {
    return this.#isReady;
  }

  /**
   * Each text's reading, in order, as readText gives it. The thread starts with the first long read, which
   * is read on the loop meanwhile, as are the ones until it is ready: its start and warm-up take about 0.3 s,
   * and it holds a copy of the rules and the learned signal (about 35 MB of RSS) that a server whose users
   * send short messages never needs.
   */
  read(texts: string[]): Promise<TextReading[]> {
    if (texts.length === 0) return Promise.resolve([]);
    let chars = 0;
    for (const t of texts) chars += t.length;
    if (chars <= INLINE_CHARS || !this.threaded) return readOnLoop(texts);
    const worker = this.#worker;
    if (!worker || !this.#isReady) {
      void this.start();
      return readOnLoop(texts);
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // The thread keeps the process alive only while it owes an answer.
      if (this.#pending.size === 0) worker.ref();
      this.#pending.set(id, { texts, resolve, reject });
      worker.postMessage({ id, texts } satisfies ReadRequest);
    });
  }

  /** Starts the thread if none runs; resolves true once it is ready to read, false if it cannot be. */
  start(): Promise<boolean> {
    if (!this.threaded) return Promise.resolve(false);
    if (this.#ready) return this.#ready;
    let worker: Worker;
    try {
      worker = new Worker(this.#url, { execArgv: this.#execArgv });
    } catch (err) {
      this.#lost(undefined, err);
      return Promise.resolve(false);
    }
    worker.unref();
    this.#worker = worker;
    let settle: (ok: boolean) => void = () => {};
    this.#ready = new Promise((resolve) => (settle = resolve));
    worker.on('message', (m: ReadResponse | 'ready') => {
      if (m === 'ready') {
        if (this.#worker !== worker) return; // closed meanwhile
        this.#isReady = true;
        this.#logger?.info(`text reading thread ready: chat texts over ${INLINE_CHARS} characters are read off the event loop`);
        settle(true);
        return;
      }
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) worker.unref();
      if ('error' in m) p.reject(new Error(`reading a message failed: ${m.error}`));
      else p.resolve(m.readings);
    });
    const lost = (err: Error) => {
      settle(false);
      this.#lost(worker, err);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the thread exited with code ${code}`)));
    return this.#ready;
  }

  /** Stops the thread; what it had not answered is read here. Later reads run on the loop. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#forget();
    this.#readHere();
    await worker?.terminate();
  }

  #forget(): void {
    this.#worker = undefined;
    this.#ready = undefined;
    this.#isReady = false;
  }

  #lost(worker: Worker | undefined, err: unknown): void {
    if (worker && this.#worker !== worker) return; // already handled ('error' comes before 'exit'), or closed
    this.#forget();
    if (this.#closed) return;
    this.#failures++;
    this.#logger?.warn({ err, failures: this.#failures },
      this.#failures < MAX_FAILURES ? 'text reading thread lost; its texts are read on the event loop and the next long read restarts it'
        : 'text reading thread lost again; chat messages are read on the event loop from now on');
    this.#readHere();
  }

  /** Answers every pending read on the loop. */
  #readHere(): void {
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      readOnLoop(p.texts).then(p.resolve, p.reject);
    }
  }
}
