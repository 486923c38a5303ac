/**
 * Bounds on the JSON Sentio parses, checked by one scan of the text before JSON.parse. JSON.parse takes
 * any shape, at a cost on the event loop that follows the shape more than the bytes: 1 MiB of realistic
 * requests parses in about 1 ms, 1 MiB of brackets nested 120 deep in 90–120 ms, a flat object of 95,000
 * members in 60 ms (fuzz reviews, 2026-11-26 and 2026-11-28). A value nested a few thousand levels
 * deep also parses, then overflows the stack when it is serialised again (an upstream reply passed on to
 * the client hung its request).
 */
export const MAX_JSON_DEPTH = 128;

/** The index of the quote that closes the string opened at `open`: the next one not escaped by an odd run of backslashes; -1 if none. */
function stringEnd(text: string, open: number): number {
  let i = open;
  for (;;) {
    const end = text.indexOf('"', i + 1);
    if (end < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    i = end;
  }
}

/** What a JSON text breaks: nesting deeper than MAX_JSON_DEPTH, or more arrays, objects and members than `maxNodes`. */
export function jsonOverLimits(text: string, maxNodes = Infinity): 'depth' | 'nodes' | undefined {
  let depth = 0;
  let nodes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      if (i < 0) return undefined; // unterminated: JSON.parse reports it
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

/**
 * How many elements the top-level object's array `key` holds (its last occurrence, as JSON.parse keeps),
 * or undefined when it has none. One scan, no parse: for a body refused by jsonOverLimits, whose size
 * may still be a count the caller can name (a request with too many messages).
 */
export function topLevelArrayLength(text: string, key: string): number | undefined {
  let depth = 0;
  let lastKey: string | undefined;
  let counting = false;
  let count = 0;
  let found: number | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      i = stringEnd(text, i);
      if (i < 0) return found;
      if (depth === 1) {
        const raw = text.slice(start, i + 1);
        lastKey = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      } else if (counting && depth === 2 && count === 0) count = 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (counting && depth === 2 && count === 0) count = 1;
      depth++;
      if (c === 0x5b && depth === 2 && lastKey === key) {
        counting = true;
        count = 0;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
      if (counting && depth === 1) {
        counting = false;
        found = count;
      }
    } else if (counting && depth === 2) {
      if (c === 0x2c) count++;
      else if (count === 0 && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) count = 1;
    }
  }
  return found;
}
