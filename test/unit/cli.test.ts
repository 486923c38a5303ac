/** The `sentio` command beside the server: `analyze` scores texts with the shipped model, and misuse says why. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const sentio = (...args: string[]) => spawnSync(process.execPath, ['bin/sentio.js', ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });

describe('sentio analyze', () => {
  it('prints one entry per text, V2 by default and V1 on request', () => {
    const v2 = sentio('analyze', 'I love you so much', 'I am terrified of the dark');
    expect(v2.status, v2.stderr).toBe(0);
    const entries = v2.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.map((e) => e['category'])).toEqual(['love', 'fear']);
    expect(Object.keys(entries[0]!)).toEqual(expect.arrayContaining(['raw', 'intensity', 'valence', 'arousal', 'complexity', 'wonderIndex', 'discoveryLevel']));
    const v1 = sentio('analyze', '--model', 'emotion-v1', 'I love you so much');
    expect(Object.keys(JSON.parse(v1.stdout) as object).sort()).toEqual(['category', 'raw', 'text']);
  });

  it('misuse names what is wrong', () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['analyze'], 2, /^sentio: no TEXT to analyse\nusage:/],
      [['analyze', '--model', 'nope', 'x'], 2, /^sentio: unknown --model nope/],
      [['analyze', '--params', '{bad', 'x'], 1, /^sentio: --params is not JSON/],
      [['analyze', '--params', '{"sensitivity":9}', 'x'], 1, /^sentio: --params: sensitivity: /],
      [['analyze', '--bogus', 'x'], 2, /^sentio: Unknown option '--bogus'\nusage:\n  sentio analyze/],
      [['keys', 'list', '--bogus'], 2, /^sentio: Unknown option '--bogus'\nusage: sentio keys/],
    ];
    for (const [args, status, message] of cases) {
      const r = sentio(...args);
      expect(r.status, args.join(' ')).toBe(status);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });
});
