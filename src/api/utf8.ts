/** Byte limits on texts, counted in UTF-8 as the spec's limits are. */

/** Whether `text` takes more than `max` bytes of UTF-8. A UTF-16 unit is at most 3 bytes, so most texts are cleared without encoding. */
export function exceedsUtf8Bytes(text: string, max: number): boolean {
  return text.length * 3 > max && Buffer.byteLength(text, 'utf8') > max;
}

/** At most `max` bytes of UTF-8, cut at a character boundary. */
export function truncateUtf8(text: string, max: number): string {
  if (!exceedsUtf8Bytes(text, max)) return text;
  const cut = new TextDecoder().decode(Buffer.from(text, 'utf8').subarray(0, max));
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}
