/**
 * Start a server as a child process, logging to a file (so its request log costs the load generator
 * nothing), and wait for its "listening" line; sample its RSS.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Child {
  child: ChildProcess;
  port: number;
  logFile: string;
  /** Resident memory now, in MB (Linux /proc). */
  rssMb(): number;
  stop(): Promise<void>;
}

export async function startChild(script: string, args: string[], env: Record<string, string>, marker: string): Promise<Child> {
  const logFile = path.join(mkdtempSync(path.join(tmpdir(), 'sentio-bench-')), 'server.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const deadline = Date.now() + 120_000;
  let port: number | undefined;
  while (port === undefined) {
    if (exited !== undefined) throw new Error(`${script} exited with ${exited}:\n${readFileSync(logFile, 'utf8').slice(0, 4000)}`);
    if (Date.now() > deadline) throw new Error(`${script} did not start:\n${readFileSync(logFile, 'utf8').slice(0, 4000)}`);
    const line = readFileSync(logFile, 'utf8').split('\n').find((l) => l.includes(marker));
    if (line) port = (JSON.parse(line) as { port: number }).port;
    else await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    port,
    logFile,
    rssMb() {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : NaN;
    },
    stop: () => new Promise<void>((resolve) => {
      if (exited !== undefined) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
