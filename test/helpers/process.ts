/** Run the built server (dist/src/main.js) as a child process, as `npm start` does. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { recordServerLog } from './log-audit.js';
import { redisTestEnv } from './redis-env.js';
import { killOnExit } from './kill-on-exit.js';

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  base: string;
  output: string[];
  exited: Promise<number | null>;
}

export async function startServerProcess(
  env: Record<string, string>,
  opts: { cwd?: string; nodeArgs?: string[]; /** Called at once, before the server is up. */ onSpawn?: (child: ChildProcess) => void } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), path.resolve('dist/src/main.js')], {
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    env: { PATH: process.env['PATH'] ?? '', SENTIO_PORT: '0', SENTIO_EXECUTION_PROVIDER: 'cpu', ...redisTestEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(child); // a test that fails part-way leaves no server running
  opts.onSpawn?.(child);
  const output: string[] = [];
  // 'close', not 'exit': the output is complete only once the pipes have closed.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running behind a failed test
      reject(new Error(`server did not start:\n${output.join('\n')}`));
    }, 60_000);
    // A line may straddle two reads of the pipe.
    const partial = { stdout: '', stderr: '' };
    const onData = (from: 'stdout' | 'stderr') => (buf: Buffer) => {
      const lines = (partial[from] + buf.toString()).split('\n');
      partial[from] = lines.pop()!;
      for (const line of lines) {
        if (!line) continue;
        output.push(line);
        recordServerLog(line);
        if (line.includes('"sentio listening"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { port: number }).port);
        }
      }
    };
    child.stdout!.on('data', onData('stdout'));
    child.stderr!.on('data', onData('stderr'));
    void exited.then((code) => reject(new Error(`server exited with ${code}:\n${output.join('\n')}`)));
  });
  return { child, port, base: `http://127.0.0.1:${port}`, output, exited };
}
