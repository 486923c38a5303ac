/** Where the benches keep what they measured: bench/results/<bench>-<ISO time, ':' and '.' as '-'>.json. */
import { mkdirSync, writeFileSync } from 'node:fs';

/** A new results path for `bench`, without extension (the load bench writes a chart beside its JSON). */
export function resultsStem(bench: string): string {
  mkdirSync('bench/results', { recursive: true });
  return `bench/results/${bench}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
}

/** Writes `data` as indented JSON to a new results file for `bench`; returns its path. */
export function writeResults(bench: string, data: unknown): string {
  const file = `${resultsStem(bench)}.json`;
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}
