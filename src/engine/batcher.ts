/**
 * The dynamic micro-batcher: turns many small analyze() calls into few large engine runs.
 *
 * A batch closes when it is full (maxBatchSize texts, or maxBatchTokens padded tokens = texts x longest
 * estimated length), when its oldest text has waited maxWaitMs, or at once when no batch is running:
 * waiting while the engine idles only adds latency (and an idle engine given one batch's worth of 16 or
 * more texts gets it as two halves, so that one is always queued behind the other). At most
 * maxBatchesInFlight batches are handed to the engine at a time; with 2, the next batch is already queued
 * natively while one runs, so the engine never waits for the JS thread (TEI's prefetch of one). Texts of a many-text call are queued shortest first,
 * and when more texts wait than fit one batch, the batch is built around the first text in line from texts
 * of similar length within a look-ahead window, which cuts padding without starving anyone (the first
 * text in line always goes next: the oldest, unless an urgent one or another tenant's is). Texts whose caller
 * aborted are dropped before they reach the engine. When the queue holds maxQueue texts, new calls are
 * refused with EngineOverloadedError rather than queued without bound. A call marked urgent (someone is
 * waiting on it before anything else can happen, like the chat turn whose LLM call needs the user's
 * emotions) goes ahead of queued texts and does not wait for a batch to fill; the others keep their order
 * behind it. A batch serving several calls may run as a few smaller engine runs, each answering its
 * callers as it finishes (streamChunk). Calls name their tenant (the API key): while several tenants have
 * texts waiting, the queue is kept in start-time fair order (each text tagged with its tenant's share of
 * estimated tokens so far), so one tenant's bulk batch cannot make another's single text wait behind all
 * of it; one tenant's calls keep their arrival order. docs/engine.md explains the defaults.
 */
import type { Clock } from './clock.js';
import type { CancelSignal } from './cancel.js';
import { systemClock } from './clock.js';
import { EngineAbortedError, EngineDisposedError, EngineOverloadedError, InferenceError } from './errors.js';

export interface BatcherOptions<I> {
  maxBatchSize: number;
  /** Budget of padded tokens per batch: texts x the longest text's estimated tokens. */
  maxBatchTokens: number;
  maxWaitMs: number;
  /**
   * Texts waiting for a batch (not those running). A larger call is still admitted into an empty queue,
   * and a call of at most maxBatchSize (and maxQueue) texts from a tenant with none waiting into a full one.
   */
  maxQueue: number;
  maxBatchesInFlight: number;
  /** How many batches' worth of queued texts a batch may pick from (similar lengths), >= 1. */
  lookahead?: number;
  /** An idle engine given at least twice this many texts (and less than a full batch) gets two half batches. */
  splitMin?: number;
  /**
   * A batch holding texts of several calls runs as engine runs of at most this many texts, in length
   * order, each settling its calls as it finishes; 0 (the default): one run per batch. See #parts().
   */
  streamChunk?: number;
  /** Fair order and admission between the calls' tenants (default); false: tenants ignored, as before them. */
  fair?: boolean;
  /** Light tenants' texts may take the priority lane (default); false: only urgent ones do. See #entitled. */
  lane?: boolean;
  /** Estimated tokens of one item (see estimate.ts). */
  cost: (item: I) => number;
  clock?: Clock;
}

/**
 * Runs one batch and resolves with one output per item, in order; `priority`: ahead of the work the
 * engine already holds but has not started (see MicroBatcher's #pump).
 */
export type BatchRunner<I, O> = (items: I[], priority: boolean) => Promise<O[]>;

/** Counters for metrics: gauges (queued*, inFlight*) and totals since start. */
export interface BatcherStats {
  queuedTexts: number;
  inFlightBatches: number;
  inFlightTexts: number;
  batches: number;
  texts: number;
  overloaded: number;
  aborted: number;
  dropped: number;
  failedBatches: number;
  /** Batches sent through the priority lane (urgent texts, and light tenants' beside bulk batches). */
  priorityBatches: number;
}

/** The totals of BatcherStats, all zero: what a dispatcher counts from its start. */
function noTotals(): Omit<BatcherStats, 'queuedTexts' | 'inFlightBatches' | 'inFlightTexts'> {
  return { batches: 0, texts: 0, overloaded: 0, aborted: 0, dropped: 0, failedBatches: 0, priorityBatches: 0 };
}

/**
 * How a call is queued: `urgent` puts it ahead of queued texts, and its batch leaves without waiting;
 * `tenant` is whose texts these are (calls without one share a tenant), for fair order between tenants.
 */
export interface SubmitOptions {
  signal?: CancelSignal | undefined;
  urgent?: boolean | undefined;
  tenant?: string | undefined;
}

/** What the engine needs from a dispatcher; the batcher and the unbatched pass-through both provide it. */
export interface Dispatcher<I, O> {
  submit(items: readonly I[], opts?: SubmitOptions): Promise<O[]>;
  stats(): BatcherStats;
  /** Refuse new calls and reject queued ones with `reason`; batches already running finish. */
  close(reason: Error): void;
  /** Resolves once nothing is queued or running. */
  drain(): Promise<void>;
}

interface Call<O> {
  results: O[];
  remaining: number; // results still missing
  queued: number; // entries still waiting in the queue
  tenant: string;
  done: boolean;
  resolve: (results: O[]) => void;
  reject: (err: Error) => void;
  signal: CancelSignal | undefined;
  onAbort: (() => void) | undefined;
}

interface Entry<I, O> {
  item: I;
  cost: number;
  call: Call<O>;
  index: number; // position in the call's results
  enqueuedAt: number;
  urgent: boolean;
  taken: boolean;
  /** Start tag in fair order: the tenant's estimated tokens queued before this text (urgent: -Infinity). */
  tag: number;
}

/** A priority batch holds at most this share of maxBatchSize texts and of maxBatchTokens (engine.md). */
const PRIORITY_SHARE = 1 / 8;

function abortReason(signal: CancelSignal): EngineAbortedError {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? `: ${reason.message}` : '';
  return new EngineAbortedError(`analysis aborted by the caller${detail}`, { cause: reason });
}

function settle<O>(call: Call<O>, outcome: { results: O[] } | { error: Error }): void {
  if (call.done) return;
  call.done = true;
  if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
  if ('results' in outcome) call.resolve(outcome.results);
  else call.reject(outcome.error);
}

export class MicroBatcher<I, O> implements Dispatcher<I, O> {
  readonly #run: BatchRunner<I, O>;
  readonly #opts: Required<Omit<BatcherOptions<I>, 'clock'>>;
  readonly #clock: Clock;
  #queue: (Entry<I, O> | undefined)[] = [];
  #head = 0; // entries before it have left the queue, and their slots are cleared
  #queued = 0; // live entries waiting
  #inFlight = 0;
  #inFlightTexts = 0;
  #timer: unknown = undefined;
  #timerAt = Infinity;
  #scheduled = false;
  #closed: Error | undefined;
  #idleWaiters: (() => void)[] = [];
  #stats = noTotals();
  /**
   * Start-time fair queueing over tenants: #virtual is the tag of the text last taken from the head, and
   * #finish each tenant's tag after its last queued text, while it has texts waiting (texts that left
   * unrun, aborted or failed, charge nothing after). A new call's texts are tagged from max(#virtual, its
   * tenant's finish) on, each adding its estimated tokens, and the queue is kept in tag order from #head
   * (urgent texts first). One tenant's tags only grow, so a lone tenant's calls are appended in arrival
   * order as before.
   */
  #virtual = 0;
  readonly #finish = new Map<string, number>();
  /** Texts waiting per tenant (tenants with none are absent). */
  readonly #queuedBy = new Map<string, number>();
  /** Batches in flight, not as priority, by the tenant of their first text; and priority ones (0 or 1). */
  readonly #inFlightBy = new Map<string, number>();
  #priorityInFlight = 0;
  /** Normal batches in flight that are bulk (see #dispatch): what the priority lane overtakes. */
  #bulkInFlight = 0;
  /** A lane batch's most texts and padded tokens (PRIORITY_SHARE of a batch). */
  readonly #laneTexts: number;
  readonly #laneTokens: number;

  constructor(run: BatchRunner<I, O>, opts: BatcherOptions<I>) {
    this.#run = run;
    this.#clock = opts.clock ?? systemClock;
    this.#opts = { lookahead: 4, splitMin: 8, streamChunk: 0, fair: true, lane: true, ...opts };
    this.#laneTexts = Math.max(1, Math.floor(this.#opts.maxBatchSize * PRIORITY_SHARE));
    this.#laneTokens = this.#opts.maxBatchTokens * PRIORITY_SHARE;
    for (const key of ['maxBatchSize', 'maxBatchTokens', 'maxQueue', 'maxBatchesInFlight', 'lookahead', 'splitMin'] as const) {
      const v = this.#opts[key];
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`${key} must be a positive integer, got ${v}`);
    }
    const chunk = this.#opts.streamChunk;
    if (!Number.isInteger(chunk) || chunk < 0) throw new RangeError(`streamChunk must be a non-negative integer, got ${chunk}`);
    if (!(this.#opts.maxWaitMs >= 0)) throw new RangeError(`maxWaitMs must be >= 0, got ${this.#opts.maxWaitMs}`);
  }

  submit(items: readonly I[], opts: SubmitOptions = {}): Promise<O[]> {
    const { signal } = opts;
    const urgent = opts.urgent === true;
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) {
      this.#stats.aborted++;
      return Promise.reject(abortReason(signal));
    }
    if (items.length === 0) return Promise.resolve([]);
    const { maxQueue, maxBatchSize } = this.#opts;
    const tenant = this.#opts.fair ? opts.tenant ?? '' : '';
    // A call larger than the whole queue may still run alone, so that bulk callers are not locked out; and
    // a tenant with nothing waiting may add one batch's worth to a queue that others filled (fair order
    // then serves it next), so one key's backlog does not refuse every other key.
    const newcomer = items.length <= Math.min(maxBatchSize, maxQueue) && !this.#queuedBy.has(tenant);
    if (this.#queued + items.length > maxQueue && this.#queued > 0 && !newcomer) {
      this.#stats.overloaded++;
      return Promise.reject(
        new EngineOverloadedError(`analysis queue full: ${this.#queued} texts waiting, ${items.length} more would pass the limit of ${maxQueue}`),
      );
    }
    return new Promise<O[]>((resolve, reject) => {
      const call: Call<O> = {
        results: new Array<O>(items.length),
        remaining: items.length,
        queued: items.length,
        tenant,
        done: false,
        resolve,
        reject,
        signal,
        onAbort: undefined,
      };
      const now = this.#clock.now();
      const entries = items.map((item, index): Entry<I, O> => ({
        item,
        cost: this.#opts.cost(item),
        call,
        index,
        enqueuedAt: now,
        urgent,
        taken: false,
        tag: -Infinity,
      }));
      if (entries.length > 1) entries.sort((a, b) => a.cost - b.cost); // shortest first: less padding per batch
      if (urgent) this.#pushFront(entries);
      else this.#pushFair(entries, tenant);
      this.#queued += entries.length;
      this.#countQueued(tenant, entries.length);
      if (signal) {
        call.onAbort = () => this.#abort(call);
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.#schedule();
    });
  }

  stats(): BatcherStats {
    return { queuedTexts: this.#queued, inFlightBatches: this.#inFlight, inFlightTexts: this.#inFlightTexts, ...this.#stats };
  }

  close(reason: Error): void {
    if (this.#closed) return;
    this.#closed = reason;
    this.#clearTimer();
    for (let i = this.#head; i < this.#queue.length; i++) {
      const call = this.#queue[i]!.call;
      if (!call.done) settle(call, { error: reason });
    }
    this.#queue = [];
    this.#head = 0;
    this.#queued = 0;
    this.#queuedBy.clear();
    this.#finish.clear();
    this.#virtual = 0;
    this.#notifyIdle();
  }

  drain(): Promise<void> {
    if (this.#queued === 0 && this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Urgent entries go behind earlier urgent ones and ahead of everything else (the head is always urgent then). */
  #pushFront(entries: Entry<I, O>[]): void {
    let at = this.#head;
    while (at < this.#queue.length && this.#queue[at]!.urgent) at++;
    this.#queue = insertAt(this.#queue, at, entries);
  }

  /**
   * Tag a call's entries after its tenant's earlier texts (or from the queue's current tag, if that is
   * later) and put them in the tag-ordered queue: appended when no waiting text has a later tag (always
   * with one tenant), inserted in one piece where no waiting text falls between their tags (always for one
   * text), else merged with the texts queued behind the first of them.
   */
  #pushFair(entries: Entry<I, O>[], tenant: string): void {
    let tag = Math.max(this.#virtual, this.#finish.get(tenant) ?? 0);
    for (const e of entries) {
      e.tag = tag;
      tag += Math.max(1, e.cost);
    }
    this.#finish.set(tenant, tag);
    const q = this.#queue;
    const first = entries[0]!.tag;
    if (q.length === this.#head || q[q.length - 1]!.tag <= first) {
      for (const e of entries) q.push(e);
      return;
    }
    // The first waiting text with a later tag (binary search: [#head, length) is in tag order).
    let lo = this.#head;
    let hi = q.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (q[mid]!.tag > first) hi = mid;
      else lo = mid + 1;
    }
    if (q[lo]!.tag > entries[entries.length - 1]!.tag) {
      // Every new text goes before it (a one-text call always does): one insertion.
      this.#queue = insertAt(q, lo, entries);
      return;
    }
    const behind = q.slice(lo);
    q.length = lo;
    let i = 0;
    let j = 0;
    while (i < entries.length && j < behind.length) q.push(behind[j]!.tag <= entries[i]!.tag ? behind[j++]! : entries[i++]!);
    while (i < entries.length) q.push(entries[i++]!);
    while (j < behind.length) q.push(behind[j++]!);
  }

  /** A tenant with no text waiting holds no tag: whatever of its calls left unrun charges it nothing. */
  #countQueued(tenant: string, delta: number): void {
    if (addCount(this.#queuedBy, tenant, delta) > 0) return;
    this.#finish.delete(tenant);
    if (this.#queuedBy.size === 0) this.#virtual = 0; // nothing waits: tags start from 0 again
  }

  /**
   * Whether a text may go in the priority lane: an urgent one, or a light tenant's (no batch of its own
   * in flight, and no more texts waiting than a lane batch holds) unless the lane is for urgent texts only.
   */
  #entitled(e: Entry<I, O>): boolean {
    if (e.urgent) return true;
    return this.#opts.lane && !this.#inFlightBy.has(e.call.tenant) && (this.#queuedBy.get(e.call.tenant) ?? 0) <= this.#laneTexts;
  }

  #abort(call: Call<O>): void {
    if (call.done) return;
    this.#stats.aborted++;
    this.#end(call, abortReason(call.signal!));
  }

  /**
   * Settle a call with an error: its caller aborted, or one of its batches failed. Its entries still
   * queued stay in the array as dead weight until a scan drops them, and stop counting as queued now
   * (a failed call's used to count for good: the queue looked fuller each time, and drain() never ended).
   */
  #end(call: Call<O>, error: Error): void {
    if (call.done) return;
    this.#queued -= call.queued;
    this.#stats.dropped += call.queued;
    this.#countQueued(call.tenant, -call.queued);
    call.queued = 0;
    settle(call, { error });
    this.#notifyIdle();
  }

  #schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    this.#clock.defer(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    const { maxBatchSize, maxBatchTokens, maxWaitMs, maxBatchesInFlight, splitMin } = this.#opts;
    const entitled = (e: Entry<I, O>) => this.#entitled(e);
    while (!this.#closed) {
      const { live, end } = this.#window();
      const first = live[0];
      if (!first) break;
      // The priority lane: while a bulk batch (see #dispatch) is in flight, a lane batch led by an entitled
      // text (#entitled) goes as priority, one at a time, beyond maxBatchesInFlight: the addon takes it
      // before the work it holds, so it waits for the runs in progress, not for the bulk batches queued
      // there. It holds only such texts, at most PRIORITY_SHARE of a batch. A tenant with more waiting
      // goes by fair order in normal batches, and a lone tenant's batches never qualify, urgent ones aside.
      const priority = this.#bulkInFlight > 0 && this.#priorityInFlight === 0 && entitled(first);
      if (!priority && this.#inFlight - this.#priorityInFlight >= maxBatchesInFlight) break;
      const full = live.length >= maxBatchSize || paddedCost(live) >= maxBatchTokens;
      // (A lane batch does not wait for company either: it is small, and its point is to go first.)
      if (!full && this.#inFlight > 0 && !first.urgent && !priority) {
        const due = first.enqueuedAt + maxWaitMs;
        if (this.#clock.now() < due) {
          this.#armTimer(due);
          return;
        }
      }
      // An idle engine given at most one batch's worth gets it as two halves: the second waits in the addon
      // while the first runs, so the engine never idles while the first half's callers send their
      // next texts (closed-loop callers would otherwise always find it idle, and wait in lockstep).
      const oneBatch = live.length <= maxBatchSize && paddedCost(live) <= maxBatchTokens;
      if (oneBatch && this.#inFlight === 0 && maxBatchesInFlight >= 2 && live.length >= 2 * splitMin) {
        const half = Math.ceil(live.length / 2);
        this.#dispatch(this.#take(live, end, half), first.call.tenant, false);
        const rest = this.#window();
        if (rest.live.length > 0) this.#dispatch(this.#take(rest.live, rest.end), rest.live[0]!.call.tenant, false);
        continue;
      }
      if (priority) {
        this.#dispatch(this.#take(live.filter(entitled), end, this.#laneTexts, this.#laneTokens), first.call.tenant, true);
        continue;
      }
      // The lane is busy and the first text in line is a light tenant's: it waits for the lane (a few
      // milliseconds) rather than ride in a normal batch, which a bulk tenant's texts would fill.
      let pool = live;
      if (this.#priorityInFlight > 0 && this.#bulkInFlight > 0 && !first.urgent && entitled(first)) {
        const others = live.filter((e) => !entitled(e));
        if (others.length > 0) pool = others;
      }
      this.#dispatch(this.#take(pool, end), pool[0]!.call.tenant, false);
    }
    if (this.#queued === 0) this.#clearTimer();
  }

  /** Live entries from the head, up to lookahead batches' worth, and where the scan stopped. */
  #window(): { live: Entry<I, O>[]; end: number } {
    const limit = this.#opts.maxBatchSize * this.#opts.lookahead;
    while (this.#head < this.#queue.length && this.#queue[this.#head]!.call.done) this.#queue[this.#head++] = undefined;
    const live: Entry<I, O>[] = [];
    let i = this.#head;
    for (; i < this.#queue.length && live.length < limit; i++) {
      const e = this.#queue[i]!;
      if (!e.call.done) live.push(e);
    }
    return { live, end: i };
  }

  /** Choose the next batch from the window and remove it (and dead entries) from the queue. */
  #take(live: Entry<I, O>[], end: number, maxSize = this.#opts.maxBatchSize, maxBatchTokens = this.#opts.maxBatchTokens): Entry<I, O>[] {
    let batch: Entry<I, O>[];
    if (live.length <= maxSize && paddedCost(live) <= maxBatchTokens) {
      batch = live;
    } else {
      batch = similarAround(live, maxSize, maxBatchTokens);
    }
    const head = live[0]!;
    if (!head.urgent && head.tag > this.#virtual) this.#virtual = head.tag;
    for (const e of batch) e.taken = true;
    // Compact [head, end): keep what is neither taken nor dead, in order, ending at `end`.
    let write = end;
    for (let i = end - 1; i >= this.#head; i--) {
      const e = this.#queue[i]!;
      if (e.taken) continue;
      if (e.call.done) {
        continue; // dropped: counted when its call was aborted
      }
      this.#queue[--write] = e;
    }
    // A slot left behind would keep its finished call (its caller's results and closures) alive until
    // the array is next sliced, up to a thousand entries later.
    for (let i = this.#head; i < write; i++) this.#queue[i] = undefined;
    this.#head = write;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return batch;
  }

  #dispatch(batch: Entry<I, O>[], tenant: string, priority: boolean): void {
    for (const e of batch) {
      e.call.queued--;
      this.#countQueued(e.call.tenant, -1);
    }
    this.#queued -= batch.length;
    this.#inFlight++;
    // Bulk: more texts than a lane batch holds, or over half the token budget. Batches of 64 one-text
    // callers (about 20 texts, mostly short) are not, so many light tenants alone never use the lane.
    const bulk = !priority && (batch.length > this.#laneTexts || paddedCost(batch) > this.#opts.maxBatchTokens / 2);
    if (priority) {
      this.#priorityInFlight++;
      this.#stats.priorityBatches++;
    } else addCount(this.#inFlightBy, tenant, 1);
    if (bulk) this.#bulkInFlight++;
    this.#inFlightTexts += batch.length;
    this.#stats.batches++;
    this.#stats.texts += batch.length;
    // A lane batch goes as one addon job, not in parts: the addon takes priority jobs before anything
    // else, so a lane batch in parts would hold back the work it overtakes once per part.
    const parts = priority ? [batch] : this.#parts(batch);
    let left = parts.length;
    const outcome = { failed: false }; // a batch counts as failed once, however many of its parts fail
    for (const part of parts) {
      this.#runPart(part, priority, outcome, () => {
        if (--left > 0) return;
        this.#inFlight--;
        if (priority) this.#priorityInFlight--;
        else addCount(this.#inFlightBy, tenant, -1);
        if (bulk) this.#bulkInFlight--;
        this.#inFlightTexts -= batch.length;
        this.#schedule();
        this.#notifyIdle();
      });
    }
  }

  /**
   * The engine runs of one batch. Run whole, a batch answers all its callers at once when its slowest
   * text is done: closed-loop callers (64 connections) then reply and send their next texts in one wave
   * while the engine drains and waits for them (13% of two CPUs idle in the V2 load bench). A batch
   * serving several calls therefore goes as runs of at most streamChunk texts, shortest first, each
   * settling its calls when it finishes, so replies flow while the rest runs. Calls of streamChunk texts
   * or more on average keep the batch whole: their callers wait for all their texts anyway, and a larger
   * run costs less per text.
   */
  #parts(batch: Entry<I, O>[]): Entry<I, O>[][] {
    const chunk = this.#opts.streamChunk;
    if (chunk === 0 || batch.length <= chunk) return [batch];
    const calls = new Set<unknown>();
    for (const e of batch) calls.add(e.call);
    if (batch.length / calls.size >= chunk) return [batch];
    const sorted = batch.slice().sort((a, b) => a.cost - b.cost);
    const size = Math.ceil(sorted.length / Math.ceil(sorted.length / chunk)); // near-equal parts
    const parts: Entry<I, O>[][] = [];
    for (let i = 0; i < sorted.length; i += size) parts.push(sorted.slice(i, i + size));
    return parts;
  }

  #runPart(part: Entry<I, O>[], priority: boolean, outcome: { failed: boolean }, done: () => void): void {
    let running: Promise<O[]>;
    try {
      running = this.#run(part.map((e) => e.item), priority);
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .then(
        (outputs) => {
          if (outputs.length !== part.length) {
            throw new InferenceError(`engine returned ${outputs.length} results for ${part.length} texts. This is a bug.`);
          }
          part.forEach((e, i) => {
            const call = e.call;
            if (call.done) return;
            call.results[e.index] = outputs[i]!;
            if (--call.remaining === 0) settle(call, { results: call.results });
          });
        },
      )
      .catch((err: unknown) => {
        if (!outcome.failed) this.#stats.failedBatches++;
        outcome.failed = true;
        const error = err instanceof Error ? err : new InferenceError(String(err));
        for (const e of part) this.#end(e.call, error);
      })
      .finally(done);
  }

  #armTimer(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#pump();
    }, Math.max(0, at - this.#clock.now()));
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #notifyIdle(): void {
    if (this.#queued !== 0 || this.#inFlight !== 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}

/** Adds `delta` to `key`'s count and returns it; a count that reaches 0 leaves the map. */
function addCount(counts: Map<string, number>, key: string, delta: number): number {
  const n = (counts.get(key) ?? 0) + delta;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
  return n;
}

/** `entries` inserted into `q` at `at`: in place for a few, else by copying (spreading some 200,000 entries as arguments overflowed the stack). */
function insertAt<E>(q: E[], at: number, entries: E[]): E[] {
  if (entries.length <= 1024) {
    q.splice(at, 0, ...entries);
    return q;
  }
  return q.slice(0, at).concat(entries, q.slice(at));
}

function paddedCost(entries: readonly { cost: number }[]): number {
  let max = 0;
  for (const e of entries) if (e.cost > max) max = e.cost;
  return max * entries.length;
}

/**
 * The batch around the first entry in line (live[0]: the oldest, or an urgent one): sort the window by
 * cost and grow a contiguous run from it, each step taking the neighbour whose cost is closer to its own,
 * while the batch stays within maxSize and the padded-token budget. The first goes even if it alone is
 * over budget.
 */
function similarAround<E extends { cost: number }>(live: E[], maxSize: number, budget: number): E[] {
  const first = live[0]!;
  const sorted = live.slice().sort((a, b) => a.cost - b.cost);
  let lo = sorted.indexOf(first);
  let hi = lo;
  let max = first.cost;
  while (hi - lo + 1 < maxSize) {
    const count = hi - lo + 2;
    const left = lo > 0 ? sorted[lo - 1] : undefined;
    const right = hi < sorted.length - 1 ? sorted[hi + 1] : undefined;
    const canLeft = left !== undefined && count * max <= budget;
    const canRight = right !== undefined && count * Math.max(max, right.cost) <= budget;
    if (!canLeft && !canRight) break;
    if (canLeft && (!canRight || first.cost - left.cost <= right!.cost - first.cost)) {
      lo--;
    } else {
      hi++;
      max = Math.max(max, right!.cost);
    }
  }
  return sorted.slice(lo, hi + 1);
}

/**
 * The unbatched mode: every call goes to the engine as its own run(s) (calls larger than maxBatchSize
 * are split), with no waiting and no in-flight bound; the queue limit still applies. It is the
 * "one request, one inference" baseline that benchmarks compare the batcher with.
 */
export class PassThrough<I, O> implements Dispatcher<I, O> {
  readonly #run: BatchRunner<I, O>;
  readonly #maxBatchSize: number;
  readonly #maxQueue: number;
  #pending = 0;
  #inFlight = 0;
  #closed: Error | undefined;
  #idleWaiters: (() => void)[] = [];
  #stats = noTotals();

  constructor(run: BatchRunner<I, O>, opts: { maxBatchSize: number; maxQueue: number }) {
    this.#run = run;
    this.#maxBatchSize = opts.maxBatchSize;
    this.#maxQueue = opts.maxQueue;
  }

  /** Every call runs at once here, so `urgent` has nothing to overtake. */
  async submit(items: readonly I[], opts: SubmitOptions = {}): Promise<O[]> {
    const { signal } = opts;
    if (this.#closed) throw this.#closed;
    if (signal?.aborted) {
      this.#stats.aborted++;
      throw abortReason(signal);
    }
    if (items.length === 0) return [];
    if (this.#pending + items.length > this.#maxQueue && this.#pending > 0) {
      this.#stats.overloaded++;
      throw new EngineOverloadedError(`analysis queue full: ${this.#pending} texts pending, limit ${this.#maxQueue}`);
    }
    this.#pending += items.length;
    const chunks: Promise<O[]>[] = [];
    for (let i = 0; i < items.length; i += this.#maxBatchSize) {
      chunks.push(this.#runOne(items.slice(i, i + this.#maxBatchSize)));
    }
    // The texts count against maxQueue until their runs end, not until the call settles: an aborted call's
    // runs are already in the addon and still cost it (counted at settling, a flood of calls aborted
    // at once queued 19,200 texts behind a limit of 64).
    void Promise.allSettled(chunks).then(() => {
      this.#pending -= items.length;
      this.#notifyIdle();
    });
    const all = Promise.all(chunks).then((parts) => parts.flat());
    if (!signal) return all;
    return new Promise<O[]>((resolve, reject) => {
      const onAbort = (): void => {
        this.#stats.aborted++;
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      all.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async #runOne(items: I[]): Promise<O[]> {
    this.#inFlight++;
    this.#stats.batches++;
    this.#stats.texts += items.length;
    try {
      return await this.#run(items, false);
    } catch (err) {
      this.#stats.failedBatches++;
      throw err;
    } finally {
      this.#inFlight--;
    }
  }

  stats(): BatcherStats {
    return { queuedTexts: 0, inFlightBatches: this.#inFlight, inFlightTexts: this.#pending, ...this.#stats };
  }

  close(reason: Error): void {
    this.#closed ??= reason;
  }

  drain(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #notifyIdle(): void {
    if (this.#pending !== 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
