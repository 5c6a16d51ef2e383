/**
 * POST /transactional/v1/orders/regular, happy paths (seed 2.1 to 2.3, 4.1; product.md "The OFS bid"):
 * the exact success body, and what is stored for the OMS and the order book.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';

// Floor and retail cut-off at one tick, so that the OFS market rules (floor price, retail cut-off, the retail
// value limit) leave these bids alone: this file is about the bid's own contract. Extreme prices and
// quantities are bid by a non-retail user, whom the retail value limit does not bind.
/** Open to any price and, as large as a quantity may be, to any quantity (a bid is for at most the offer quantity). */
const MARKET_RULES_OPEN = { floorPricePaise: 5, retailCutoffPricePaise: 5, offerQuantity: 999_999_999_999_999 };

describe('place an OFS bid: happy paths', () => {
  let server: TestServer;
  let alice: TestUser;
  let nora: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue(MARKET_RULES_OPEN);
    await server.registerIssue({ ...MARKET_RULES_OPEN, exchange: 'BSE_EQ', scripToken: 543210 });
    alice = await server.createUser('alice');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  const place = (body: unknown, user: TestUser = alice): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body, token: user.token, apiKey: user.apiKey });

  async function storedOrder(res: CallResult) {
    expect(res.status).toBe(200);
    return server.store.db
      .selectFrom('orders')
      .selectAll()
      .where('order_id', '=', res.body.data.orderId)
      .executeTakeFirstOrThrow();
  }

  it('answers exactly the seed success body: status, code s-101, the ODIN message and data.orderId', async () => {
    const res = await place(validBid());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(Object.keys(res.body.data)).toEqual(['orderId']);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order Entry Sent to OMS',
      data: { orderId: expect.any(String) },
    });
    expect(res.body.data.orderId.length).toBeGreaterThan(0);
  });

  it('stores the order as sent, OMSXMITTED, with its first history entry and one outbox entry for the OMS', async () => {
    const res = await place(
      validBid({ quantity: '25', price: 101.5, disclosed_quantity: 5, order_identifier: 'mybid1' }),
    );
    const order = await storedOrder(res);
    expect(order).toMatchObject({
      order_id: res.body.data.orderId,
      user_id: 'alice',
      exchange: 'NSE_EQ',
      scrip_token: 500112,
      symbol: 'SBIN',
      series: 'OF',
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL',
      quantity: 25,
      price_paise: 10150,
      disclosed_quantity: 5,
      traded_quantity: 0,
      status: 'OMSXMITTED',
      error_reason: null,
      order_identifier: 'mybid1',
    });
    const history = await server.store.db
      .selectFrom('order_history')
      .selectAll()
      .where('order_id', '=', order.order_id)
      .execute();
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ status: 'OMSXMITTED', quantity: 25, price_paise: 10150, traded_quantity: 0 });
    const outbox = await server.store.db
      .selectFrom('outbox')
      .selectAll()
      .where('order_id', '=', order.order_id)
      .execute();
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ action: 'PLACE', done_at: null });
  });

  it('stores order_identifier as sent, up to exactly 10 characters', async () => {
    const order = await storedOrder(await place(validBid({ order_identifier: 'ABCDE-1234' })));
    expect(order.order_identifier).toBe('ABCDE-1234');
  });

  it('accepts and stores the optional ODIN tags algo_id, strategy_id, part_code and vender_code, and client_id equal to the caller', async () => {
    const res = await place(
      validBid({
        algo_id: 'ALGO-7',
        strategy_id: 'STRAT-9',
        part_code: 'PC01',
        vender_code: 'VEND42',
        client_id: 'alice',
      }),
    );
    const order = await storedOrder(res);
    expect(order).toMatchObject({
      algo_id: 'ALGO-7',
      strategy_id: 'STRAT-9',
      part_code: 'PC01',
      vender_code: 'VEND42',
      user_id: 'alice',
    });
  });

  it('accepts an empty client_id', async () => {
    const order = await storedOrder(await place(validBid({ client_id: '' })));
    expect(order.user_id).toBe('alice');
  });

  it('places a cut-off bid: order_type RL-MKT with price 0', async () => {
    const res = await place(validBid({ order_type: 'RL-MKT', price: 0 }));
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order Entry Sent to OMS',
      data: { orderId: expect.any(String) },
    });
    const order = await storedOrder(res);
    expect(order).toMatchObject({ order_type: 'RL-MKT', price_paise: 0, status: 'OMSXMITTED' });
  });

  it('accepts a bid with every optional field absent, storing no identifier, no tags and disclosed_quantity 0', async () => {
    const body = {
      scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL',
      quantity: '3',
      price: 100,
    };
    const order = await storedOrder(await place(body));
    expect(order).toMatchObject({
      quantity: 3,
      price_paise: 10000,
      disclosed_quantity: 0,
      order_identifier: null,
      algo_id: null,
      strategy_id: null,
      part_code: null,
      vender_code: null,
    });
  });

  it('accepts the other allowed forms of the OFS-only fields: validity_days null, freeze_quantity 0, empty order_identifier', async () => {
    const order = await storedOrder(
      await place(validBid({ validity_days: null, freeze_quantity: 0, order_identifier: '' })),
    );
    expect(order.order_identifier).toBeNull();
  });

  it('accepts disclosed_quantity equal to quantity and quantity equal to freeze_quantity', async () => {
    const order = await storedOrder(
      await place(validBid({ quantity: '40', disclosed_quantity: 40, freeze_quantity: 40 })),
    );
    expect(order).toMatchObject({ quantity: 40, disclosed_quantity: 40 });
  });

  it('keeps the price exact in paise for prices that are not exact binary fractions', async () => {
    for (const [price, paise] of [
      [101.05, 10105],
      [0.15, 15],
      [583096607.3, 58309660730],
      [1_000_000_000, 100_000_000_000],
    ] as const) {
      const order = await storedOrder(await place(validBid({ price, quantity: '1' }), nora));
      expect(order.price_paise, `price ${price}`).toBe(paise);
    }
  });

  it('accepts the largest quantity the contract allows (15 digits) and stores it exactly', async () => {
    const order = await storedOrder(await place(validBid({ quantity: '999999999999999' }), nora));
    expect(order.quantity).toBe(999_999_999_999_999);
  });

  it('places a bid on a BSE_EQ issue', async () => {
    const res = await place(
      validBid({ scrip_info: { exchange: 'BSE_EQ', scrip_token: 543210, symbol: 'SBIN', series: 'OF' } }),
    );
    const order = await storedOrder(res);
    expect(order).toMatchObject({ exchange: 'BSE_EQ', scrip_token: 543210 });
  });

  it('gives every accepted bid its own orderId, and several bids of one user are all kept', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => place(validBid({ order_identifier: `multi-${i}` }))),
    );
    const ids = results.map((res) => {
      expect(res.status).toBe(200);
      return res.body.data.orderId as string;
    });
    expect(new Set(ids).size).toBe(5);
    const stored = await server.store.db.selectFrom('orders').select('order_id').where('order_id', 'in', ids).execute();
    expect(stored).toHaveLength(5);
  });
});
