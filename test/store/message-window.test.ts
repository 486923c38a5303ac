/** The windows both context stores hand out: appends from one history, forks of it, and the bound. */
import { describe, expect, it } from 'vitest';
import type { MessageList, StoredMessage } from '../../src/store/context-store.js';
import { extendWindow } from '../../src/store/message-window.js';

const message = (id: string) => ({ id }) as StoredMessage;
const ids = (l: MessageList) => [...l].map((m) => m.id);

describe('extendWindow', () => {
  it('extends a plain array, and two appends to the same window each get their own history', () => {
    const base = extendWindow(['a', 'b'].map(message), [message('c')], 3);
    const first = extendWindow(base, [message('d')], 3);
    const second = extendWindow(base, [message('e'), message('f')], 3); // base is no longer its log's newest
    expect(ids(base)).toEqual(['a', 'b', 'c']);
    expect(ids(first)).toEqual(['b', 'c', 'd']);
    expect(ids(second)).toEqual(['c', 'e', 'f']);
    expect(ids(extendWindow(first, [message('g')], 3))).toEqual(['c', 'd', 'g']);
    expect(ids(second)).toEqual(['c', 'e', 'f']);
  });

  it('keeps the newest `keep` when the bound shrinks, with nothing added', () => {
    const w = extendWindow(undefined, ['a', 'b', 'c', 'd'].map(message), 10);
    expect(ids(extendWindow(w, [], 2))).toEqual(['c', 'd']);
    expect(ids(w)).toEqual(['a', 'b', 'c', 'd']);
  });
});
