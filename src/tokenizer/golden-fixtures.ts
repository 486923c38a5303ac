/**
 * models/emotion/fixtures/tokenizer-golden.json: texts with the ids the training tokenizer gives them,
 * which the JS and C++ tokenizers must reproduce. One case is a text too long to store (over 1 MB),
 * written as a unit and a repeat count; cases come back with their text built.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GoldenCase {
  text: string;
  ids: number[];
}

interface StoredCase {
  text?: string;
  repeat?: { unit: string; count: number };
  ids: number[];
}

export function readGoldenFixtures(modelDir: string): { maxLength: number; cases: GoldenCase[] } {
  const stored = JSON.parse(readFileSync(join(modelDir, 'fixtures', 'tokenizer-golden.json'), 'utf8')) as {
    max_length: number;
    cases: StoredCase[];
  };
  const cases = stored.cases.map((c, i) => {
    if (c.text !== undefined) return { text: c.text, ids: c.ids };
    if (c.repeat) return { text: c.repeat.unit.repeat(c.repeat.count), ids: c.ids };
    throw new Error(`golden case #${i} has neither text nor repeat`);
  });
  return { maxLength: stored.max_length, cases };
}
