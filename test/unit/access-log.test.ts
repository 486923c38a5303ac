/**
 * The access line (src/http/access-log.ts) is built by hand for speed: it must be, to the byte, the line
 * pino's logger.info(entry, 'request') writes, whatever the entry holds and whoever's child the logger is.
 */
import pino from 'pino';
import type { DestinationStream } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accessLogger } from '../../src/http/access-log.js';
import type { RequestLogEntry } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';

function capture(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const entries: RequestLogEntry[] = [
  { request_id: 'req_0123456789abcdef01234567', key_id: 'env_6ab9f1eb8f7d', method: 'POST', route: '/v2/emotions/analysis', status: 200, latency_ms: 2.201, analysed_tokens: 12 },
  { request_id: 'req_1', key_id: undefined, method: 'GET', route: 'unmatched', status: 401, latency_ms: 0.05, analysed_tokens: 0 },
  { request_id: 'req_2', key_id: 'k"ey\\\n\u0001é', method: 'OTHER', route: '/v2/emotions/{id}/analysis', status: 503, latency_ms: 1e21, analysed_tokens: 3, shed: 'in_flight' },
  { request_id: 'req_3', key_id: 'k', method: 'POST', route: '/v1/chat/completions', status: 499, latency_ms: Number.NaN, analysed_tokens: Infinity },
];

describe('access log line', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-27T14:45:46.971Z'));
  });
  afterEach(() => vi.useRealTimers());

  it("is pino's own line for every entry, on Sentio's logger and on a child with bindings", () => {
    for (const make of [(d: DestinationStream) => createLogger('info', d), (d: DestinationStream) => createLogger('info', d).child({ worker: 3 })]) {
      const ours = capture();
      const theirs = capture();
      const write = accessLogger(make(ours));
      const reference = make(theirs);
      for (const e of entries) {
        write(e);
        reference.info(e, 'request');
      }
      expect(ours.lines).toEqual(theirs.lines);
      expect(ours.lines).toHaveLength(entries.length);
      for (const line of ours.lines) expect((JSON.parse(line) as { msg: string }).msg).toBe('request');
    }
    const line = capture();
    accessLogger(createLogger('info', line).child({ worker: 3 }))(entries[0]!);
    expect(JSON.parse(line.lines[0]!)).toMatchObject({ level: 30, time: '2026-11-27T14:45:46.971Z', service: 'sentio', worker: 3, status: 200 });
  });

  it('writes nothing above info, and follows a level changed later', () => {
    const out = capture();
    const logger = createLogger('warn', out);
    const write = accessLogger(logger);
    write(entries[0]!);
    expect(out.lines).toEqual([]);
    logger.level = 'info';
    write(entries[0]!);
    expect(out.lines).toHaveLength(1);
  });

  it('leaves a logger with a mixin to pino', () => {
    const ours = capture();
    const theirs = capture();
    const make = (d: DestinationStream) => pino({ mixin: () => ({ extra: 1 }) }, d);
    accessLogger(make(ours))(entries[0]!);
    make(theirs).info(entries[0]!, 'request');
    expect(ours.lines).toEqual(theirs.lines);
    expect(ours.lines[0]).toContain('"extra":1');
  });
});
