/**
 * Entry of the text-reading thread (text-reader.ts): reads chat messages' words (crisis rules, the learned
 * crisis signal, cues) off the event loop. Pure: texts in, readings out.
 */
import { parentPort } from 'node:worker_threads';
import { readText, warmUpReading } from './conversation-mode.js';
import type { ReadRequest, ReadResponse } from './text-reader.js';

warmUpReading();
const port = parentPort!;
port.postMessage('ready');
port.on('message', ({ id, texts }: ReadRequest) => {
  let reply: ReadResponse;
  try {
    reply = { id, readings: texts.map((t) => readText(t)) };
  } catch (err) {
    reply = { id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
