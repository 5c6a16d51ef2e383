/**
 * GET /transactional/v1/orders (order book) and GET /transactional/v1/orders/{order_id} (history), through
 * the real server (product.md "Order book, history, modify and cancel"): the caller's orders only, newest
 * first, paged by page number, filtered by status (names and ODIN's codes) and id, with the total count in
 * `metadata.total_records`; entries under the ODIN order-book names and formats (odin-compat.md); the
 * history oldest first, in the same names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const ORDERS = '/transactional/v1/orders';
const ALICE_ORDERS = 25;
/** ODIN's time format, India time (UTC+05:30), worked out apart from the code under test. */
const ist = (epochMs: number) => new Date(epochMs + 330 * 60_000).toISOString().replace('T', ' ').slice(0, 19);

describe('order book and order history', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nora: TestUser;
  /** alice's order ids, oldest first. */
  const aliceOrders: string[] = [];
  const bobOrders: string[] = [];
  let start: number;

  beforeAll(async () => {
    server = await startTestServer();
    start = server.clock.now;
    await server.registerIssue();
    await server.registerIssue({ exchange: 'BSE_EQ', scripToken: 543210 });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    // One second apart, so that "newest first" is by the time each was placed.
    for (let i = 0; i < ALICE_ORDERS; i++) {
      server.clock.now = start + i * 1000;
      aliceOrders.push(await placed(alice, validBid({ quantity: String(i + 1), order_identifier: `a${i}` })));
      if (i < 3) bobOrders.push(await placed(bob, validBid({ order_identifier: `b${i}` })));
    }
    server.clock.now = start + ALICE_ORDERS * 1000;
  });
  afterAll(() => server.close());

  async function placed(user: TestUser, body: unknown): Promise<string> {
    const res = await server.call('POST', PLACE_ORDER, { body, token: user.token, apiKey: user.apiKey });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  const book = (query = '', user: TestUser = alice): Promise<CallResult> =>
    server.call('GET', `${ORDERS}${query}`, { token: user.token });
  const history = (orderId: string, user: TestUser = alice): Promise<CallResult> =>
    server.call('GET', `${ORDERS}/${orderId}`, { token: user.token });
  const ids = (res: CallResult): string[] => res.body.data.map((o: { order_id: string }) => o.order_id);
  const newestFirst = () => [...aliceOrders].reverse();

  describe('GET /transactional/v1/orders', () => {
    it("answers ODIN's list: data the orders, metadata {total_records, offset, limit}; the first 20 of the caller's orders, newest first", async () => {
      const res = await book();
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'metadata', 'status']);
      expect(res.body).toMatchObject({ status: 'success', code: 's-101', message: 'Order book fetched successfully' });
      expect(Array.isArray(res.body.data)).toBe(true);
      expect(res.body.metadata).toEqual({ total_records: ALICE_ORDERS, offset: 1, limit: 20 });
      expect(ids(res)).toEqual(newestFirst().slice(0, 20));
    });

    it('shows each order under the ODIN order-book names and formats, with its current state', async () => {
      const res = await book(`?order_id=${aliceOrders[4]}`);
      expect(res.body.data).toEqual([
        {
          order_id: aliceOrders[4],
          exchange: 'NSE_EQ',
          scrip_token: 500112,
          symbol: 'SBIN',
          series: 'OF',
          transaction_type: 'BUY',
          product_type: 'OFS',
          order_type: 'RL',
          status: 'OMSXMITTED',
          total_quantity: 5,
          traded_quantity: 0,
          pending_quantity: 5,
          disclosed_quantity: 0,
          order_price: '101.50',
          trigger_price: '0.00',
          traded_price: '0.00',
          validity: 'DAY',
          validity_days: 0,
          order_timestamp: ist(start + 4000),
          exchange_timestamp: '',
          last_modified: ist(start + 4000),
          error_reason: '',
          exchange_order_no: '',
          client_id: 'alice',
          order_identifier: 'a4',
          algo_id: '',
          strategy_id: '',
          part_code: '',
          vender_code: '',
          category: 'RETAIL',
          offer_id: '',
          bid_category: '',
          margin_type: '',
          carried_forward: false,
        },
      ]);
    });

    it('pages by page number: offset=2&limit=10 is the 11th to 20th newest, offset=3 the last 5, offset=4 none', async () => {
      const second = await book('?offset=2&limit=10');
      expect(second.body.metadata).toEqual({ total_records: ALICE_ORDERS, offset: 2, limit: 10 });
      expect(ids(second)).toEqual(newestFirst().slice(10, 20));
      const third = await book('?offset=3&limit=10');
      expect(ids(third)).toEqual(newestFirst().slice(20, 25));
      const fourth = await book('?offset=4&limit=10');
      expect(fourth.status).toBe(200);
      expect(fourth.body.data).toEqual([]);
      expect(fourth.body.metadata).toEqual({ total_records: ALICE_ORDERS, offset: 4, limit: 10 });
    });

    it('takes limit 1 and limit 1000', async () => {
      expect(ids(await book('?limit=1'))).toEqual([aliceOrders[ALICE_ORDERS - 1]]);
      const all = await book('?limit=1000');
      expect(all.body.metadata.limit).toBe(1000);
      expect(ids(all)).toEqual(newestFirst());
    });

    it("shows only the caller's orders", async () => {
      const res = await book('', bob);
      expect(res.body.metadata.total_records).toBe(3);
      expect(ids(res)).toEqual([...bobOrders].reverse());
      const none = await book('', nora);
      expect(none.body.data).toEqual([]);
      expect(none.body.metadata).toEqual({ total_records: 0, offset: 1, limit: 20 });
    });

    it("order_id filters to that order; another user's order id finds nothing", async () => {
      const own = await book(`?order_id=${aliceOrders[7]}`);
      expect(ids(own)).toEqual([aliceOrders[7]]);
      expect(own.body.metadata.total_records).toBe(1);
      const other = await book(`?order_id=${bobOrders[0]}`);
      expect(other.body.data).toEqual([]);
      expect(other.body.metadata.total_records).toBe(0);
    });

    it('orderStatus filters by status name or ODIN code (1 live, 2 completed, -1 all); the total counts the matches; a finished order has no pending quantity', async () => {
      const executed = [aliceOrders[2]!, aliceOrders[9]!];
      server.clock.now = start + 60_000;
      await server.setOrderStatus(executed, 'EXECUTED', {
        tradedQuantity: 2,
        tradedPricePaise: 10_100,
        exchangeOrderId: 'X-9',
      });
      server.clock.now = start + ALICE_ORDERS * 1000;
      const res = await book('?orderStatus=EXECUTED');
      expect(res.body.metadata.total_records).toBe(2);
      expect(ids(res)).toEqual([aliceOrders[9], aliceOrders[2]]);
      expect(res.body.data[0]).toMatchObject({
        status: 'EXECUTED',
        total_quantity: 10,
        traded_quantity: 2,
        pending_quantity: 0,
        traded_price: '101.00',
        exchange_order_no: 'X-9',
        exchange_timestamp: ist(start + 60_000),
        last_modified: ist(start + 60_000),
      });
      const live = await book('?orderStatus=OMSXMITTED&limit=5');
      expect(live.body.metadata.total_records).toBe(ALICE_ORDERS - 2);
      expect(live.body.data).toHaveLength(5);
      expect((await book('?orderStatus=EXECUTED', bob)).body.metadata.total_records).toBe(0);
      expect((await book(`?orderStatus=EXECUTED&order_id=${aliceOrders[3]}`)).body.metadata.total_records).toBe(0);

      const completed = await book('?orderStatus=2');
      expect(ids(completed)).toEqual([aliceOrders[9], aliceOrders[2]]);
      const liveByCode = await book('?orderStatus=1&limit=1000');
      expect(liveByCode.body.metadata.total_records).toBe(ALICE_ORDERS - 2);
      expect(ids(liveByCode)).toEqual(newestFirst().filter((id) => !executed.includes(id)));
      const every = await book('?orderStatus=-1&limit=1000');
      expect(ids(every)).toEqual(newestFirst());
    });

    it('needs only the bearer token, and answers 401 without it', async () => {
      const res = await server.call('GET', ORDERS);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(Errors.TOKEN_MISSING.code);
    });

    it.each([
      ['offset', '?offset=0'],
      ['offset', '?offset=-1'],
      ['offset', '?offset=abc'],
      ['offset', '?offset=01'],
      ['offset', '?offset=1.5'],
      ['offset', '?offset='],
      ['limit', '?limit=0'],
      ['limit', '?limit=1001'],
      ['limit', '?limit=ten'],
      ['orderStatus', '?orderStatus=FOO'],
      ['orderStatus', '?orderStatus=pending'],
      ['orderStatus', '?orderStatus=0'],
      ['orderStatus', '?orderStatus=3'],
      ['orderStatus', '?orderStatus=-2'],
      ['order_id', '?order_id='],
      ['offset', '?offset=1&offset=2'],
      ['page', '?page=2'],
    ])('refuses a bad query (%s, %s) with 400 e-110 naming the parameter', async (field, query) => {
      const res = await book(query);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.INVALID_QUERY.code);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });

  describe('GET /transactional/v1/orders/{order_id}', () => {
    it("answers the order's history, oldest first: each change as an order-book entry as the change left it, with its reason", async () => {
      const orderId = aliceOrders[0]!;
      const placedAt = start;
      server.clock.now = start + 100_000;
      const modify = await server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, {
        body: { order_type: 'RL', quantity: '4', price: 102 },
        token: alice.token,
        apiKey: alice.apiKey,
      });
      expect(modify.status, modify.text).toBe(200);
      server.clock.now = start + 200_000;
      const cancel = await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/${orderId}`, {
        token: alice.token,
        apiKey: alice.apiKey,
      });
      expect(cancel.status, cancel.text).toBe(200);

      const res = await history(orderId);
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
      expect(res.body).toMatchObject({
        status: 'success',
        code: 's-101',
        message: 'Order history fetched successfully',
      });
      const entry = (at: number, quantity: number, price: string, reason: string) => ({
        order_id: orderId,
        exchange: 'NSE_EQ',
        scrip_token: 500112,
        symbol: 'SBIN',
        series: 'OF',
        transaction_type: 'BUY',
        product_type: 'OFS',
        order_type: 'RL',
        status: 'OMSXMITTED',
        total_quantity: quantity,
        traded_quantity: 0,
        pending_quantity: quantity,
        disclosed_quantity: 0,
        order_price: price,
        trigger_price: '0.00',
        traded_price: '0.00',
        validity: 'DAY',
        validity_days: 0,
        order_timestamp: ist(placedAt),
        exchange_timestamp: '',
        last_modified: ist(at),
        error_reason: '',
        exchange_order_no: '',
        client_id: 'alice',
        order_identifier: 'a0',
        algo_id: '',
        strategy_id: '',
        part_code: '',
        vender_code: '',
        category: 'RETAIL',
        offer_id: '',
        bid_category: '',
        margin_type: '',
        carried_forward: false,
        reason,
      });
      expect(res.body.data).toEqual([
        entry(placedAt, 1, '101.50', 'Order entry accepted and queued for the OMS'),
        entry(start + 100_000, 4, '102.00', 'Modification requested: quantity 1 -> 4, price 101.50 -> 102.00'),
        entry(start + 200_000, 4, '102.00', 'Cancellation requested by the user'),
      ]);
      // The order book shows the order's state after the changes.
      const now = (await book(`?order_id=${orderId}`)).body.data[0];
      expect(now).toMatchObject({ total_quantity: 4, order_price: '102.00', last_modified: ist(start + 200_000) });
    });

    it("answers 404 e-371 for another user's order, exactly as for an unknown id", async () => {
      const unknownId = '01890000-0000-7000-8000-000000000000';
      const other = await history(bobOrders[0]!);
      const unknown = await history(unknownId);
      for (const res of [other, unknown]) {
        expect(res.status, res.text).toBe(404);
        expect(res.body.code).toBe(Errors.ORDER_NOT_FOUND.code);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['order_id']);
      }
      // Nothing tells the other user's order from one that does not exist.
      expect(other.body.message.replace(bobOrders[0], 'ID')).toBe(unknown.body.message.replace(unknownId, 'ID'));
      expect(other.body.errors).toEqual(unknown.body.errors);
      expect((await history(bobOrders[0]!, bob)).status).toBe(200);
    });

    it('needs the bearer token', async () => {
      const res = await server.call('GET', `${ORDERS}/${aliceOrders[1]}`);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(Errors.TOKEN_MISSING.code);
    });
  });
});
