/**
 * Carts per user are capped and the cart list is paged (issue 12, finding 5; docs/design/order-carts.md
 * "How many carts, and the list"): MAX_CARTS_PER_USER carts at most, a create beyond answers 422 e-417 and
 * creates nothing, also when creates race at cap - 1; the list pages as the order book does (offset, limit,
 * the X-Total-Count header), its first page of 100 by default. Runs on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const CART = '/transactional/v1/ordercart';
const CAP = 3;

describe('carts per user are capped (MAX_CARTS_PER_USER)', () => {
  let server: TestServer;
  let userCount = 0;

  beforeAll(async () => {
    server = await startTestServer({ limits: { cartsPerUser: CAP } });
  });
  afterAll(() => server.close());

  const newUser = () => server.createUser(`cap${++userCount}`);
  const createBody = (user: TestUser, name: string) => ({
    ordercartName: name,
    orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
    version: '1',
    createdBy: user.userId,
    modifiedBy: user.userId,
    executedNoTime: 0,
  });
  const create = (user: TestUser, name: string) =>
    server.call('POST', CART, { body: createBody(user, name), token: user.token });

  async function storedCarts(user: TestUser): Promise<string[]> {
    const rows = await server.store.db
      .selectFrom('order_carts')
      .select('name')
      .where('user_id', '=', user.userId)
      .orderBy('name')
      .execute();
    return rows.map((row) => row.name);
  }

  function expectCartLimit(res: CallResult): void {
    expect(res.status, res.text).toBe(422);
    expect(res.body).toEqual({
      status: 'error',
      code: Errors.CART_LIMIT.code,
      message: `You already keep ${CAP} order carts, the most one user may keep; delete one before creating another`,
      errors: [{ field: '', message: `at most ${CAP} order carts per user` }],
      request_id: res.headers.get('request-id'),
    });
  }

  it('a create beyond the cap answers 422 e-417 and creates nothing; other users are not affected; a delete frees a place', async () => {
    const alice = await newUser();
    const bob = await newUser();
    for (const name of ['a1', 'a2', 'a3']) expect((await create(alice, name)).status).toBe(200);

    expectCartLimit(await create(alice, 'a4'));
    expect(await storedCarts(alice)).toEqual(['a1', 'a2', 'a3']);
    expect((await create(bob, 'b1')).status).toBe(200);

    const list = await server.call('GET', CART, { token: alice.token });
    await server.call('DELETE', `${CART}/${list.body.data[0].ordercartId}`, { token: alice.token });
    expect((await create(alice, 'a5')).status).toBe(200);
    expect((await storedCarts(alice)).length).toBe(CAP);
  });

  it('a request-alone fault (400) and another user in createdBy (403) answer before the cap', async () => {
    const carol = await newUser();
    for (const name of ['c1', 'c2', 'c3']) await create(carol, name);
    expect(
      (await server.call('POST', CART, { body: { ...createBody(carol, 'c4'), version: '2' }, token: carol.token }))
        .status,
    ).toBe(400);
    expect(
      (
        await server.call('POST', CART, {
          body: { ...createBody(carol, 'c4'), createdBy: 'someone' },
          token: carol.token,
        })
      ).status,
    ).toBe(403);
  });

  it('creates racing at cap - 1: exactly one passes, the others answer 422 e-417, and the user keeps exactly the cap', async () => {
    for (let round = 0; round < 3; round += 1) {
      const dave = await newUser();
      for (const name of ['d1', 'd2']) await create(dave, name);
      const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => create(dave, `race${i}`)));
      expect(racing.filter((res) => res.status === 200)).toHaveLength(1);
      for (const res of racing.filter((r) => r.status !== 200)) expectCartLimit(res);
      expect(await storedCarts(dave)).toHaveLength(CAP);
    }
  });
});

describe('the cart list is paged as the order book is', () => {
  let server: TestServer;
  let erin: TestUser;
  /** Erin's cart names, newest first. */
  const newestFirst: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ limits: { cartsPerUser: 105 } });
    erin = await server.createUser('erin');
    for (let i = 0; i < 105; i += 1) {
      server.clock.now += 1000;
      const body = {
        ordercartName: `cart ${i}`,
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: 'erin',
        modifiedBy: 'erin',
        executedNoTime: 0,
      };
      const res = await server.call('POST', CART, { body, token: erin.token });
      expect(res.status, res.text).toBe(200);
      newestFirst.unshift(`cart ${i}`);
    }
  });
  afterAll(() => server.close());

  const list = (query = '') => server.call('GET', `${CART}${query}`, { token: erin.token });
  const names = (res: CallResult) => res.body.data.map((cart: { ordercartName: string }) => cart.ordercartName);

  it('without paging parameters: the first page of 100, newest first, and the count of all carts', async () => {
    const res = await list();
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: 'success',
      code: 's-101',
      message: 'Ordercart list fetched successfully',
    });
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(names(res)).toEqual(newestFirst.slice(0, 100));
    expect(res.headers.get('x-total-count')).toBe('105');
    expect(res.body.data[0].orders).toEqual([EXAMPLE_ORDER_LINE]);
  });

  it('offset is the page number and limit the page size; past the last page, an empty page', async () => {
    const second = await list('?offset=2&limit=10');
    expect(names(second)).toEqual(newestFirst.slice(10, 20));
    expect(second.headers.get('x-total-count')).toBe('105');
    expect(names(await list('?offset=2'))).toEqual(newestFirst.slice(100));
    expect(names(await list('?limit=1'))).toEqual(newestFirst.slice(0, 1));
    const beyond = await list('?offset=12&limit=10');
    expect(beyond.body.data).toEqual([]);
    expect(beyond.headers.get('x-total-count')).toBe('105');
  });

  it.each(['?limit=101', '?limit=0', '?limit=1000', '?offset=0', '?offset=-1', '?limit=ten', '?page=2'])(
    '%s answers 400 e-110',
    async (query) => {
      const res = await list(query);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.INVALID_QUERY.code);
    },
  );

  it("another user's list counts only their own carts", async () => {
    const frank = await server.createUser('frank');
    const res = await server.call('GET', CART, { token: frank.token });
    expect(res.body.data).toEqual([]);
    expect(res.headers.get('x-total-count')).toBe('0');
  });
});
