/**
 * Server-sent events over a uWS response: headers on the first write, every write corked, and real
 * backpressure: when uWS reports a full socket buffer, `send` waits for onWritable before resolving,
 * so a slow reader slows the producer (the upstream LLM stream) instead of growing memory.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { statusLine } from './status.js';

/**
 * How long sends may run back to back before the event loop gets a turn. A producer whose source is already
 * buffered (an upstream that outran a reader who then caught up) finds every await resolved at once, as
 * microtasks: one stream relaying 8 MB that way held the loop, and every other client, for 150–330 ms.
 */
const HOLD_MS = 4;

export class SseStream {
  readonly #res: HttpResponse;
  readonly requestId: string;
  readonly #headers: Record<string, string>;
  readonly #isAborted: () => boolean;
  readonly #isDraining: () => boolean;
  #started = false;
  #ended = false;
  #drain: (() => void) | undefined;
  /** A send ran since the event loop's last turn (a setImmediate marks the turn), and since when. */
  #holding = false;
  #holdingSince = 0;
  /** Set when interrupt() ended the stream. */
  interrupted = false;
  /** The status of an error the producer reported in-band (the log and metrics show it, not the 200 sent). */
  failedStatus: number | undefined;
  /**
   * Sees every event the producer sends, also once the reader has gone (idempotency records streams to
   * replay them): a chat turn is stored before its last two events, and a reader that leaves then must
   * find the whole reply on retry, not run the turn a second time.
   */
  tap: ((data: string) => void) | undefined;
  /** An event the producer keeps back to send later with more in it (chat's last chunk): interrupt() sends it first, as it is. */
  heldBack: string | undefined;

  constructor(res: HttpResponse, requestId: string, headers: Record<string, string>, isAborted: () => boolean, isDraining: () => boolean) {
    this.#res = res;
    this.requestId = requestId;
    this.#headers = headers;
    this.#isAborted = isAborted;
    this.#isDraining = isDraining;
    res.onWritable(() => {
      const d = this.#drain;
      this.#drain = undefined;
      d?.();
      return true;
    });
  }

  get closed(): boolean {
    return this.#ended || this.#isAborted();
  }

  /**
   * Write one `data:` event; resolves once the socket has room for more, and after a turn of the event loop
   * when sends have held it for HOLD_MS.
   */
  async send(data: string): Promise<void> {
    this.tap?.(data);
    if (this.closed) return;
    let ok = true;
    this.#res.cork(() => {
      this.#writeHead();
      ok = this.#res.write(`data: ${data}\n\n`);
    });
    if (!ok && !this.closed) {
      await new Promise<void>((resolve) => {
        this.#drain = resolve;
        // An abort never fires onWritable; poll the flag cheaply so the producer is released.
        const timer = setInterval(() => {
          if (this.closed) {
            clearInterval(timer);
            this.#drain = undefined;
            resolve();
          }
        }, 50);
        const done = this.#drain;
        this.#drain = () => {
          clearInterval(timer);
          done();
        };
      });
    } else {
      await this.#letLoopTurn();
    }
  }

  #letLoopTurn(): Promise<void> | undefined {
    const now = performance.now();
    if (!this.#holding) {
      this.#holding = true;
      this.#holdingSince = now;
      setImmediate(() => { this.#holding = false; });
      return undefined;
    }
    // The marker set first runs first: the next send starts a new hold.
    return now - this.#holdingSince < HOLD_MS ? undefined : new Promise<void>((resolve) => setImmediate(resolve));
  }

  end(): void {
    if (this.closed) return;
    this.#ended = true;
    this.#res.cork(() => {
      this.#writeHead();
      this.#res.end();
    });
  }

  /**
   * End the stream from outside its producer (the server stops): the event held back if any, an error
   * event, [DONE], and the end, so the client reads a failure rather than a cut. Not tapped: the reply was
   * not complete. The producer sees `closed` at its next send and stops.
   */
  interrupt(errorData: string): void {
    if (this.closed) return;
    this.interrupted = true;
    this.#ended = true;
    const held = this.heldBack === undefined ? '' : `data: ${this.heldBack}\n\n`;
    this.#res.cork(() => {
      this.#writeHead();
      this.#res.write(`${held}data: ${errorData}\n\ndata: [DONE]\n\n`);
      this.#res.end();
    });
  }

  #writeHead(): void {
    if (this.#started) return;
    this.#started = true;
    this.#res.writeStatus(statusLine(200));
    this.#res.writeHeader('content-type', 'text/event-stream; charset=utf-8');
    this.#res.writeHeader('cache-control', 'no-cache');
    this.#res.writeHeader('x-request-id', this.requestId);
    for (const [k, v] of Object.entries(this.#headers)) this.#res.writeHeader(k, v);
    // As every reply of a draining server does: the client closes the connection after this stream
    // instead of sending another request on it. (uWS 3.0.6's end(…, true) after a streamed body writes its
    // own Connection header into the body, so the server leaves the closing to the client and closeAll.)
    if (this.#isDraining()) this.#res.writeHeader('connection', 'close');
  }
}
