/**
 * Stop signals seen twice. Under `npm start` a signal sent to the process group (systemd's default
 * KillMode, Ctrl-C in a terminal) reaches the server directly and again a moment later, forwarded by npm:
 * that copy is not an operator's second signal, which exits at once.
 */

/** A stop signal and when it came (performance.now()). */
export interface StopSignal {
  signal: string;
  at: number;
}

/** The same signal again within this long is the same one delivered twice. */
export const DUPLICATE_SIGNAL_MS = 250;

/** Whether `signal`, arriving now, is the first one delivered again rather than a second signal. */
export function repeatsFirst(first: StopSignal, signal: string): boolean {
  return signal === first.signal && performance.now() - first.at < DUPLICATE_SIGNAL_MS;
}
