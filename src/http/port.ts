/**
 * Port checks around uWS's listen, which binds with SO_REUSEPORT: a second process on a port in use shares
 * it silently (the kernel then splits connections between two servers with different keys and memories),
 * and an ephemeral port cannot be shared by several workers unless it is picked first.
 */
import { createServer } from 'node:net';

/**
 * Resolves when nothing listens on host:port; rejects with EADDRINUSE otherwise. Node's listener sets no
 * SO_REUSEPORT, so the kernel refuses it next to a uWS listener, which is the test.
 */
export function ensurePortFree(host: string, port: number): Promise<void> {
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
