/** Engine option defaults and the thread layout that "auto" (0) resolves to. */
import { describe, expect, it } from 'vitest';
import { EngineInputError } from '../../src/engine/errors.js';
import { batchTokensFor, CPU_BATCH_TOKENS, ENGINE_DEFAULTS, resolveEngineOptions, threadPlan } from '../../src/engine/options.js';

const plan = (inferenceThreads: number, intraOpThreads: number, cpus: number, maxBatchesInFlight = 0) =>
  threadPlan({ inferenceThreads, intraOpThreads, maxBatchesInFlight }, cpus);

describe('threadPlan', () => {
  it('runs one engine thread per CPU (at most 4), each with the CPUs left over', () => {
    expect(plan(0, 0, 2)).toEqual({ threads: 2, intraOpThreads: 1, maxBatchesInFlight: 2 });
    expect(plan(0, 0, 1)).toEqual({ threads: 1, intraOpThreads: 1, maxBatchesInFlight: 2 });
    expect(plan(0, 0, 16)).toEqual({ threads: 4, intraOpThreads: 4, maxBatchesInFlight: 2 });
  });

  it('fills in around an explicit setting without oversubscribing', () => {
    expect(plan(0, 2, 2)).toMatchObject({ threads: 1, intraOpThreads: 2 });
    expect(plan(0, 4, 16)).toMatchObject({ threads: 4, intraOpThreads: 4 });
    expect(plan(1, 0, 8)).toMatchObject({ threads: 1, intraOpThreads: 8 });
    expect(plan(3, 3, 2, 5)).toEqual({ threads: 3, intraOpThreads: 3, maxBatchesInFlight: 5 });
  });
});

describe('batchTokensFor', () => {
  it('auto (0) bounds a CPU batch by padded tokens, and a CUDA batch by its text count alone', () => {
    expect(batchTokensFor('cpu', { maxBatchTokens: 0, maxBatchSize: 256 }, 128)).toBe(CPU_BATCH_TOKENS);
    expect(CPU_BATCH_TOKENS).toBe(8192);
    expect(batchTokensFor('cuda', { maxBatchTokens: 0, maxBatchSize: 256 }, 128)).toBe(32768);
    expect(batchTokensFor('cuda', { maxBatchTokens: 0, maxBatchSize: 64 }, 128)).toBe(8192);
  });

  it('a value set by the operator is kept on either provider', () => {
    expect(batchTokensFor('cpu', { maxBatchTokens: 1000, maxBatchSize: 256 }, 128)).toBe(1000);
    expect(batchTokensFor('cuda', { maxBatchTokens: 1000, maxBatchSize: 256 }, 128)).toBe(1000);
  });
});

describe('resolveEngineOptions', () => {
  it('starts from the documented defaults', () => {
    expect(resolveEngineOptions()).toMatchObject(ENGINE_DEFAULTS);
    expect(resolveEngineOptions({ maxBatchSize: undefined }).maxBatchSize).toBe(256);
  });

  it('refuses out-of-range values with EngineInputError', () => {
    expect(() => resolveEngineOptions({ maxBatchSize: 0 })).toThrow(EngineInputError);
    expect(() => resolveEngineOptions({ maxWaitMs: -1 })).toThrow(EngineInputError);
    expect(() => resolveEngineOptions({ executionProvider: 'tpu' as never })).toThrow(/auto, cuda, cpu or hybrid/);
    expect(() => resolveEngineOptions({ executionProvider: 'hybrid', hybridMinTexts: 0 })).toThrow(/hybridMinTexts/);
    expect(resolveEngineOptions({ executionProvider: 'hybrid' }).hybridMinTexts).toBe(32);
    expect(() => resolveEngineOptions({ threadNice: 20 })).toThrow(EngineInputError);
    expect(() => resolveEngineOptions({ maxRunTokens: -1 })).toThrow(EngineInputError);
    expect(() => resolveEngineOptions({ maxBatchTokens: -1 })).toThrow(EngineInputError);
    expect(resolveEngineOptions({ maxBatchTokens: 0 }).maxBatchTokens).toBe(0);
    expect(() => resolveEngineOptions({ priorityLane: 'no' as never })).toThrow(/priorityLane must be a boolean/);
    expect(() => resolveEngineOptions({ packedRecurrence: 1 as never })).toThrow(/packedRecurrence must be a boolean/);
    expect(() => resolveEngineOptions({ fusedPooling: 'yes' as never })).toThrow(/fusedPooling must be a boolean/);
  });
});
