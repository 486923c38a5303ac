/**
 * Thread priority (docs/engine.md, Thread priority): the engine threads run at a higher nice value than
 * the JS thread, 10 by default, so that HTTP, batching and replies go first when both want a CPU. The
 * setting is easy to lose in a refactor and nothing else would notice, so the threads' own values are read
 * back from /proc.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { MODEL_DIR, engineThreadIds } from './helpers.js';

/** The nice value in a /proc stat file (field 19; the command name in field 2 may hold spaces). */
function niceOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

async function niceOfNewEngine(over: { threadNice?: number }): Promise<number[]> {
  const before = new Set(engineThreadIds());
  const engine = await createEngine({ modelDir: MODEL_DIR, executionProvider: 'cpu', inferenceThreads: 2, warmup: false, ...over });
  try {
    await engine.analyze(['the engine threads all run once']);
    // The second thread names itself as it starts, which may be a moment after the first answers.
    let mine: string[] = [];
    for (let i = 0; i < 100 && mine.length < 2; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 10));
      mine = engineThreadIds().filter((tid) => !before.has(tid));
    }
    expect(mine).toHaveLength(2);
    return mine.map((tid) => niceOf(`/proc/self/task/${tid}/stat`));
  } finally {
    await engine.close();
  }
}

describe.runIf(process.platform === 'linux')('engine thread priority', () => {
  const base = niceOf('/proc/self/stat');

  it('runs every engine thread 10 nice steps below the JS thread by default', async () => {
    expect(await niceOfNewEngine({})).toEqual([Math.min(19, base + 10), Math.min(19, base + 10)]);
  });

  it('leaves them at the JS thread\'s priority with threadNice 0', async () => {
    expect(await niceOfNewEngine({ threadNice: 0 })).toEqual([base, base]);
  });
});
