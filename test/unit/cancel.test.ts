/** The request cancellation primitive that replaces an AbortController per request. */
import { describe, expect, it } from 'vitest';
import { Canceller } from '../../src/engine/cancel.js';

describe('Canceller', () => {
  it('aborts once: sets aborted and reason, runs each listener once, in order', () => {
    const c = new Canceller();
    const calls: string[] = [];
    c.signal.addEventListener('abort', () => calls.push('a'), { once: true });
    c.signal.addEventListener('abort', () => calls.push('b'));
    expect(c.signal.aborted).toBe(false);
    expect(c.signal.reason).toBeUndefined();
    c.abort();
    c.abort();
    expect(calls).toEqual(['a', 'b']);
    expect(c.signal.aborted).toBe(true);
    expect(c.signal.reason).toBeInstanceOf(DOMException);
    expect((c.signal.reason as DOMException).name).toBe('AbortError');
  });

  it('forgets removed listeners and ignores listeners added after the abort', () => {
    const c = new Canceller();
    let removed = 0;
    let late = 0;
    const f = () => removed++;
    c.signal.addEventListener('abort', f);
    c.signal.removeEventListener('abort', f);
    c.signal.removeEventListener('abort', () => {}); // unknown: no effect
    c.abort(new Error('client gone'));
    c.signal.addEventListener('abort', () => late++);
    expect(removed).toBe(0);
    expect(late).toBe(0);
    expect((c.signal.reason as Error).message).toBe('client gone');
  });

  it('runs every listener when one throws, and surfaces the error as uncaught', async () => {
    const c = new Canceller();
    let second = false;
    c.signal.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    c.signal.addEventListener('abort', () => (second = true));
    const uncaught = new Promise<Error>((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (err) => {
        for (const l of listeners) process.on('uncaughtException', l);
        resolve(err);
      });
    });
    expect(() => c.abort()).not.toThrow();
    expect(second).toBe(true);
    expect((await uncaught).message).toBe('listener failed');
  });
});
