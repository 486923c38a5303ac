/**
 * executionProvider 'hybrid': calls go to one of two engines by their number of texts. No GPU here, so the
 * routing is checked with a second CPU engine in the GPU engine's place; createEngine's own hybrid load
 * is checked for what it does on this host (the CPUs alone after one warning, as auto; on a CUDA host, both).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineDisposedError, EngineInputError, createEngine } from '../../src/engine/engine.js';
import type { Engine } from '../../src/engine/engine.js';
import { HybridEngine } from '../../src/engine/hybrid.js';
import { MODEL_DIR, dairTexts, expectSameScores } from './helpers.js';

const texts = dairTexts().slice(0, 40);
const cpuEngine = () => createEngine({ modelDir: MODEL_DIR, executionProvider: 'cpu', warmup: false, inferenceThreads: 1 });

describe('HybridEngine', () => {
  let small: Engine;
  let bulk: Engine;
  let hybrid: HybridEngine;
  beforeAll(async () => {
    [small, bulk] = await Promise.all([cpuEngine(), cpuEngine()]);
    hybrid = new HybridEngine(small, bulk, 8);
  });
  afterAll(async () => {
    await hybrid.close();
  });

  it('sends calls of at least minTexts texts to the bulk engine and the rest to the small one, and adds up their counts', async () => {
    const before = { small: small.stats().texts, bulk: bulk.stats().texts };
    const [one, seven, eight, forty] = await Promise.all([
      hybrid.analyze(texts.slice(0, 1)),
      hybrid.analyze(texts.slice(0, 7)),
      hybrid.analyze(texts.slice(0, 8)),
      hybrid.analyze(texts),
    ]);
    expect(small.stats().texts - before.small).toBe(1 + 7);
    expect(bulk.stats().texts - before.bulk).toBe(8 + 40);
    expect(hybrid.stats().texts).toBe(small.stats().texts + bulk.stats().texts);
    expect(hybrid.stats().batches).toBe(small.stats().batches + bulk.stats().batches);
    expect(forty).toHaveLength(40);
    // One model on both sides: a text scores the same whichever engine ran it.
    expectSameScores(one![0]!, forty![0]!);
    expectSameScores(seven![6]!, eight![6]!);
  });

  it('describes itself as hybrid with both engines, and refuses what either engine refuses', async () => {
    expect(hybrid.info.provider).toBe('hybrid');
    expect(hybrid.info.hybrid).toMatchObject({ minTexts: 8, bulk: { provider: 'cpu' } });
    expect(hybrid.labels).toBe(small.labels);
    const d = hybrid.describe() as { provider: string; model: string; hybrid: { minTexts: number; bulk: { provider: string } } };
    expect(d).toMatchObject({ provider: 'hybrid', hybrid: { minTexts: 8, bulk: { provider: 'cpu' } } });
    expect(d.model).toMatch(/^sentio-emotion@/);
    await expect(hybrid.analyze('not a list' as unknown as string[])).rejects.toBeInstanceOf(EngineInputError);
    await expect(hybrid.analyze([...texts.slice(0, 9), 42 as unknown as string])).rejects.toBeInstanceOf(EngineInputError);
  });

  it('close() closes both engines, draining their work when asked', async () => {
    const [a, b] = await Promise.all([cpuEngine(), cpuEngine()]);
    const h = new HybridEngine(a, b, 2);
    const pending = [h.analyze(texts.slice(0, 1)), h.analyze(texts.slice(0, 30))];
    await h.close({ drain: true });
    expect((await Promise.all(pending)).map((r) => r.length)).toEqual([1, 30]);
    expect(a.stats().closed && b.stats().closed && h.stats().closed).toBe(true);
    await expect(h.analyze(texts.slice(0, 1))).rejects.toBeInstanceOf(EngineDisposedError);
    await expect(h.analyze(texts.slice(0, 5))).rejects.toBeInstanceOf(EngineDisposedError);
  });
});

describe("createEngine({ executionProvider: 'hybrid' })", () => {
  it('runs on the CPUs after one warning where CUDA is unusable (on a CUDA host: small calls on the CPUs, large ones on CUDA)', async () => {
    const lines: { level: string; msg: string }[] = [];
    const logger = {
      info: (_: object, msg: string) => lines.push({ level: 'info', msg }),
      warn: (_: object, msg: string) => lines.push({ level: 'warn', msg }),
    };
    const e = await createEngine({ modelDir: MODEL_DIR, executionProvider: 'hybrid', hybridMinTexts: 16, warmup: false, logger, inferenceThreads: 1 });
    try {
      expect(e.info.requestedProvider).toBe('hybrid');
      expect((await e.analyze(texts.slice(0, 16))).length).toBe(16);
      if (e.info.provider === 'hybrid') {
        expect(e.info.hybrid).toMatchObject({ minTexts: 16, bulk: { provider: 'cuda' } });
        return;
      }
      expect(e.info.provider).toBe('cpu');
      expect(e.info.hybrid).toBeUndefined();
      expect(e.info.fallbackReason).toBeTruthy();
      expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
      expect(lines.find((l) => l.level === 'warn')!.msg).toMatch(/CUDA.*CPU/);
      expect(e.describe()).toMatchObject({ provider: 'cpu', requestedProvider: 'hybrid' });
    } finally {
      await e.close();
    }
  });
});
