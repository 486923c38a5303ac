/**
 * The access line written for every request. It is the line `logger.info(entry, 'request')` writes, built
 * here from the entry's few known fields instead of by pino's generic serialiser: under the load bench's
 * single messages (about 7,000 lines a second on two cores) that serialiser's key walk, per-field type
 * switch and string joins cost the main thread 2–4 µs a request, 1–2% of the throughput
 * (`npm run bench:ab`, docs/deployment.md#logs).
 */
import pino from 'pino';
import type { Logger } from 'pino';
import type { RequestLogEntry } from './server.js';

const { lsCacheSym, timeSym, chindingsSym, endSym, streamSym, needsMetadataGsym, mixinSym, hooksSym, formattersSym } = pino.symbols;

/** One of pino's internal fields, by its exported symbol. */
function internal<T>(logger: Logger, sym: symbol): T {
  return (logger as unknown as Record<symbol, unknown>)[sym] as T;
}

/** As JSON.stringify writes a number, and pino a non-finite one (null). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

export function accessLogger(logger: Logger): (entry: RequestLogEntry) => void {
  const stream = internal<{ write(line: string): unknown } & Record<symbol, unknown>>(logger, streamSym);
  // A logger whose lines something else shapes (a mixin, hooks, a log formatter, a message prefix; Sentio's
  // own has none), or a multistream destination, which reads each line's level from pino's own call: pino
  // writes those.
  const hooks = internal<{ logMethod?: unknown; streamWrite?: unknown }>(logger, hooksSym);
  if (
    stream[needsMetadataGsym] || internal(logger, mixinSym) || logger.msgPrefix || hooks.logMethod || hooks.streamWrite ||
    internal<{ log?: unknown }>(logger, formattersSym).log
  ) {
    return (entry) => logger.info(entry, 'request');
  }
  const head = internal<Record<number, string>>(logger, lsCacheSym)[pino.levels.values['info']!]!;
  const time = internal<() => string>(logger, timeSym);
  const end = `,"msg":"request"${internal<string>(logger, endSym)}`;
  const str = JSON.stringify;
  return (e) => {
    if (!logger.isLevelEnabled('info')) return;
    stream.write(
      `${head}${time()}${internal<string>(logger, chindingsSym)},"request_id":${str(e.request_id)}` +
        (e.key_id === undefined ? '' : `,"key_id":${str(e.key_id)}`) +
        `,"method":${str(e.method)},"route":${str(e.route)},"status":${num(e.status)},"latency_ms":${num(e.latency_ms)}` +
        `,"analysed_tokens":${num(e.analysed_tokens)}` +
        (e.shed === undefined ? '' : `,"shed":${str(e.shed)}`) +
        end,
    );
  };
}
