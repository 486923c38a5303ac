/**
 * Request bodies: chunks are copied as they arrive (uWS neuters them after the callback), the byte cap is
 * enforced while reading so an oversized body is never buffered whole, and the bytes are joined once.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { AppError } from '../errors.js';
import type { CancelSignal } from '../engine/cancel.js';

export interface BodyReadOptions {
  limit: number;
  /** Close the connection if the whole body has not arrived within this many milliseconds. */
  timeoutMs: number;
  /** Called once if the body does not complete in time; the caller closes the connection. */
  onTimeout: () => void;
  /** Fires when the client goes away: uWS then sends no more data, so the read must end here. */
  signal: CancelSignal;
  /**
   * Fires when the request is refused before its body has arrived (rate limit): the rest is not kept, and
   * the read rejects with this signal's reason.
   */
  stop?: CancelSignal;
}

/** The body did not arrive: the client left, or took longer than the timeout. Nobody is left to answer. */
export class BodyNotReceivedError extends Error {
  override name = 'BodyNotReceivedError';
}

/**
 * Resolves with the body, or rejects with AppError('body_too_large') as soon as the cap is passed. Settles
 * in every case, so that the request's in-flight slot is always given back: a client that leaves mid-body
 * or stalls past the timeout rejects it with BodyNotReceivedError.
 */
export function readBody(res: HttpResponse, opts: BodyReadOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      opts.stop?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      if (settled) return;
      settle();
      // Refused: the caller answers with its own error and only reads this one to drop it.
      if (opts.stop?.aborted) reject(opts.stop.reason);
      else reject(new BodyNotReceivedError('the client closed the connection before its body arrived'));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settle();
      opts.onTimeout();
      reject(new BodyNotReceivedError(`the body did not arrive within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    timer.unref();
    if (opts.signal.aborted || opts.stop?.aborted) {
      onAbort();
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });
    opts.stop?.addEventListener('abort', onAbort, { once: true });
    res.onData((chunk, isLast) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > opts.limit) {
        settle();
        reject(new AppError('body_too_large', `request body exceeds ${opts.limit} bytes`));
        return;
      }
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk))); // copies
      if (isLast) {
        settle();
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
      }
    });
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting of arrays and objects a body may have: well above any request's own (the free-form JSON
 * chat passes on is held to 64 levels below its field, src/api/chat/protocol.ts). JSON.parse takes any
 * depth, but a 1 MiB body of brackets took it 120 ms against 2.5 for a flat one, all of it on the event loop.
 */
const MAX_BODY_DEPTH = 128;

/** Whether the JSON text nests arrays and objects deeper than `max`; brackets inside strings are skipped. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the next one not escaped by an odd run of backslashes.
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return false; // unterminated: JSON.parse reports it
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Decode and parse a JSON object body; arrays, scalars, bad UTF-8 and bad JSON are 400s. */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new AppError('invalid_encoding', 'request body is not valid UTF-8');
  }
  if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
    throw new AppError('invalid_json', `request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('invalid_type', 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
