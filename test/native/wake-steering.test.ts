/**
 * Wake steering (native/wake_steering.h): an engine idle for a while has the thread it is about to wake
 * kept off the JS thread's CPU, and that thread may use every CPU again as soon as it runs. A thread left
 * narrowed would quietly cost a busy server a core, so that is what these tests look for.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { native } from '../../src/engine/binding.js';
import { dairTexts, engineThreadIds, loadNative } from './helpers.js';

const linuxMultiCpu = process.platform === 'linux' && availableParallelism() >= 2;
const texts = dairTexts();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function allowedCpus(statusPath: string): string {
  return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(statusPath, 'utf8'))![1]!;
}

/** Cpus_allowed_list of each engine thread (named sentio-engine). */
function engineThreadCpus(): string[] {
  const out: string[] = [];
  for (const tid of engineThreadIds()) {
    try {
      out.push(allowedCpus(`/proc/self/task/${tid}/status`));
    } catch {
      // the thread exited meanwhile
    }
  }
  return out;
}

describe.runIf(linuxMultiCpu)('wake steering', () => {
  it('steers the wakes of an idle engine and leaves no engine thread narrowed', async () => {
    const h = await loadNative({ threads: 2, intraOpThreads: 1, steerWakeups: true });
    try {
      expect(native.info(h).wakeSteering).toBe(true);
      for (let i = 0; i < 8; i++) {
        await sleep(15); // idle long enough (5 ms) to be steered
        const r = await native.run(h, [texts[i]!]);
        expect(r.outputs['emotions']!.length).toBe(6);
      }
      expect(native.info(h).steeredWakeups).toBeGreaterThanOrEqual(4);
      // A batch large enough to wake both threads, right after an idle spell.
      await sleep(15);
      await native.run(h, texts.slice(0, 256));
      const process = allowedCpus('/proc/self/status');
      const threads = engineThreadCpus();
      expect(threads.length).toBeGreaterThanOrEqual(2);
      // The thread steered last may still be asleep, narrowed, if another took the job; the rest must not be.
      expect(threads.filter((c) => c !== process).length).toBeLessThanOrEqual(1);
      // Once every thread has run again, none is narrowed.
      await native.run(h, texts.slice(0, 256));
      await native.run(h, texts.slice(256, 512));
      expect(engineThreadCpus().every((c) => c === process)).toBe(true);
    } finally {
      await native.dispose(h);
    }
  });

  it('is off when asked, and under load (no idle spell) steers nothing', async () => {
    const off = await loadNative({ threads: 2, intraOpThreads: 1, steerWakeups: false });
    try {
      await sleep(15);
      await native.run(off, [texts[0]!]);
      expect(native.info(off).wakeSteering).toBe(false);
      expect(native.info(off).steeredWakeups).toBe(0);
    } finally {
      await native.dispose(off);
    }
    const on = await loadNative({ threads: 2, intraOpThreads: 1, steerWakeups: true });
    try {
      await sleep(15);
      await native.run(on, [texts[0]!]);
      const before = native.info(on).steeredWakeups;
      // Back-to-back runs: the engine never idles 5 ms between them.
      await Promise.all(Array.from({ length: 50 }, (_, i) => native.run(on, [texts[i]!])));
      expect(native.info(on).steeredWakeups).toBe(before);
    } finally {
      await native.dispose(on);
    }
  });
});
