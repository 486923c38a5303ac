/**
 * An incremental server-sent-events parser for upstream streams: text in (any chunking), the `data`
 * payload of each complete event out. Comments (`:`), `event:`, `id:` and `retry:` lines are skipped;
 * several `data:` lines of one event are joined with "\n" as the SSE specification says.
 */
export class SseParser {
  #buffer = '';
  #data: string[] = [];

  /** Feed text; returns the data of every event completed by it. */
  push(text: string): string[] {
    this.#buffer += text;
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const nl = this.#buffer.indexOf('\n', start);
      if (nl < 0) break;
      let line = this.#buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.#line(line, out);
    }
    this.#buffer = start === 0 ? this.#buffer : this.#buffer.slice(start);
    return out;
  }

  /** The stream ended: flush an event that was not followed by a blank line. */
  end(): string[] {
    const out: string[] = [];
    if (this.#buffer) this.#line(this.#buffer.replace(/\r$/, ''), out);
    this.#buffer = '';
    this.#line('', out);
    return out;
  }

  #line(line: string, out: string[]): void {
    if (line === '') {
      if (this.#data.length) out.push(this.#data.join('\n'));
      this.#data = [];
      return;
    }
    if (line.startsWith('data:')) {
      this.#data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
    }
    // other fields and comments carry nothing a chat stream needs
  }
}
