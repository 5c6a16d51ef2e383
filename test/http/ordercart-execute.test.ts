/**
 * POST /transactional/v1/ordercart/{ordercartId}/execute (product.md "Cart execution"): each line placed as
 * a single bid would be, answered line by line; s-101, s-102 or 422 e-412; executedNoTime counted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/ids.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import type { Caller } from '../../src/services/auth.js';
import { OrderCartService } from '../../src/services/order-carts.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OrderCartRepository } from '../../src/store/orders/carts.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';
import { DELIVERY_LINE } from '../support/fixtures.js';
import { testMember } from '../support/member-data.js';

const PATH = '/transactional/v1/ordercart';
const PLACE_ORDER = '/transactional/v1/orders/regular';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const line = (overrides: Record<string, unknown> = {}, scrip: Record<string, unknown> = {}) => ({
  ...EXAMPLE_ORDER_LINE,
  ...overrides,
  scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, ...scrip },
});

const CUTOFF_LINE = line({ OrderType: 'RL-MKT', Price: '0', Quantity: 20 });
/** Price 101.52 is off the 0.05 tick (e-353 on a single bid). */
const OFF_TICK_LINE = line({ Price: '101.52' });

describe('execute an order cart', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nora: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    await server.registerIssue({ exchange: 'BSE_EQ', scripToken: 543210 });
    // Two issues of one symbol and series on one exchange: only scripToken tells them apart.
    await server.registerIssue({ symbol: 'TWIN', scripToken: 700001 });
    await server.registerIssue({ symbol: 'TWIN', scripToken: 700002 });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  async function createCart(user: TestUser, lines: unknown[]): Promise<string> {
    const body = {
      ordercartName: 'Basket',
      orders: JSON.stringify(lines),
      version: '1',
      createdBy: user.userId,
      modifiedBy: user.userId,
      executedNoTime: 0,
    };
    const res = await server.call('POST', PATH, { body, token: user.token });
    expect(res.status).toBe(200);
    return res.body.data.ordercartId;
  }

  /**
   * A cart stored as it was saved before its issue's tick or floor changed: saving refuses an OFS line of
   * a registered issue off its tick or below its floor (test/http/ordercart-save-checks.test.ts), and
   * execution checks every line against the issue as it is then.
   */
  async function storedCart(user: TestUser, lines: unknown[]): Promise<string> {
    const ordercartId = timeOrderedId();
    const cart = { ordercartId, userId: user.userId, name: 'Basket', ordersJson: JSON.stringify(lines), version: '1' };
    expect(await new OrderCartRepository(server.store.db).insertWithinCap(cart, server.clock.now, 100)).toBe(true);
    return ordercartId;
  }

  const execute = (id: string, user: TestUser, auth: { token?: string | null; apiKey?: string | null } = {}) =>
    server.call('POST', `${PATH}/${id}/execute`, { token: user.token, apiKey: user.apiKey, ...auth });

  const details = (id: string, user: TestUser) => server.call('GET', `${PATH}/${id}`, { token: user.token });

  async function ordersOf(userId: string) {
    return server.store.db.selectFrom('orders').selectAll().where('user_id', '=', userId).orderBy('order_id').execute();
  }

  const placeSingle = (bid: Record<string, unknown>, user: TestUser): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body: bid, token: user.token, apiKey: user.apiKey });

  it('all lines placed: 200 s-101, one order per line in order, executedNoTime 1 and a new ETag', async () => {
    const carol = await server.createUser('carol');
    const id = await createCart(carol, [
      EXAMPLE_ORDER_LINE,
      CUTOFF_LINE,
      line({}, { _ExchangeName: 'BSE', scripToken: 543210 }),
    ]);
    const before = await details(id, carol);
    expect(before.headers.get('etag')).toBe('"1"');

    const res = await execute(id, carol);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order cart executed: every order was sent to OMS',
      data: [0, 1, 2].map((index) => ({ index, status: 'success', orderId: expect.stringMatching(UUID) })),
    });

    const stored = await ordersOf('carol');
    const byId = new Map(stored.map((order) => [order.order_id, order]));
    const placed = res.body.data.map((result: { orderId: string }) => byId.get(result.orderId));
    expect(placed).toEqual([
      expect.objectContaining({
        exchange: 'NSE_EQ',
        scrip_token: 500112,
        symbol: 'SBIN',
        series: 'OF',
        order_type: 'RL',
        quantity: 10,
        price_paise: 10_150,
        status: 'OMSXMITTED',
      }),
      expect.objectContaining({ exchange: 'NSE_EQ', order_type: 'RL-MKT', quantity: 20, price_paise: 0 }),
      expect.objectContaining({ exchange: 'BSE_EQ', scrip_token: 543210, quantity: 10, price_paise: 10_150 }),
    ]);
    expect(stored).toHaveLength(3);

    const after = await details(id, carol);
    expect(after.body.data.executedNoTime).toBe(1);
    expect(after.headers.get('etag')).toBe('"2"');
    // An execution changes no content: the cart's orders and modifiedAt stay.
    expect(after.body.data.orders).toEqual(before.body.data.orders);
    expect(after.body.data.modifiedAt).toBe(before.body.data.modifiedAt);

    // Executing again places the lines again and counts again.
    expect((await execute(id, carol)).body.code).toBe('s-101');
    expect((await details(id, carol)).body.data.executedNoTime).toBe(2);
    expect(await ordersOf('carol')).toHaveLength(6);
  });

  it('some lines placed: 200 s-102, a failed line has the code and faults a single bid with its values gets', async () => {
    const dave = await server.createUser('dave');
    const id = await storedCart(dave, [EXAMPLE_ORDER_LINE, OFF_TICK_LINE, DELIVERY_LINE]);
    const res = await execute(id, dave);
    expect(res.status).toBe(200);
    expect(res.body.code).toBe('s-102');
    expect(res.body.message).toBe('Order cart partly executed: some orders were not placed; see each line in data');
    expect(res.body.data).toHaveLength(3);
    expect(res.body.data[0]).toEqual({ index: 0, status: 'success', orderId: expect.stringMatching(UUID) });

    const single = await placeSingle(validBid({ price: 101.52 }), dave);
    expect([single.status, single.body.code]).toEqual([422, 'e-353']);
    expect(res.body.data[1]).toEqual({
      index: 1,
      status: 'error',
      code: single.body.code,
      message: single.body.message,
      errors: single.body.errors.map((e: { field: string; message: string }) => ({
        field: e.field.replace(/^price$/, 'orders[1].Price'),
        message: e.message,
      })),
    });
    expect(res.body.data[1].errors.map((e: { field: string }) => e.field)).toEqual(['orders[1].Price']);
    expect(res.body.data[1]).not.toHaveProperty('orderId');

    expect(res.body.data[2]).toEqual({
      index: 2,
      status: 'error',
      code: 'e-413',
      message: 'orders[2] is a DELIVERY order: this OMS routes OFS bids only, so it was not placed',
      errors: [
        {
          field: 'orders[2].ProductType',
          message: 'orders[2] is a DELIVERY order: this OMS routes OFS bids only, so it was not placed',
        },
      ],
    });
    expect((await ordersOf('dave')).map((o) => o.order_id)).toEqual([res.body.data[0].orderId]);
    expect((await details(id, dave)).body.data.executedNoTime).toBe(1);
  });

  it('lines are placed in order under the pre-trade checks: the retail limit counts the earlier lines', async () => {
    const erin = await server.createUser('erin');
    // Rs 1,50,000 each: the second would take erin beyond Rs 2,00,000 in SBIN, across both exchanges.
    const big = line({ Quantity: 1000, Price: '150.00' });
    const id = await createCart(erin, [big, line({ Quantity: 1000, Price: '150.00' }, { _ExchangeName: 'BSE' })]);
    const res = await execute(id, erin);
    expect(res.body.code).toBe('s-102');
    expect(res.body.data[0].status).toBe('success');
    expect(res.body.data[1]).toMatchObject({ index: 1, status: 'error', code: 'e-360' });
  });

  it('a fault of the whole bid (the window) names the whole line, orders[i]', async () => {
    const frank = await server.createUser('frank');
    await server.registerIssue({ symbol: 'SHUT', scripToken: 800001, retailClosesAt: server.clock.now - 1000 });
    const id = await createCart(frank, [line({}, { symbol: 'SHUT' }), EXAMPLE_ORDER_LINE]);
    const res = await execute(id, frank);
    expect(res.body.code).toBe('s-102');
    expect(res.body.data[0]).toMatchObject({ code: 'e-355', errors: [{ field: 'orders[0]' }] });
  });

  it('no line placed: the 422 e-412 envelope whose errors name orders[i].Field; nothing counted or stored', async () => {
    const gina = await server.createUser('gina');
    const id = await storedCart(gina, [line({ Price: '99.00' }), DELIVERY_LINE, line({}, { symbol: 'NOPE' })]);
    const res = await execute(id, gina);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status: 'error',
      code: 'e-412',
      message: 'No line of the cart could be placed: 3 of 3 failed; errors names the faults of each line',
      errors: [
        { field: 'orders[0].Price', message: expect.stringContaining('below the floor price') },
        { field: 'orders[0].Price', message: expect.stringContaining('below the retail cut-off price') },
        { field: 'orders[1].ProductType', message: expect.stringContaining('DELIVERY') },
        { field: 'orders[2].scripDetail.symbol', message: expect.stringContaining('NOPE OF on NSE') },
      ],
      request_id: res.headers.get('request-id'),
    });
    expect(await ordersOf('gina')).toEqual([]);
    const after = await details(id, gina);
    expect(after.body.data.executedNoTime).toBe(0);
    expect(after.headers.get('etag')).toBe('"1"');
  });

  it("a non-retail bidder's cut-off line fails as the single bid does (e-357, on OrderType)", async () => {
    const id = await createCart(nora, [CUTOFF_LINE]);
    const res = await execute(id, nora);
    const single = await placeSingle(validBid({ order_type: 'RL-MKT', price: 0 }), nora);
    expect([res.status, res.body.code]).toEqual([422, 'e-412']);
    expect(single.body.code).toBe('e-357');
    expect(res.body.errors).toEqual([{ field: 'orders[0].OrderType', message: single.body.errors[0].message }]);
  });

  it("a price beyond a bid's range fails with the bid's schema code (e-306), not a cart code", async () => {
    const id = await createCart(nora, [line({ Price: '2000000000' }), EXAMPLE_ORDER_LINE]);
    const res = await execute(id, nora);
    expect(res.body.code).toBe('s-102');
    const single = await placeSingle(validBid({ price: 2_000_000_000 }), nora);
    expect(res.body.data[0]).toMatchObject({ code: single.body.code, errors: [{ field: 'orders[0].Price' }] });
    expect(single.body.code).toBe('e-306');
  });

  describe('the OFS issue a line names', () => {
    it('no registered issue with that exchange, symbol and series: e-414', async () => {
      const id = await createCart(alice, [
        line({}, { _Series: 'EQ' }),
        line({}, { _ExchangeName: 'BSE', symbol: 'TWIN' }),
      ]);
      const res = await execute(id, alice);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([
        {
          field: 'orders[0].scripDetail.symbol',
          message: 'no OFS issue is registered for SBIN EQ on NSE (scripDetail._ExchangeName, symbol and _Series)',
        },
        {
          field: 'orders[1].scripDetail.symbol',
          message: 'no OFS issue is registered for TWIN OF on BSE (scripDetail._ExchangeName, symbol and _Series)',
        },
      ]);
    });

    it("a scripToken that is not the issue's scrip_token: e-416", async () => {
      const id = await createCart(alice, [line({}, { scripToken: 500113 }), EXAMPLE_ORDER_LINE]);
      const res = await execute(id, alice);
      expect(res.body.code).toBe('s-102');
      expect(res.body.data[0]).toEqual({
        index: 0,
        status: 'error',
        code: 'e-416',
        message: 'scripToken 500113 is not the scrip_token of the OFS issue SBIN OF on NSE (500112)',
        errors: [
          {
            field: 'orders[0].scripDetail.scripToken',
            message: 'scripToken 500113 is not the scrip_token of the OFS issue SBIN OF on NSE (500112)',
          },
        ],
      });
    });

    it('several issues match: e-415 without scripToken; with it, the line goes to that issue', async () => {
      const id = await createCart(bob, [
        line({}, { symbol: 'TWIN' }),
        line({}, { symbol: 'TWIN', scripToken: 700002 }),
      ]);
      const res = await execute(id, bob);
      expect(res.body.code).toBe('s-102');
      expect(res.body.data[0]).toMatchObject({
        code: 'e-415',
        errors: [{ field: 'orders[0].scripDetail.scripToken' }],
      });
      const order = (await ordersOf('bob')).find((o) => o.order_id === res.body.data[1].orderId);
      expect(order).toMatchObject({ symbol: 'TWIN', scrip_token: 700002 });
    });
  });

  describe('executedNoTime and concurrent updates', () => {
    it('an update with the executedNoTime read before the execution answers 409 e-408; with the old ETag 412', async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE]);
      const read = await details(id, alice);
      expect((await execute(id, alice)).status).toBe(200);
      const update = {
        ordercartName: 'Changed',
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: 'alice',
        modifiedBy: 'alice',
        executedNoTime: read.body.data.executedNoTime,
        ordercartId: id,
      };
      const stale = await server.call('PUT', PATH, { body: update, token: alice.token });
      expect([stale.status, stale.body.code]).toEqual([409, 'e-408']);
      const staleTag = await server.call('PUT', PATH, {
        body: update,
        token: alice.token,
        headers: { 'if-match': read.headers.get('etag')! },
      });
      expect([staleTag.status, staleTag.body.code]).toEqual([412, 'e-410']);
      const fresh = await server.call('PUT', PATH, { body: { ...update, executedNoTime: 1 }, token: alice.token });
      expect(fresh.status).toBe(200);
    });
  });

  describe('an update or a delete while the cart executes', () => {
    /** An execution whose first placement lets `meanwhile` change the cart; the placements are stand-ins. */
    function executionWith(meanwhile: () => Promise<void>) {
      let placed = 0;
      const orderEntry = {
        async placeOfsBid() {
          if (placed === 0) await meanwhile();
          placed += 1;
          return `order-${placed}`;
        },
      };
      return new OrderCartService(new OrderCartRepository(server.store.db), () => server.clock.now, {
        orderEntry,
        issues: new OfsIssueRepository(server.store.db),
      });
    }
    const caller: Caller = {
      userId: 'alice',
      category: 'RETAIL',
      member: testMember('alice'),
      tokenHash: 'unused',
      expiresAt: Number.MAX_SAFE_INTEGER,
    };

    it('the lines read at the start are the ones placed; the update stands and the execution is counted', async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE, CUTOFF_LINE]);
      const update = {
        ordercartName: 'Changed',
        orders: JSON.stringify([DELIVERY_LINE]),
        version: '1',
        createdBy: 'alice',
        modifiedBy: 'alice',
        executedNoTime: 0,
        ordercartId: id,
      };
      const service = executionWith(async () => {
        expect((await server.call('PUT', PATH, { body: update, token: alice.token })).status).toBe(200);
      });
      const execution = await service.execute(caller, id, null);
      expect(execution).toEqual({
        allPlaced: true,
        lines: [
          { index: 0, status: 'success', orderId: 'order-1' },
          { index: 1, status: 'success', orderId: 'order-2' },
        ],
      });
      const after = await details(id, alice);
      expect(after.body.data).toMatchObject({ ordercartName: 'Changed', orders: [DELIVERY_LINE], executedNoTime: 1 });
      expect(after.headers.get('etag')).toBe('"3"');
    });

    it('a failure that is no refusal of a line ends the execution with it; the orders placed before it are counted', async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE, CUTOFF_LINE, EXAMPLE_ORDER_LINE]);
      let calls = 0;
      const failure = new Error('database gone');
      const orderEntry = {
        async placeOfsBid() {
          calls += 1;
          if (calls === 2) throw failure;
          return `order-${calls}`;
        },
      };
      const service = new OrderCartService(new OrderCartRepository(server.store.db), () => server.clock.now, {
        orderEntry,
        issues: new OfsIssueRepository(server.store.db),
      });
      await expect(service.execute(caller, id, null)).rejects.toBe(failure);
      expect(calls).toBe(2);
      expect((await details(id, alice)).body.data.executedNoTime).toBe(1);
    });

    it('a cart deleted meanwhile: its lines are placed and answered all the same, and nothing is left to count on', async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE, CUTOFF_LINE]);
      const service = executionWith(async () => {
        expect((await server.call('DELETE', `${PATH}/${id}`, { token: alice.token })).status).toBe(200);
      });
      const execution = await service.execute(caller, id, null);
      expect(execution.lines.map((result) => result.status)).toEqual(['success', 'success']);
      expect((await details(id, alice)).status).toBe(404);
    });
  });

  describe('who may execute', () => {
    it("another user's cart, or an unknown id, answers 404 e-405 and places nothing", async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE]);
      const bobOrders = (await ordersOf('bob')).length;
      const foreign = await execute(id, bob);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'e-405']);
      const missing = await execute('0190a0c1-0000-7000-8000-000000000000', bob);
      expect([missing.status, missing.body.code]).toEqual([404, 'e-405']);
      expect(foreign.text.replaceAll(id, '<id>').replace(/"request_id":"[^"]+"/, '')).toBe(
        missing.text.replaceAll('0190a0c1-0000-7000-8000-000000000000', '<id>').replace(/"request_id":"[^"]+"/, ''),
      );
      expect((await ordersOf('bob')).length).toBe(bobOrders);
      expect((await details(id, alice)).body.data.executedNoTime).toBe(0);
    });

    it('needs the token and the API key of the same user, like placing a bid', async () => {
      const id = await createCart(alice, [EXAMPLE_ORDER_LINE]);
      const before = (await ordersOf('alice')).length;
      const cases: [string, { token?: string | null; apiKey?: string | null }, number, string][] = [
        ['no token', { token: null }, 401, 'e-201'],
        ['unknown token', { token: 'ogt_not-a-real-token' }, 401, 'e-202'],
        ['no API key', { apiKey: null }, 401, 'e-205'],
        ['unknown API key', { apiKey: 'ogk_not-a-real-key' }, 401, 'e-206'],
        ["another user's API key", { apiKey: bob.apiKey }, 403, 'e-207'],
      ];
      for (const [what, auth, status, code] of cases) {
        const res = await execute(id, alice, auth);
        expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status, code });
      }
      expect((await ordersOf('alice')).length).toBe(before);
      expect((await details(id, alice)).body.data.executedNoTime).toBe(0);
    });
  });

  it('the OpenAPI document describes the execute operation and its answers', async () => {
    const res = await server.call('GET', '/openapi.json');
    const operation = res.body.paths[`${PATH}/{ordercartId}/execute`].post;
    expect(Object.keys(operation.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '409',
      '413',
      '415',
      '422',
      '429',
      '431',
      '500',
      '503',
    ]);
    expect(operation.responses['422'].description).toContain('e-412');
  });
});
