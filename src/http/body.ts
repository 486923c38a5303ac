/**
 * Request bodies: chunks are copied as they arrive (uWS neuters them after the callback), the byte cap is
 * enforced while reading so an oversized body is never buffered whole, and the bytes are joined once.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { AppError, tooManyMessages } from '../errors.js';
import type { CancelSignal } from '../engine/cancel.js';
import { MAX_JSON_DEPTH, jsonOverLimits, topLevelArrayLength } from '../json-limits.js';

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
 * Decode and parse a JSON object body; arrays, scalars, bad UTF-8 and bad JSON are 400s, and so is a body
 * holding more than `maxNodes` arrays, objects and members (src/json-limits.ts), unless its `messages`
 * array is longer than `maxMessages`: that is the 413 the route would have given once the body parsed.
 */
export function parseJsonObject(body: Buffer, maxNodes = Infinity, maxMessages = Infinity): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new AppError('invalid_encoding', 'request body is not valid UTF-8');
  }
  // Well above any request's own: the free-form JSON chat passes on is held to 64 levels below its field
  // (src/api/chat/protocol.ts).
  const over = jsonOverLimits(text, maxNodes);
  if (over === 'depth') throw new AppError('invalid_json', `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  if (over === 'nodes') {
    const messages = topLevelArrayLength(text, 'messages') ?? 0;
    if (messages > maxMessages) {
      throw tooManyMessages(maxMessages, messages);
    }
    throw new AppError('invalid_json', `request body holds more than ${maxNodes} arrays, objects and members`);
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
