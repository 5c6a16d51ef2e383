/**
 * SEBI's two-factor rule for API logins (circular of 4 February 2025, SEBI/HO/MIRSD/MIRSD-PoD/P/CIR/2025/0000013,
 * and the exchanges' implementation standards): a login passes a second factor unless the broker exempts
 * the user. Here the second factor is TOTP (`ordergate users totp`), and the rule holds while
 * LOGIN_SECOND_FACTOR_REQUIRED is on (the production setting). docs/design/sebi-algo.md.
 */

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
