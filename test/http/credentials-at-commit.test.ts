/**
 * Order entry's credentials (docs/design/security.md, "Order entry's credentials"): a bid, modification,
 * cancellation or carry-forward may take the caller's session and API key as read for the same token and
 * key within the last second, and its batch reads them again in the transaction that would write the
 * change. So a session revoked or of a disabled user, or a key revoked or moved to other addresses, by
 * another process (the operator's command, another node's logout), refuses the very next call with the
 * answer a fresh read gives, and nothing is written: each test first makes its caller's credentials
 * recent with a bid that passes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { UserRepository } from '../../src/store/users.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE = '/transactional/v1/orders/regular';

function expectError(res: CallResult, kind: ErrorKind): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body.code, res.text).toBe(kind.code);
}

describe("order entry's credentials, recent at the request and read again at commit", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
  });
  afterAll(() => server.close());

  const bid = (user: TestUser, headers: Record<string, string> = {}) =>
    server.call('POST', PLACE, { body: validBid(), token: user.token, apiKey: user.apiKey, headers });
  const ordersOf = async (userId: string) =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** A user whose credentials the node has just read, with the order id of the bid that read them. */
  const recentUser = async (userId: string): Promise<{ user: TestUser; orderId: string }> => {
    const user = await server.createUser(userId);
    const placed = await bid(user);
    expect(placed.status, placed.text).toBe(200);
    return { user, orderId: placed.body.data.orderId };
  };

  it('reads the credentials once for the bids of a second, not once per bid', async () => {
    const { user } = await recentUser('amy');
    const reads = vi.spyOn(UserRepository.prototype, 'findSessionAndKeyOwner');
    try {
      for (let i = 0; i < 5; i++) expect((await bid(user)).status).toBe(200);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it("the operator's revocation of the sessions: the next bid 401 e-204, nothing written", async () => {
    const { user } = await recentUser('bea');
    expect(await server.admin.revokeSessions('bea')).toBe(1);
    expectError(await bid(user), Errors.TOKEN_REVOKED);
    expect(await ordersOf('bea')).toBe(1);
  });

  it('a disabled user: the next bid 401 e-204, nothing written', async () => {
    const { user } = await recentUser('cleo');
    await new UserRepository(server.store.db, server.store.dialect).setDisabled('cleo', server.clock.now);
    expectError(await bid(user), Errors.TOKEN_REVOKED);
    expect(await ordersOf('cleo')).toBe(1);
  });

  it('a revoked API key: the next bid 401 e-206, nothing written', async () => {
    const { user } = await recentUser('dana');
    const [key] = await server.admin.listApiKeys('dana');
    await server.admin.revokeApiKey(key!.keyId);
    expectError(await bid(user), Errors.API_KEY_INVALID);
    expect(await ordersOf('dana')).toBe(1);
  });

  it('a key bound to other addresses: the next bid 403 e-215, nothing written', async () => {
    const { user } = await recentUser('eve');
    const [key] = await server.admin.listApiKeys('eve');
    await server.admin.setApiKeyAddresses(key!.keyId, ['203.0.113.7'], true);
    expectError(await bid(user), Errors.API_KEY_ADDRESS);
    expect(await ordersOf('eve')).toBe(1);
  });

  it('a cancellation and a modification after the revocation: 401 e-204, the order left as it was', async () => {
    const { user, orderId } = await recentUser('fay');
    const orderRow = () => server.store.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirstOrThrow();
    const before = await orderRow();
    await server.admin.revokeSessions('fay');
    const path = `${PLACE}/NSE_EQ/${orderId}`;
    expectError(await server.call('DELETE', path, { token: user.token, apiKey: user.apiKey }), Errors.TOKEN_REVOKED);
    const modify = { order_type: 'LIMIT', quantity: 10, price: validBid().price };
    expectError(await server.call('PUT', path, { body: modify, token: user.token, apiKey: user.apiKey }), Errors.TOKEN_REVOKED);
    expect(await orderRow()).toEqual(before);
  });

  it("the logout's own node forgets the token at once: refused before the batch, with a fresh read", async () => {
    const { user } = await recentUser('gia');
    expect((await server.call('DELETE', '/authentication/v1/user/session', { token: user.token })).status).toBe(200);
    const reads = vi.spyOn(UserRepository.prototype, 'findSessionAndKeyOwner');
    try {
      expectError(await bid(user), Errors.TOKEN_REVOKED);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
    expect(await ordersOf('gia')).toBe(1);
  });

  it('a request with an Idempotency-Key reads its credentials fresh (a replay is answered without a commit)', async () => {
    const { user } = await recentUser('hana');
    const reads = vi.spyOn(UserRepository.prototype, 'findSessionAndKeyOwner');
    try {
      expect((await bid(user, { 'idempotency-key': 'hana-1' })).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
      await server.admin.revokeSessions('hana');
      expectError(await bid(user, { 'idempotency-key': 'hana-1' }), Errors.TOKEN_REVOKED);
    } finally {
      reads.mockRestore();
    }
  });
});
