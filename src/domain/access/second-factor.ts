/**
 * SEBI's two-factor rule for API logins (circular of 4 February 2025, SEBI/HO/MIRSD/MIRSD-PoD/P/CIR/2025/0000013,
 * and the exchanges' implementation standards): a login passes a second factor unless the broker exempts
 * the user. Here the second factor is TOTP (`ordergate users totp`), and the rule holds while
 * LOGIN_SECOND_FACTOR_REQUIRED is on (the production setting). docs/design/sebi-algo.md.
 */
import { backoffMs } from './login-backoff.js';

/** What the rule reads of a user: whether they are enrolled in TOTP and whether the operator exempted them. */
export interface SecondFactorStanding {
  /** Base32 TOTP secret, or null when the user is not enrolled. */
  totpSecret: string | null;
  /** When the operator exempted the user from the second factor, or null. */
  secondFactorExemptAt: number | null;
}

/**
 * How a user logs in, as the operator's commands print it: `enrolled` (with a TOTP code, whatever the
 * setting and any exemption), `exempt` (with the password alone), `required` (not enrolled nor exempt: with
 * LOGIN_SECOND_FACTOR_REQUIRED on, refused until the operator enrols or exempts them).
 */
export type SecondFactorState = 'enrolled' | 'exempt' | 'required';

export function secondFactorState(user: SecondFactorStanding): SecondFactorState {
  if (user.totpSecret !== null) return 'enrolled';
  return user.secondFactorExemptAt !== null ? 'exempt' : 'required';
}

/**
 * Why a login whose password is right is refused for want of a second factor, or null when it may go on
 * (an enrolled user's code is checked next). Only a user with no TOTP secret and no exemption is refused,
 * and only when the server requires a second factor (`required`, LOGIN_SECOND_FACTOR_REQUIRED).
 */
export function secondFactorRefusal(user: SecondFactorStanding, required: boolean): string | null {
  if (!required || secondFactorState(user) !== 'required') return null;
  return 'this server requires a second factor, and the user is neither enrolled in TOTP nor exempted by the operator';
}

/**
 * The limits on TOTP codes, per user whatever the address or API key (issue 47 row 2;
 * docs/design/rate-limits.md, "Second-factor codes"): after `backoffAfter` wrong codes in a row each
 * further code waits, the wait doubling from a second up to `backoffMaxMs`; after `lockoutAfter` in a row
 * the second factor is locked until the operator unlocks it. A login that passes clears the count.
 */
export interface SecondFactorLimits {
  backoffAfter: number;
  backoffMaxMs: number;
  lockoutAfter: number;
}

/** What the limits read of a user: the codes checked since its last login that passed, and the lock. */
export interface SecondFactorCount {
  /** Codes checked (counted before each is compared) since the last login that passed. */
  failures: number;
  /** When the last was counted, or null. */
  lastFailureAt: number | null;
  /** When the second factor was locked, or null. */
  lockedAt: number | null;
}

/** Whether a TOTP code may be checked now: `locked`, `wait` (ms left), or `check`. */
export type SecondFactorGate = { kind: 'locked' } | { kind: 'wait'; ms: number } | { kind: 'check' };

export function secondFactorGate(count: SecondFactorCount, now: number, limits: SecondFactorLimits): SecondFactorGate {
  // failures at the bound without the lock: a check that locked has not written the lock yet.
  if (count.lockedAt !== null || count.failures >= limits.lockoutAfter) return { kind: 'locked' };
  const wait = backoffMs(count.failures, limits.backoffAfter, limits.backoffMaxMs);
  const left = wait === 0 || count.lastFailureAt === null ? 0 : count.lastFailureAt + wait - now;
  return left > 0 ? { kind: 'wait', ms: left } : { kind: 'check' };
}

/** Whether the wrong code that made the count `failures` locks the second factor. */
export const locksSecondFactor = (failures: number, limits: SecondFactorLimits): boolean =>
  failures >= limits.lockoutAfter;
