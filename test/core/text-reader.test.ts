/**
 * The thread that reads chat messages' words (src/core/text-reader.ts): it gives what readText gives on the
 * event loop, the loop keeps turning while it reads the costliest messages, it starts only when a long text
 * comes, and a thread that cannot run leaves the reading to the loop instead of failing a turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readText } from '../../src/core/conversation-mode.js';
import { TextReader } from '../../src/core/text-reader.js';
import { createLogger } from '../../src/log.js';
import { DEVELOPMENT_SETS, NOT_CRISIS_EVERYDAY_CHAT } from '../chat/crisis-fixtures.js';
import { TS_LOADER } from '../helpers/worker-loader.js';

const readers: TextReader[] = [];
afterEach(async () => {
  await Promise.all(readers.splice(0).map((r) => r.close()));
});

function reader(opts: ConstructorParameters<typeof TextReader>[0] = {}): TextReader {
  const r = new TextReader({ execArgv: TS_LOADER, ...opts });
  readers.push(r);
  return r;
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

/** The costliest reading measured: an 8 KB message (the size limit) of one word the rules look for, 21 ms each here. */
const COSTLY = ['pills ', 'bridge ', 'suicide ', 'die '].map((w) => w.repeat(Math.floor(8_192 / w.length)));

describe('text reader', () => {
  it('reads on its thread exactly what readText reads on the loop, rules, learned signal and cues alike', async () => {
    const texts = [
      ...DEVELOPMENT_SETS.flatMap((s) => [...s.positives.slice(0, 8), ...s.negatives.slice(0, 8)]),
      ...NOT_CRISIS_EVERYDAY_CHAT.slice(0, 40),
      '', '   ', '😭😭😭', 'si le PSG perd encore, je me suicide mdr', 'I CAN’T do this anymore…', COSTLY[0]!,
    ];
    const r = reader();
    expect(await r.start()).toBe(true);
    const readings = await r.read(texts);
    expect(r.running).toBe(true);
    expect(readings).toEqual(texts.map((t) => readText(t)));
    // The sample holds every kind of finding, so the comparison covers each field's shape.
    expect(readings.some((x) => x.crisis.direct)).toBe(true);
    expect(readings.some((x) => x.crisis.learned)).toBe(true);
    expect(readings.some((x) => x.crisis.soft)).toBe(true);
    expect(await r.read([])).toEqual([]);
  });

  it('keeps the event loop turning while it reads four 8 KB messages that take the loop tens of milliseconds', async () => {
    const r = reader();
    expect(await r.start()).toBe(true); // started, and its patterns compiled
    const t0 = performance.now();
    const here = COSTLY.map((t) => readText(t));
    const onLoop = performance.now() - t0;
    let last = performance.now();
    let longest = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    const t1 = performance.now();
    const threaded = await r.read(COSTLY);
    const took = performance.now() - t1;
    clearInterval(tick);
    longest = Math.max(longest, performance.now() - last);
    console.log(`four 8 KB messages: ${onLoop.toFixed(1)} ms on the loop; on the thread ${took.toFixed(1)} ms, the loop's longest gap ${longest.toFixed(1)} ms`);
    expect(threaded).toEqual(here);
    expect(onLoop).toBeGreaterThan(10); // what the thread is for
    expect(longest).toBeLessThan(onLoop / 3);
  });

  it('starts its thread with the first long read, which the loop reads meanwhile; short reads never start it', async () => {
    const r = reader();
    const short = ['ok then', 'x'.repeat(500)];
    expect(await r.read(short)).toEqual(short.map((t) => readText(t)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.running).toBe(false);
    expect(await r.read([COSTLY[2]!])).toEqual([readText(COSTLY[2]!)]);
    expect(await r.start()).toBe(true); // the thread the read started
    expect(r.running).toBe(true);
  });

  it('a thread that cannot start: the loop reads, each loss is logged, and after three it stops trying', async () => {
    const { logger, lines } = capture();
    const r = reader({ logger, url: new URL('./no-such-reader-worker.js', import.meta.url) });
    const texts = ['I want to end it all tonight', COSTLY[1]!];
    for (let i = 0; i < 4; i++) {
      expect(await r.start()).toBe(false);
      expect(await r.read(texts)).toEqual(texts.map((t) => readText(t)));
    }
    expect(r.threaded).toBe(false);
    const lost = lines.filter((l) => String(l['msg']).startsWith('text reading thread lost'));
    expect(lost.map((l) => l['failures'])).toEqual([1, 2, 3]);
    expect(String(lost[2]!['msg'])).toMatch(/from now on/);
  });

  it('close() answers what it owes, ends the thread, and later reads run on the loop', async () => {
    const { logger, lines } = capture();
    const r = reader({ logger });
    expect(await r.start()).toBe(true);
    const pending = r.read(COSTLY);
    await r.close();
    expect(await pending).toEqual(COSTLY.map((t) => readText(t)));
    expect(r.threaded).toBe(false);
    expect(await r.read(['ok then'])).toEqual([readText('ok then')]);
    expect(lines.filter((l) => l['level'] !== 30 && l['level'] !== 20)).toEqual([]); // no warning: closing is not a loss
  });
});
