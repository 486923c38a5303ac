/**
 * An incremental server-sent-events parser for upstream streams: text in (any chunking), the `data`
 * payload of each complete event out. Comments (`:`), `event:`, `id:` and `retry:` lines are skipped;
 * several `data:` lines of one event are joined with "\n", lines end in CRLF, LF or a lone CR, and a
 * byte-order mark that opens the stream is dropped, as the SSE specification says.
 *
 * Work is linear in the text pushed (a line that arrives in many pieces is searched piece by piece and
 * joined once), and an event, or a line not yet ended, may hold at most `maxEventChars` characters: an
 * upstream that never ends a line or an event gets an error, not the process's memory.
 */
import { UpstreamError } from './errors.js';

export class SseParser {
  readonly #maxEventChars: number;
  /** Pieces of the line not yet ended. */
  #partial: string[] = [];
  #partialChars = 0;
  #data: string[] = [];
  #dataChars = 0;
  #lines = 0;
  #started = false;
  /** The last piece ended in CR: a LF opening the next one belongs to it. */
  #afterCr = false;

  constructor(maxEventChars = Number.POSITIVE_INFINITY) {
    this.#maxEventChars = maxEventChars;
  }

  /** Lines ended so far, comments included: what counts as the upstream making progress. */
  get lines(): number {
    return this.#lines;
  }

  /** Feed text; returns the data of every event completed by it. */
  push(text: string): string[] {
    const out: string[] = [];
    if (!text) return out;
    let start = 0;
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) start = 1;
    }
    if (this.#afterCr) {
      this.#afterCr = false;
      if (text.charCodeAt(start) === 10) start++;
    }
    const eol = /[\r\n]/g;
    for (;;) {
      eol.lastIndex = start;
      const found = eol.exec(text);
      if (!found) break;
      const at = found.index;
      let line = text.slice(start, at);
      start = at + 1;
      if (text.charCodeAt(at) === 13) {
        if (start === text.length) this.#afterCr = true;
        else if (text.charCodeAt(start) === 10) start++;
      }
      if (this.#partial.length) {
        this.#partial.push(line);
        line = this.#partial.join('');
        this.#partial = [];
        this.#partialChars = 0;
      }
      this.#line(line, out);
    }
    if (start < text.length) {
      const rest = start === 0 ? text : text.slice(start);
      this.#partial.push(rest);
      this.#partialChars += rest.length;
      this.#check();
    }
    return out;
  }

  /** The stream ended: flush an event that was not followed by a blank line. */
  end(): string[] {
    const out: string[] = [];
    if (this.#partial.length) this.#line(this.#partial.join(''), out);
    this.#partial = [];
    this.#partialChars = 0;
    this.#line('', out);
    return out;
  }

  #line(line: string, out: string[]): void {
    this.#lines++;
    if (line === '') {
      if (this.#data.length) out.push(this.#data.join('\n'));
      this.#data = [];
      this.#dataChars = 0;
      return;
    }
    if (line.startsWith('data:')) {
      const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      this.#data.push(data);
      this.#dataChars += data.length + 1;
      this.#check();
    }
    // other fields and comments carry nothing a chat stream needs
  }

  #check(): void {
    if (this.#partialChars + this.#dataChars > this.#maxEventChars) {
      throw new UpstreamError('failed', `the upstream LLM sent a stream event over ${this.#maxEventChars} characters`);
    }
  }
}
