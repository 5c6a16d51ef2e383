/**
 * TOTP codes are limited per user whatever the address or API key (issue 47 row 2): the probe guessed 120
 * codes a minute with the user's API key, which exempted it from the login back-off. Now, after 3 wrong codes
 * in a row each further code waits (1 s, doubling), and at the 10th the second factor is locked until the
 * operator unlocks it; the lock and the unlock are recorded. The count is the database's: on both dialects,
 * and for checks arriving together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/credentials.js';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { UserRepository } from '../../src/store/access/users.js';
import { startTestServer, TEST_PASSWORD, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const SESSION = '/authentication/v1/user/session';

function expectError(res: CallResult, kind: ErrorKind): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body).toMatchObject({ status: 'error', code: kind.code });
}

describe('second-factor limits per user, whatever the key or address', () => {
  let server: TestServer;
  let users: UserRepository;

  beforeAll(async () => {
    // The login limits on, as in production: the API key exempts a login from the password's back-off.
    server = await startTestServer({
      rateLimits: { loginsPerMinutePerUser: 10, loginBackoffAfterFailures: 5, loginsPerMinutePerAddress: 1000 },
    });
    users = new UserRepository(server.store.db, server.store.dialect);
  });
  afterAll(() => server.close());

  /** A login of `user` with its API key and `code`, from `address` (the client address as sent). */
  const login = (user: TestUser, code: string) =>
    server.call('POST', SESSION, {
      body: {
        user_id: user.userId,
        login_type: 'PASSWORD',
        password: TEST_PASSWORD,
        second_auth_type: 'TOTP',
        second_auth: code,
        api_key: user.apiKey,
      },
    });
  const rightCode = (user: TestUser) => totpCode(user.totpSecret!, user.userId, server.clock.now);
  /** A six-digit code that none of the codes accepted now is. */
  const wrongCode = (user: TestUser) => {
    const accepted = [-30_000, 0, 30_000].map((shift) =>
      totpCode(user.totpSecret!, user.userId, server.clock.now + shift),
    );
    return ['000000', '111111', '222222', '333333'].find((code) => !accepted.includes(code))!;
  };
  const count = async (userId: string) => (await users.find(userId))!.secondFactorCount;

  it('with the API key: 3 wrong codes, then each waits 1, 2, 4... s (429, even for the right code), and the 10th locks (403 e-217)', async () => {
    const user = await server.createUser('kim', { totp: true });
    for (let i = 0; i < 3; i++) expectError(await login(user, wrongCode(user)), Errors.SECOND_FACTOR_INVALID);

    // The 4th at once is not checked: refused, with Retry-After, even when right.
    const early = await login(user, rightCode(user));
    expectError(early, Errors.RATE_LIMITED);
    expect(early.headers.get('retry-after')).toBe('1');
    expect((await count('kim')).failures).toBe(3);

    let waited = 0;
    for (let failures = 3; failures < 9; failures++) {
      const waitMs = 1000 * 2 ** (failures - 3);
      server.clock.now += waitMs - 1;
      expectError(await login(user, wrongCode(user)), Errors.RATE_LIMITED);
      server.clock.now += 1;
      waited += waitMs;
      expectError(await login(user, wrongCode(user)), Errors.SECOND_FACTOR_INVALID);
    }
    expect((await count('kim')).failures).toBe(9);
    expect(waited).toBe(63_000);

    server.clock.now += 64_000;
    const locking = await login(user, wrongCode(user));
    expectError(locking, Errors.SECOND_FACTOR_LOCKED);
    expect(locking.body.errors).toEqual([{ field: 'second_auth', message: 'locked after too many wrong codes' }]);
    // Locked: the right code, an hour later, opens nothing.
    server.clock.now += 60 * 60_000;
    expectError(await login(user, rightCode(user)), Errors.SECOND_FACTOR_LOCKED);
    expect((await count('kim')).lockedAt).not.toBeNull();

    // The operator's unlock: the right code logs in, and the log holds both.
    expect(await server.admin.unlockSecondFactor('kim')).toEqual({ failures: 10, wasLocked: true });
    const res = await login(user, rightCode(user));
    expect(res.status, res.text).toBe(200);
    const { events } = await server.admin.secondFactorLog('kim');
    expect(events.map(({ event, actor }) => `${event} by ${actor}`)).toEqual([
      'locked by system',
      'unlocked by operator',
    ]);
    expect(events[0]!.detail).toMatch(/^10 wrong TOTP codes in a row, the last from 127\.0\.0\.1$/);
  });

  it('a login that passes clears the count; a wrong password is no TOTP check', async () => {
    const user = await server.createUser('lee', { totp: true });
    // createUser's login spent this step's code.
    server.clock.now += 30_000;
    for (let i = 0; i < 2; i++) expectError(await login(user, wrongCode(user)), Errors.SECOND_FACTOR_INVALID);
    expect((await login(user, rightCode(user))).status).toBe(200);
    expect(await count('lee')).toEqual({ failures: 0, lastFailureAt: null, lockedAt: null });
    // The next step's code (the last one is spent), three wrong ones in a row again without a wait.
    server.clock.now += 30_000;
    for (let i = 0; i < 3; i++) expectError(await login(user, wrongCode(user)), Errors.SECOND_FACTOR_INVALID);
    const wrongPassword = await server.call('POST', SESSION, {
      body: {
        user_id: 'lee',
        login_type: 'PASSWORD',
        password: 'not-it',
        second_auth_type: 'TOTP',
        second_auth: wrongCode(user),
      },
    });
    expectError(wrongPassword, Errors.LOGIN_FAILED);
    expect((await count('lee')).failures).toBe(3);
  });

  it('codes sent together are counted one by one: of 20 wrong codes at once at most 3 are checked', async () => {
    const user = await server.createUser('max', { totp: true });
    const answers = await Promise.all(Array.from({ length: 20 }, () => login(user, wrongCode(user))));
    const checked = answers.filter((res) => res.body.code === Errors.SECOND_FACTOR_INVALID.code).length;
    const refused = answers.filter((res) => res.body.code === Errors.RATE_LIMITED.code).length;
    expect(checked + refused).toBe(20);
    expect(checked).toBeGreaterThanOrEqual(1);
    expect(checked).toBeLessThanOrEqual(3);
    expect((await count('max')).failures).toBe(checked);
  });

  it('a right code starts the count again even when the login fails after it (a wrong api_key): it neither waits nor locks', async () => {
    const user = await server.createUser('ola', { totp: true });
    server.clock.now += 30_000;
    const wrongKey = (code: string) =>
      server.call('POST', SESSION, {
        body: {
          user_id: 'ola',
          login_type: 'PASSWORD',
          password: TEST_PASSWORD,
          second_auth_type: 'TOTP',
          second_auth: code,
          api_key: 'not-a-key',
        },
      });
    // Four (the password's back-off for this address starts at the fifth failure): counted, the fourth would
    // have waited (429) and ten would have locked.
    for (let i = 0; i < 4; i++) expectError(await wrongKey(rightCode(user)), Errors.LOGIN_API_KEY_INVALID);
    expect(await count('ola')).toMatchObject({ failures: 0, lockedAt: null });
    const res = await login(user, rightCode(user));
    expect(res.status, res.text).toBe(200);
  });

  it('a spent code (a replay) stays counted, and reaching the bound locks with its record', async () => {
    const user = await server.createUser('pia', { totp: true });
    server.clock.now += 30_000;
    const spent = rightCode(user);
    expect((await login(user, spent)).status).toBe(200);
    for (let i = 0; i < 9; i++) {
      server.clock.now += 5 * 60_000;
      // The spent code of an earlier step is now wrong; within its step it would be 'used': either way counted.
      expect((await login(user, i === 0 ? spent : wrongCode(user))).status).toBe(401);
    }
    expect((await count('pia')).failures).toBe(9);
    server.clock.now += 5 * 60_000;
    const fresh = rightCode(user);
    expect((await login(user, fresh)).status).toBe(200);
    // Replays of the code just spent, within its step: the 10th check locks.
    for (let i = 0; i < 9; i++) {
      server.clock.now += 1;
      await server.store.db.updateTable('users').set({ totp_failed_at: null }).where('user_id', '=', 'pia').execute(); // no wait, to keep within the step
      const replay = await login(user, fresh);
      expect(replay.status, replay.text).toBe(401);
    }
    server.clock.now += 1;
    await server.store.db.updateTable('users').set({ totp_failed_at: null }).where('user_id', '=', 'pia').execute();
    expectError(await login(user, fresh), Errors.SECOND_FACTOR_LOCKED);
    const { count: now, events } = await server.admin.secondFactorLog('pia');
    expect(now.lockedAt).not.toBeNull();
    expect(events.map(({ event, actor }) => `${event} by ${actor}`)).toEqual(['locked by system']);
    expect(events[0]!.detail).toMatch(/^10 TOTP codes in a row refused, the last a code already used/);
  });

  it("a new TOTP secret is the operator's unlock too, recorded", async () => {
    const user = await server.createUser('ned', { totp: true });
    for (let i = 0; i < 10; i++) {
      server.clock.now += 5 * 60_000;
      await login(user, wrongCode(user));
    }
    expect((await count('ned')).lockedAt).not.toBeNull();
    const { totpSecret } = await server.admin.enrolTotp('ned');
    const res = await login({ ...user, totpSecret }, totpCode(totpSecret, 'ned', server.clock.now));
    expect(res.status, res.text).toBe(200);
    const { events } = await server.admin.secondFactorLog('ned');
    expect(events.map(({ event, actor }) => `${event} by ${actor}`)).toEqual([
      'locked by system',
      'unlocked by operator',
    ]);
    expect(events[1]!.detail).toMatch(/new TOTP secret/);
  });
});
