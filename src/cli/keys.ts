/** `sentio keys create|list|revoke|rotate`: manage the hashed key file (atomic writes, mode 0600). */
import { parseArgs } from 'node:util';
import { generateKey, keyFilePath, newKeyId, readKeyFile, withKeyFileLock, writeKeyFileAtomic } from '../auth/key-file.js';
import type { KeyRecord } from '../auth/key-file.js';

export const KEYS_USAGE = `usage: sentio keys <command> [--file PATH]   (PATH defaults to $SENTIO_API_KEYS_FILE)
  create --name NAME [--kind live|test] [--rate-limit RPM]   print a new key (shown once)
  list                                                     list keys (never the keys themselves)
  revoke ID                                                revoke a key; running servers refuse it within a second
  rotate ID                                                new key with the same name and limits; the old one is revoked`;

/** Results go to `out` (one JSON line each), usage to `err`; misuse of a known command throws its reason. */
export function keysCommand(argv: string[], out: (s: string) => void = console.log, err: (s: string) => void = console.error): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      file: { type: 'string' },
      name: { type: 'string' },
      kind: { type: 'string', default: 'live' },
      'rate-limit': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out(KEYS_USAGE);
    return 0;
  }
  const [command, id] = positionals;
  if (!command || !['create', 'list', 'revoke', 'rotate'].includes(command)) {
    err(command ? `unknown command '${command}'\n${KEYS_USAGE}` : KEYS_USAGE);
    return 2;
  }
  const given = values.file ?? process.env['SENTIO_API_KEYS_FILE'];
  if (!given) throw new Error('no key file: pass --file PATH or set SENTIO_API_KEYS_FILE');
  const file = keyFilePath(given);
  const now = new Date().toISOString();
  switch (command) {
    case 'create': {
      if (!values.name) throw new Error('create needs --name');
      if (values.kind !== 'live' && values.kind !== 'test') throw new Error('--kind must be live or test');
      const limit = values['rate-limit'];
      // Digits only, as config.ts reads numbers: Number() takes "0x10", "1e2" and " 7 ".
      const rpm = limit === undefined ? undefined : /^[1-9][0-9]*$/.test(limit) ? Number(limit) : NaN;
      if (rpm !== undefined && !Number.isSafeInteger(rpm)) throw new Error('--rate-limit must be a positive integer (digits only, at most 2^53 - 1)');
      const kind = values.kind;
      const name = values.name;
      const created = withKeyFileLock(file, () => {
        const data = readKeyFile(file);
        const g = generateKey(kind);
        const rec: KeyRecord = { id: newKeyId(), name, kind, hash: g.hash, hint: g.hint, created_at: now, revoked: false, ...(rpm ? { rate_limit_rpm: rpm } : {}) };
        data.keys.push(rec);
        writeKeyFileAtomic(file, data);
        return { rec, key: g.key };
      });
      out(JSON.stringify({ id: created.rec.id, name: created.rec.name, kind: created.rec.kind, key: created.key }));
      return 0;
    }
    case 'list': {
      for (const k of readKeyFile(file, true).keys) { // a mistyped path is not an empty list
        out(JSON.stringify({ id: k.id, name: k.name, kind: k.kind, hint: k.hint, created_at: k.created_at, rate_limit_rpm: k.rate_limit_rpm ?? null, revoked: k.revoked }));
      }
      return 0;
    }
    case 'revoke':
    case 'rotate': {
      if (!id) throw new Error(`${command} needs a key id (see 'sentio keys list')`);
      const result = withKeyFileLock(file, () => {
        const data = readKeyFile(file);
        const rec = data.keys.find((k) => k.id === id);
        if (!rec) throw new Error(`no key with id ${id}`);
        // A revoked key stays revoked: rotating it would issue a live key in its name.
        if (rec.revoked && command === 'rotate') throw new Error(`key ${id} is revoked; create a new key instead`);
        if (rec.revoked) return { revoked: id, already_revoked_at: rec.revoked_at ?? null };
        rec.revoked = true;
        rec.revoked_at = now;
        let printed: Record<string, unknown> = { revoked: id };
        if (command === 'rotate') {
          const g = generateKey(rec.kind);
          const next: KeyRecord = { ...rec, id: newKeyId(), hash: g.hash, hint: g.hint, created_at: now, revoked: false };
          delete next.revoked_at;
          data.keys.push(next);
          printed = { revoked: id, id: next.id, name: next.name, kind: next.kind, key: g.key };
        }
        writeKeyFileAtomic(file, data);
        return printed;
      });
      out(JSON.stringify(result));
      return 0;
    }
    default:
      return 2; // unreachable: the command was checked above
  }
}
