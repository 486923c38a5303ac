/** Readers for the evaluation files in ../shared/data (never copied into the project). */
import { readFileSync } from 'node:fs';

export interface Labeled {
  text: string;
  label: string;
}

/** dair-ai: `text;label` lines; the label follows the last semicolon. */
export function readDair(path: string): Labeled[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const cut = line.lastIndexOf(';');
      return { text: line.slice(0, cut), label: line.slice(cut + 1).trim() };
    });
}

/** GoEmotions TSV: text, comma-separated label ids, comment id; texts with quotes are CSV-quoted. */
export function readGoEmotions(path: string): { text: string; labels: number[] }[] {
  return parseDelimited(readFileSync(path, 'utf8'), '\t')
    .filter((row) => row.length >= 2)
    .map((row) => ({ text: row[0] ?? '', labels: (row[1] ?? '').split(',').map(Number) }));
}

/** EmoBank CSV (id,split,V,A,D,text with a header): rows of one split. */
export function readEmoBank(path: string, split = 'test'): { text: string; v: number; a: number }[] {
  const [header, ...rows] = parseDelimited(readFileSync(path, 'utf8'), ',');
  const col = (name: string): number => {
    const i = header?.indexOf(name) ?? -1;
    if (i < 0) throw new Error(`EmoBank file lacks column ${name}`);
    return i;
  };
  const [iSplit, iV, iA, iText] = [col('split'), col('V'), col('A'), col('text')];
  return rows
    .filter((r) => r[iSplit] === split)
    .map((r) => ({ text: r[iText] ?? '', v: Number(r[iV]), a: Number(r[iA]) }));
}

/** RFC 4180-style parsing: fields may be quoted with "", which may contain the delimiter or newlines. */
export function parseDelimited(src: string, delim: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (quoted) {
      if (ch === '"' && src[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field.length === 0) {
      quoted = true;
    } else if (ch === delim) {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field.endsWith('\r') ? field.slice(0, -1) : field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += ch;
    }
    i += 1;
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
