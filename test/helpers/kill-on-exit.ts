/** Take a child process down with this one, so that a run failing part-way (a test, a bench) leaves nothing running. */
import type { ChildProcess } from 'node:child_process';

export function killOnExit(child: ChildProcess): void {
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
}
