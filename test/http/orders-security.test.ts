/**
 * POST /transactional/v1/orders/regular, security (seed 5, product.md "Authentication"): a bid needs a live
 * bearer token and an active API key of the same user. Every refusal answers its code, names the header at
 * fault, stores no order and echoes no secret.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import {
  startTestServer,
  validBid,
  type CallOptions,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const SESSION = '/authentication/v1/user/session';
const DAY_MS = 24 * 60 * 60 * 1000;

describe('place an OFS bid: security', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let ordersBefore: number;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
  });
  afterAll(() => server.close());

  const countOrders = async () =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeEach(async () => {
    ordersBefore = await countOrders();
  });

  const place = (options: CallOptions): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body: validBid(), ...options });

  async function expectRefusal(res: CallResult, kind: ErrorKind, field: string, secrets: string[] = []): Promise<void> {
    expect(res.status, res.text).toBe(kind.status);
    expect(res.body.code, res.text).toBe(kind.code);
    expect(res.body.status).toBe('error');
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    for (const secret of secrets) expect(res.text).not.toContain(secret);
    expect(await countOrders()).toBe(ordersBefore);
  }

  it("accepts the bid with alice's token and alice's key (the baseline the refusals below break)", async () => {
    const res = await place({ token: alice.token, apiKey: alice.apiKey });
    expect(res.status).toBe(200);
    expect(await countOrders()).toBe(ordersBefore + 1);
  });

  it('refuses a call without Authorization (401 e-201)', async () => {
    await expectRefusal(await place({ apiKey: alice.apiKey }), Errors.TOKEN_MISSING, 'Authorization');
  });

  it('refuses an Authorization header that is not a Bearer token (401 e-201)', async () => {
    const basic = `Basic ${Buffer.from(`alice:${alice.password}`).toString('base64')}`;
    await expectRefusal(
      await place({ apiKey: alice.apiKey, headers: { authorization: basic } }),
      Errors.TOKEN_MISSING,
      'Authorization',
    );
  });

  it('refuses "Bearer" with no token (401 e-201)', async () => {
    await expectRefusal(
      await place({ apiKey: alice.apiKey, headers: { authorization: 'Bearer ' } }),
      Errors.TOKEN_MISSING,
      'Authorization',
    );
  });

  it('refuses an unknown token (401 e-202)', async () => {
    const forged = `ogt_${'A'.repeat(43)}`;
    await expectRefusal(await place({ token: forged, apiKey: alice.apiKey }), Errors.TOKEN_INVALID, 'Authorization', [
      forged,
    ]);
  });

  it('refuses a token more than 24 h after login (401 e-203)', async () => {
    const carol = await server.createUser('carol');
    const loggedInAt = server.clock.now;
    try {
      server.clock.now = loggedInAt + DAY_MS + 1000;
      await expectRefusal(
        await place({ token: carol.token, apiKey: carol.apiKey }),
        Errors.TOKEN_EXPIRED,
        'Authorization',
        [carol.token],
      );
    } finally {
      server.clock.now = loggedInAt;
    }
  });

  it('refuses a token revoked by logout (401 e-204)', async () => {
    const dave = await server.createUser('dave');
    const logout = await server.call('DELETE', SESSION, { token: dave.token });
    expect(logout.status).toBe(200);
    await expectRefusal(
      await place({ token: dave.token, apiKey: dave.apiKey }),
      Errors.TOKEN_REVOKED,
      'Authorization',
      [dave.token],
    );
  });

  it('refuses a call without x-api-key (401 e-205)', async () => {
    await expectRefusal(await place({ token: alice.token }), Errors.API_KEY_MISSING, 'x-api-key');
  });

  it('refuses an empty x-api-key (401 e-205)', async () => {
    await expectRefusal(
      await place({ token: alice.token, headers: { 'x-api-key': '' } }),
      Errors.API_KEY_MISSING,
      'x-api-key',
    );
  });

  it('refuses an unknown API key (401 e-206)', async () => {
    const forged = `ogk_${'B'.repeat(43)}`;
    await expectRefusal(await place({ token: alice.token, apiKey: forged }), Errors.API_KEY_INVALID, 'x-api-key', [
      forged,
    ]);
  });

  it("refuses a revoked API key (401 e-206), while the user's other key still works", async () => {
    const { keyId, apiKey } = await server.admin.createApiKey('alice');
    expect((await place({ token: alice.token, apiKey })).status).toBe(200);
    ordersBefore = await countOrders();
    await server.admin.revokeApiKey(keyId);
    await expectRefusal(await place({ token: alice.token, apiKey }), Errors.API_KEY_INVALID, 'x-api-key', [apiKey]);
    expect((await place({ token: alice.token, apiKey: alice.apiKey })).status).toBe(200);
  });

  it("refuses another user's API key with the caller's token (403 e-207)", async () => {
    await expectRefusal(
      await place({ token: alice.token, apiKey: bob.apiKey }),
      Errors.API_KEY_OTHER_USER,
      'x-api-key',
      [bob.apiKey],
    );
  });

  it("refuses another user's token with the caller's API key (403 e-207)", async () => {
    await expectRefusal(
      await place({ token: bob.token, apiKey: alice.apiKey }),
      Errors.API_KEY_OTHER_USER,
      'x-api-key',
      [alice.apiKey],
    );
  });

  it('checks the credentials before the body: an unauthenticated call with a broken body answers 401, not 400', async () => {
    const res = await server.call('POST', PLACE_ORDER, { rawBody: '{"quantity":', apiKey: alice.apiKey });
    await expectRefusal(res, Errors.TOKEN_MISSING, 'Authorization');
  });
});
