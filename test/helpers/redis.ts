/**
 * A throw-away redis-server on a free loopback port: no persistence, nothing written to disk. It can be
 * killed and started again on the same port to test losing Redis mid-run.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './free-port.js';
import { killOnExit } from './kill-on-exit.js';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL: the server vanishes without closing connections politely. */
  kill(): Promise<void>;
  /** Start again on the same port (empty: there is no persistence). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open and nothing is answered, as with a Redis that hangs. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      let child = await spawnRedis(port);
      const server: RedisServer = {
        port,
        url: `redis://127.0.0.1:${port}`,
        async kill() {
          await stopChild(child, 'SIGKILL');
        },
        async restart() {
          child = await spawnRedis(port);
        },
        pause() {
          child.kill('SIGSTOP');
        },
        resume() {
          child.kill('SIGCONT');
        },
        async stop() {
          await stopChild(child, 'SIGTERM');
        },
      };
      return server;
    } catch (err) {
      if (attempt >= 3) throw err; // the port was taken between probing and binding: try another
    }
  }
}

function spawnRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--protected-mode', 'yes', '--daemonize', 'no', '--loglevel', 'warning',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  killOnExit(child);
  const output: string[] = [];
  child.stdout!.on('data', (b: Buffer) => output.push(b.toString()));
  child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    let exited = false;
    child.once('error', (err) => reject(new Error(`cannot run redis-server (apt-get install -y redis-server): ${err.message}`)));
    child.once('exit', (code) => {
      exited = true;
      reject(new Error(`redis-server exited with ${code}: ${output.join('')}`));
    });
    const probe = () => {
      if (exited) return;
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.write('PING\r\n');
        socket.once('data', (d) => {
          socket.destroy();
          if (d.toString().startsWith('+PONG')) resolve(child);
          else retry();
        });
      });
      socket.once('error', () => {
        socket.destroy();
        retry();
      });
    };
    const retry = () => {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        reject(new Error(`redis-server did not answer on port ${port}: ${output.join('')}`));
      } else {
        setTimeout(probe, 20);
      }
    };
    probe();
  });
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
