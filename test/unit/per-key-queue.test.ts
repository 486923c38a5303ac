import { describe, expect, it } from 'vitest';
import { PerKeyQueue } from '../../src/store/per-key-queue.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('PerKeyQueue', () => {
  it('runs one key\'s tasks one after another, other keys beside them, and goes on after a failure', async () => {
    const q = new PerKeyQueue();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string, fail = false) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`${name}+`);
      await tick();
      log.push(`${name}-`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([
      q.run('a', task('a1')), q.run('a', task('a2', true)), q.run('a', task('a3')), q.run('b', task('b1')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const a = log.filter((l) => l.startsWith('a'));
    expect(a).toEqual(['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-']);
    expect(most).toBe(2); // b1 ran beside a1
    await tick();
    expect(await q.run('a', async () => 'again')).toBe('again'); // the key's chain was let go, not stuck
  });

  // Behind a store that stopped answering, the tenth queued append had answered after ten timeouts.
  it('a task still waiting after its bound fails without running, and the order holds for the ones after it', async () => {
    const q = new PerKeyQueue();
    let release!: () => void;
    const stuck = q.run('a', () => new Promise<string>((r) => { release = () => r('first'); }));
    const ran: string[] = [];
    const wait = { ms: 50, error: () => new Error('waited too long') };
    const started = Date.now();
    const late = q.run('a', async () => { ran.push('late'); return 'late'; }, wait);
    await expect(late).rejects.toThrow('waited too long');
    expect(Date.now() - started).toBeLessThan(500);
    const next = q.run('a', async () => { ran.push('next'); return 'next'; });
    await tick();
    expect(ran).toEqual([]); // still behind the first, which has not finished
    release();
    expect(await stuck).toBe('first');
    expect(await next).toBe('next');
    expect(ran).toEqual(['next']); // the one that timed out never ran
  });
});
