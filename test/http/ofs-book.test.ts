/**
 * GET /operator/v1/ofs/{exchange}/{scrip_token}/book and GET /authentication/v1/user/profile through the
 * real server: operators only; bids over HTTP, the OMS and the simulated exchange taking them; the demand
 * by price level with running totals, the clearing prices, and after the close the allotments.
 */
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const BOOK = '/operator/v1/ofs/NSE_EQ/500112/book';
const PROFILE = '/authentication/v1/user/profile';
const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-11-23T04:00:00Z');
const CLOSE = T0 + 2 * HOUR;

describe('the operator book of an OFS issue', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let alice: TestUser;
  let bob: TestUser;
  let nora: TestUser;
  let olga: TestUser;
  const setOperator = (userId: string, operator: boolean) =>
    new UserRepository(server.store.db, server.store.dialect).setOperator(userId, operator ? server.clock.now : null);

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
    // Another issue's bids must not count.
    await server.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: 543210,
      offerQuantity: 1000,
      nonRetailOpensAt: T0 - HOUR,
      nonRetailClosesAt: CLOSE,
      retailOpensAt: T0 - HOUR,
      retailClosesAt: CLOSE,
    });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    olga = await server.createUser('olga', { category: 'NON_RETAIL' });
    await setOperator('olga', true);
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
  const book = async (user: TestUser = olga): Promise<CallResult> => server.call('GET', BOOK, { token: user.token });

  describe('who may read it', () => {
    it('a user who is not an operator gets 403 e-214, for a registered issue and an unknown one alike', async () => {
      for (const path of [BOOK, '/operator/v1/ofs/NSE_EQ/999999/book']) {
        const res = await server.call('GET', path, { token: alice.token });
        expect(res.status, path).toBe(403);
        expect(res.body).toMatchObject({ status: 'error', code: 'e-214', errors: [] });
        expect(res.body.request_id).toBe(res.headers.get('request-id'));
      }
    });

    it('no token: 401 e-201', async () => {
      const res = await server.call('GET', BOOK);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 'error', code: 'e-201' });
    });

    it('an operator asking for an issue that is not registered, or a path that cannot name one, gets 404 e-361; a longer path e-109', async () => {
      for (const path of [
        '/operator/v1/ofs/NSE_EQ/999999/book',
        '/operator/v1/ofs/BSE_EQ/500112/book',
        '/operator/v1/ofs/NYSE/500112/book',
        '/operator/v1/ofs/NSE_EQ/abc/book',
        '/operator/v1/ofs/NSE_EQ/0500112/book',
      ]) {
        const res = await server.call('GET', path, { token: olga.token });
        expect(res.status, path).toBe(404);
        expect(res.body, path).toMatchObject({ status: 'error', code: 'e-361' });
      }
      const longer = await server.call('GET', `${BOOK}/x`, { token: olga.token });
      expect(longer.status).toBe(404);
      expect(longer.body).toMatchObject({ status: 'error', code: 'e-109' });
      const query = await server.call('GET', `${BOOK}?depth=5`, { token: olga.token });
      expect(query.status).toBe(400);
      expect(query.body).toMatchObject({ status: 'error', code: 'e-110' });
    });

    it('the profile tells each user whether they are an operator; set-operator false takes effect on the next call', async () => {
      const profile = async (user: TestUser) => {
        const res = await server.call('GET', PROFILE, { token: user.token });
        expect(res.status, res.text).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
        return res.body.data;
      };
      expect(await profile(olga)).toEqual({
        user_id: 'olga',
        category: 'NON_RETAIL',
        offer_category: 'NII',
        margin_type: 'H',
        operator: true,
      });
      expect(await profile(alice)).toEqual({
        user_id: 'alice',
        category: 'RETAIL',
        offer_category: 'RETAIL',
        margin_type: 'H',
        operator: false,
      });
      expect((await server.call('GET', PROFILE)).status).toBe(401);

      await setOperator('olga', false);
      expect(await profile(olga)).toMatchObject({ operator: false });
      expect((await book()).body).toMatchObject({ code: 'e-214' });
      await setOperator('olga', true);
      expect((await book()).status).toBe(200);
    });
  });

  describe('demand, clearing and allotments', () => {
    beforeAll(async () => {
      // Retail: a cut-off bid (at 101.00) and one at 101.50: exactly its 100 shares. A bid at 101.00 that is
      // cancelled and one the OMS rejected take no part.
      await bid(alice, { order_type: 'RL-MKT', price: 0, quantity: '60' });
      await bid(bob, { price: 101.5, quantity: '40' });
      const cancelled = await bid(bob, { price: 101, quantity: '30' });
      const rejected = await bid(alice, { price: 101, quantity: '25' });
      // Non-retail: 1300 for 900.
      await bid(nora, { price: 102, quantity: '600' });
      await bid(olga, { price: 101, quantity: '600' });
      await bid(nora, { price: 100, quantity: '100' });
      await bid(nora, {
        price: 105,
        quantity: '999',
        scrip_info: { exchange: 'BSE_EQ', scrip_token: 543210, symbol: 'SBIN', series: 'OF' },
      });
      await server.setOrderStatus(cancelled, 'CANCELLED');
      await server.setOrderStatus(rejected, 'OMSREJECT');
      // Some bids reach the exchange (PENDING), a later one is still queued (OMSXMITTED): both are live.
      await oms.runOnce();
      await bid(alice, { order_type: 'RL-MKT', price: 0, quantity: '5' });
    });

    it('sums the live bids by price, highest first, cut-off bids at the cut-off price, with the demand at or above each price', async () => {
      const res = await book();
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
      expect(res.body).toMatchObject({ status: 'success', code: 's-101', message: 'OFS book fetched successfully' });
      const { data } = res.body;
      expect(data.server_time).toBe(new Date(T0).toISOString());
      expect(data.issue).toMatchObject({
        exchange: 'NSE_EQ',
        scrip_token: 500112,
        symbol: 'SBIN',
        retail_window: 'OPEN',
        non_retail_window: 'OPEN',
        allocated: false,
        state: 'OPEN',
      });
      expect(data.offer).toEqual({ total: 1000, retail: 100, non_retail: 900 });
      expect(data.demand).toEqual([
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
          retail_quantity: 65,
          retail_cutoff_quantity: 65,
          non_retail_quantity: 600,
          retail_cumulative: 105,
          non_retail_cumulative: 1200,
          bids: 3,
        },
        {
          price: 100,
          retail_quantity: 0,
          retail_cutoff_quantity: 0,
          non_retail_quantity: 100,
          retail_cumulative: 105,
          non_retail_cumulative: 1300,
          bids: 1,
        },
      ]);
      expect(data.ineligible).toEqual({ retail_quantity: 0, non_retail_quantity: 0, bids: 0 });
      // Retail 105 for 100: at 101.00 its demand first covers the 100. Non-retail 1300 for 900: 101.00 too.
      expect(data.clearing).toEqual({
        retail: { portion: 100, demand: 105, price: 101 },
        non_retail: { portion: 900, demand: 1300, price: 101 },
      });
      expect(data.allotted).toBeNull();
    });

    it('has no clearing price for a category whose demand fits its portion', async () => {
      const queued = await server.store.db
        .selectFrom('orders')
        .select('order_id')
        .where('status', '=', 'OMSXMITTED')
        .execute();
      await server.setOrderStatus(
        queued.map((o) => o.order_id),
        'CANCELLED',
      );
      const { data } = (await book()).body;
      expect(data.clearing.retail).toEqual({ portion: 100, demand: 100, price: null });
      expect(data.demand.find((level: { price: number }) => level.price === 101)).toMatchObject({
        retail_quantity: 60,
        retail_cutoff_quantity: 60,
        bids: 2,
      });
    });

    it('after the allocation at close: no live demand, the issue ALLOCATED, and what was allotted by trade price', async () => {
      server.clock.now = CLOSE;
      await oms.runOnce();
      await oms.runOnce();
      const res = await book();
      expect(res.status, res.text).toBe(200);
      const { data } = res.body;
      expect(data.issue).toMatchObject({
        retail_window: 'CLOSED',
        non_retail_window: 'CLOSED',
        allocated: true,
        state: 'ALLOCATED',
      });
      expect(data.demand).toEqual([]);
      expect(data.clearing.non_retail).toEqual({ portion: 900, demand: 0, price: null });
      // Retail in full at the lowest retail price (101.00: the cut-off bid's price), non-retail 450 + 450 at
      // the clearing price 101.00; the bid at 100.00 got nothing.
      expect(data.allotted).toEqual({
        retail: 100,
        non_retail: 900,
        by_price: [{ price: 101, retail_quantity: 100, non_retail_quantity: 900 }],
      });
      const traded = await server.store.db
        .selectFrom('orders')
        .select(['traded_quantity'])
        .where('status', '=', 'EXECUTED')
        .where('scrip_token', '=', 500112)
        .execute();
      expect(traded.reduce((sum, o) => sum + Number(o.traded_quantity), 0)).toBe(1000);
    });
  });
});

describe('the operator book of an issue whose demand passes 2^63 shares', () => {
  let server: TestServer;
  let olga: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T0 });
    await server.registerIssue({
      offerQuantity: 1000,
      nonRetailOpensAt: T0 - HOUR,
      nonRetailClosesAt: CLOSE,
      retailOpensAt: T0 - HOUR,
      retailClosesAt: CLOSE,
    });
    olga = await server.createUser('olga', { category: 'NON_RETAIL' });
    await new UserRepository(server.store.db, server.store.dialect).setOperator('olga', server.clock.now);
  });
  afterAll(() => server.close());

  it('answers the sum instead of failing (SQLite: a sum of integers past 2^63 overflows)', async () => {
    const ids: string[] = [];
    for (const price of [101, 101, 102]) {
      const res = await server.call('POST', '/transactional/v1/orders/regular', {
        body: validBid({ price, quantity: '10' }),
        token: olga.token,
        apiKey: olga.apiKey,
      });
      expect(res.status, res.text).toBe(200);
      ids.push(res.body.data.orderId as string);
    }
    // As if some thousands of maximum-size bids stood at each price (the schema takes at most 10^15 a bid).
    await sql`update orders set quantity = 6000000000000000000 where order_id in (${sql.join(ids)})`.execute(
      server.store.db,
    );
    const res = await server.call('GET', BOOK, { token: olga.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.clearing.non_retail.demand).toBe(18_000_000_000_000_000_000);
    expect(
      res.body.data.demand.map((level: { price: number; non_retail_quantity: number }) => [
        level.price,
        level.non_retail_quantity,
      ]),
    ).toEqual([
      [102, 6_000_000_000_000_000_000],
      [101, 12_000_000_000_000_000_000],
    ]);
  });
});
