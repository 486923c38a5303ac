/**
 * Child processes of the benches: a server started as a child process, logging to a file (so its request
 * log costs the load generator nothing), awaited until its "listening" line, with its RSS and per-thread
 * CPU sampled; a free loopback port. (A throw-away redis-server: test/helpers/redis.ts.)
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { killOnExit } from '../../test/helpers/kill-on-exit.js';

export { freePort } from '../../test/helpers/free-port.js';

/**
 * A bench stopped by a signal (timeout(1), a cancelled CI job) ends through process.exit, whose 'exit' event
 * kills its servers (killOnExit); Node's default for SIGTERM and SIGHUP ends it without that event. (Ctrl-C
 * reaches the whole process group.) Set once the bench has a child to lose.
 */
let exitsOnSignals = false;
function exitOnSignals(): void {
  if (exitsOnSignals) return;
  exitsOnSignals = true;
  for (const [signal, n] of [['SIGTERM', 15], ['SIGHUP', 1]] as const) process.once(signal, () => process.exit(128 + n));
}

export interface Child {
  child: ChildProcess;
  port: number;
  logFile: string;
  /** Resident memory now, in MB (Linux /proc). */
  rssMb(): number;
  /** The most resident memory it has had so far, in MB (VmHWM: the kernel's own high-water mark). */
  peakRssMb(): number;
  /** CPU seconds used so far by its main thread, its engine threads and all others (Linux /proc). */
  cpuSeconds(): ThreadCpu;
  stop(): Promise<void>;
}

export interface ThreadCpu {
  main: number;
  engine: number;
  other: number;
}

/** Linux reports thread CPU time in clock ticks of 1/100 s. */
const TICKS_PER_S = 100;

function threadCpu(pid: number): ThreadCpu {
  const out: ThreadCpu = { main: 0, engine: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    let name: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 on: utime, stime are 14, 15
    const s = (Number(f[11]) + Number(f[12])) / TICKS_PER_S;
    if (tid === String(pid)) out.main += s;
    else if (name === 'sentio-engine') out.engine += s; // named by native/worker.cc
    else out.other += s;
  }
  return out;
}

export async function startChild(script: string, args: string[], env: Record<string, string>, marker: string): Promise<Child> {
  const logFile = path.join(mkdtempSync(path.join(tmpdir(), 'sentio-bench-')), 'server.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  killOnExit(child);
  exitOnSignals();
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const deadline = Date.now() + 120_000;
  let port: number | undefined;
  while (port === undefined) {
    if (exited !== undefined) throw new Error(`${script} exited with ${exited}:\n${readFileSync(logFile, 'utf8').slice(0, 4000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${script} did not start:\n${readFileSync(logFile, 'utf8').slice(0, 4000)}`);
    }
    const line = readFileSync(logFile, 'utf8').split('\n').find((l) => l.includes(marker));
    if (line) port = (JSON.parse(line) as { port: number }).port;
    else await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    port,
    logFile,
    rssMb: () => statusMb(child.pid!, 'VmRSS'),
    peakRssMb: () => statusMb(child.pid!, 'VmHWM'),
    cpuSeconds: () => threadCpu(child.pid!),
    // A server that stopped cleanly leaves no log behind; one that failed keeps it (its path is in `logFile`).
    stop: () => new Promise<void>((resolve) => {
      const done = () => {
        if (exited === 0) rmSync(path.dirname(logFile), { recursive: true, force: true });
        resolve();
      };
      if (exited !== undefined) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
    }),
  };
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
