/**
 * Every line any test server logs during the run is also appended to one file; at the end of the run
 * (globalSetup teardown) that file is searched for secrets and message texts, which must never be
 * logged. Fails the run if one is found.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

const ENV = 'SENTIO_TEST_RUN_LOG';

/** Append server log lines to the run's log (no-op outside a vitest run). */
export function recordServerLog(line: string): void {
  const file = runLogFile();
  if (file) appendFileSync(file, `${line}\n`);
}

export function runLogFile(): string | undefined {
  return process.env[ENV];
}

/** What no log line may contain: API keys in full, credentials headers, and texts the tests send. */
export const FORBIDDEN: readonly RegExp[] = [
  /sentio_(live|test)_[A-Za-z0-9_-]{20,}/, // a whole key (the key file's hints are 16 characters)
  /sentio_test_key_/, // the plaintext test keys
  /Bearer\s/i,
  /"authorization"/i,
  /x-api-key"\s*:/i,
  /I am so happy today/,
  /my private diary entry/,
  /I want to end it all/,
  /still alive/,
];

export default function setup(_project: TestProject): () => void {
  // Projects inherit this setup; the first one creates the run's file and audits it at the end.
  if (process.env[ENV]) return () => undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'sentio-run-log-'));
  const file = path.join(dir, 'servers.log');
  appendFileSync(file, '');
  process.env[ENV] = file;
  return () => {
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    rmSync(dir, { recursive: true, force: true });
    delete process.env[ENV];
    const leaks = lines.filter((l) => FORBIDDEN.some((re) => re.test(l)));
    // test/security/audit-log.test.ts checks that its server's lines reach this file.
    if (leaks.length > 0) {
      process.exitCode = 1; // vitest reports a teardown error but would still exit 0
      throw new Error(`log audit: ${leaks.length} server log lines contain a secret or a message text, e.g.\n${leaks.slice(0, 3).join('\n')}`);
    }
    process.stdout.write(`log audit: ${lines.length} server log lines checked, no keys, credentials or message texts\n`);
  };
}
