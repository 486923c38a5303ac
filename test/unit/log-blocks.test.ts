/**
 * The log destination (src/log.ts): lines leave in blocks, in order, none lost: when a block fills, when
 * FLUSH_MS has passed since the first line of a block, on logger.flush(), and at process exit.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockDestination, createLogger } from '../../src/log.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

function fileDestination(): { file: string; dest: BlockDestination; lines: () => string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sentio-log-'));
  dirs.push(dir);
  const file = path.join(dir, 'out.log');
  const dest = new BlockDestination(pino.destination({ dest: file, sync: true }));
  return { file, dest, lines: () => readFileSync(file, 'utf8').split('\n').filter(Boolean) };
}

describe('log blocks', () => {
  it('holds lines until a block fills, then writes them together and in order', () => {
    const { dest, lines } = fileDestination();
    const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(180) })}\n`;
    let i = 0;
    for (; i < 10; i++) dest.write(line(i));
    expect(lines()).toEqual([]); // under a block, nothing written yet
    for (; i < 200; i++) dest.write(line(i));
    const written = lines().map((l) => (JSON.parse(l) as { i: number }).i);
    expect(written.length).toBeGreaterThan(50); // at least one full block (16,000 characters) went out
    expect(written.length).toBeLessThan(200);
    expect(written).toEqual(written.map((_, k) => k));
    dest.flushSync();
    expect(lines().map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 200 }, (_, k) => k));
  });

  it('writes a lone line within the flush interval, and flush(cb) writes at once', async () => {
    const { dest, lines } = fileDestination();
    dest.write('{"a":1}\n');
    const deadline = Date.now() + 2_000;
    while (lines().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(lines()).toEqual(['{"a":1}']);
    dest.write('{"b":2}\n');
    await new Promise<void>((resolve, reject) => dest.flush((err) => (err ? reject(err) : resolve())));
    expect(lines()).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('a process that logs and exits at once loses no line', () => {
    // The built module (npm test builds first), as the process tests run dist/src/main.js.
    const logModule = path.join(import.meta.dirname, '..', '..', 'dist', 'src', 'log.js');
    const script = `
      const { createLogger } = await import(${JSON.stringify(logModule)});
      const log = createLogger('info');
      for (let i = 0; i < 30; i++) log.info({ i }, 'line');
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const seen = r.stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { i: number }).i);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, k) => k));
  });

  it('a logger given its own destination writes there directly', () => {
    const out: string[] = [];
    const log = createLogger('info', { write: (s: string) => out.push(s) });
    log.info('now');
    expect(out).toHaveLength(1);
  });
});
