/** A stored message for store tests: what a store keeps, with placeholder scores. */
import type { StoredMessage } from '../../src/store/context-store.js';

export function storedMessage(id: string): StoredMessage {
  return {
    id, role: 'user', text: `text of ${id}`, raw: [1, 0, 0, 0, 0, 0], sub: new Array<number>(28).fill(0),
    valence: 0, arousal: 0, tokens: 3, eq: {} as StoredMessage['eq'], at: 0,
  };
}
