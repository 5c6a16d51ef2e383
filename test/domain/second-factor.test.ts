/** SEBI's two-factor rule for API logins as plain functions (src/domain/access/second-factor.ts). */
import { describe, expect, it } from 'vitest';
import { secondFactorRefusal, secondFactorState } from '../../src/domain/access/second-factor.js';

const enrolled = { totpSecret: 'JBSWY3DPEHPK3PXP', secondFactorExemptAt: null };
const exempt = { totpSecret: null, secondFactorExemptAt: 1 };
const neither = { totpSecret: null, secondFactorExemptAt: null };

describe('how a user logs in', () => {
  it('is enrolled with a TOTP secret (an exemption then changes nothing), exempt, or else required', () => {
    expect(secondFactorState(enrolled)).toBe('enrolled');
    expect(secondFactorState({ ...enrolled, secondFactorExemptAt: 1 })).toBe('enrolled');
    expect(secondFactorState(exempt)).toBe('exempt');
    expect(secondFactorState(neither)).toBe('required');
  });
});

describe('the refusal at login', () => {
  it('refuses only a user neither enrolled nor exempt, and only while the server requires a second factor', () => {
    expect(secondFactorRefusal(neither, true)).toMatch(/neither enrolled in TOTP nor exempted/);
    expect(secondFactorRefusal(neither, false)).toBeNull();
    expect(secondFactorRefusal(enrolled, true)).toBeNull();
    expect(secondFactorRefusal(exempt, true)).toBeNull();
  });
});
