/**
 * Port checks around uWS's listen, which binds with SO_REUSEPORT: a second process on a port in use shares
 * it silently (the kernel then splits connections between two servers with different keys and memories),
 * and an ephemeral port cannot be shared by several workers unless it is picked first.
 */
import { createServer } from 'node:net';
import type { Server } from 'node:net';

/**
 * Takes host:port for this process before it listens, and resolves with the function that gives it back;
 * rejects with EADDRINUSE when another process has it. Two checks: on Linux a lock, an abstract unix
 * socket named after host:port, which the kernel grants one process at a time (two servers started at the
 * same instant both passed the probe alone, then both listened), and freed when the process exits; then
 * the probe, for whatever listens there without taking the lock.
 */
export async function claimPort(host: string, port: number): Promise<() => void> {
  let lock: Server | undefined;
  if (process.platform === 'linux') {
    lock = createServer();
    await new Promise<void>((resolve, reject) => {
      lock!.once('error', reject);
      lock!.listen(`\0sentio:${host}:${port}`, () => resolve());
    });
    lock.unref();
  }
  try {
    await ensurePortFree(host, port);
  } catch (err) {
    lock?.close();
    throw err;
  }
  return () => lock?.close();
}

/**
 * Resolves when nothing listens on host:port; rejects with EADDRINUSE otherwise. Node's listener sets no
 * SO_REUSEPORT, so the kernel refuses it next to a uWS listener, which is the test.
 */
function ensurePortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** A free ephemeral port on host, for listeners that must all bind the same one. */
export function pickFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}
