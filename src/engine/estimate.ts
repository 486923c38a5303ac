/**
 * A cheap guess of a text's token count, made on the JS thread without the vocabulary, used only to
 * shape batches (sort by length, keep a batch within its token budget). The exact count comes back from
 * the addon with the scores. It counts words (runs of letters and digits, long ones as several pieces)
 * and single symbols, CJK characters and emoji, and stops once it reaches maxLength.
 */
export function estimateTokens(text: string, maxLength: number): number {
  let tokens = 1; // [CLS]
  let word = 0; // letters in the current word
  // A 1 MB text needs no full scan: past this many characters it is certainly at the limit (or close).
  const scan = Math.min(text.length, maxLength * 24);
  for (let i = 0; i < scan && tokens < maxLength; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || (c >= 0x7f && c <= 0xa0) || c === 0x3000) {
      if (word > 0) tokens += wordPieces(word);
      word = 0;
    } else if (
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      (c >= 0xc0 && c < 0x2000) ||
      (c >= 0xac00 && c <= 0xd7a3) // Hangul syllables stay in words
    ) {
      word++;
    } else {
      // punctuation, symbols, CJK, emoji (a surrogate pair counts once)
      if (word > 0) tokens += wordPieces(word);
      word = 0;
      tokens++;
      if (c >= 0xd800 && c <= 0xdbff) i++;
    }
  }
  if (word > 0) tokens += wordPieces(word);
  return Math.min(tokens, maxLength);
}

/** Common words are whole tokens; long ones split into a few pieces. */
function wordPieces(letters: number): number {
  return letters <= 8 ? 1 : 1 + Math.ceil((letters - 8) / 6);
}
