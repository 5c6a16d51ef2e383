/**
 * A whole OFS through the public surface: non-retail bids on day T and retail bids on T+1 over HTTP, some
 * modified and cancelled, the OMS worker taking them to the simulated exchange, the clock closing the
 * windows, and the order book and histories showing the allotment.
 *
 * Offer 1000 shares, 10% retail, proportionate, floor 100.00, cut-off 101.00. Non-retail asks 1100 for 900
 * shares: the clearing price is 101.00 and the two bids share 900 in proportion (600 -> 490.9, 500 ->
 * 409.1; the leftover share goes to the larger remainder), so 491 and 409. Retail asks exactly its 100
 * shares: in full, at the lowest retail price, the cut-off 101.00. 1000 shares allotted in all.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const ORDERS = '/transactional/v1/orders';
const PLACE_ORDER = '/transactional/v1/orders/regular';
const HOUR = 60 * 60 * 1000;

describe('a whole OFS, from bids on T and T+1 to allotment', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let t0: number;
  const users = {} as Record<'inst1' | 'inst2' | 'ret1' | 'ret2' | 'ret3', TestUser>;

  beforeAll(async () => {
    server = await startTestServer();
    t0 = server.clock.now;
    await server.registerIssue({
      offerQuantity: 1000,
      retailReservePct: 10,
      allocation: 'PROPORTIONATE',
      floorPricePaise: 10_000,
      retailCutoffPricePaise: 10_100,
      nonRetailOpensAt: t0 - HOUR,
      nonRetailClosesAt: t0 + HOUR,
      retailOpensAt: t0 + HOUR,
      retailClosesAt: t0 + 2 * HOUR,
    });
    users.inst1 = await server.createUser('inst1', { category: 'NON_RETAIL' });
    users.inst2 = await server.createUser('inst2', { category: 'NON_RETAIL' });
    users.ret1 = await server.createUser('ret1');
    users.ret2 = await server.createUser('ret2');
    users.ret3 = await server.createUser('ret3');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server.close());

  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });

  async function bid(user: TestUser, orderType: 'RL' | 'RL-MKT', quantity: number, price: number): Promise<string> {
    const res = await server.call('POST', PLACE_ORDER, {
      body: validBid({ order_type: orderType, quantity: String(quantity), price }),
      ...as(user),
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  const modify = (user: TestUser, orderId: string, quantity: number, price: number) =>
    server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, {
      body: {
        order_type: 'RL',
        quantity: String(quantity),
        price,
        traded_quantity: 0,
        disclosed_quantity: 0,
        validity: '',
        validity_days: 0,
        trigger_price: null,
      },
      ...as(user),
    });
  const cancel = (user: TestUser, orderId: string) =>
    server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/${orderId}`, as(user));

  async function orderBook(user: TestUser) {
    const res = await server.call('GET', ORDERS, { token: user.token });
    expect(res.status, res.text).toBe(200);
    return res.body.data as Record<string, unknown>[];
  }

  async function historyOf(user: TestUser, orderId: string) {
    const res = await server.call('GET', `${ORDERS}/${orderId}`, { token: user.token });
    expect(res.status, res.text).toBe(200);
    return res.body.data as {
      status: string;
      reason: string;
      total_quantity: number;
      exchange_order_no: string;
      exchange_timestamp: string;
    }[];
  }

  it('runs the OFS to allotment and shows it in the order book and histories', async () => {
    // Day T: non-retail bids; retail may not bid yet.
    server.clock.now = t0;
    const early = await server.call('POST', PLACE_ORDER, {
      body: validBid({ quantity: '10', price: 101.5 }),
      ...as(users.ret1),
    });
    expect(early.status, early.text).toBe(422);
    const a = await bid(users.inst1, 'RL', 500, 102);
    const b = await bid(users.inst2, 'RL', 500, 101);
    const c = await bid(users.inst2, 'RL', 100, 100.5);
    await oms.runOnce();
    for (const id of [a, b, c])
      expect((await orderBook(id === a ? users.inst1 : users.inst2)).find((o) => o.order_id === id)).toMatchObject({
        status: 'PENDING',
      });

    expect((await modify(users.inst1, a, 600, 102)).status).toBe(200);
    expect((await cancel(users.inst2, c)).status).toBe(200);
    await oms.runOnce();

    // Day T+1: the non-retail window has closed; retail bids, one at cut-off.
    server.clock.now = t0 + HOUR;
    const late = await modify(users.inst1, a, 700, 102);
    expect(late.status, late.text).toBeGreaterThanOrEqual(400);
    const r1 = await bid(users.ret1, 'RL-MKT', 60, 0);
    const r2 = await bid(users.ret2, 'RL', 40, 101.5);
    const r3 = await bid(users.ret3, 'RL', 30, 101);
    await oms.runOnce();
    expect((await cancel(users.ret3, r3)).status).toBe(200);
    await oms.runOnce();

    // Nothing is allotted before the later close.
    server.clock.now = t0 + 2 * HOUR - 1;
    await oms.runOnce();
    expect((await orderBook(users.inst1))[0]).toMatchObject({
      order_id: a,
      status: 'PENDING',
      traded_quantity: 0,
      pending_quantity: 600,
    });

    server.clock.now = t0 + 2 * HOUR;
    await oms.runOnce();

    const final = async (user: TestUser, orderId: string) =>
      (await orderBook(user)).find((o) => o.order_id === orderId);
    expect(await final(users.inst1, a)).toMatchObject({
      status: 'EXECUTED',
      total_quantity: 600,
      traded_quantity: 491,
      traded_price: '101.00',
      pending_quantity: 0,
    });
    expect(await final(users.inst2, b)).toMatchObject({
      status: 'EXECUTED',
      total_quantity: 500,
      traded_quantity: 409,
      traded_price: '101.00',
    });
    expect(await final(users.inst2, c)).toMatchObject({ status: 'CANCELLED', traded_quantity: 0 });
    expect(await final(users.ret1, r1)).toMatchObject({
      status: 'EXECUTED',
      order_type: 'RL-MKT',
      traded_quantity: 60,
      traded_price: '101.00',
    });
    expect(await final(users.ret2, r2)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 40,
      traded_price: '101.00',
    });
    expect(await final(users.ret3, r3)).toMatchObject({ status: 'CANCELLED', traded_quantity: 0 });

    const historyOfA = await historyOf(users.inst1, a);
    // The exchange's order number shows from the entry where the exchange had the order.
    const exchangeOrderNo = (await final(users.inst1, a))!.exchange_order_no as string;
    expect(exchangeOrderNo).toMatch(/^SIM[0-9A-F]{32}$/);
    expect(historyOfA.map((entry) => entry.exchange_order_no)).toEqual([
      '',
      '',
      exchangeOrderNo,
      exchangeOrderNo,
      exchangeOrderNo,
      exchangeOrderNo,
    ]);
    expect(historyOfA.map((entry) => entry.exchange_timestamp === '')).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(historyOfA.map((entry) => [entry.status, entry.reason, entry.total_quantity])).toEqual([
      ['OMSXMITTED', 'Order entry accepted and queued for the OMS', 500],
      ['EXXMITTED', 'Sent to the exchange', 500],
      ['PENDING', expect.stringMatching(/^Accepted by the exchange, exchange order id SIM[0-9A-F]{32}$/), 500],
      ['PENDING', expect.stringMatching(/^Modification requested/), 600],
      ['PENDING', 'Modified at the exchange', 600],
      ['EXECUTED', 'Allotted 491 of 600 at 101.00 (proportionate, oversubscribed 1.22x)', 600],
    ]);
    expect((await historyOf(users.inst2, c)).map((entry) => [entry.status, entry.reason])).toEqual([
      ['OMSXMITTED', 'Order entry accepted and queued for the OMS'],
      ['EXXMITTED', 'Sent to the exchange'],
      ['PENDING', expect.stringMatching(/^Accepted by the exchange/)],
      ['PENDING', 'Cancellation requested by the user'],
      ['CANCELLED', 'Cancelled by the user'],
    ]);

    // Every share of the offer allotted, none twice.
    const rows = await server.store.db.selectFrom('orders').select(['traded_quantity']).execute();
    expect(rows.reduce((sum, row) => sum + Number(row.traded_quantity), 0)).toBe(1000);
    const transmissions = await server.store.db.selectFrom('sim_exchange_bids').select('transmissions').execute();
    expect(transmissions.map((row) => Number(row.transmissions))).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
