/**
 * How both context stores hold a context's messages: a record's list is a window [start, end) onto a
 * log that appends only push to, so an append costs the new messages rather than a copy of the history,
 * and what a window covers never changes after it is handed out (a compaction makes a new log).
 */
import type { MessageList, StoredMessage } from './context-store.js';

export class MessageWindow implements MessageList {
  constructor(readonly log: StoredMessage[], readonly start: number, readonly end: number) {}

  get length(): number {
    return this.end - this.start;
  }

  at(index: number): StoredMessage | undefined {
    const i = index < 0 ? index + this.end - this.start : index;
    return i >= 0 && i < this.end - this.start ? this.log[this.start + i] : undefined;
  }

  *[Symbol.iterator](): Iterator<StoredMessage> {
    for (let i = this.start; i < this.end; i++) yield this.log[i]!;
  }
}

/**
 * The newest `keep` of `list` followed by `added`. Pushes onto the log of `list` when `list` ends where
 * its log does (the newest window on it); otherwise (a plain array, or a window another append has
 * already extended) starts a new log with a copy of `list`.
 */
export function extendWindow(list: MessageList | undefined, added: readonly StoredMessage[], keep: number): MessageWindow {
  let log: StoredMessage[];
  let start = 0;
  if (list instanceof MessageWindow && list.end === list.log.length) ({ log, start } = list);
  else log = list ? [...list] : [];
  for (const m of added) log.push(m);
  start = Math.max(start, log.length - keep);
  // Evicted messages stay in the log, alive, until they reach a sixteenth of the window; then the window
  // moves to a new log. That bounds both the memory they hold and the copying, to 16 slots an append.
  if (start > 0 && start >= (log.length - start) >> 4) {
    log = log.slice(start);
    start = 0;
  }
  return new MessageWindow(log, start, log.length);
}
