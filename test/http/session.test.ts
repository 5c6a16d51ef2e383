/**
 * /authentication/v1/user/session (product.md "Endpoints" and "Authentication"): ODIN login (POST),
 * validate (PUT) and logout (DELETE), through the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWASP_PASSWORD_HASHER, passwordHasherFor, totpCode } from '../../src/auth/credentials.js';
import { loadConfig, publicUrlProblem } from '../../src/config.js';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { UserRepository } from '../../src/store/access/users.js';
import {
  startTestServer,
  TEST_PASSWORD,
  validBid,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';

const SESSION = '/authentication/v1/user/session';
const DAY_MS = 24 * 60 * 60 * 1000;

function expectError(res: CallResult, kind: ErrorKind, field?: string): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body.code, res.text).toBe(kind.code);
  expect(res.body.status).toBe('error');
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
  if (field !== undefined)
    expect(
      res.body.errors.map((e: { field: string }) => e.field),
      res.text,
    ).toContain(field);
}

describe('session: login, validate, logout', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let totpSecret: string;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    totpSecret = (await server.admin.addUser('tina', TEST_PASSWORD, { totp: true })).totpSecret!;
  });
  afterAll(() => server.close());

  const login = (body: Record<string, unknown>) => server.call('POST', SESSION, { body });
  const aliceLogin = (extra: Record<string, unknown> = {}) =>
    login({ user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD, ...extra });
  const tinaLogin = (extra: Record<string, unknown> = {}) =>
    login({ user_id: 'tina', login_type: 'PASSWORD', password: TEST_PASSWORD, second_auth_type: 'TOTP', ...extra });
  const validate = (token: string) => server.call('PUT', SESSION, { token });

  /** A six-digit code that is none of the codes accepted now (the current one and its neighbours). */
  function wrongTotpCode(): string {
    const accepted = [-30_000, 0, 30_000].map((shift) => totpCode(totpSecret, 'tina', server.clock.now + shift));
    return ['000000', '111111', '222222', '333333'].find((code) => !accepted.includes(code))!;
  }

  describe('POST: login', () => {
    it('answers exactly status, code, message and data {access_token, token_type, user_id, expires_at, others.messageSocket}, and the token works', async () => {
      const res = await aliceLogin({ second_auth_type: '', second_auth: '', api_key: alice.apiKey, source: 'WEBAPI' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
      expect(Object.keys(res.body.data).sort()).toEqual([
        'access_token',
        'expires_at',
        'others',
        'token_type',
        'user_id',
      ]);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Login successful',
        data: {
          access_token: expect.any(String),
          token_type: 'Bearer',
          user_id: 'alice',
          expires_at: new Date(server.clock.now + DAY_MS).toISOString(),
          // The live order socket listens on the same host and port as the login.
          others: { messageSocket: server.url },
        },
      });
      expect(res.body.data.access_token.length).toBeGreaterThanOrEqual(32);
      expect((await validate(res.body.data.access_token)).status).toBe(200);
    });

    it('gives every login its own token', async () => {
      const [first, second] = await Promise.all([aliceLogin(), aliceLogin()]);
      expect(first!.status).toBe(200);
      expect(second!.status).toBe(200);
      expect(first!.body.data.access_token).not.toBe(second!.body.data.access_token);
    });

    it.each([
      ['absent', {}],
      ['empty', { second_auth_type: '', second_auth: '', api_key: '' }],
      ['null', { second_auth_type: null, second_auth: null, api_key: null }],
      ['mixed', { second_auth_type: 'TOTP', second_auth: null, source: 'MOB' }],
    ])('tolerates second_auth_type, second_auth and api_key %s for a user without TOTP', async (_how, extra) => {
      const res = await aliceLogin(extra);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.user_id).toBe('alice');
    });

    it('accepts any string as source', async () => {
      expect((await aliceLogin({ source: 'my-own-trading-tool/2.1' })).status).toBe(200);
    });

    it('answers a wrong password and an unknown user alike: 401 e-208 with the same message and errors', async () => {
      const wrongPassword = await aliceLogin({ password: 'not-the-password' });
      const unknownUser = await login({ user_id: 'nobody', login_type: 'PASSWORD', password: TEST_PASSWORD });
      expectError(wrongPassword, Errors.LOGIN_FAILED);
      expectError(unknownUser, Errors.LOGIN_FAILED);
      expect(unknownUser.body.message).toBe(wrongPassword.body.message);
      expect(unknownUser.body.errors).toEqual(wrongPassword.body.errors);
      expect(wrongPassword.text).not.toContain('not-the-password');
    });

    describe('a user enrolled in TOTP', () => {
      it.each([
        ['absent', {}],
        ['empty', { second_auth: '' }],
        ['null', { second_auth: null }],
      ])('refuses second_auth %s (401 e-209)', async (_how, extra) => {
        expectError(await tinaLogin(extra), Errors.SECOND_FACTOR_REQUIRED, 'second_auth');
      });

      it('refuses a wrong code (401 e-210)', async () => {
        expectError(await tinaLogin({ second_auth: wrongTotpCode() }), Errors.SECOND_FACTOR_INVALID, 'second_auth');
      });

      it('refuses a code that is not six digits (401 e-210)', async () => {
        expectError(await tinaLogin({ second_auth: 'abcdef' }), Errors.SECOND_FACTOR_INVALID, 'second_auth');
      });

      it('logs in with the right code', async () => {
        const res = await tinaLogin({ second_auth: totpCode(totpSecret, 'tina', server.clock.now) });
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.user_id).toBe('tina');
      });

      it('answers a wrong password with e-208 before asking for the code, so enrolment is not revealed', async () => {
        expectError(await tinaLogin({ password: 'not-the-password' }), Errors.LOGIN_FAILED);
      });
    });

    describe('api_key at login', () => {
      it('refuses an api_key of another user (401 e-211)', async () => {
        const res = await aliceLogin({ api_key: bob.apiKey });
        expectError(res, Errors.LOGIN_API_KEY_INVALID, 'api_key');
        expect(res.text).not.toContain(bob.apiKey);
      });

      it('refuses an unknown api_key (401 e-211)', async () => {
        expectError(await aliceLogin({ api_key: `ogk_${'C'.repeat(43)}` }), Errors.LOGIN_API_KEY_INVALID, 'api_key');
      });

      it('refuses a revoked api_key of the user (401 e-211)', async () => {
        const { keyId, apiKey } = await server.admin.createApiKey('alice');
        expect((await aliceLogin({ api_key: apiKey })).status).toBe(200);
        await server.admin.revokeApiKey(keyId);
        expectError(await aliceLogin({ api_key: apiKey }), Errors.LOGIN_API_KEY_INVALID, 'api_key');
      });
    });

    describe('the body', () => {
      it('refuses a login_type other than PASSWORD (400 e-106)', async () => {
        expectError(await aliceLogin({ login_type: 'OTP' }), Errors.INVALID_VALUE, 'login_type');
      });

      it.each(['user_id', 'login_type', 'password'])('refuses a body without %s (400 e-103)', async (field) => {
        const body: Record<string, unknown> = { user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD };
        delete body[field];
        expectError(await login(body), Errors.FIELD_REQUIRED, field);
      });

      it('refuses a password sent as a number (400 e-104)', async () => {
        expectError(
          await login({ user_id: 'alice', login_type: 'PASSWORD', password: 12345678 }),
          Errors.WRONG_TYPE,
          'password',
        );
      });

      it('refuses an unknown field (400 e-105)', async () => {
        expectError(await aliceLogin({ remember_me: true }), Errors.UNKNOWN_FIELD, 'remember_me');
      });
    });
  });

  describe('PUT: validate', () => {
    it("answers exactly the session's user and expiry for a live token", async () => {
      const loggedIn = await aliceLogin();
      const res = await validate(loggedIn.body.data.access_token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Session is valid',
        data: { user_id: 'alice', expires_at: loggedIn.body.data.expires_at },
      });
    });

    it('refuses a call without a token (401 e-201)', async () => {
      expectError(await server.call('PUT', SESSION), Errors.TOKEN_MISSING, 'Authorization');
    });

    it('refuses an unknown token (401 e-202)', async () => {
      expectError(await validate(`ogt_${'D'.repeat(43)}`), Errors.TOKEN_INVALID, 'Authorization');
    });

    it('accepts the token until 24 h after login and refuses it from then on (401 e-203)', async () => {
      const token = (await aliceLogin()).body.data.access_token;
      const loggedInAt = server.clock.now;
      try {
        server.clock.now = loggedInAt + DAY_MS - 1000;
        expect((await validate(token)).status).toBe(200);
        server.clock.now = loggedInAt + DAY_MS;
        expectError(await validate(token), Errors.TOKEN_EXPIRED, 'Authorization');
      } finally {
        server.clock.now = loggedInAt;
      }
    });
  });

  describe('DELETE: logout', () => {
    it('revokes the token at once (401 e-204 afterwards, for every call), while another session of the same user still works', async () => {
      await server.registerIssue();
      const first = (await aliceLogin()).body.data.access_token as string;
      const second = (await aliceLogin()).body.data.access_token as string;

      const res = await server.call('DELETE', SESSION, { token: first });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Logged out successfully',
        data: [{ message: 'success' }],
      });

      expectError(await validate(first), Errors.TOKEN_REVOKED, 'Authorization');
      expectError(await server.call('DELETE', SESSION, { token: first }), Errors.TOKEN_REVOKED, 'Authorization');
      expectError(
        await server.call('POST', '/transactional/v1/orders/regular', {
          body: validBid(),
          token: first,
          apiKey: alice.apiKey,
        }),
        Errors.TOKEN_REVOKED,
        'Authorization',
      );

      expect((await validate(second)).status).toBe(200);
      const bid = await server.call('POST', '/transactional/v1/orders/regular', {
        body: validBid(),
        token: second,
        apiKey: alice.apiKey,
      });
      expect(bid.status, bid.text).toBe(200);
    });

    it('refuses a call without a token (401 e-201)', async () => {
      expectError(await server.call('DELETE', SESSION), Errors.TOKEN_MISSING, 'Authorization');
    });
  });

  describe('calls without a body tolerate Content-Type: application/json with an empty body', () => {
    it('validates with Content-Type: application/json and no body', async () => {
      const token = (await aliceLogin()).body.data.access_token;
      const res = await server.call('PUT', SESSION, { token, headers: { 'content-type': 'application/json' } });
      expect(res.status, res.text).toBe(200);
    });

    it('logs out with Content-Type: application/json and no body', async () => {
      const token = (await aliceLogin()).body.data.access_token;
      const res = await server.call('DELETE', SESSION, { token, headers: { 'content-type': 'application/json' } });
      expect(res.status, res.text).toBe(200);
      expectError(await validate(token), Errors.TOKEN_REVOKED);
    });
  });
});

describe('the operator ends sessions, disables users and resets passwords (finding 8)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const login = (userId: string, password = TEST_PASSWORD, extra: Record<string, unknown> = {}) =>
    server.call('POST', SESSION, { body: { user_id: userId, login_type: 'PASSWORD', password, ...extra } });
  const validate = (token: string) => server.call('PUT', SESSION, { token });
  const bid = (user: TestUser, token = user.token) =>
    server.call('POST', '/transactional/v1/orders/regular', { body: validBid(), token, apiKey: user.apiKey });

  it("revoking a user's sessions refuses every token of the user at once (401 e-204), other users untouched; the user may log in again", async () => {
    await server.registerIssue();
    const carl = await server.createUser('carl');
    const second = (await login('carl')).body.data.access_token as string;
    const dora = await server.createUser('dora');

    expect(await server.admin.revokeSessions('carl')).toBe(2);

    for (const token of [carl.token, second]) expectError(await validate(token), Errors.TOKEN_REVOKED, 'Authorization');
    expectError(await bid(carl), Errors.TOKEN_REVOKED);
    expect((await validate(dora.token)).status).toBe(200);
    const again = await login('carl');
    expect(again.status, again.text).toBe(200);
    expect((await bid(carl, again.body.data.access_token)).status).toBe(200);
  });

  it("a disabled user's tokens stop at once; a login answers 403 e-212 only with the right password (a wrong one: e-208, as for anyone); enabled again, it logs in", async () => {
    const erin = await server.createUser('erin');
    expect(await server.admin.disableUser('erin')).toBe(1);

    expectError(await validate(erin.token), Errors.TOKEN_REVOKED);
    expectError(await login('erin', 'wrong-password-1'), Errors.LOGIN_FAILED);
    expectError(await login('erin'), Errors.USER_DISABLED);
    expectError(await login('erin', TEST_PASSWORD, { api_key: erin.apiKey }), Errors.USER_DISABLED);

    await server.admin.enableUser('erin');
    const back = await login('erin');
    expect(back.status, back.text).toBe(200);
    expect((await validate(back.body.data.access_token)).status).toBe(200);
    // The sessions that disabling ended stay ended.
    expectError(await validate(erin.token), Errors.TOKEN_REVOKED);
  });

  it('a token of a disabled user is refused even when its session was not revoked (a login that committed meanwhile)', async () => {
    const fred = await server.createUser('fred');
    await new UserRepository(server.store.db, server.store.dialect).setDisabled('fred', server.clock.now);
    expectError(await validate(fred.token), Errors.TOKEN_REVOKED);
    expectError(await bid(fred), Errors.TOKEN_REVOKED);
  });

  it('a password reset ends every session; the old password is refused, the new one logs in', async () => {
    const gina = await server.createUser('gina');
    expect(await server.admin.resetPassword('gina', 'a-new-password-7')).toBe(1);
    expectError(await validate(gina.token), Errors.TOKEN_REVOKED);
    expectError(await login('gina'), Errors.LOGIN_FAILED);
    const fresh = await login('gina', 'a-new-password-7');
    expect(fresh.status, fresh.text).toBe(200);
  });
});

describe('LOGIN_REQUIRES_API_KEY (finding 8)', () => {
  let server: TestServer;
  let hana: TestUser;
  let ivan: TestUser;
  beforeAll(async () => {
    server = await startTestServer({ limits: { loginRequiresApiKey: true } });
    hana = await server.createUser('hana');
    ivan = await server.createUser('ivan');
  });
  afterAll(() => server.close());

  const login = (extra: Record<string, unknown>) =>
    server.call('POST', SESSION, {
      body: { user_id: 'hana', login_type: 'PASSWORD', password: TEST_PASSWORD, ...extra },
    });

  it('a password alone opens no session: no api_key (absent, empty or null) answers 401 e-213', async () => {
    for (const extra of [{}, { api_key: '' }, { api_key: null }])
      expectError(await login(extra), Errors.LOGIN_API_KEY_REQUIRED, 'api_key');
  });

  it('an api_key that is not an active key of the user answers 401 e-211, whatever the password', async () => {
    expectError(await login({ api_key: ivan.apiKey }), Errors.LOGIN_API_KEY_INVALID, 'api_key');
    expectError(
      await login({ api_key: 'ogk_unknown', password: 'wrong-password-1' }),
      Errors.LOGIN_API_KEY_INVALID,
      'api_key',
    );
  });

  it("the user's own key and password log in; with the key, a wrong password is still e-208", async () => {
    const ok = await login({ api_key: hana.apiKey });
    expect(ok.status, ok.text).toBe(200);
    expectError(await login({ api_key: hana.apiKey, password: 'wrong-password-1' }), Errors.LOGIN_FAILED);
  });
});

// The rest of the suite hashes at a test-only cost (docs/testing.md); here the server has production's.
describe('password hashes (finding 13)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ passwordHasher: OWASP_PASSWORD_HASHER });
  });
  afterAll(() => server.close());

  const login = (userId: string, password = TEST_PASSWORD) =>
    server.call('POST', SESSION, { body: { user_id: userId, login_type: 'PASSWORD', password } });
  const storedHash = async (userId: string) =>
    (await new UserRepository(server.store.db, server.store.dialect).find(userId))!.passwordHash;

  it("new hashes and the unknown-user hash use OWASP's cost N=2^15 r=8 p=3 (the same cost: no timing oracle)", async () => {
    const hasher = passwordHasherFor('owasp');
    const fresh = await hasher.hash('some-password-1');
    expect(fresh).toMatch(/^scrypt\$32768\$8\$3\$/);
    expect(hasher.unknownUserHash.split('$').slice(0, 4)).toEqual(['scrypt', '32768', '8', '3']);
    expect(hasher.needsRehash(fresh)).toBe(false);
    expect(hasher.needsRehash(hasher.unknownUserHash)).toBe(false);
    // The server's own: a user the operator adds, and a login through the real hash.
    const { totpSecret } = await server.admin.addUser('ivy', TEST_PASSWORD);
    expect(totpSecret).toBeNull();
    expect(await storedHash('ivy')).toMatch(/^scrypt\$32768\$8\$3\$/);
    expect((await login('ivy')).status).toBe(200);
    expectError(await login('ivy', 'wrong-password-1'), Errors.LOGIN_FAILED);
  });

  it('PASSWORD_HASH_COST: owasp by default; test-only-insecure refused with NODE_ENV=production; anything else refused', () => {
    expect(loadConfig({}).passwordHashCost).toBe('owasp');
    expect(loadConfig({ PASSWORD_HASH_COST: 'test-only-insecure' }).passwordHashCost).toBe('test-only-insecure');
    expect(() => loadConfig({ PASSWORD_HASH_COST: 'test-only-insecure', NODE_ENV: 'production' })).toThrow(
      /refused with NODE_ENV=production/,
    );
    expect(() => loadConfig({ PASSWORD_HASH_COST: 'cheap' })).toThrow(
      /PASSWORD_HASH_COST must be one of owasp, test-only-insecure/,
    );
  });

  it('a server others reach needs PUBLIC_URL, so that no Host header chooses the socket URL of a login answer (issue 21 row 11)', () => {
    const problem = (env: Record<string, string>) => publicUrlProblem(loadConfig(env), env);
    expect(problem({})).toBeNull(); // 127.0.0.1, a developer's machine
    expect(problem({ HOST: 'localhost' })).toBeNull();
    expect(problem({ HOST: '::1' })).toBeNull();
    expect(problem({ HOST: '0.0.0.0' })).toMatch(
      /^PUBLIC_URL is required with HOST=0\.0\.0\.0: the login answer names the live order socket/,
    );
    expect(problem({ HOST: '10.0.0.5' })).toMatch(/HOST=10\.0\.0\.5/);
    expect(problem({ NODE_ENV: 'production' })).toMatch(/^PUBLIC_URL is required with NODE_ENV=production/);
    expect(problem({ HOST: '0.0.0.0', NODE_ENV: 'production', PUBLIC_URL: 'https://api.example.com' })).toBeNull();
  });

  it("a hash made at the test-only cost is re-hashed at OWASP's by a production server's login", async () => {
    await server.admin.addUser('hal', TEST_PASSWORD);
    const cheap = await passwordHasherFor('test-only-insecure').hash(TEST_PASSWORD);
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
    await server.store.db.updateTable('users').set({ password_hash: cheap }).where('user_id', '=', 'hal').execute();
    expect((await login('hal')).status).toBe(200);
    expect(await storedHash('hal')).toMatch(/^scrypt\$32768\$8\$3\$/);
  });

  it('a hash stored with the old cost (N=2^15 r=8 p=1) still logs in, and is re-hashed with the new cost by that login', async () => {
    await server.admin.addUser('jack', TEST_PASSWORD);
    const { scryptSync, randomBytes } = await import('node:crypto');
    const salt = randomBytes(16);
    const old = [
      'scrypt',
      2 ** 15,
      8,
      1,
      salt.toString('base64'),
      scryptSync(TEST_PASSWORD, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString('base64'),
    ].join('$');
    await server.store.db.updateTable('users').set({ password_hash: old }).where('user_id', '=', 'jack').execute();

    expectError(await login('jack', 'wrong-password-1'), Errors.LOGIN_FAILED);
    expect(await storedHash('jack')).toBe(old);
    const first = await login('jack');
    expect(first.status, first.text).toBe(200);
    const rehashed = await storedHash('jack');
    expect(rehashed).toMatch(/^scrypt\$32768\$8\$3\$/);
    expect((await login('jack')).status).toBe(200);
    expect(await storedHash('jack')).toBe(rehashed);
  });

  it('takes password checks in turns: a flood from one address, once the checks are busy, is refused beyond its share with 429 e-429 and Retry-After: 1; the others are checked', async () => {
    await server.admin.addUser('kate', TEST_PASSWORD);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login(i === 29 ? 'kate' : `nobody${i}`, 'wrong-password-1')),
    );
    const statuses = answers.map((answer) => answer.status);
    // 2 checked at once; once half the 16 waiting places are taken, this address, holding 10, gets no
    // more (the other half stays for other addresses; the 503 of a full queue is in
    // test/auth/password-checks.test.ts).
    // (10 and 20 when all 30 arrive before the first check ends, as they do but on a very slow machine.)
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(15);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(15);
    for (const answer of refused) {
      expectError(answer, Errors.RATE_LIMITED);
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    // Once the flood has passed, logins are checked again.
    expect((await login('kate')).status).toBe(200);
  });
});
