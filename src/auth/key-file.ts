/**
 * Production API keys: a JSON file of SHA-256 digests (SENTIO_API_KEYS_FILE), never keys in clear.
 * Keys carry at least 192 bits of randomness, so a fast digest is enough: there is nothing to brute-force.
 * The server re-reads the file when it changes (stat polling every 250 ms, which survives the atomic
 * rename the CLI does) and on SIGHUP, so a revoked key is refused within a second without a restart.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fchownSync, fsyncSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Logger } from 'pino';
import { paramPath } from '../errors.js';
import { sha256Hex } from './api-keys.js';
import type { ApiKeyInfo, KeyVerifier } from './api-keys.js';

export const KeyRecord = z.object({
  id: z.string().regex(/^key_[A-Za-z0-9]+$/),
  name: z.string().min(1).max(200),
  kind: z.enum(['live', 'test']),
  /** Hex SHA-256 of the key. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The first characters of the key, to recognise it in a list. */
  hint: z.string(),
  created_at: z.iso.datetime(),
  rate_limit_rpm: z.number().int().positive().optional(),
  revoked: z.boolean(),
  revoked_at: z.iso.datetime().optional(),
});
export type KeyRecord = z.infer<typeof KeyRecord>;

export const KeyFile = z.object({ version: z.literal(1), keys: z.array(KeyRecord) });
export type KeyFile = z.infer<typeof KeyFile>;

const KEY_RANDOM_BYTES = 24; // 192 bits

export function generateKey(kind: 'live' | 'test'): { key: string; hash: string; hint: string } {
  const key = `sentio_${kind}_${randomBytes(KEY_RANDOM_BYTES).toString('base64url')}`;
  return { key, hash: sha256Hex(key), hint: `${key.slice(0, 16)}…` };
}

export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/** Reads and checks a key file. A missing one is empty (the CLI creating it) unless `mustExist` (the server). */
export function readKeyFile(file: string, mustExist = false): KeyFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (mustExist) throw new Error(`${file} does not exist; create it with \`npx sentio keys create --name <name> --file ${file}\``);
    return { version: 1, keys: [] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not V8's message: it quotes the text, and a file holding a plaintext key would show it in the log.
    throw new Error(`${file}: not a Sentio key file (not JSON; it is the file \`sentio keys\` writes, with digests, not keys)`);
  }
  const parsed = KeyFile.safeParse(json);
  if (!parsed.success) throw new Error(`${file}: not a Sentio key file (${issueOf(parsed.error)})`);
  return parsed.data;
}

/** Where a key file breaks its schema, and how: "keys[2].hash: Invalid string: ...". */
function issueOf(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const where = paramPath(issue.path);
  return where ? `${where}: ${issue.message}` : issue.message;
}

/**
 * The key file itself where `file` is a symbolic link: the CLI's rename replaced the link with a new file
 * and left the one the server reads unchanged, so a revocation reported done never applied (an audit,
 * 2026-11-28). A path that does not exist yet is used as it is.
 */
export function keyFilePath(file: string): string {
  try {
    return realpathSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return file;
    throw err;
  }
}

/**
 * Write via a temporary file in the same directory, fsync, then rename: readers never see half a file. A
 * file that exists keeps its owner, group and mode. Replaced by one owned by whoever ran the CLI (root,
 * mode 0600), it could no longer be read by a server running as another user, which then kept its old
 * keys: a revocation reported done that never applied. What cannot keep them is not written.
 */
export function writeKeyFileAtomic(file: string, data: KeyFile): void {
  // What the server would refuse to read is not written: a name past 200 characters, a limit past 2^53.
  const checked = KeyFile.safeParse(data);
  if (!checked.success) throw new Error(`not written: the key file would not be valid (${issueOf(checked.error)})`);
  let existing: Stats | undefined;
  try {
    existing = statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    try {
      if (existing) {
        fchmodSync(fd, existing.mode & 0o7777);
        if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.()) fchownSync(fd, existing.uid, existing.gid);
      }
      // writeFileSync on a descriptor writes it all or throws: writeSync's short write (a full disk, a
      // file-size limit) was fsynced and renamed into place as a cut-off file, reported as done.
      writeFileSync(fd, `${JSON.stringify(data, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    if ((err as NodeJS.ErrnoException).code === 'EPERM' && existing) {
      throw new Error(`${file} belongs to uid ${existing.uid}, gid ${existing.gid}, and this user cannot write a file owned by them; run as that user (or root) so the server can still read it`, { cause: err });
    }
    throw err;
  }
}

/** Serialises CLI writers: an O_EXCL lock file beside the key file. */
export function withKeyFileLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`;
  let fd: number | undefined;
  for (let i = 0; i < 50 && fd === undefined; i++) {
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new Error(`cannot write ${file}: its folder ${path.dirname(file)} does not exist`);
      if (code !== 'EEXIST') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  if (fd === undefined) throw new Error(`${lock} is held by another process; remove it if no other 'sentio keys' is running`);
  try {
    return fn();
  } finally {
    closeSync(fd);
    unlinkSync(lock);
  }
}

export class FileKeyVerifier implements KeyVerifier {
  readonly #file: string;
  readonly #logger: Logger | undefined;
  #byDigest = new Map<string, ApiKeyInfo>();
  #watching = false;
  /** The last reload failed: the previous keys are in force. */
  #failed = false;

  constructor(file: string, logger?: Logger) {
    this.#file = file;
    this.#logger = logger;
    this.reload(true);
  }

  get size(): number {
    return this.#byDigest.size;
  }

  /**
   * Re-read the file. At start a bad or missing file is fatal; later the previous keys stay in force (a
   * file moved away for a moment must not lock every tenant out: keys are revoked with `sentio keys`).
   */
  reload(strict = false): void {
    try {
      // One read: a file checked and then read could be moved away in between and read as empty.
      const data = readKeyFile(this.#file, true);
      const next = new Map<string, ApiKeyInfo>();
      for (const k of data.keys) {
        if (!k.revoked) next.set(k.hash, { id: k.id, name: k.name, rateLimitRpm: k.rate_limit_rpm });
      }
      this.#byDigest = next;
      this.#failed = false;
      if (next.size === 0 && !strict) this.#logger?.warn({ keys: 0, file: this.#file }, 'API key file holds no active key: its keys are refused 401');
      else this.#logger?.info({ keys: next.size, file: this.#file }, 'API keys loaded');
    } catch (err) {
      if (strict) throw new Error(`SENTIO_API_KEYS_FILE: ${(err as Error).message}`, { cause: err });
      this.#failed = true;
      // The reason, not a stack: a file mid-edit or moved away is an operator's matter, not a fault in Sentio.
      this.#logger?.error({ reason: (err as Error).message, file: this.#file }, 'API key file unreadable; keeping the previous keys');
    }
  }

  watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    watchFile(this.#file, { interval: 250, persistent: false }, (cur, prev) => {
      // After a failed read, any event: a file moved back in place has the stat of the last good read,
      // which is what Node reports as `prev`, so the comparison alone would never reload it.
      if (this.#failed || cur.mtimeMs !== prev.mtimeMs || cur.ctimeMs !== prev.ctimeMs || cur.ino !== prev.ino || cur.size !== prev.size) this.reload();
    });
  }

  close(): void {
    if (this.#watching) unwatchFile(this.#file);
    this.#watching = false;
  }

  verify(presentedKey: string): ApiKeyInfo | undefined {
    return this.#byDigest.get(sha256Hex(presentedKey));
  }
}
