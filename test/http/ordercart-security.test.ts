import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PATH = '/transactional/v1/ordercart';

function createBody(userId: string, name = 'Alice private basket') {
  return {
    ordercartName: name,
    orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
    version: '1',
    createdBy: userId,
    modifiedBy: userId,
    executedNoTime: 0,
  };
}

describe('order cart security', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let aliceCart: string;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    const res = await server.call('POST', PATH, { body: createBody('alice'), token: alice.token });
    expect(res.status).toBe(200);
    aliceCart = res.body.data.ordercartId;
  });
  afterAll(() => server.close());

  /** Every cart operation, with a body that would succeed for alice's own cart. */
  const operations = () =>
    [
      ['POST', PATH, createBody('alice')],
      ['GET', PATH, undefined],
      ['GET', `${PATH}/${aliceCart}`, undefined],
      ['PUT', PATH, { ...createBody('alice'), ordercartId: aliceCart }],
      ['DELETE', `${PATH}/${aliceCart}`, undefined],
    ] as const;

  async function aliceCartRow() {
    return server.store.db
      .selectFrom('order_carts')
      .selectAll()
      .where('ordercart_id', '=', aliceCart)
      .executeTakeFirst();
  }

  async function cartCount(): Promise<number> {
    return (await server.store.db.selectFrom('order_carts').select('ordercart_id').execute()).length;
  }

  describe('authentication', () => {
    it('every operation without a token answers 401 e-201 and changes nothing', async () => {
      const before = await cartCount();
      for (const [method, path, body] of operations()) {
        const res = await server.call(method, path, { body });
        expect({ method, path, status: res.status, code: res.body.code }).toEqual({
          method,
          path,
          status: 401,
          code: 'e-201',
        });
      }
      expect(await cartCount()).toBe(before);
      expect(await aliceCartRow()).toMatchObject({ revision: 1 });
    });

    it('an API key is no substitute for the bearer token (401 e-201)', async () => {
      const res = await server.call('GET', PATH, { apiKey: alice.apiKey });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('e-201');
    });

    it('a token that is not Bearer, or unknown, is refused (e-201, e-202)', async () => {
      const basic = await server.call('GET', PATH, { headers: { authorization: `Basic ${alice.token}` } });
      expect([basic.status, basic.body.code]).toEqual([401, 'e-201']);
      const unknown = await server.call('GET', PATH, { token: 'ogt_not-a-real-token' });
      expect([unknown.status, unknown.body.code]).toEqual([401, 'e-202']);
    });

    it('authentication runs before the body is read: a bad body without a token answers 401, not 400', async () => {
      const res = await server.call('PUT', PATH, { body: { orders: 'not json' } });
      expect([res.status, res.body.code]).toEqual([401, 'e-201']);
    });

    it('the token alone is enough: no x-api-key is needed for cart calls', async () => {
      const res = await server.call('GET', `${PATH}/${aliceCart}`, { token: alice.token });
      expect(res.status).toBe(200);
    });

    it('an expired token is refused on every operation (e-203)', async () => {
      const start = server.clock.now;
      server.clock.now = start + 25 * 60 * 60 * 1000;
      try {
        for (const [method, path, body] of operations()) {
          const res = await server.call(method, path, { body, token: alice.token });
          expect({ method, path, status: res.status, code: res.body.code }).toEqual({
            method,
            path,
            status: 401,
            code: 'e-203',
          });
        }
      } finally {
        server.clock.now = start;
      }
      expect(await aliceCartRow()).toMatchObject({ revision: 1 });
    });

    it('a token revoked by logout is refused at once on every operation (e-204)', async () => {
      const carol = await server.createUser('carol');
      const own = await server.call('POST', PATH, { body: createBody('carol', 'Carol basket'), token: carol.token });
      expect(own.status).toBe(200);
      const logout = await server.call('DELETE', '/authentication/v1/user/session', { token: carol.token });
      expect(logout.status).toBe(200);
      const carolOperations = [
        ['POST', PATH, createBody('carol')],
        ['GET', PATH, undefined],
        ['GET', `${PATH}/${own.body.data.ordercartId}`, undefined],
        ['PUT', PATH, { ...createBody('carol'), ordercartId: own.body.data.ordercartId }],
        ['DELETE', `${PATH}/${own.body.data.ordercartId}`, undefined],
      ] as const;
      for (const [method, path, body] of carolOperations) {
        const res = await server.call(method, path, { body, token: carol.token });
        expect({ method, path, status: res.status, code: res.body.code }).toEqual({
          method,
          path,
          status: 401,
          code: 'e-204',
        });
      }
      const stored = await server.store.db
        .selectFrom('order_carts')
        .selectAll()
        .where('user_id', '=', 'carol')
        .execute();
      expect(stored.map((c) => [c.name, c.revision])).toEqual([['Carol basket', 1]]);
    });
  });

  describe("another user's cart does not exist for the caller", () => {
    /** The 404 of a cart id, with the parts that echo the request (id, request id) blanked. */
    function notFoundShape(res: CallResult, id: string) {
      return { status: res.status, text: res.text.replaceAll(id, '<id>').replace(/"request_id":"[^"]+"/, '') };
    }

    it("details of alice's cart, asked by bob, answer exactly as an id that exists nowhere", async () => {
      const foreign = await server.call('GET', `${PATH}/${aliceCart}`, { token: bob.token });
      const missing = await server.call('GET', `${PATH}/0190a0c1-0000-7000-8000-000000000000`, { token: bob.token });
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('e-405');
      expect(foreign.headers.get('etag')).toBeNull();
      expect(notFoundShape(foreign, aliceCart)).toEqual(notFoundShape(missing, '0190a0c1-0000-7000-8000-000000000000'));
      expect(foreign.text).not.toContain('Alice private basket');
      expect(foreign.text).not.toContain('alice');
    });

    it("bob cannot update alice's cart, even naming alice as creator and modifier: 404 e-405, cart unchanged", async () => {
      const res = await server.call('PUT', PATH, {
        body: { ...createBody('alice', 'Hijacked'), ordercartId: aliceCart },
        token: bob.token,
      });
      expect([res.status, res.body.code]).toEqual([404, 'e-405']);
      expect(await aliceCartRow()).toMatchObject({ name: 'Alice private basket', modified_by: 'alice', revision: 1 });
    });

    it('404 comes before every other stored-state rule: wrong writers, stale If-Match, stale executedNoTime', async () => {
      const res = await server.call('PUT', PATH, {
        body: { ...createBody('bob', 'Hijacked'), executedNoTime: 7, ordercartId: aliceCart },
        token: bob.token,
        headers: { 'if-match': '"99"' },
      });
      expect([res.status, res.body.code]).toEqual([404, 'e-405']);
      expect(res.headers.get('etag')).toBeNull();
    });

    it("bob cannot delete alice's cart: 404 e-405, and it is still hers", async () => {
      const res = await server.call('DELETE', `${PATH}/${aliceCart}`, { token: bob.token });
      expect([res.status, res.body.code]).toEqual([404, 'e-405']);
      const details = await server.call('GET', `${PATH}/${aliceCart}`, { token: alice.token });
      expect(details.status).toBe(200);
      expect(details.body.data.ordercartName).toBe('Alice private basket');
    });

    it("bob's list holds only bob's carts", async () => {
      const own = await server.call('POST', PATH, { body: createBody('bob', 'Bob basket'), token: bob.token });
      const res = await server.call('GET', PATH, { token: bob.token });
      expect(res.status).toBe(200);
      expect(
        res.body.data.map((c: { ordercartId: string; createdBy: string }) => [c.ordercartId, c.createdBy]),
      ).toEqual([[own.body.data.ordercartId, 'bob']]);
      expect(res.text).not.toContain(aliceCart);
    });

    it("bob cannot create a cart in alice's name (403 e-406), and alice gets no new cart", async () => {
      const before = (await server.call('GET', PATH, { token: alice.token })).body.data.length;
      const res = await server.call('POST', PATH, { body: createBody('alice', 'Planted'), token: bob.token });
      expect([res.status, res.body.code]).toEqual([403, 'e-406']);
      expect(res.body.errors).toEqual([
        { field: 'createdBy', message: 'createdBy must be your own user id, bob' },
        { field: 'modifiedBy', message: 'modifiedBy must be your own user id, bob' },
      ]);
      expect((await server.call('GET', PATH, { token: alice.token })).body.data.length).toBe(before);
    });

    it('an id crafted like SQL finds nothing (404 e-405)', async () => {
      const res = await server.call('GET', `${PATH}/${encodeURIComponent("x'OR'1'='1")}`, { token: bob.token });
      expect([res.status, res.body.code]).toEqual([404, 'e-405']);
    });
  });
});
