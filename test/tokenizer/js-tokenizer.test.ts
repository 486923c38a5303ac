import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '../../src/tokenizer/wordpiece.js';

interface GoldenCase {
  text?: string;
  repeat?: { unit: string; count: number };
  ids: number[];
}

const root = join(import.meta.dirname, '..', '..');
const golden = JSON.parse(
  readFileSync(join(root, 'models', 'emotion', 'fixtures', 'tokenizer-golden.json'), 'utf8'),
) as { max_length: number; cases: GoldenCase[] };
const tokenizer = WordPieceTokenizer.load(join(root, 'models', 'emotion', 'tokenizer.json'));

function textOf(c: GoldenCase): string {
  if (c.text !== undefined) return c.text;
  if (c.repeat) return c.repeat.unit.repeat(c.repeat.count);
  throw new Error('golden case has neither text nor repeat');
}

describe('JS word-piece tokenizer', () => {
  it('uses the fixtures max length', () => {
    expect(tokenizer.maxLength).toBe(golden.max_length);
    expect(golden.cases.length).toBeGreaterThanOrEqual(300);
  });

  it('gives the reference ids for every golden fixture', () => {
    const failures: string[] = [];
    golden.cases.forEach((c, i) => {
      const got = tokenizer.encode(textOf(c));
      if (JSON.stringify(got) !== JSON.stringify(c.ids)) {
        failures.push(`#${i} ${JSON.stringify(textOf(c).slice(0, 60))}: got ${JSON.stringify(got.slice(0, 20))}`);
      }
    });
    expect(failures).toEqual([]);
  });

  it('starts every sequence with [CLS], including empty text', () => {
    expect(tokenizer.encode('')).toEqual([tokenizer.clsId]);
    expect(tokenizer.encode('   ')).toEqual([tokenizer.clsId]);
  });
});
