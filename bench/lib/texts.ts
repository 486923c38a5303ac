/** Benchmark texts: the dair-ai validation sentences (realistic lengths), read from ../shared/data. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function benchTexts(): string[] {
  const file = path.resolve(process.env['SENTIO_DATA'] ?? '../shared/data', 'dair-ai-emotion/val.txt');
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.slice(0, l.lastIndexOf(';')));
}
