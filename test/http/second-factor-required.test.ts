/**
 * SEBI's two-factor rule for API logins (issue 23; docs/design/sebi-algo.md): with
 * LOGIN_SECOND_FACTOR_REQUIRED a user not enrolled in TOTP is refused at login, 403 e-216, once the password
 * is right, and no session opens; an enrolled user logs in with a code, a user the operator exempted with
 * the password. Without the setting a user not enrolled logs in with the password, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/credentials.js';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { startTestServer, TEST_PASSWORD, type CallResult, type TestServer } from '../support/server.js';

const SESSION = '/authentication/v1/user/session';
const STEP_MS = 30_000;

function expectError(res: CallResult, kind: ErrorKind): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body).toMatchObject({ status: 'error', code: kind.code });
}

/** A login with the password and, when given, a TOTP code. */
const login = (server: TestServer, userId: string, options: { password?: string; code?: string } = {}) =>
  server.call('POST', SESSION, {
    body: {
      user_id: userId,
      login_type: 'PASSWORD',
      password: options.password ?? TEST_PASSWORD,
      second_auth_type: options.code === undefined ? '' : 'TOTP',
      second_auth: options.code ?? '',
      source: 'WEBAPI',
    },
  });

/** The sessions the user has in the database, open or not. */
async function sessionsOf(server: TestServer, userId: string): Promise<number> {
  const rows = await server.store.db
    .selectFrom('sessions')
    .select('token_hash')
    .where('user_id', '=', userId)
    .execute();
  return rows.length;
}

/** The answer's token authenticates (PUT validates it). */
async function expectWorkingToken(server: TestServer, res: CallResult): Promise<void> {
  expect(res.status, res.text).toBe(200);
  const validated = await server.call('PUT', SESSION, { token: res.body.data.access_token });
  expect(validated.status, validated.text).toBe(200);
}

describe('with LOGIN_SECOND_FACTOR_REQUIRED', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ limits: { secondFactorRequired: true } });
  });
  afterAll(() => server.close());

  it('refuses a user not enrolled in TOTP with 403 e-216 once the password is right, opening no session', async () => {
    await server.admin.addUser('nora', TEST_PASSWORD);
    const refused = await login(server, 'nora');
    expectError(refused, Errors.SECOND_FACTOR_NOT_ENROLLED);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/operator must enrol the user in TOTP or exempt them/);
    expect(refused.body.errors).toEqual([
      { field: 'second_auth', message: expect.stringMatching(/neither enrolled in TOTP nor exempted/) },
    ]);
    expect(refused.text).not.toContain('access_token');
    // A code changes nothing: there is no secret to check it against.
    expectError(await login(server, 'nora', { code: '123456' }), Errors.SECOND_FACTOR_NOT_ENROLLED);
    expect(await sessionsOf(server, 'nora')).toBe(0);
  });

  it('answers a wrong password with e-208 as for anyone, telling nothing of the second factor; an unknown user too', async () => {
    await server.admin.addUser('olga', TEST_PASSWORD);
    const wrong = await login(server, 'olga', { password: 'not-the-password' });
    expectError(wrong, Errors.LOGIN_FAILED);
    expect(wrong.text).not.toMatch(/TOTP|second factor/i);
    expectError(await login(server, 'nobody'), Errors.LOGIN_FAILED);
    expect(await sessionsOf(server, 'olga')).toBe(0);
  });

  it('refuses a disabled user not enrolled with e-212, as before', async () => {
    await server.admin.addUser('pia', TEST_PASSWORD);
    await server.admin.disableUser('pia');
    expectError(await login(server, 'pia'), Errors.USER_DISABLED);
  });

  it('logs in an enrolled user with a valid code, and still asks it for one (e-209) and refuses a wrong one (e-210)', async () => {
    const { totpSecret } = await server.admin.addUser('tina', TEST_PASSWORD, { totp: true });
    expectError(await login(server, 'tina'), Errors.SECOND_FACTOR_REQUIRED);
    const valid = totpCode(totpSecret!, 'tina', server.clock.now);
    // None of the codes accepted now (the current one and its neighbours).
    const accepted = [-STEP_MS, 0, STEP_MS].map((shift) => totpCode(totpSecret!, 'tina', server.clock.now + shift));
    const wrong = ['000000', '111111', '222222', '333333'].find((code) => !accepted.includes(code))!;
    expectError(await login(server, 'tina', { code: wrong }), Errors.SECOND_FACTOR_INVALID);
    expect(await sessionsOf(server, 'tina')).toBe(0);
    await expectWorkingToken(server, await login(server, 'tina', { code: valid }));
    expect(await sessionsOf(server, 'tina')).toBe(1);
  });

  it('logs in a user the operator exempted with the password alone, and refuses them again once the exemption ends', async () => {
    await server.admin.addUser('ella', TEST_PASSWORD);
    expectError(await login(server, 'ella'), Errors.SECOND_FACTOR_NOT_ENROLLED);

    expect(await server.admin.setSecondFactorExempt('ella', true)).toBe('exempt');
    await expectWorkingToken(server, await login(server, 'ella'));
    expect(await sessionsOf(server, 'ella')).toBe(1);

    expect(await server.admin.setSecondFactorExempt('ella', false)).toBe('required');
    expectError(await login(server, 'ella'), Errors.SECOND_FACTOR_NOT_ENROLLED);
    expect(await sessionsOf(server, 'ella')).toBe(1);
  });

  it('logs in a user refused for want of TOTP once the operator enrols them, with a code of the new secret only', async () => {
    await server.admin.addUser('ivan', TEST_PASSWORD);
    expectError(await login(server, 'ivan'), Errors.SECOND_FACTOR_NOT_ENROLLED);

    const first = await server.admin.enrolTotp('ivan');
    expect(first.replaced).toBe(false);
    expectError(await login(server, 'ivan'), Errors.SECOND_FACTOR_REQUIRED);
    await expectWorkingToken(
      server,
      await login(server, 'ivan', { code: totpCode(first.totpSecret, 'ivan', server.clock.now) }),
    );

    // Enrolled again: the old secret's codes are refused, the new one's work (a later step: a code works once).
    const second = await server.admin.enrolTotp('ivan');
    expect(second.replaced).toBe(true);
    expect(second.totpSecret).not.toBe(first.totpSecret);
    server.clock.now += 4 * STEP_MS;
    const oldCode = totpCode(first.totpSecret, 'ivan', server.clock.now);
    const newCode = totpCode(second.totpSecret, 'ivan', server.clock.now);
    if (oldCode !== newCode) expectError(await login(server, 'ivan', { code: oldCode }), Errors.SECOND_FACTOR_INVALID);
    await expectWorkingToken(server, await login(server, 'ivan', { code: newCode }));
  });

  it('keeps an exempted user that is enrolled to its code: the enrolment wins', async () => {
    const { totpSecret } = await server.admin.addUser('kai', TEST_PASSWORD, { totp: true });
    expect(await server.admin.setSecondFactorExempt('kai', true)).toBe('enrolled');
    expectError(await login(server, 'kai'), Errors.SECOND_FACTOR_REQUIRED);
    await expectWorkingToken(
      server,
      await login(server, 'kai', { code: totpCode(totpSecret!, 'kai', server.clock.now) }),
    );
  });
});

describe('without LOGIN_SECOND_FACTOR_REQUIRED (the default)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('logs in a user not enrolled in TOTP with the password, as before', async () => {
    await server.admin.addUser('nora', TEST_PASSWORD);
    await expectWorkingToken(server, await login(server, 'nora'));
    expect(await sessionsOf(server, 'nora')).toBe(1);
    expectError(await login(server, 'nora', { password: 'not-the-password' }), Errors.LOGIN_FAILED);
  });
});
