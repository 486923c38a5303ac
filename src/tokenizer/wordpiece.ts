/**
 * Sentio's word-piece tokenizer in TypeScript: an exact port of models/train/tokenizer.py, driven only by
 * tokenizer.json (char_map and class tables), so it needs no Unicode database of its own.
 * models/emotion/fixtures/tokenizer-golden.json pins the ids it must give.
 */
import { readFileSync } from 'node:fs';

const CLASS_DROP = 0;
// class 1 (space) only ends a word, which is what the else-branch does for every non-word class
const CLASS_ISOLATED = 2;
const CLASS_WORD = 3;
const REPLACEMENT_CHAR = 0xfffd;

/** The parts of tokenizer.json this port reads. */
export interface TokenizerFile {
  algorithm: string;
  max_length: number;
  max_word_chars: number;
  continuation_prefix: string;
  special_tokens: { pad: string; unk: string; cls: string };
  char_map: [number, number[]][];
  classes: [number, number, number][];
  vocab: string[];
}

export class WordPieceTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  readonly unkId: number;
  readonly clsId: number;
  readonly vocabSize: number;
  readonly #maxWordChars: number;
  readonly #prefix: string;
  readonly #ids: Map<string, number>;
  readonly #charMap: Map<number, readonly number[]>;
  readonly #classes: Uint8Array;

  constructor(file: TokenizerFile) {
    if (file.algorithm !== 'sentio-wordpiece-1') {
      throw new Error(`unsupported tokenizer algorithm: ${file.algorithm}`);
    }
    this.maxLength = file.max_length;
    this.#maxWordChars = file.max_word_chars;
    this.#prefix = file.continuation_prefix;
    this.#ids = new Map(file.vocab.map((tok, i) => [tok, i]));
    this.vocabSize = file.vocab.length;
    this.padId = this.#require(file.special_tokens.pad);
    this.unkId = this.#require(file.special_tokens.unk);
    this.clsId = this.#require(file.special_tokens.cls);
    this.#charMap = new Map(file.char_map.map(([cp, repl]) => [cp, repl]));
    this.#classes = new Uint8Array(0x110000); // 1.1 MB: one class per code point, O(1) lookup
    for (const [lo, hi, cls] of file.classes) this.#classes.fill(cls, lo, hi + 1);
  }

  static load(path: string): WordPieceTokenizer {
    return new WordPieceTokenizer(JSON.parse(readFileSync(path, 'utf8')) as TokenizerFile);
  }

  /** [CLS] followed by word pieces, at most maxLength ids in all. */
  encode(text: string): number[] {
    const budget = this.maxLength - 1;
    const ids = [this.clsId];
    for (const word of this.preTokenize(text, budget)) {
      for (const id of this.wordPieces(word)) ids.push(id);
      if (ids.length - 1 >= budget) break;
    }
    return ids.slice(0, this.maxLength);
  }

  /**
   * Normalizes and splits into words and isolated characters, each as an array of code points. `limit`
   * stops once that many pre-tokens are complete: each yields at least one id, so truncation is unchanged.
   */
  preTokenize(text: string, limit = Infinity): number[][] {
    const out: number[][] = [];
    let word: number[] = [];
    // for..of walks code points; a lone surrogate comes out as one unit and becomes U+FFFD, as in Python
    for (const ch of text) {
      let cp = ch.codePointAt(0) ?? REPLACEMENT_CHAR;
      if (cp >= 0xd800 && cp <= 0xdfff) cp = REPLACEMENT_CHAR;
      const mapped = this.#charMap.get(cp);
      for (const m of mapped ?? [cp]) {
        const cls = this.#classes[m];
        if (cls === CLASS_WORD) {
          word.push(m);
        } else if (cls !== CLASS_DROP) {
          if (word.length > 0) {
            out.push(word);
            word = [];
          }
          if (cls === CLASS_ISOLATED) out.push([m]);
        }
      }
      if (out.length >= limit) return out;
    }
    if (word.length > 0) out.push(word);
    return out;
  }

  /** Greedy longest-match word pieces; a word with any unmatched rest is a single [UNK]. */
  wordPieces(word: readonly number[]): number[] {
    if (word.length > this.#maxWordChars) return [this.unkId];
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let found: number | undefined;
      while (end > start) {
        const sub = String.fromCodePoint(...word.slice(start, end));
        found = this.#ids.get(start === 0 ? sub : this.#prefix + sub);
        if (found !== undefined) break;
        end -= 1;
      }
      if (found === undefined) return [this.unkId];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  #require(token: string): number {
    const id = this.#ids.get(token);
    if (id === undefined) throw new Error(`tokenizer vocabulary lacks ${token}`);
    return id;
  }
}
