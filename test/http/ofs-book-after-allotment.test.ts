/**
 * GET /operator/v1/ofs/{exchange}/{scrip_token}/book after the allocation (issue 25): no bid is live any
 * more, yet the book keeps the demand the allocation took in `at_close` (the bids it allotted, the bids it
 * closed without an allotment, cut-off bids at the cut-off price), with the clearing that demand implies,
 * which is what the allocation found. Bids their bidders cancelled, and rejected bids, are not in it.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const BOOK = '/operator/v1/ofs/NSE_EQ/500112/book';
const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-11-23T04:00:00Z');
const CLOSE = T0 + 2 * HOUR;

describe('the operator book of an OFS issue after its allocation', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let alice: TestUser;
  let nora: TestUser;
  let olga: TestUser;
  /** The live book just before the close: what at_close must keep. */
  let before: { demand: unknown[]; ineligible: unknown; clearing: unknown };

  beforeAll(async () => {
    server = await startTestServer({ now: T0 });
    // Offer 1000, 10% retail (100), floor 100.00, cut-off 101.00, proportionate; both windows close at CLOSE.
    await server.registerIssue({
      offerQuantity: 1000,
      nonRetailOpensAt: T0 - HOUR,
      nonRetailClosesAt: CLOSE,
      retailOpensAt: T0 - HOUR,
      retailClosesAt: CLOSE,
    });
    alice = await server.createUser('alice');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    olga = await server.createUser('olga', { category: 'NON_RETAIL' });
    await new UserRepository(server.store.db, server.store.dialect).setOperator('olga', server.clock.now);
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server.close());

  const bid = async (user: TestUser, overrides: Record<string, unknown>) => {
    const res = await server.call('POST', '/transactional/v1/orders/regular', {
      body: validBid(overrides),
      token: user.token,
      apiKey: user.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  };
  const book = async () => {
    const res = await server.call('GET', BOOK, { token: olga.token });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };

  it('before the allocation: the live book, and at_close null', async () => {
    // Retail 120 for 100: 40 at 101.50, 60 at the cut-off (101.00), 20 at 101.00.
    await bid(alice, { price: 101.5, quantity: '40' });
    await bid(alice, { order_type: 'RL-MKT', price: 0, quantity: '60' });
    await bid(alice, { price: 101, quantity: '20' });
    // Non-retail 1300 for 900: the bid at 100.00 gets nothing at close.
    await bid(nora, { price: 102, quantity: '600' });
    await bid(nora, { price: 101, quantity: '600' });
    await bid(nora, { price: 100, quantity: '100' });
    // Neither a bid its bidder cancels nor a rejected bid is demand, before the close or after it.
    const cancelled = await bid(alice, { price: 102, quantity: '25' });
    const rejected = await bid(nora, { price: 103, quantity: '500' });
    await server.setOrderStatus(rejected, 'OMSREJECT', { errorReason: 'Rejected by the OMS: a test' });
    await oms.runOnce();
    const cancel = await server.call('DELETE', `/transactional/v1/orders/regular/NSE_EQ/${cancelled}`, {
      token: alice.token,
      apiKey: alice.apiKey,
    });
    expect(cancel.status, cancel.text).toBe(200);
    await oms.runOnce();
    const row = await server.store.db
      .selectFrom('orders')
      .select(['status'])
      .where('order_id', '=', cancelled)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('CANCELLED');

    const data = await book();
    expect(data.allotted).toBeNull();
    expect(data.at_close).toBeNull();
    expect(data.demand.map((level: { price: number }) => level.price)).toEqual([102, 101.5, 101, 100]);
    expect(data.clearing).toEqual({
      retail: { portion: 100, demand: 120, price: 101 },
      non_retail: { portion: 900, demand: 1300, price: 101 },
    });
    before = { demand: data.demand, ineligible: data.ineligible, clearing: data.clearing };
  });

  it('after it: no live demand, but at_close keeps the demand the allocation took, and the clearing it found', async () => {
    server.clock.now = CLOSE;
    await oms.runOnce();
    await oms.runOnce();
    const statuses = await server.store.db
      .selectFrom('orders')
      .select(['status', 'error_reason'])
      .where('status', 'in', ['OMSXMITTED', 'EXXMITTED', 'PENDING'])
      .execute();
    expect(statuses).toEqual([]);
    const data = await book();
    expect(data.issue).toMatchObject({ allocated: true, state: 'ALLOCATED' });
    // The live book is empty, as it always was after the allocation.
    expect(data.demand).toEqual([]);
    expect(data.clearing.retail.demand).toBe(0);
    // Retail 100 of its 120 and non-retail 900 of the 1200 at or above 101.00, all at the clearing price
    // 101.00; the non-retail bid at 100.00 got nothing.
    expect(data.allotted).toEqual({
      retail: 100,
      non_retail: 900,
      by_price: [{ price: 101, retail_quantity: 100, non_retail_quantity: 900 }],
    });
    expect(data.at_close).toEqual(before);
    expect(data.at_close.demand).toEqual([
      {
        price: 102,
        retail_quantity: 0,
        retail_cutoff_quantity: 0,
        non_retail_quantity: 600,
        retail_cumulative: 0,
        non_retail_cumulative: 600,
        bids: 1,
      },
      {
        price: 101.5,
        retail_quantity: 40,
        retail_cutoff_quantity: 0,
        non_retail_quantity: 0,
        retail_cumulative: 40,
        non_retail_cumulative: 600,
        bids: 1,
      },
      {
        price: 101,
        retail_quantity: 80,
        retail_cutoff_quantity: 60,
        non_retail_quantity: 600,
        retail_cumulative: 120,
        non_retail_cumulative: 1200,
        bids: 3,
      },
      {
        price: 100,
        retail_quantity: 0,
        retail_cutoff_quantity: 0,
        non_retail_quantity: 100,
        retail_cumulative: 120,
        non_retail_cumulative: 1300,
        bids: 1,
      },
    ]);
    // What the book says the allocation found is what it allotted.
    expect(data.at_close.clearing.retail.price).toBe(data.allotted.by_price[0].price);
    expect(data.at_close.clearing.non_retail.price).toBe(data.allotted.by_price[0].price);
    expect(data.at_close.ineligible).toEqual({ retail_quantity: 0, non_retail_quantity: 0, bids: 0 });
    // The bid at 100.00 was closed without an allotment: in at_close, not in allotted.
    const notAllotted = await server.store.db
      .selectFrom('orders')
      .select(['quantity'])
      .where('status', '=', 'CANCELLED')
      .where('error_reason', 'is not', null)
      .where('price_paise', '=', 10_000)
      .execute();
    expect(notAllotted.map((o) => Number(o.quantity))).toEqual([100]);
  });
});
