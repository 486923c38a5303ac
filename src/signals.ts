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

/**
 * Whether a package manager's script runs this process (npm, and yarn and pnpm too, set this variable):
 * only then does a signal come twice. Elsewhere a second signal within the window is the operator's: while
 * the model loads the JS thread is busy, so two signals sent 300-450 ms apart could be handled moments
 * apart, and the second counted as the first again (an overload review, 2026-11-28).
 */
const UNDER_PACKAGE_MANAGER = process.env['npm_lifecycle_event'] !== undefined;

/** Whether `signal`, arriving now, is the first one delivered again rather than a second signal. */
export function repeatsFirst(first: StopSignal, signal: string): boolean {
  return UNDER_PACKAGE_MANAGER && signal === first.signal && performance.now() - first.at < DUPLICATE_SIGNAL_MS;
}
