/** Shared set-up for the native tests: the committed model, its tokenizer tables and the dair-ai val texts. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { native } from '../../src/engine/binding.js';
import type { NativeHandle, NativeLoadOptions } from '../../src/engine/binding.js';
import type { TextScores } from '../../src/engine/engine.js';
import { readModelFiles } from '../../src/engine/model-files.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const MODEL_DIR = join(ROOT, 'models', 'emotion');
export const DAIR_VAL = join(ROOT, '..', 'shared', 'data', 'dair-ai-emotion', 'val.txt');

/** The val split's texts (lines are `text;label`). */
export function dairTexts(): string[] {
  return readFileSync(DAIR_VAL, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.slice(0, l.lastIndexOf(';')));
}

export async function loadNative(over: Partial<NativeLoadOptions> = {}): Promise<NativeHandle> {
  const files = await readModelFiles(MODEL_DIR, { verifyChecksums: false });
  return native.load({
    modelPath: files.modelPath,
    tokenizer: files.tokenizer,
    executionProvider: 'cpu',
    intraOpThreads: 2,
    interOpThreads: 1,
    ...over,
  });
}

/** Per-text slices of a flat id array. */
export function splitIds(ids: Int32Array, lengths: Int32Array): number[][] {
  const out: number[][] = [];
  let at = 0;
  for (const n of lengths) {
    out.push(Array.from(ids.subarray(at, at + n)));
    at += n;
  }
  return out;
}

/** Thread ids of this process's engine threads (native/worker.cc names them sentio-engine); Linux only. */
export function engineThreadIds(): string[] {
  const out: string[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'sentio-engine') out.push(tid);
    } catch {
      // the thread exited meanwhile
    }
  }
  return out;
}

/** The contract: the same text scores the same within 1e-5, whatever batch (or engine) it runs in. */
export function expectSameScores(a: TextScores, b: TextScores): void {
  const diff = Math.max(...Array.from(a.emotions, (x, i) => Math.abs(x - b.emotions[i]!)), ...Array.from(a.subEmotions, (x, i) => Math.abs(x - b.subEmotions[i]!)));
  expect(diff).toBeLessThan(1e-5);
}
