/**
 * PasswordChecks: the turns of the password checks, the 503 when every place is taken, and each address's
 * share while the checks are busy (issue 12 review: five addresses flooding logins kept everyone out).
 */
import { describe, expect, it } from 'vitest';
import { PasswordChecks } from '../../src/auth/password-checks.js';
import { ApiError, Errors } from '../../src/domain/errors.js';

/** A check that ends when the test says so. */
function gated() {
  const opens: (() => void)[] = [];
  const check = () => new Promise<boolean>((resolve) => opens.push(() => resolve(true)));
  return { check, openAll: () => opens.splice(0).forEach((open) => open()), started: () => opens.length };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

describe('PasswordChecks', () => {
  it('while busy, an address beyond its share is refused with 429 at once, and another address still gets a place', async () => {
    const { check, openAll, started } = gated();
    const checks = new PasswordChecks(1, 4, 2); // 1 running, 4 waiting, 2 places per address when busy
    const attacker = [checks.run(check, '203.0.113.9'), checks.run(check, '203.0.113.9')];
    const others = [checks.run(check, '198.51.100.1'), checks.run(check, '198.51.100.2')];
    // Now busy: 1 running, 3 waiting (half the waiting places, 2, are taken).
    const third = await refusal(checks.run(check, '203.0.113.9'));
    expect(third).toBeInstanceOf(ApiError);
    expect(third).toMatchObject({ kind: Errors.RATE_LIMITED, headers: { 'Retry-After': '1' } });
    expect((third as ApiError).message).toBe(
      'Too many logins at once from this address (at most 2 checked at a time); retry after 1 s',
    );
    // Someone else gets the last place; after it, the server is full for everyone (503).
    const fifth = checks.run(check, '198.51.100.3');
    expect(await refusal(checks.run(check, '198.51.100.4'))).toMatchObject({ kind: Errors.UNAVAILABLE });
    expect(started()).toBe(1);
    for (let i = 0; i < 5; i += 1) {
      openAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all([...attacker, ...others, fifth])).toEqual([true, true, true, true, true]);
    // The shares are given back: the address may log in again.
    const again = checks.run(check, '203.0.113.9');
    openAll();
    expect(await again).toBe(true);
  });

  it('while not busy, one address (an office behind one NAT) may hold more than its share', async () => {
    const { check, openAll } = gated();
    const checks = new PasswordChecks(2, 16, 2);
    const office = Array.from({ length: 6 }, () => checks.run(check, '192.0.2.7')); // 2 running, 4 waiting of 16
    for (let i = 0; i < 6; i += 1) {
      openAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(office)).toEqual([true, true, true, true, true, true]);
  });
});
