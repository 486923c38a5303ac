/** The Redis stores on their own, each with two connections standing in for two instances. */
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/context-store.js';
import type { ContextRecord, StoredMessage } from '../../src/store/context-store.js';
import { RedisConnection, RedisStartupError } from '../../src/store/redis/connection.js';
import { RedisContextStore } from '../../src/store/redis/context-store.js';
import { RedisIdempotencyStore } from '../../src/store/redis/idempotency-store.js';
import { RedisRateLimitStore } from '../../src/store/redis/rate-limit-store.js';
import { startRedis } from '../helpers/redis.js';
import type { RedisServer } from '../helpers/redis.js';

let redis: RedisServer;
const conns: RedisConnection[] = [];

async function connection(prefix = 'unit:', commandTimeoutMs = 500): Promise<RedisConnection> {
  const c = await RedisConnection.open({ url: redis.url, prefix, commandTimeoutMs });
  conns.push(c);
  return c;
}

beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => {
  for (const c of conns) await c.close();
  await redis.stop();
});

function message(id: string, text = `text of ${id}`): StoredMessage {
  return {
    id, role: 'user', text, raw: [0.1, 0.2, 0.3, 0.2, 0.1, 0.1], sub: Array.from({ length: 28 }, (_, i) => i / 28),
    valence: 0.25, arousal: 0.5, tokens: 4,
    eq: { volatility: 0.1, regulation: 0.2, awareness: 0.3, discovery: 0.4 } as unknown as StoredMessage['eq'],
    at: 1_700_000_000_123,
  };
}

/** A record's messages as an array (the stores hand out windows onto their logs). */
const list = (r: ContextRecord | undefined) => [...(r?.messages ?? [])];
const ids = (r: ContextRecord | undefined) => list(r).map((m) => m.id);

describe('RedisContextStore', () => {
  it('round-trips messages exactly and counts every append', async () => {
    const store = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 100 });
    expect(await store.get('rt')).toBeUndefined();
    const first = await store.append('rt', [message('a'), message('b', 'ünïcødé 😀')]);
    expect(first.total).toBe(2);
    const got = await store.get('rt');
    expect(list(got)).toEqual([message('a'), message('b', 'ünïcødé 😀')]);
    expect(got?.createdAt).toBe(first.createdAt);
    expect(await store.size()).toBeGreaterThanOrEqual(1);
  });

  // Each scrape scanned every context key; with 600,000 of them a scrape of several HTTP workers lost its
  // series (a reviewer's probe, 2026-11-28). Now a count serves the scrapes of the next 15 s.
  it('counting contexts scans Redis once for the scrapes of the next 15 s, then counts again', async () => {
    const conn = await connection('count:');
    const store = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 100 });
    for (const id of ['c1', 'c2', 'c3']) await store.append(id, [message('a')]);
    const scans = async () => Number(/cmdstat_scan:calls=(\d+)/.exec(String(await conn.client.info('commandstats')))?.[1] ?? 0);
    const before = await scans();
    expect(await store.size()).toBe(3);
    const once = (await scans()) - before;
    expect(once).toBeGreaterThan(0);
    await store.append('c4', [message('a')]);
    for (let i = 0; i < 5; i++) expect(await store.size()).toBe(3); // the count of the last 15 s
    expect((await scans()) - before).toBe(once);
    // Once its interval has passed, the scrape that starts a count reads it (a small keyspace is counted well within the wait).
    const quick = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 100, countEverySeconds: 1 });
    expect(await quick.size()).toBe(4);
    await store.append('c5', [message('a')]);
    expect(await quick.size()).toBe(4);
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await quick.size()).toBe(5);
    // 0: every call counts.
    const every = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 100, countEverySeconds: 0 });
    expect(await every.size()).toBe(5);
    await store.append('c6', [message('a')]);
    expect(await every.size()).toBe(6);
  });

  it('an append under an idempotency token is applied once, from any instance; other appends are not held back', async () => {
    const [a, b] = [new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 100 }),
      new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 100 })];
    const first = await a.append('once', [message('m1')], 'token-1');
    expect(first.total).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    const again = await b.append('once', [message('m1-retry')], 'token-1');
    expect(again.total).toBe(1);
    expect(ids(again)).toEqual(['m1']);
    // Nothing was written: the record is the first append's, its time included.
    expect(again.updatedAt).toBe(first.updatedAt);
    expect((await b.get('once'))?.updatedAt).toBe(first.updatedAt);
    expect(ids(await a.append('once', [message('m2')]))).toEqual(['m1', 'm2']);
    expect(ids(await b.append('once', [message('m3')], 'token-2'))).toEqual(['m1', 'm2', 'm3']);
    expect(ids(await a.append('once', [message('m3-retry')], 'token-2'))).toEqual(['m1', 'm2', 'm3']);
    expect(ids(await a.get('once'))).toEqual(['m1', 'm2', 'm3']);
  });

  it('concurrent appends from two connections all land, in one order for every reader', async () => {
    const a = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 1000 });
    const b = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 1000 });
    const writes = Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).append('race', [message(`m${i}`)]));
    const records = await Promise.all(writes);
    const final = await a.get('race');
    expect(final?.total).toBe(200);
    expect(new Set(ids(final)).size).toBe(200);
    // Each append saw a distinct prefix of the same history.
    expect(new Set(records.map((r) => r.total)).size).toBe(200);
    expect(ids(await b.get('race'))).toEqual(ids(final));
  });

  it('a read served from the local copy is never older than Redis', async () => {
    const conn = await connection();
    const a = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 100 });
    const b = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 100 });
    await a.append('cache', [message('1')]);
    const first = await a.get('cache');
    expect(await a.get('cache')).toBe(first); // unchanged: the same decoded record, no list transferred
    await b.append('cache', [message('2')]);
    expect(ids(await a.get('cache'))).toEqual(['1', '2']);
    await conn.client.del('unit:ctx:{cache}', 'unit:ctx:{cache}:m');
    expect(await a.get('cache')).toBeUndefined();
  });

  it('each record equals what Redis holds, built from the messages appended since the copy held here', async () => {
    const a = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 5 });
    const b = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 5 });
    const fresh = async () => (await new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 5 }).get('tail'))!;
    for (let i = 0; i <= 7; i++) {
      const r = await a.append('tail', [message(`d${i}`)]);
      const truth = await fresh();
      expect(list(r)).toEqual(list(truth));
      expect(r.total).toBe(truth.total);
    }
    expect(ids(await fresh())).toEqual(['d3', 'd4', 'd5', 'd6', 'd7']);
    // Another instance appended in between: this one gets both new messages and trims as Redis does.
    await b.append('tail', [message('b0')]);
    const r = await a.append('tail', [message('d8')]);
    expect(ids(r)).toEqual(['d5', 'd6', 'd7', 'b0', 'd8']);
    expect(list(r)).toEqual(list(await fresh()));
    // Many appends at once from one instance: each sees one prefix of the same history.
    const records = await Promise.all(Array.from({ length: 20 }, (_, i) => a.append('tail', [message(`c${i}`)])));
    const order = ids(await fresh());
    for (const rec of records) expect(rec.messages).toHaveLength(5);
    const last = records.find((rec) => rec.total === 30)!;
    expect(ids(last)).toEqual(order);
    expect(list(await a.get('tail'))).toEqual(list(await fresh()));
    // Gone and started afresh under the same id: the copy held here is of the old context.
    const conn = await connection();
    await conn.client.del('unit:ctx:{tail}', 'unit:ctx:{tail}:m');
    await b.append('tail', [message('new')]);
    expect(ids(await a.append('tail', [message('newer')]))).toEqual(['new', 'newer']);
  });

  it('instances configured with different message bounds still each see exactly what Redis holds', async () => {
    const wide = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 6 });
    const narrow = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 3 });
    const truth = async () => list(await new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 6 }).get('bounds'));
    for (let i = 0; i < 6; i++) await wide.append('bounds', [message(`w${i}`)]);
    expect(list(await narrow.get('bounds'))).toEqual(await truth()); // six: reads do not trim
    await narrow.append('bounds', [message('n0')]); // trims Redis's list to three
    expect(ids(await wide.get('bounds'))).toEqual(['w4', 'w5', 'n0']);
    const r = await wide.append('bounds', [message('w6')]);
    expect(ids(r)).toEqual(['w4', 'w5', 'n0', 'w6']);
    expect(list(r)).toEqual(await truth());
    expect(list(await narrow.append('bounds', [message('n1')]))).toEqual(await truth());
  });

  it('concurrent appends to one context from one process move each message about once', async () => {
    const store = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 1000 });
    await store.append('burst', [message('seed')]); // held here, as a busy context is
    const before = store.transferred().since;
    const records = await Promise.all(Array.from({ length: 300 }, (_, i) => store.append('burst', [message(`b${i}`)])));
    // Concurrently, each of the 300 got back everything appended since the same stale copy: ~45,000.
    expect(store.transferred().since - before).toBeLessThanOrEqual(300);
    expect(records.map((r) => r.total)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
    expect(ids(await store.get('burst'))).toEqual(['seed', ...Array.from({ length: 300 }, (_, i) => `b${i}`)]);
  });

  it('adding to a long session moves the new messages, not the history', async () => {
    const conn = await connection();
    const store = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 1000 });
    const long = (id: string) => message(id, `${id} `.repeat(200)); // about 1 KB encoded
    for (let i = 0; i < 300; i += 50) await store.append('long', Array.from({ length: 50 }, (_, k) => long(`h${i + k}`)));
    const sent = async () => Number(/total_net_output_bytes:(\d+)/.exec(await conn.client.info('stats'))![1]);
    const before = await sent();
    for (let i = 0; i < 20; i++) {
      await store.append('long', [long(`n${i}`)]);
      await store.get('long');
    }
    // One whole history would be about 300 KB; twenty appends and reads moved about twenty messages.
    expect((await sent()) - before).toBeLessThan(100_000);
    expect((await store.get('long'))?.messages).toHaveLength(320);
  });

  it('holds copies only up to SENTIO_CONTEXT_CACHE_MESSAGES: a context past it moves whole, and stays exact', async () => {
    const conn = await connection();
    const store = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 1000, cachedMessages: 100 });
    const long = (id: string) => message(id, `${id} `.repeat(200));
    await store.append('big', Array.from({ length: 150 }, (_, k) => long(`h${k}`)));
    const sent = async () => Number(/total_net_output_bytes:(\d+)/.exec(await conn.client.info('stats'))![1]);
    const before = await sent();
    const r = await store.append('big', [long('n')]);
    expect((await sent()) - before).toBeGreaterThan(100_000); // the whole history, about 150 KB
    expect(ids(r)).toEqual([...Array.from({ length: 150 }, (_, k) => `h${k}`), 'n']);
    expect(list(await store.get('big'))).toEqual(list(r));
    expect(store.transferred().whole).toBeGreaterThanOrEqual(150 + 151 + 151);
  });

  it('keeps the newest messages and expires by Redis TTL, sliding on writes', async () => {
    const conn = await connection();
    const store = new RedisContextStore(conn, { ttlSeconds: 3, maxMessagesPerContext: 3 });
    for (let i = 0; i < 5; i++) await store.append('trim', [message(`t${i}`)]);
    const r = await store.get('trim');
    expect(ids(r)).toEqual(['t2', 't3', 't4']);
    expect(r?.total).toBe(5);
    const ttl = await conn.client.pttl('unit:ctx:{trim}:m');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3000);
    // A write past half the TTL restarts it on both keys: just after the first write's TTL would have
    // run out (3,500 ms after it, 1,500 ms after the second) the context is still there, whole. (At a TTL
    // of 1 s a sleep stretched by 300 ms on a busy host would have let the first run out.)
    await new Promise((res) => setTimeout(res, 2_000));
    await store.append('trim', [message('t5')]);
    await new Promise((res) => setTimeout(res, 1_500));
    expect(ids(await store.get('trim'))).toEqual(['t3', 't4', 't5']);
    expect(await conn.client.exists('unit:ctx:{trim}', 'unit:ctx:{trim}:m')).toBe(2);
    // Reads do not extend it: gone a TTL after the last write.
    await new Promise((res) => setTimeout(res, 1_700));
    expect(await store.get('trim')).toBeUndefined();
    expect(await conn.client.exists('unit:ctx:{trim}', 'unit:ctx:{trim}:m')).toBe(0);
  });

  it('with an injected clock, a context idle past the TTL by that clock is gone and restarts', async () => {
    let now = 1_000_000;
    const store = new RedisContextStore(await connection(), { ttlSeconds: 60, maxMessagesPerContext: 10, now: () => now });
    await store.append('fake', [message('x')]);
    now += 59_000;
    expect((await store.get('fake'))?.messages).toHaveLength(1);
    now += 2_000;
    expect(await store.get('fake')).toBeUndefined();
    const again = await store.append('fake', [message('y')]);
    expect(ids(again)).toEqual(['y']);
    expect(again.total).toBe(1);
  });
});

describe('RedisRateLimitStore', () => {
  it('one bucket across connections, never overspent under concurrency', async () => {
    const a = new RedisRateLimitStore(await connection());
    const b = new RedisRateLimitStore(await connection());
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).take('rl:shared', 1, 30, 30 / 60_000, Date.now())));
    expect(results.filter((r) => r.allowed)).toHaveLength(30);
    expect(Math.min(...results.map((r) => r.tokens))).toBeGreaterThanOrEqual(0);
  });

  it('buckets expire once they would be full again', async () => {
    const conn = await connection();
    const store = new RedisRateLimitStore(conn);
    await store.take('rl:short', 1, 2, 2 / 60_000, Date.now());
    const ttl = await conn.client.pttl('unit:rl:short');
    expect(ttl).toBeGreaterThan(30_000);
    expect(ttl).toBeLessThanOrEqual(31_000);
  });
});

describe('RedisIdempotencyStore', () => {
  it('a claim on one connection is in flight on the other, then done with the reply', async () => {
    const a = new RedisIdempotencyStore(await connection());
    const b = new RedisIdempotencyStore(await connection());
    expect(await a.claim('idem:k:1', 'fp')).toEqual({ outcome: 'claimed' });
    expect(await b.claim('idem:k:1', 'fp')).toEqual({ outcome: 'in_flight', fingerprint: 'fp' });
    const reply = { kind: 'json' as const, status: 200, body: '{"ok":true}', headers: { 'x-a': 'b' } };
    await a.complete('idem:k:1', 'fp', reply, 60_000);
    expect(await b.claim('idem:k:1', 'fp')).toEqual({ outcome: 'done', fingerprint: 'fp', reply });
  });

  it('a claim is held for the lease, whatever the retention (a short one let a duplicate of a long request run)', async () => {
    const conn = await connection();
    const a = new RedisIdempotencyStore(conn, { inFlightLeaseMs: 60_000 });
    expect((await a.claim('idem:k:leased', 'fp')).outcome).toBe('claimed');
    expect(await conn.client.pttl(`${conn.prefix}idem:k:leased`)).toBeGreaterThan(59_000);
  });

  it('concurrent claims: exactly one wins', async () => {
    const stores = [new RedisIdempotencyStore(await connection()), new RedisIdempotencyStore(await connection())];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.claim('idem:k:race', 'fp')));
    expect(results.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
  });

  it('an in-flight claim is held only for its lease; a stale holder cannot clobber the new claim', async () => {
    // Holders whose renewals do not land (renewMs 0): their claims lapse while their requests still run.
    const a = new RedisIdempotencyStore(await connection(), { inFlightLeaseMs: 100, renewMs: 0 });
    const b = new RedisIdempotencyStore(await connection(), { inFlightLeaseMs: 60_000 });
    expect((await a.claim('idem:k:lease', 'fp')).outcome).toBe('claimed');
    await new Promise((res) => setTimeout(res, 150));
    expect((await b.claim('idem:k:lease', 'fp')).outcome).toBe('claimed');
    // a's claim is gone: neither its completion nor its release may touch b's.
    await a.complete('idem:k:lease', 'fp', { kind: 'json', status: 200, body: 'stale', headers: {} }, 60_000);
    expect(await b.claim('idem:k:lease', 'fp')).toEqual({ outcome: 'in_flight', fingerprint: 'fp' });
    const c = new RedisIdempotencyStore(await connection(), { inFlightLeaseMs: 100, renewMs: 0 });
    expect((await c.claim('idem:k:lease2', 'fp')).outcome).toBe('claimed');
    await new Promise((res) => setTimeout(res, 150));
    expect((await b.claim('idem:k:lease2', 'fp')).outcome).toBe('claimed');
    await c.release('idem:k:lease2');
    expect(await c.claim('idem:k:lease2', 'fp')).toEqual({ outcome: 'in_flight', fingerprint: 'fp' });
    await b.release('idem:k:lease2');
    expect((await c.claim('idem:k:lease2', 'fp')).outcome).toBe('claimed');
  });

  // An instance killed mid-request left its claim for the whole 15-minute lease: every retry, on any
  // instance, got 409 with Retry-After: 1 meanwhile (a multi-instance review, 2026-11-28). A short lease
  // that the living holder renews ends a dead one's claim soon, and keeps a long request's.
  it('a held claim is renewed while its holder lives, and lapses soon after it dies', async () => {
    const a = new RedisIdempotencyStore(await connection(), { inFlightLeaseMs: 300, renewMs: 100 });
    const deadConn = await connection();
    const dead = new RedisIdempotencyStore(deadConn, { inFlightLeaseMs: 300, renewMs: 100, closeRetryMs: 0 });
    const other = new RedisIdempotencyStore(await connection());
    expect((await a.claim('idem:k:renewed', 'fp')).outcome).toBe('claimed');
    expect((await dead.claim('idem:k:dies', 'fp')).outcome).toBe('claimed');
    await new Promise((r) => setTimeout(r, 1_000)); // three leases
    expect((await other.claim('idem:k:renewed', 'fp')).outcome).toBe('in_flight');
    const reply = { kind: 'json' as const, status: 200, body: '{"ok":true}', headers: {} };
    await a.complete('idem:k:renewed', 'fp', reply, 60_000);
    expect(await other.claim('idem:k:renewed', 'fp')).toEqual({ outcome: 'done', fingerprint: 'fp', reply });
    // The holder's process ends without a word: its connection goes, and no renewal lands.
    expect((await other.claim('idem:k:dies', 'fp')).outcome).toBe('in_flight');
    deadConn.client.disconnect();
    await new Promise((r) => setTimeout(r, 450));
    expect((await other.claim('idem:k:dies', 'fp')).outcome).toBe('claimed');
    await other.release('idem:k:dies');
    await Promise.all([a.close(), dead.close()]);
  });

  /** Drops the connection under the store (CLIENT KILL from another one) and resolves once it has noticed. */
  async function dropConnection(conn: RedisConnection): Promise<void> {
    const closed = new Promise((r) => conn.client.once('close', r));
    await (await connection()).client.client('KILL', 'ID', String(await conn.client.client('ID')));
    await closed;
  }
  const reconnected = async (conn: RedisConnection) => { while (conn.client.status !== 'ready') await new Promise((r) => setTimeout(r, 20)); };

  it('a release or a completion lost with the connection is sent again once Redis is back (the key answered 409 for the lease)', async () => {
    const conn = await connection();
    const a = new RedisIdempotencyStore(conn);
    const other = new RedisIdempotencyStore(await connection());
    const reply = { kind: 'json' as const, status: 200, body: '{"ok":true}', headers: {} };
    expect((await a.claim('idem:k:lost-release', 'fp')).outcome).toBe('claimed');
    expect((await a.claim('idem:k:lost-complete', 'fp')).outcome).toBe('claimed');
    await dropConnection(conn);
    await expect(a.release('idem:k:lost-release')).rejects.toThrow();
    await expect(a.complete('idem:k:lost-complete', 'fp', reply, 60_000)).rejects.toThrow();
    await reconnected(conn);
    // Another instance sees them land within a retry period: the failed request's key is free again, and
    // the finished one's reply is there to replay.
    const deadline = Date.now() + 3_000;
    while ((await other.claim('idem:k:lost-complete', 'fp')).outcome !== 'done' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await other.claim('idem:k:lost-complete', 'fp')).toEqual({ outcome: 'done', fingerprint: 'fp', reply });
    expect((await other.claim('idem:k:lost-release', 'fp')).outcome).toBe('claimed');
  });

  it('a retry on the same instance sends the pending release first, instead of finding its own lost claim', async () => {
    const conn = await connection();
    const a = new RedisIdempotencyStore(conn);
    expect((await a.claim('idem:k:same', 'fp')).outcome).toBe('claimed');
    await dropConnection(conn);
    await expect(a.release('idem:k:same')).rejects.toThrow();
    await reconnected(conn);
    expect((await a.claim('idem:k:same', 'fp')).outcome).toBe('claimed'); // before the retry timer fires
    await a.close();
  });

  // Shutdown cuts a request still running at the grace period's end with a 503 (so does a failed HTTP
  // worker): its claim stayed in Redis, and a retry on another instance got 409 for the lease.
  it('closing gives back the claims still held', async () => {
    const a = new RedisIdempotencyStore(await connection());
    const other = new RedisIdempotencyStore(await connection());
    expect((await a.claim('idem:k:cut-short', 'fp')).outcome).toBe('claimed');
    expect((await other.claim('idem:k:cut-short', 'fp')).outcome).toBe('in_flight');
    await a.close();
    expect((await other.claim('idem:k:cut-short', 'fp')).outcome).toBe('claimed');
  });

  // A Redis frozen for a moment at the drain: its one try at closing timed out, and the key answered 409 on
  // every instance for the claim's 15-minute lease (a reviewer's probe, 2026-11-26).
  it('closing keeps sending what Redis has not taken for a few seconds, and logs what it gives up', async () => {
    const warned: unknown[] = [];
    const logger = { warn: (o: unknown) => warned.push(o) } as unknown as Logger;
    const a = new RedisIdempotencyStore(await connection('unit:', 300), { logger });
    const other = new RedisIdempotencyStore(await connection());
    const admin = await connection();
    expect((await a.claim('idem:k:frozen-close', 'fp')).outcome).toBe('claimed');
    await admin.client.call('CLIENT', 'PAUSE', '1500', 'WRITE');
    await a.close(); // its first try times out while Redis is paused
    expect((await other.claim('idem:k:frozen-close', 'fp')).outcome).toBe('claimed');
    expect(warned).toEqual([]);
    // one that cannot land within the bound is dropped, and said so
    const b = new RedisIdempotencyStore(await connection('unit:', 300), { logger, closeRetryMs: 1_000 });
    expect((await b.claim('idem:k:frozen-long', 'fp')).outcome).toBe('claimed');
    await admin.client.call('CLIENT', 'PAUSE', '2500', 'WRITE');
    await b.close();
    expect(warned).toEqual([{ idempotency_writes: 1 }]);
    await admin.client.call('CLIENT', 'UNPAUSE');
  });

  /** A connection whose log lines (message and reason) are kept in `lines`. */
  async function loggedConnection(): Promise<{ lines: Array<{ msg: string; reason?: unknown }>; conn: RedisConnection }> {
    const lines: Array<{ msg: string; reason?: unknown }> = [];
    const rec = (o: { reason?: unknown }, msg: string) => { lines.push({ msg, reason: o.reason }); };
    const logger = { info: rec, warn: rec, error: rec } as unknown as Logger;
    const conn = await RedisConnection.open({ url: redis.url, prefix: 'log:', commandTimeoutMs: 300, logger });
    conns.push(conn);
    return { lines, conn };
  }

  // The reason of an earlier outage (ECONNREFUSED) was logged for a connection killed later.
  it('a connection lost after an outage is logged with its own reason, and its return too', async () => {
    const { lines, conn } = await loggedConnection();
    await redis.kill();
    while (!lines.some((l) => l.msg.startsWith('redis connection lost'))) await new Promise((r) => setTimeout(r, 20));
    await redis.restart();
    await reconnected(conn);
    while (!lines.some((l) => l.msg === 'redis connection restored')) await new Promise((r) => setTimeout(r, 20));
    lines.length = 0;
    await dropConnection(conn);
    await reconnected(conn);
    while (!lines.some((l) => l.msg === 'redis connection restored')) await new Promise((r) => setTimeout(r, 20));
    expect(lines.find((l) => l.msg.startsWith('redis connection lost'))?.reason).toBe('connection closed');
  });

  // A clean close left no error to compare with, so the first reason it stayed down (here a rotated
  // password) was kept and never logged, nor its repeats (a reviewer's probe, 2026-11-28).
  it('why Redis stays down after a clean close is logged: a password it now asks for', async () => {
    const { lines, conn } = await loggedConnection();
    const admin = await connection();
    const id = String(await conn.client.client('ID'));
    await admin.client.config('SET', 'requirepass', 'rotated'); // connections already open stay signed in
    try {
      const closed = new Promise((r) => conn.client.once('close', r));
      await admin.client.client('KILL', 'ID', id);
      await closed;
      // Bounded, so that the password is cleared for the other tests even when the line never comes.
      for (const until = Date.now() + 4_000; !lines.some((l) => l.msg === 'redis still unavailable') && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      expect(lines.find((l) => l.msg.startsWith('redis connection lost'))?.reason).toBe('connection closed');
      expect(String(lines.find((l) => l.msg === 'redis still unavailable')!.reason)).toMatch(/NOAUTH/);
    } finally {
      await admin.client.config('SET', 'requirepass', '');
    }
    await reconnected(conn);
    while (!lines.some((l) => l.msg === 'redis connection restored')) await new Promise((r) => setTimeout(r, 20));
    expect(lines.filter((l) => l.msg === 'redis still unavailable')).toHaveLength(1); // each reason once
  });

  it('a retry while Redis still refuses the pending release leaves that release pending', async () => {
    const conn = await connection();
    const a = new RedisIdempotencyStore(conn);
    const other = new RedisIdempotencyStore(await connection());
    expect((await a.claim('idem:k:still-down', 'fp')).outcome).toBe('claimed');
    await dropConnection(conn);
    await expect(a.release('idem:k:still-down')).rejects.toThrow();
    await expect(a.claim('idem:k:still-down', 'fp')).rejects.toThrow(); // still disconnected
    await reconnected(conn);
    const deadline = Date.now() + 3_000;
    let outcome = (await other.claim('idem:k:still-down', 'fp')).outcome;
    while (outcome !== 'claimed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      outcome = (await other.claim('idem:k:still-down', 'fp')).outcome;
    }
    expect(outcome).toBe('claimed');
    await a.close();
  });
});

describe('Redis lost and back', () => {
  it('start-up fails with a clear error when Redis cannot be reached', async () => {
    const err = await RedisConnection.open({ url: 'redis://127.0.0.1:1', prefix: 'x:', commandTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisStartupError);
    expect((err as Error).message).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1.*SENTIO_REDIS_URL.*ECONNREFUSED/);
  });

  it('fails fast with StoreUnavailableError while down, rate limits fall back to a local bucket, then recovers', async () => {
    const conn = await connection('down:', 300);
    const contexts = new RedisContextStore(conn, { ttlSeconds: 60, maxMessagesPerContext: 10 });
    const limits = new RedisRateLimitStore(conn);
    const idem = new RedisIdempotencyStore(conn);
    await contexts.append('c', [message('before')]);
    await redis.kill();
    const started = performance.now();
    await expect(contexts.get('c')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(contexts.append('c', [message('during')])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(idem.claim('idem:k:down', 'fp')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeLessThan(1_000);
    const local = await limits.take('rl:down', 1, 3, 3 / 60_000, Date.now());
    expect(local).toEqual({ allowed: true, tokens: 2 });
    await redis.restart();
    const deadline = Date.now() + 10_000;
    while (!conn.ready && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(conn.ready).toBe(true);
    expect(await contexts.get('c')).toBeUndefined(); // no persistence: the restarted Redis is empty
    expect((await contexts.append('c', [message('after')])).total).toBe(1);
    expect((await limits.take('rl:down', 1, 3, 3 / 60_000, Date.now())).tokens).toBe(2);
  });
});
