/** The micro-batcher on a fake clock with a scripted runner: every decision is deterministic. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { MicroBatcher, PassThrough } from '../../src/engine/batcher.js';
import type { BatcherOptions } from '../../src/engine/batcher.js';
import { EngineAbortedError, EngineDisposedError, EngineOverloadedError, InferenceError } from '../../src/engine/errors.js';
import { FakeClock, settleMicrotasks } from './fake-clock.js';

/** Items are strings; their cost is their length; the output of an item is its upper-case form. */
interface Run {
  items: string[];
  priority: boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

function setup(over: Partial<BatcherOptions<string>> = {}) {
  const clock = new FakeClock();
  const runs: Run[] = [];
  const batcher = new MicroBatcher<string, string>(
    (items, priority) =>
      new Promise<string[]>((resolve, reject) => {
        runs.push({ items, priority, resolve: () => resolve(items.map((s) => s.toUpperCase())), reject });
      }),
    {
      maxBatchSize: 4,
      maxBatchTokens: 1000,
      maxWaitMs: 2,
      maxQueue: 100,
      maxBatchesInFlight: 2,
      cost: (s) => s.length,
      clock,
      ...over,
    },
  );
  /** Finish run i and let everything it wakes up happen. */
  const finish = async (i: number): Promise<void> => {
    runs[i]!.resolve();
    await clock.flush();
  };
  return { clock, runs, batcher, finish };
}

const track = <T>(p: Promise<T>) => {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  p.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
};

describe('MicroBatcher', () => {
  it('runs a lone call at once when the engine is idle', async () => {
    const { clock, runs, batcher, finish } = setup();
    const p = track(batcher.submit(['a']));
    expect(runs).toHaveLength(0); // not synchronously: same-tick calls get a chance to join
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([['a']]);
    await finish(0);
    expect(p.value).toEqual(['A']);
    expect(clock.now()).toBe(0);
  });

  it('puts calls made in the same tick into one batch', async () => {
    const { clock, runs, batcher } = setup();
    for (const s of ['a', 'b', 'c']) void batcher.submit([s]);
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([['a', 'b', 'c']]);
  });

  it('gives an idle engine one batch of 16+ texts as two halves, so one is always queued', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 64 });
    for (let i = 0; i < 20; i++) void batcher.submit([`t${i}`]);
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([10, 10]);
    await finish(0);
    await finish(1);
    for (let i = 0; i < 15; i++) void batcher.submit([`u${i}`]); // below 2 x splitMin: one batch
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([10, 10, 15]);
    await finish(2);
    for (let i = 0; i < 64; i++) void batcher.submit([`v${i}`]); // exactly one full batch: halves too
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([10, 10, 15, 32, 32]);
  });

  it('closes batches at maxBatchSize and keeps at most maxBatchesInFlight running', async () => {
    const { clock, runs, batcher, finish } = setup();
    const calls = 'abcdefghij'.split('').map((s) => track(batcher.submit([s])));
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([4, 4]);
    expect(batcher.stats()).toMatchObject({ queuedTexts: 2, inFlightBatches: 2, inFlightTexts: 8 });
    await clock.advance(50); // time alone does not add a third batch: both slots are taken
    expect(runs).toHaveLength(2);
    await finish(0);
    expect(runs.map((r) => r.items.length)).toEqual([4, 4, 2]);
    await finish(1);
    await finish(2);
    expect(calls.map((c) => c.value)).toEqual('ABCDEFGHIJ'.split('').map((s) => [s]));
    expect(batcher.stats()).toMatchObject({ queuedTexts: 0, inFlightBatches: 0, batches: 3, texts: 10 });
  });

  it('runs a batch serving several calls as length-ordered parts of at most streamChunk texts, each answering as it ends', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 10, streamChunk: 4 });
    const texts = ['aaaaaaaaaa', 'b', 'cccccc', 'dd', 'eeeeeeeee', 'fff', 'ggggggg', 'hhhh', 'iiiiiiii', 'jjjjj'];
    const calls = texts.map((t) => track(batcher.submit([t])));
    await clock.flush();
    // one batch of 10 (below two halves' worth), run as 4 + 4 + 2 texts, shortest first
    expect(runs.map((r) => r.items)).toEqual([
      ['b', 'dd', 'fff', 'hhhh'],
      ['jjjjj', 'cccccc', 'ggggggg', 'iiiiiiii'],
      ['eeeeeeeee', 'aaaaaaaaaa'],
    ]);
    await finish(1);
    expect(calls.map((c) => c.settled)).toEqual(texts.map((t) => ['jjjjj', 'cccccc', 'ggggggg', 'iiiiiiii'].includes(t)));
    expect(batcher.stats()).toMatchObject({ inFlightBatches: 1, inFlightTexts: 10, batches: 1 }); // one batch until its last part ends
    await finish(0);
    await finish(2);
    expect(calls.map((c) => c.value)).toEqual(texts.map((t) => [t.toUpperCase()]));
    expect(batcher.stats()).toMatchObject({ inFlightBatches: 0, inFlightTexts: 0 });
  });

  it('rejects only the calls of a failed part, and counts the batch as failed once', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 10, streamChunk: 4 });
    const calls = ['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff'].map((t) => track(batcher.submit([t])));
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([3, 3]);
    runs[0]!.reject(new InferenceError('boom'));
    await clock.flush();
    expect(calls.map((c) => c.error instanceof InferenceError)).toEqual([true, true, true, false, false, false]);
    await finish(1);
    expect(calls.slice(3).map((c) => c.value)).toEqual([['DDDD'], ['EEEEE'], ['FFFFFF']]);
    expect(batcher.stats()).toMatchObject({ failedBatches: 1, inFlightBatches: 0 });
  });

  // Its texts still waiting used to count as queued for good: the queue refused calls it had room for,
  // and drain() never ended.
  it('a call failed by one of its batches stops counting its texts still queued; the queue has room and drains', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 4, maxQueue: 10, maxBatchesInFlight: 1 });
    const failed = track(batcher.submit(Array.from({ length: 10 }, (_, i) => `x${i}`)));
    await clock.flush();
    expect(runs).toHaveLength(1);
    runs[0]!.reject(new InferenceError('boom'));
    await clock.flush();
    expect(failed.error).toBeInstanceOf(InferenceError);
    expect(batcher.stats()).toMatchObject({ queuedTexts: 0, dropped: 6 });
    const next = track(batcher.submit(['a', 'b', 'c', 'd', 'e']));
    await clock.flush();
    expect(next.error).toBeUndefined();
    const drained = track(batcher.drain());
    while (!next.settled) await finish(runs.length - 1);
    expect(next.value).toEqual(['A', 'B', 'C', 'D', 'E']);
    await clock.flush();
    expect(drained.settled).toBe(true);
  });

  it('keeps whole a batch of calls averaging streamChunk texts or more, and one within streamChunk', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 10, streamChunk: 4 });
    void batcher.submit(['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff']);
    void batcher.submit(['g', 'hh', 'iii', 'jjjj']);
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([10]);
    await finish(0);
    for (const t of ['x', 'y', 'z']) void batcher.submit([t]);
    await clock.flush();
    expect(runs.map((r) => r.items.length)).toEqual([10, 3]);
  });

  it('closes a batch on its padded-token budget', async () => {
    const { clock, runs, batcher } = setup({ maxBatchTokens: 30, maxBatchSize: 100 });
    void batcher.submit(['x'.repeat(10), 'y'.repeat(10), 'z'.repeat(10), 'w'.repeat(10)]);
    await clock.flush();
    // 3 texts x 10 tokens fill the budget; the fourth waits for company, then goes alone
    expect(runs.map((r) => r.items.length)).toEqual([3]);
    await clock.advance(2);
    expect(runs.map((r) => r.items.length)).toEqual([3, 1]);
  });

  it('sends a text longer than the budget alone rather than never', async () => {
    const { clock, runs, batcher } = setup({ maxBatchTokens: 5 });
    void batcher.submit(['a'.repeat(50)]);
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([['a'.repeat(50)]]);
  });

  it('waits up to maxWaitMs for companions while a batch runs, then closes', async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 2 });
    void batcher.submit(['a']);
    await clock.flush();
    expect(runs).toHaveLength(1); // idle engine: no waiting
    void batcher.submit(['b']);
    await clock.advance(1);
    expect(runs).toHaveLength(1); // one batch is running: b waits for company
    void batcher.submit(['c']);
    await clock.advance(0.5);
    expect(runs).toHaveLength(1);
    await clock.advance(0.5); // b has waited 2 ms
    expect(runs.map((r) => r.items)).toEqual([['a'], ['b', 'c']]);
  });

  it('sends an urgent call at once while a batch runs, taking the waiting texts along', async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 2 });
    void batcher.submit(['a']);
    await clock.flush();
    void batcher.submit(['b']);
    await clock.advance(1);
    expect(runs).toHaveLength(1); // b waits for company
    const u = track(batcher.submit(['u'], { urgent: true }));
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([['a'], ['u', 'b']]);
    expect(clock.now()).toBe(1); // no maxWaitMs wait
    runs[1]!.resolve();
    await clock.flush();
    expect(u.value).toEqual(['U']);
  });

  it('takes an urgent call of 200,000 texts (spread as arguments, they overflowed the stack)', async () => {
    const { clock, runs, batcher } = setup({ maxQueue: 1_000_000 });
    void batcher.submit(['a']);
    void batcher.submit(['b']);
    const big = track(batcher.submit(Array.from({ length: 200_000 }, () => 'x'), { urgent: true }));
    await clock.flush();
    expect(big.error).toBeUndefined();
    expect(runs.length).toBeGreaterThan(0);
  });

  it('queues urgent calls ahead of waiting texts, in their own arrival order', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 2, maxBatchesInFlight: 1 });
    void batcher.submit(['a']);
    await clock.flush(); // a runs; nothing else can start
    for (const s of ['b', 'c', 'd']) void batcher.submit([s]);
    void batcher.submit(['u1'], { urgent: true });
    void batcher.submit(['u2'], { urgent: true });
    await clock.flush();
    await finish(0);
    expect(runs[1]!.items).toEqual(['u1', 'u2']);
    await finish(1);
    expect(runs[2]!.items).toEqual(['b', 'c']);
    await finish(2);
    expect(runs[3]!.items).toEqual(['d']);
  });

  it('does not let an aborted urgent call hold up the queue', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 2, maxBatchesInFlight: 1 });
    void batcher.submit(['a']);
    await clock.flush();
    void batcher.submit(['b']);
    const ac = new AbortController();
    const gone = track(batcher.submit(['u1'], { urgent: true, signal: ac.signal }));
    ac.abort();
    void batcher.submit(['u2'], { urgent: true });
    await clock.flush();
    expect(gone.error).toBeInstanceOf(EngineAbortedError);
    await finish(0);
    expect(runs[1]!.items).toEqual(['u2', 'b']);
  });

  it('closes a waiting batch at once when it fills', async () => {
    const { clock, runs, batcher } = setup({ maxBatchSize: 2 });
    void batcher.submit(['a']);
    await clock.flush();
    void batcher.submit(['b']);
    await clock.flush();
    expect(runs).toHaveLength(1);
    void batcher.submit(['c']);
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([['a'], ['b', 'c']]);
    expect(clock.now()).toBe(0);
  });

  it('queues a many-text call shortest first and answers in the caller order', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 3 });
    const texts = ['dddd', 'a', 'ccc', 'bb', 'eeeee', 'f'];
    const p = track(batcher.submit(texts));
    await clock.flush();
    expect(runs.map((r) => r.items)).toEqual([
      ['a', 'f', 'bb'],
      ['ccc', 'dddd', 'eeeee'],
    ]);
    await finish(0);
    await finish(1);
    expect(p.value).toEqual(texts.map((t) => t.toUpperCase()));
  });

  it("puts another tenant's text ahead of one tenant's queued bulk, and answers it first", async () => {
    const { clock, runs, batcher, finish } = setup();
    const bulk = track(batcher.submit(Array.from({ length: 16 }, (_, i) => `a${String.fromCharCode(97 + i)}`), { tenant: 'A' }));
    await clock.flush();
    expect(runs).toHaveLength(2); // two batches of A's running, eight of its texts still queued
    const single = track(batcher.submit(['bb'], { tenant: 'B' }));
    await clock.flush();
    await finish(0);
    // First come, first served would run A's next four and make B wait behind all sixteen.
    expect(runs[2]!.items).toContain('bb');
    await finish(2);
    expect(single.value).toEqual(['BB']);
    expect(bulk.settled).toBe(false);
    for (let i = 0; !bulk.settled && i < 10; i++) {
      for (const r of runs) r.resolve();
      await clock.flush();
    }
    expect(bulk.value).toHaveLength(16);
  });

  it("sends another tenant's turn as priority, one batch beyond maxBatchesInFlight; a lone tenant's never", async () => {
    const { clock, runs, batcher, finish } = setup();
    void batcher.submit(Array.from({ length: 16 }, (_, i) => `a${String.fromCharCode(97 + i)}`), { tenant: 'A' });
    await clock.flush();
    expect(runs.map((r) => r.priority)).toEqual([false, false]); // A's two batches fill the in-flight slots
    void batcher.submit(['bb'], { tenant: 'B' });
    await clock.flush();
    expect(runs).toHaveLength(3);
    expect(runs[2]!.items).toContain('bb');
    expect(runs[2]!.priority).toBe(true);
    void batcher.submit(['cc'], { tenant: 'C' });
    await clock.flush();
    expect(runs).toHaveLength(3); // the extra slot holds one priority batch at a time
    await finish(2);
    expect(runs[3]!.items).toContain('cc');
    expect(runs[3]!.priority).toBe(true);
    await finish(0);
    await finish(3);
    await clock.advance(2); // A's last two texts wait maxWaitMs for company
    expect(runs[4]!.priority).toBe(false); // A's turn again: a tenant with a batch in flight
  });

  it('with lane: false leaves the lane to urgent calls: a light tenant waits for a slot, at the head of the queue', async () => {
    const { clock, runs, batcher, finish } = setup({ lane: false });
    void batcher.submit(Array.from({ length: 16 }, (_, i) => `a${String.fromCharCode(97 + i)}`), { tenant: 'A' });
    await clock.flush();
    void batcher.submit(['bb'], { tenant: 'B' });
    await clock.flush();
    expect(runs).toHaveLength(2); // no lane batch for B
    void batcher.submit(['u'], { urgent: true, tenant: 'C' });
    await clock.flush();
    expect(runs).toHaveLength(3);
    expect(runs[2]!.items).toEqual(['u']);
    expect(runs[2]!.priority).toBe(true);
    await finish(0);
    expect(runs[3]!.priority).toBe(false);
    expect(runs[3]!.items[0]).toBe('bb'); // fair order still puts it first
  });

  it("serves a tenant with more waiting than a lane batch holds by fair order in normal batches, not the lane alone", async () => {
    const { clock, runs, batcher } = setup({ maxBatchSize: 16, maxBatchesInFlight: 2 });
    void batcher.submit(Array.from({ length: 160 }, (_, i) => `a${String(i).padStart(3, '0')}`), { tenant: 'A' });
    await clock.flush();
    const b = track(batcher.submit(Array.from({ length: 16 }, (_, i) => `b${String(i).padStart(3, '0')}`), { tenant: 'B' }));
    await clock.flush();
    let finished = 0;
    while (!b.settled && finished < 30) {
      runs[finished++]!.resolve();
      await clock.flush();
      await clock.advance(2);
    }
    // A's two batches already in flight, and at most one more: the lane alone (2 texts a round) let
    // all 160 of A's texts run first (a reviewer's case).
    const aFirst = runs.slice(0, finished).reduce((n, r) => n + r.items.filter((t) => t.startsWith('a')).length, 0);
    expect(aFirst).toBeLessThanOrEqual(48);
  });

  it('sends an urgent call as priority beyond the in-flight limit', async () => {
    const { clock, runs, batcher } = setup();
    for (let i = 0; i < 12; i++) void batcher.submit([`t${i}`]);
    await clock.flush();
    expect(runs).toHaveLength(2);
    void batcher.submit(['u'], { urgent: true });
    await clock.flush();
    expect(runs).toHaveLength(3);
    expect(runs[2]!.items[0]).toBe('u');
    expect(runs[2]!.priority).toBe(true);
  });

  it('interleaves two bulk tenants batch by batch, each in its own order', async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 1 });
    void batcher.submit(['xx']); // occupies the engine
    await clock.flush();
    void batcher.submit(['a0', 'a1', 'a2', 'a3', 'a4', 'a5'], { tenant: 'A' });
    void batcher.submit(['b0', 'b1', 'b2', 'b3', 'b4', 'b5'], { tenant: 'B' });
    for (let i = 0; i < 4; i++) {
      runs[i]!.resolve();
      await clock.flush();
    }
    expect(runs.slice(1).map((r) => r.items)).toEqual([['a0', 'b0', 'a1', 'b1'], ['a2', 'b2', 'a3', 'b3'], ['a4', 'b4', 'a5', 'b5']]);
  });

  it('with fair: false keeps one queue in arrival order whatever the tenant (the baseline)', async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 1, fair: false });
    void batcher.submit(['xx']);
    await clock.flush();
    void batcher.submit(['a0', 'a1', 'a2', 'a3', 'a4', 'a5'], { tenant: 'A' });
    void batcher.submit(['b0', 'b1'], { tenant: 'B' });
    for (let i = 0; i < 3; i++) {
      runs[i]!.resolve();
      await clock.flush();
    }
    expect(runs.slice(1).map((r) => r.items)).toEqual([['a0', 'a1', 'a2', 'a3'], ['a4', 'a5', 'b0', 'b1']]);
  });

  it('charges a tenant nothing for its texts that left the queue unrun', async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 1 });
    void batcher.submit(['xx']); // occupies the engine
    await clock.flush();
    const ac = new AbortController();
    batcher.submit(Array.from({ length: 12 }, (_, i) => `b${String.fromCharCode(97 + i)}`), { tenant: 'B', signal: ac.signal }).catch(() => {});
    void batcher.submit(Array.from({ length: 12 }, (_, i) => `a${String.fromCharCode(97 + i)}`), { tenant: 'A' });
    ac.abort();
    void batcher.submit(['bb'], { tenant: 'B' });
    runs[0]!.resolve();
    await clock.flush();
    expect(runs[1]!.items).toContain('bb'); // not behind the twelve texts it aborted
  });

  it("keeps one tenant's calls in arrival order when another tenant's bulk is queued", async () => {
    const { clock, runs, batcher } = setup({ maxBatchesInFlight: 1 });
    void batcher.submit(['xx']);
    await clock.flush();
    void batcher.submit(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'], { tenant: 'A' });
    for (const t of ['b0', 'b1', 'b2']) void batcher.submit([t], { tenant: 'B' });
    for (let i = 0; i < 4; i++) {
      runs[i]!.resolve();
      await clock.flush();
    }
    const order = runs.slice(1).flatMap((r) => r.items);
    expect(order.filter((t) => t.startsWith('b'))).toEqual(['b0', 'b1', 'b2']);
    expect(order.filter((t) => t.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']);
    expect(order.slice(0, 4)).toEqual(['a0', 'b0', 'a1', 'b1']);
  });

  it('builds a batch of similar lengths around the oldest waiting text', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 2, maxBatchesInFlight: 1, lookahead: 4 });
    void batcher.submit(['x']); // occupies the engine
    await clock.flush();
    for (const s of ['mmmmm', 'a', 'mmmmmm', 'b', 'mmmm']) void batcher.submit([s]);
    await clock.flush();
    await finish(0);
    // the oldest (mmmmm) goes first with its closest length (mmmm, on a tie the shorter);
    // then the oldest left (a) with b, not with the long mmmmmm
    expect(runs[1]!.items).toEqual(['mmmm', 'mmmmm']);
    await finish(1);
    expect(runs[2]!.items).toEqual(['a', 'b']);
    await finish(2);
    expect(runs[3]!.items).toEqual(['mmmmmm']);
  });

  it('drops queued texts of an aborted call before they run', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchesInFlight: 1 });
    void batcher.submit(['first']);
    await clock.flush();
    const ac = new AbortController();
    const aborted = track(batcher.submit(['gone1', 'gone2'], { signal: ac.signal }));
    const kept = track(batcher.submit(['kept']));
    ac.abort();
    await settleMicrotasks();
    expect(aborted.error).toBeInstanceOf(EngineAbortedError);
    expect((aborted.error as EngineAbortedError).code).toBe('ENGINE_ABORTED');
    expect(batcher.stats()).toMatchObject({ queuedTexts: 1, aborted: 1, dropped: 2 });
    await finish(0);
    expect(runs.map((r) => r.items)).toEqual([['first'], ['kept']]);
    await finish(1);
    expect(kept.value).toEqual(['KEPT']);
  });

  it('rejects an aborted call at once even while its batch runs, and ignores the late result', async () => {
    const { clock, runs, batcher, finish } = setup();
    const ac = new AbortController();
    const p = track(batcher.submit(['a'], { signal: ac.signal }));
    await clock.flush();
    expect(runs).toHaveLength(1);
    ac.abort(new Error('client went away'));
    await settleMicrotasks();
    expect(p.error).toBeInstanceOf(EngineAbortedError);
    expect((p.error as Error).message).toContain('client went away');
    await finish(0);
    expect(p.value).toBeUndefined();
  });

  it('refuses an already aborted signal without queueing', async () => {
    const { clock, runs, batcher } = setup();
    await expect(batcher.submit(['a'], { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(EngineAbortedError);
    await clock.flush();
    expect(runs).toHaveLength(0);
  });

  it('removes its abort listener once the call settles', async () => {
    const { clock, batcher, finish } = setup();
    const ac = new AbortController();
    let listeners = 0;
    const signal = ac.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;
    const p = batcher.submit(['a'], { signal: signal });
    await clock.flush();
    await finish(0);
    await p;
    expect(listeners).toBe(0);
  });

  it('refuses calls with EngineOverloadedError when the queue is full', async () => {
    const { clock, batcher } = setup({ maxQueue: 10, maxBatchesInFlight: 1, maxBatchSize: 2 });
    void batcher.submit(['r1', 'r2']); // running
    await clock.flush();
    void batcher.submit(Array.from({ length: 8 }, (_, i) => `q${i}`));
    await expect(batcher.submit(['one', 'two', 'three'])).rejects.toMatchObject({ code: 'ENGINE_OVERLOADED' });
    void batcher.submit(['one', 'two']); // fits exactly
    expect(batcher.stats()).toMatchObject({ queuedTexts: 10, overloaded: 1 });
    await expect(batcher.submit(['x'])).rejects.toBeInstanceOf(EngineOverloadedError);
  });

  it("admits one batch's worth from a tenant with nothing queued into a queue another tenant filled", async () => {
    const { clock, runs, batcher } = setup({ maxQueue: 10, maxBatchesInFlight: 1, maxBatchSize: 2 });
    void batcher.submit(['r1', 'r2'], { tenant: 'A' }); // running
    await clock.flush();
    void batcher.submit(Array.from({ length: 10 }, (_, i) => `q${i}`), { tenant: 'A' }); // the queue is full
    await expect(batcher.submit(['a'], { tenant: 'A' })).rejects.toBeInstanceOf(EngineOverloadedError);
    await expect(batcher.submit(['b1', 'b2', 'b3'], { tenant: 'B' })).rejects.toBeInstanceOf(EngineOverloadedError); // over a batch
    const b = track(batcher.submit(['bb'], { tenant: 'B' }));
    await expect(batcher.submit(['b2'], { tenant: 'B' })).rejects.toBeInstanceOf(EngineOverloadedError); // B has one waiting now
    expect(batcher.stats()).toMatchObject({ queuedTexts: 11, overloaded: 3 });
    runs[0]!.resolve();
    await clock.flush();
    expect(runs[1]!.items).toContain('bb'); // fair order serves it next
    runs[1]!.resolve();
    await clock.flush();
    expect(b.value).toEqual(['BB']);
    const room = 10 - batcher.stats().queuedTexts;
    void batcher.submit(Array.from({ length: room }, (_, i) => `p${i}`), { tenant: 'A' }); // fills the queue again
    void batcher.submit(['b3'], { tenant: 'B' }); // nothing of B's waits again: admitted past it
    expect(batcher.stats()).toMatchObject({ queuedTexts: 11, overloaded: 3 });
  });

  it('admits a call larger than the queue when the queue is empty', async () => {
    const { clock, runs, batcher } = setup({ maxQueue: 5 });
    const p = track(batcher.submit(Array.from({ length: 12 }, () => 'a')));
    await clock.flush();
    expect(runs).toHaveLength(2);
    expect(p.error).toBeUndefined();
    // 4 texts still wait; 2 more would pass the limit of 5
    await expect(batcher.submit(['late', 'later'])).rejects.toBeInstanceOf(EngineOverloadedError);
  });

  it('rejects every call of a failed batch and keeps serving the next', async () => {
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 2, maxBatchesInFlight: 1 });
    const a = track(batcher.submit(['a']));
    const b = track(batcher.submit(['b']));
    const c = track(batcher.submit(['c']));
    await clock.flush();
    runs[0]!.reject(new InferenceError('boom'));
    await clock.flush();
    expect(a.error).toBeInstanceOf(InferenceError);
    expect(b.error).toBeInstanceOf(InferenceError);
    await finish(1);
    expect(c.value).toEqual(['C']);
    expect(batcher.stats().failedBatches).toBe(1);
  });

  it('rejects a call whose batch throws synchronously', async () => {
    const clock = new FakeClock();
    const batcher = new MicroBatcher<string, string>(
      () => {
        throw new Error('sync failure');
      },
      { maxBatchSize: 4, maxBatchTokens: 100, maxWaitMs: 1, maxQueue: 10, maxBatchesInFlight: 1, cost: () => 1, clock },
    );
    const p = track(batcher.submit(['a']));
    await clock.flush();
    expect((p.error as Error).message).toBe('sync failure');
  });

  it('close() rejects queued calls and refuses new ones; drain() waits for running work', async () => {
    const { clock, batcher, finish } = setup({ maxBatchesInFlight: 1, maxBatchSize: 1 });
    const running = track(batcher.submit(['a']));
    await clock.flush();
    const queued = track(batcher.submit(['b']));
    const drained = track(batcher.drain());
    batcher.close(new EngineDisposedError('closed'));
    await settleMicrotasks();
    expect(queued.error).toBeInstanceOf(EngineDisposedError);
    expect(drained.settled).toBe(false);
    await finish(0);
    expect(running.value).toEqual(['A']);
    expect(drained.settled).toBe(true);
    await expect(batcher.submit(['c'])).rejects.toBeInstanceOf(EngineDisposedError);
  });

  it('answers an empty call with an empty result without running', async () => {
    const { clock, runs, batcher } = setup();
    await expect(batcher.submit([])).resolves.toEqual([]);
    await clock.flush();
    expect(runs).toHaveLength(0);
  });

  it('clears its wait timer when the queue empties', async () => {
    const { clock, batcher } = setup({ maxBatchesInFlight: 2 });
    void batcher.submit(['a']);
    await clock.flush();
    const ac = new AbortController();
    void batcher.submit(['b'], { signal: ac.signal }).catch(() => undefined);
    await clock.flush();
    expect(clock.pendingTimers).toBe(1);
    ac.abort();
    await clock.advance(5);
    expect(clock.pendingTimers).toBe(0);
  });

  it('validates its options', () => {
    expect(() => setup({ maxBatchSize: 0 })).toThrow(RangeError);
    expect(() => setup({ maxWaitMs: -1 })).toThrow(RangeError);
    expect(() => setup({ streamChunk: -1 })).toThrow(RangeError);
    expect(() => setup({ streamChunk: 1.5 })).toThrow(RangeError);
  });

  it('keeps no finished call reachable from its queue', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { clock, runs, batcher, finish } = setup({ maxBatchSize: 8 });
    let collected = 0;
    const registry = new FinalizationRegistry(() => collected++);
    await (async () => {
      for (let round = 0; round < 10; round++) {
        const calls = Array.from({ length: 8 }, (_, i) => batcher.submit([`text ${round} ${i}`]));
        await clock.flush();
        await finish(runs.length - 1);
        for (const out of await Promise.all(calls)) registry.register(out, 0);
      }
    })();
    runs.length = 0; // the scripted runner's own record of the batches
    for (let i = 0; i < 10 && collected < 80; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    // 80 calls in 10 batches: before the queue cleared the slots behind its head, every finished
    // call's results stayed reachable until the array was sliced, a thousand entries later.
    expect(collected).toBe(80);
  });
});

describe('PassThrough (batching off)', () => {
  it('runs every call as its own batch, splitting large ones', async () => {
    const runs: string[][] = [];
    const pass = new PassThrough<string, string>(
      async (items) => {
        runs.push(items);
        return items.map((s) => s.toUpperCase());
      },
      { maxBatchSize: 2, maxQueue: 10 },
    );
    const [a, b] = await Promise.all([pass.submit(['a']), pass.submit(['b', 'c', 'd'])]);
    expect(a).toEqual(['A']);
    expect(b).toEqual(['B', 'C', 'D']);
    expect(runs).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('applies the queue limit and abort', async () => {
    const releases: (() => void)[] = [];
    const release = (): void => releases.shift()?.();
    const pass = new PassThrough<string, string>(
      (items) => new Promise((r) => releases.push(() => r(items))),
      { maxBatchSize: 8, maxQueue: 2 },
    );
    const ac = new AbortController();
    const first = pass.submit(['a', 'b'], { signal: ac.signal });
    await expect(pass.submit(['c'])).rejects.toBeInstanceOf(EngineOverloadedError);
    ac.abort();
    await expect(first).rejects.toBeInstanceOf(EngineAbortedError);
    // The aborted call's run is still in the engine: its texts count until it ends.
    await expect(pass.submit(['c'])).rejects.toBeInstanceOf(EngineOverloadedError);
    expect(pass.stats()).toMatchObject({ inFlightBatches: 1, inFlightTexts: 2 });
    release();
    await pass.drain();
    expect(pass.stats()).toMatchObject({ inFlightBatches: 0, inFlightTexts: 0 });
    const next = pass.submit(['c']);
    release();
    await expect(next).resolves.toEqual(['c']);
  });
});
