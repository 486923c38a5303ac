import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGoldenFixtures } from '../../src/tokenizer/golden-fixtures.js';
import { WordPieceTokenizer } from '../../src/tokenizer/wordpiece.js';

const root = join(import.meta.dirname, '..', '..');
const golden = readGoldenFixtures(join(root, 'models', 'emotion'));
const tokenizer = WordPieceTokenizer.load(join(root, 'models', 'emotion', 'tokenizer.json'));

describe('JS word-piece tokenizer', () => {
  it('uses the fixtures max length', () => {
    expect(tokenizer.maxLength).toBe(golden.maxLength);
    expect(golden.cases.length).toBeGreaterThanOrEqual(300);
  });

  it('gives the reference ids for every golden fixture', () => {
    const failures: string[] = [];
    golden.cases.forEach((c, i) => {
      const got = tokenizer.encode(c.text);
      if (JSON.stringify(got) !== JSON.stringify(c.ids)) {
        failures.push(`#${i} ${JSON.stringify(c.text.slice(0, 60))}: got ${JSON.stringify(got.slice(0, 20))}`);
      }
    });
    expect(failures).toEqual([]);
  });

  it('starts every sequence with [CLS], including empty text', () => {
    expect(tokenizer.encode('')).toEqual([tokenizer.clsId]);
    expect(tokenizer.encode('   ')).toEqual([tokenizer.clsId]);
  });
});
