/**
 * /authentication/v1/user/session (product.md "Endpoints" and "Authentication"): ODIN login (POST),
 * validate (PUT) and logout (DELETE), through the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/credentials.js';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { startTestServer, TEST_PASSWORD, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const SESSION = '/authentication/v1/user/session';
const DAY_MS = 24 * 60 * 60 * 1000;

function expectError(res: CallResult, kind: ErrorKind, field?: string): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body.code, res.text).toBe(kind.code);
  expect(res.body.status).toBe('error');
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
  if (field !== undefined) expect(res.body.errors.map((e: { field: string }) => e.field), res.text).toContain(field);
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
      expect(Object.keys(res.body.data).sort()).toEqual(['access_token', 'expires_at', 'others', 'token_type', 'user_id']);
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
        expectError(await login({ user_id: 'alice', login_type: 'PASSWORD', password: 12345678 }), Errors.WRONG_TYPE, 'password');
      });

      it('refuses an unknown field (400 e-105)', async () => {
        expectError(await aliceLogin({ remember_me: true }), Errors.UNKNOWN_FIELD, 'remember_me');
      });
    });
  });

  describe('PUT: validate', () => {
    it('answers exactly the session\'s user and expiry for a live token', async () => {
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
      expect(res.body).toEqual({ status: 'success', code: 's-101', message: 'Logged out successfully', data: [{ message: 'success' }] });

      expectError(await validate(first), Errors.TOKEN_REVOKED, 'Authorization');
      expectError(await server.call('DELETE', SESSION, { token: first }), Errors.TOKEN_REVOKED, 'Authorization');
      expectError(
        await server.call('POST', '/transactional/v1/orders/regular', { body: validBid(), token: first, apiKey: alice.apiKey }),
        Errors.TOKEN_REVOKED,
        'Authorization',
      );

      expect((await validate(second)).status).toBe(200);
      const bid = await server.call('POST', '/transactional/v1/orders/regular', { body: validBid(), token: second, apiKey: alice.apiKey });
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
