/**
 * The login back-off rule (docs/design/rate-limits.md, "Login attempts"): after `afterFailures` failed
 * logins of one user id from one address, each further attempt from that pair waits a second, and the wait
 * doubles with every further failure up to `maxMs`. A successful login clears the pair.
 */

/** A pair's failed logins since its last success, and when the last one was (ms, the store's clock). */
export interface PairFailures {
  failures: number;
  lastFailureAt: number;
}

const FIRST_WAIT_MS = 1000;

/** How long after its last failure a pair with `failures` failures must wait; 0 when it need not. */
export function backoffMs(failures: number, afterFailures: number, maxMs: number): number {
  if (afterFailures <= 0 || failures < afterFailures) return 0;
  // 2^30 s is far beyond any maximum: the exponent is capped so that the number stays finite.
  return Math.min(maxMs, FIRST_WAIT_MS * 2 ** Math.min(failures - afterFailures, 30));
}

/** Milliseconds the pair must still wait at `now`; 0 when an attempt may go ahead. */
export function backoffRemainingMs(pair: PairFailures, now: number, afterFailures: number, maxMs: number): number {
  const wait = backoffMs(pair.failures, afterFailures, maxMs);
  return wait === 0 ? 0 : Math.max(0, pair.lastFailureAt + wait - now);
}
