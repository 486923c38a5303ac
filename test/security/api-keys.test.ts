import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCommand } from '../../src/cli/keys.js';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(path.join(tmpdir(), 'sentio-keys-'));
const file = path.join(dir, 'keys.json');

function cli(...args: string[]): Record<string, unknown>[] {
  const out: string[] = [];
  const code = keysCommand([...args, '--file', file], (l) => out.push(l));
  expect(code).toBe(0);
  return out.map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function status(s: TestServer, key: string): Promise<number> {
  return (await fetch(`${s.base}/v2/emotions/analysis`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{"messages":[{"content":{"text":"hi"}}]}' })).status;
}

let s: TestServer;
let live: { id: string; key: string };
let test: { id: string; key: string };

beforeAll(async () => {
  live = cli('create', '--name', 'prod backend') [0] as { id: string; key: string };
  test = cli('create', '--name', 'ci', '--kind', 'test', '--rate-limit', '3')[0] as { id: string; key: string };
  s = await startTestServer({ SENTIO_API_KEYS: '', SENTIO_API_KEYS_FILE: file });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('hashed key file and the keys CLI', () => {
  it('creates keys in the decided forms, stores only digests, mode 0600', () => {
    expect(live.key).toMatch(/^sentio_live_[A-Za-z0-9_-]{32}$/);
    expect(test.key).toMatch(/^sentio_test_[A-Za-z0-9_-]{32}$/);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(live.key);
    expect(text).not.toContain(test.key.slice(12));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const data = JSON.parse(text);
    expect(data.keys[0]).toMatchObject({ id: live.id, name: 'prod backend', kind: 'live', revoked: false });
    expect(data.keys[0].hash).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof data.keys[0].created_at).toBe('string');
    expect(data.keys[1].rate_limit_rpm).toBe(3);
    const listed = cli('list');
    expect(listed.map((k) => k['id'])).toEqual([live.id, test.id]);
    expect(JSON.stringify(listed)).not.toContain(live.key);
  });

  it('the server accepts file keys (both headers) and applies the per-key rate limit', async () => {
    expect(await status(s, live.key)).toBe(200);
    const r = await fetch(`${s.base}/v1/emotions/analyse`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${test.key}` }, body: '{"messages":[{"content":{"text":"hi"}}]}' });
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-limit')).toBe('3');
    expect(await status(s, `${live.key}x`)).toBe(401);
  });

  it('a revoked key is refused within one second, without a restart', async () => {
    const victim = cli('create', '--name', 'leaked')[0] as { id: string; key: string };
    const deadline = Date.now() + 1_000;
    while (Date.now() < deadline && (await status(s, victim.key)) !== 200) await new Promise((r) => setTimeout(r, 50));
    expect(await status(s, victim.key)).toBe(200);
    cli('revoke', victim.id);
    const revokedAt = Date.now();
    let code = 200;
    while (Date.now() - revokedAt < 1_000 && (code = await status(s, victim.key)) === 200) await new Promise((r) => setTimeout(r, 25));
    expect(code).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    expect(await status(s, live.key)).toBe(200);
  });

  it('rotate issues a new key with the same name and limits and revokes the old one', async () => {
    const out = cli('rotate', test.id)[0] as { revoked: string; id: string; key: string; name: string };
    expect(out.revoked).toBe(test.id);
    expect(out.name).toBe('ci');
    const deadline = Date.now() + 1_000;
    while (Date.now() < deadline && (await status(s, test.key)) !== 401) await new Promise((r) => setTimeout(r, 25));
    expect(await status(s, test.key)).toBe(401);
    expect(await status(s, out.key)).toBe(200);
    const rec = JSON.parse(readFileSync(file, 'utf8')).keys.find((k: { id: string }) => k.id === out.id);
    expect(rec.rate_limit_rpm).toBe(3);
  });

  it('a revoked key cannot be rotated back to life; revoking it again changes nothing', () => {
    const rec = () => JSON.parse(readFileSync(file, 'utf8')).keys.find((k: { id: string }) => k.id === test.id);
    const before = rec().revoked_at; // revoked by the rotation above
    expect(before).toBeTruthy();
    expect(() => keysCommand(['rotate', test.id, '--file', file], () => undefined)).toThrow(/is revoked; create a new key/);
    expect(cli('revoke', test.id)).toEqual([{ revoked: test.id, already_revoked_at: before }]);
    expect(rec().revoked_at).toBe(before);
  });

  it('misuse says what is wrong', () => {
    const err: string[] = [];
    const saved = process.env['SENTIO_API_KEYS_FILE'];
    delete process.env['SENTIO_API_KEYS_FILE'];
    try {
      expect(() => keysCommand(['create', '--name', 'x'], () => undefined, (l) => err.push(l))).toThrow(/no key file: pass --file PATH or set SENTIO_API_KEYS_FILE/);
      expect(keysCommand(['frob', '--file', file], () => undefined, (l) => err.push(l))).toBe(2);
      expect(err.join('\n')).toMatch(/^unknown command 'frob'\nusage: sentio keys/);
      const out: string[] = [];
      for (const help of ['--help', '-h']) expect(keysCommand([help], (l) => out.push(l))).toBe(0);
      expect(out.join('\n')).toMatch(/^usage: sentio keys[^]*usage: sentio keys/);
      // A mistyped path is not an empty list.
      expect(() => keysCommand(['list', '--file', path.join(dir, 'no-such-file.json')], () => undefined)).toThrow(/no-such-file\.json does not exist/);
    } finally {
      if (saved !== undefined) process.env['SENTIO_API_KEYS_FILE'] = saved;
    }
  });

  // Moved back, the file had the stat of the last good read, which Node reports as the poll's previous
  // one: no reload, and the missing file had loaded as no keys, so every key got 401 until SIGHUP.
  it('a file moved away and back keeps every key working, and later changes still load', async () => {
    const until = async (want: number) => {
      const deadline = Date.now() + 2_000;
      let code = 0;
      while (Date.now() < deadline && (code = await status(s, live.key)) !== want) await new Promise((r) => setTimeout(r, 50));
      return code;
    };
    // Waits for the server's word that it saw each move (its poll runs every 250 ms), not a fixed time.
    const logged = (msg: string, after: number) => waitFor(() => s.logs.slice(after).some((l) => l.includes(`"msg":"${msg}"`)), { ms: 5_000, everyMs: 25 });
    let mark = s.logs.length;
    renameSync(file, `${file}.away`);
    expect(await logged('API key file unreadable; keeping the previous keys', mark)).toBe(true);
    expect(await status(s, live.key)).toBe(200);
    mark = s.logs.length;
    renameSync(`${file}.away`, file);
    expect(await logged('API keys loaded', mark)).toBe(true);
    expect(await status(s, live.key)).toBe(200);
    cli('revoke', live.id);
    expect(await until(401)).toBe(401);
  });

  // An audit (2026-11-28): revoking through a symbolic link replaced the link and left the file the server
  // reads as it was; a rewrite in place keeping size and mtime (cp -p) went unseen by the file watch.
  it('revoke through a symbolic link to the file applies; an in-place rewrite keeping size and mtime is seen', async () => {
    const link = path.join(dir, 'link.json');
    symlinkSync(file, link);
    const victim = cli('create', '--name', 'linked')[0] as { id: string; key: string };
    await waitFor(async () => (await status(s, victim.key)) === 200, { ms: 2_000, everyMs: 50 });
    expect(keysCommand(['revoke', victim.id, '--file', link], () => undefined)).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await waitFor(async () => (await status(s, victim.key)) === 401, { ms: 2_000, everyMs: 50 })).toBe(true);
    // The same bytes but one digest digit, written in place, the modification time put back.
    const other = cli('create', '--name', 'in place')[0] as { id: string; key: string };
    await waitFor(async () => (await status(s, other.key)) === 200, { ms: 2_000, everyMs: 50 });
    await new Promise((r) => setTimeout(r, 600)); // past the poll that saw the create
    const before = statSync(file);
    const text = readFileSync(file, 'utf8');
    const rec = (JSON.parse(text) as { keys: Array<{ id: string; hash: string }> }).keys.find((k) => k.id === other.id)!;
    const flipped = rec.hash.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    writeFileSync(file, text.replace(rec.hash, flipped));
    utimesSync(file, before.atime, before.mtime);
    expect(statSync(file).size).toBe(before.size);
    expect(await waitFor(async () => (await status(s, other.key)) === 401, { ms: 2_000, everyMs: 50 })).toBe(true);
  });

  it('create refuses what the file could not hold, and a --rate-limit that is not digits', () => {
    const before = readFileSync(file, 'utf8');
    expect(() => keysCommand(['create', '--name', 'n'.repeat(201), '--file', file], () => undefined)).toThrow(/not written: the key file would not be valid \(keys\[\d+\]\.name: /);
    for (const bad of ['1e20', '0x10', '1e2', ' 7 ', '0', '2.5', '9007199254740993']) {
      expect(() => keysCommand(['create', '--name', 'x', '--rate-limit', bad, '--file', file], () => undefined), bad).toThrow(/--rate-limit must be a positive integer/);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('SIGHUP reloads the file too', async () => {
    const k = cli('create', '--name', 'hup')[0] as { key: string };
    const loads = () => s.logs.filter((l) => l.includes('"msg":"API keys loaded"')).length;
    const seen = loads();
    // Emitted in the same turn as the write: the file poll cannot have run in between, so this load is the signal's.
    process.emit('SIGHUP', 'SIGHUP');
    expect(loads()).toBe(seen + 1);
    expect(await status(s, k.key)).toBe(200);
  });
});

describe('the keys CLI keeps the file readable by the server', () => {
  // Replaced by a root-owned 0600 file, a key file read by a server running as another user stopped loading:
  // the server kept its old keys, and a revocation the CLI reported done never applied.
  it('a file that exists keeps its owner, group and mode through create and revoke', () => {
    const f = path.join(dir, 'shared.json');
    const run = (...args: string[]) => {
      const out: string[] = [];
      expect(keysCommand([...args, '--file', f], (l) => out.push(l))).toBe(0);
      return JSON.parse(out[0] ?? '{}') as { id: string };
    };
    const first = run('create', '--name', 'a');
    chmodSync(f, 0o640);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) chownSync(f, 65534, 65534); // nobody: the server's user
    const before = statSync(f);
    run('create', '--name', 'b');
    run('revoke', first.id);
    const after = statSync(f);
    expect(after.mode & 0o7777).toBe(0o640);
    expect([after.uid, after.gid]).toEqual([before.uid, before.gid]);
    if (asRoot) expect(after.uid).toBe(65534);
  });
});

describe('a key file that cannot be used stops the start, naming the setting', () => {
  it('missing, not JSON, or not a key file', async () => {
    const bad = (name: string, text?: string) => {
      const f = path.join(dir, name);
      if (text !== undefined) writeFileSync(f, text);
      return startTestServer({ SENTIO_API_KEYS: '', SENTIO_API_KEYS_FILE: f });
    };
    await expect(bad('missing.json')).rejects.toThrow(/^SENTIO_API_KEYS_FILE: .*missing\.json does not exist; create it with `npx sentio keys create/);
    await expect(bad('garbage.json', 'garbage{')).rejects.toThrow(/^SENTIO_API_KEYS_FILE: .*garbage\.json: not a Sentio key file \(not JSON/);
    // a plaintext key put where the key file belongs is not echoed (V8's JSON error quotes short texts whole)
    const plain = await bad('plain.txt', 'dev-key-change-me').catch((e: Error) => e.message);
    expect(plain).toMatch(/plain\.txt: not a Sentio key file \(not JSON/);
    expect(plain).not.toContain('key-change');
    await expect(bad('empty.json', '')).rejects.toThrow(/^SENTIO_API_KEYS_FILE: .*empty\.json: not a Sentio key file/);
    await expect(bad('other.json', '{"version":1}')).rejects.toThrow(/^SENTIO_API_KEYS_FILE: .*other\.json: not a Sentio key file/);
    // A file with no active key started a server every request was refused by (an operator review, 2026-11-27).
    await expect(bad('none.json', '{"version":1,"keys":[]}')).rejects.toThrow(/^SENTIO_API_KEYS_FILE: .*none\.json holds no active key; create one with `npx sentio keys create/);
  });
});

// writeSync's short write (a full disk, a file-size limit) was fsynced and renamed into place: the CLI
// reported a revocation the server never read (the file no longer parsed, so it kept the old keys).
describe('key file writes', () => {
  it('a write cut short fails the command and leaves the file as it was', () => {
    const small = path.join(mkdtempSync(path.join(tmpdir(), 'sentio-keys-short-')), 'keys.json');
    const made: string[] = [];
    for (let i = 0; i < 8; i++) keysCommand(['create', '--name', `key ${i}`, '--file', small], (l) => made.push(l));
    const before = readFileSync(small, 'utf8');
    expect(before.length).toBeGreaterThan(1_100);
    const id = (JSON.parse(made[0]!) as { id: string }).id;
    const r = spawnSync('bash', ['-c', `ulimit -f 1; exec "${process.execPath}" bin/sentio.js keys revoke ${id} --file "${small}"`], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).not.toContain('revoked');
    expect(readFileSync(small, 'utf8')).toBe(before);
    rmSync(path.dirname(small), { recursive: true, force: true });
  });
});
