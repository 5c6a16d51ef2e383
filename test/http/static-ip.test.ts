/**
 * SEBI's static IP rule at the API (issue 23; docs/design/sebi-algo.md): an API key bound to its primary
 * and secondary addresses is refused, 403 e-215, when a call or a login sends it from any other address,
 * as TRUST_PROXY reads the caller's address; a change of the addresses takes effect at once and is allowed
 * once a week unless overridden; with STATIC_IP_REQUIRED a key without addresses is refused too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminError } from '../../src/domain/errors.js';
import { startTestServer, TEST_PASSWORD, validBid, type TestServer, type TestUser } from '../support/server.js';
import { testMemberData } from '../support/member-data.js';

const PLACE = '/transactional/v1/orders/regular';
const LOGIN = '/authentication/v1/user/session';

const loginBody = (user: { userId: string; apiKey: string }) => ({
  user_id: user.userId,
  login_type: 'PASSWORD',
  password: TEST_PASSWORD,
  second_auth_type: '',
  second_auth: '',
  api_key: user.apiKey,
  source: 'WEBAPI',
});

async function keyIdOf(server: TestServer, userId: string): Promise<string> {
  const [key] = await server.admin.listApiKeys(userId);
  return key!.keyId;
}

describe('an API key bound to its addresses', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
  });
  afterAll(() => server.close());

  const bid = (headers: Record<string, string> = {}) =>
    server.call('POST', PLACE, { body: validBid(), token: alice.token, apiKey: alice.apiKey, headers });

  it('is refused from another address, for order entry and at login, and works again at once when the address is registered', async () => {
    // A key without addresses works from anywhere while STATIC_IP_REQUIRED is off.
    expect((await bid()).status).toBe(200);
    const keyId = await keyIdOf(server, alice.userId);
    await server.admin.setApiKeyAddresses(keyId, ['203.0.113.7'], false);

    const refused = await bid();
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ status: 'error', code: 'e-215' });
    expect(refused.body.message).toMatch(/not registered for 127\.0\.0\.1$/);
    expect(refused.text).not.toContain('203.0.113.7');
    const login = await server.call('POST', LOGIN, { body: loginBody(alice) });
    expect(login.status, login.text).toBe(403);
    expect(login.body).toMatchObject({ code: 'e-215', errors: [{ field: 'api_key' }] });
    // X-Forwarded-For is not believed without TRUST_PROXY: the caller is still 127.0.0.1.
    expect((await bid({ 'x-forwarded-for': '203.0.113.7' })).body).toMatchObject({ code: 'e-215' });

    // Changed again within the week (an hour later): only with the override, which the record keeps.
    server.clock.now += 60 * 60 * 1000;
    await expect(server.admin.setApiKeyAddresses(keyId, ['203.0.113.7', '127.0.0.1'], false)).rejects.toThrow(
      AdminError,
    );
    expect((await bid()).status).toBe(403);
    expect(await server.admin.setApiKeyAddresses(keyId, ['203.0.113.7', '::ffff:127.0.0.1'], true)).toEqual([
      '203.0.113.7',
      '127.0.0.1',
    ]);
    expect((await bid()).status).toBe(200);
    expect((await server.call('POST', LOGIN, { body: loginBody(alice) })).status).toBe(200);
    const history = await server.admin.apiKeyAddressHistory(keyId);
    expect(history.changes.map((c) => [c.previous, c.addresses, c.override])).toEqual([
      [null, '203.0.113.7', false],
      ['203.0.113.7', '203.0.113.7,127.0.0.1', true],
    ]);
  });
});

describe('behind a trusted proxy', () => {
  let server: TestServer;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ trustProxy: '127.0.0.1' });
    await server.registerIssue();
    bob = await server.createUser('bob');
    await server.admin.setApiKeyAddresses(await keyIdOf(server, bob.userId), ['203.0.113.7'], false);
  });
  afterAll(() => server.close());

  it("takes the caller's address from X-Forwarded-For as TRUST_PROXY says", async () => {
    const from = (address: string) =>
      server.call('POST', PLACE, {
        body: validBid(),
        token: bob.token,
        apiKey: bob.apiKey,
        headers: { 'x-forwarded-for': address },
      });
    expect((await from('203.0.113.7')).status).toBe(200);
    const other = await from('198.51.100.9');
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'e-215' });
  });
});

describe('with STATIC_IP_REQUIRED', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ limits: { staticIpRequired: true } });
    await server.registerIssue();
  });
  afterAll(() => server.close());

  it('refuses a key that has no registered address, and takes one that has', async () => {
    await server.admin.addUser('carol', TEST_PASSWORD, { member: testMemberData('carol') });
    const unbound = await server.admin.createApiKey('carol');
    const refused = await server.call('POST', LOGIN, { body: loginBody({ userId: 'carol', apiKey: unbound.apiKey }) });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'e-215', message: expect.stringMatching(/no registered IP address/) });

    const bound = await server.admin.createApiKey('carol', ['127.0.0.1']);
    expect(bound.addresses).toEqual(['127.0.0.1']);
    const login = await server.call('POST', LOGIN, { body: loginBody({ userId: 'carol', apiKey: bound.apiKey }) });
    expect(login.status, login.text).toBe(200);
    const token = login.body.data.access_token as string;
    expect((await server.call('POST', PLACE, { body: validBid(), token, apiKey: bound.apiKey })).status).toBe(200);
    // The session is the user's, but the key sent with each call is judged too.
    const withUnbound = await server.call('POST', PLACE, { body: validBid(), token, apiKey: unbound.apiKey });
    expect(withUnbound.status).toBe(403);
    expect(withUnbound.body).toMatchObject({ code: 'e-215', errors: [{ field: 'x-api-key' }] });
  });
});
