/**
 * Bounds on the JSON Sentio parses, checked by one scan of the text before JSON.parse. JSON.parse takes
 * any shape, at a cost on the event loop that follows the shape more than the bytes: 1 MiB of realistic
 * requests parses in about 1 ms, 1 MiB of brackets nested 120 deep in 90–120 ms, a flat object of 95,000
 * members in 60 ms (fuzz reviews, 2026-11-26 and 2026-11-28). A value nested a few thousand levels
 * deep also parses, then overflows the stack when it is serialised again (an upstream reply passed on to
 * the client hung its request).
 */
export const MAX_JSON_DEPTH = 128;

/** What a JSON text breaks: nesting deeper than MAX_JSON_DEPTH, or more arrays, objects and members than `maxNodes`. */
export function jsonOverLimits(text: string, maxNodes = Infinity): 'depth' | 'nodes' | undefined {
  let depth = 0;
  let nodes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the next one not escaped by an odd run of backslashes.
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return undefined; // unterminated: JSON.parse reports it
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return 'depth';
      if (++nodes > maxNodes) return 'nodes';
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x3a && ++nodes > maxNodes) {
      return 'nodes'; // a member's colon
    }
  }
  return undefined;
}
