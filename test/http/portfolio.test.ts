/**
 * The trade book, positions and holdings through the real server (odin-compat.md; docs/design/portfolio.md):
 * bids over HTTP, the OMS and the simulated exchange allotting them at the close, then every allotment a
 * trade, a position until it settles (the issue's delay, or T+1 at 09:00 India time) and a holding after.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const TRADES = '/transactional/v1/trades';
const POSITIONS = '/transactional/v1/portfolio/positions';
const HOLDINGS = '/transactional/v1/portfolio/holdings';
const HOUR = 60 * 60 * 1000;
/** 09:30 India time: the close two hours later is the same India day. */
const T0 = Date.parse('2026-11-23T04:00:00Z');
/** ODIN's time format, India time, worked out apart from the code under test. */
const ist = (epochMs: number) => new Date(epochMs + 330 * 60_000).toISOString().replace('T', ' ').slice(0, 19);

describe('trade book, positions and holdings', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let alice: TestUser;
  let bob: TestUser;
  let nora: TestUser;
  const ids: Record<string, string> = {};
  const closeAt = T0 + 2 * HOUR;

  beforeAll(async () => {
    server = await startTestServer({ now: T0 });
    const windows = {
      nonRetailOpensAt: T0 - HOUR,
      nonRetailClosesAt: closeAt,
      retailOpensAt: T0 - HOUR,
      retailClosesAt: closeAt,
    };
    // NSE settles a minute after the allotment; BSE T+1. Demand is below the offer: every bid in full.
    await server.registerIssue({ ...windows, offerQuantity: 10_000, settlementDelayMs: 60_000 });
    await server.registerIssue({ ...windows, offerQuantity: 10_000, exchange: 'BSE_EQ', scripToken: 543210 });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    const bid = async (user: TestUser, overrides: Record<string, unknown>) => {
      const res = await server.call('POST', PLACE_ORDER, {
        body: validBid(overrides),
        token: user.token,
        apiKey: user.apiKey,
      });
      expect(res.status, res.text).toBe(200);
      return res.body.data.orderId as string;
    };
    ids.a1 = await bid(alice, { quantity: '10', price: 101.5, order_identifier: 'first' });
    server.clock.now = T0 + 1000;
    ids.a2 = await bid(alice, { quantity: '20', price: 101 });
    server.clock.now = T0 + 2000;
    ids.a3 = await bid(alice, {
      quantity: '5',
      price: 101,
      scrip_info: { exchange: 'BSE_EQ', scrip_token: 543210, symbol: 'SBIN', series: 'OF' },
    });
    ids.b1 = await bid(bob, { quantity: '7', price: 101 });
    ids.n1 = await bid(nora, { quantity: '100', price: 100 });
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    await oms.runOnce();
    server.clock.now = closeAt;
    await oms.runOnce();
  });
  afterAll(() => server.close());

  const get = (path: string, user: TestUser = alice): Promise<CallResult> =>
    server.call('GET', path, { token: user.token });
  const orderIds = (res: CallResult) => res.body.data.map((t: { order_id: string }) => t.order_id);

  describe('GET /transactional/v1/trades', () => {
    it("lists each allotment as a trade, newest first, under ODIN's names; metadata counts them", async () => {
      const res = await get(TRADES);
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'metadata', 'status']);
      expect(res.body).toMatchObject({ status: 'success', code: 's-101', message: 'Trade book fetched successfully' });
      expect(res.body.metadata).toEqual({ total_records: 3, offset: 1, limit: 20 });
      expect(new Set(orderIds(res))).toEqual(new Set([ids.a1, ids.a2, ids.a3]));
      const first = res.body.data.find((t: { order_id: string }) => t.order_id === ids.a1);
      const book = await get(`/transactional/v1/orders?order_id=${ids.a1}`);
      expect(first).toEqual({
        trade_id: `T-${ids.a1}`,
        order_id: ids.a1,
        exchange_order_no: book.body.data[0].exchange_order_no,
        exchange: 'NSE_EQ',
        scrip_token: 500112,
        symbol: 'SBIN',
        series: 'OF',
        transaction_type: 'BUY',
        product_type: 'OFS',
        traded_quantity: 10,
        traded_price: book.body.data[0].traded_price,
        trade_timestamp: ist(closeAt),
        order_identifier: 'first',
        client_id: 'alice',
      });
      expect(first.exchange_order_no).toMatch(/^SIM/);
      expect(book.body.data[0]).toMatchObject({ status: 'EXECUTED', traded_quantity: 10 });
    });

    it("filters by order_id and by order_ids (comma-separated); another user's orders find nothing", async () => {
      expect(orderIds(await get(`${TRADES}?order_id=${ids.a2}`))).toEqual([ids.a2]);
      const two = await get(`${TRADES}?order_ids=${ids.a1},${ids.a3}`);
      expect(new Set(orderIds(two))).toEqual(new Set([ids.a1, ids.a3]));
      expect(two.body.metadata.total_records).toBe(2);
      const other = await get(`${TRADES}?order_ids=${ids.b1},${ids.a1}`);
      expect(orderIds(other)).toEqual([ids.a1]);
      expect(orderIds(await get(`${TRADES}?order_id=${ids.b1}`))).toEqual([]);
      expect(orderIds(await get(TRADES, bob))).toEqual([ids.b1]);
      expect(orderIds(await get(TRADES, nora))).toEqual([ids.n1]);
    });

    it('pages by page number', async () => {
      const all = orderIds(await get(TRADES));
      const second = await get(`${TRADES}?offset=2&limit=2`);
      expect(orderIds(second)).toEqual(all.slice(2));
      expect(second.body.metadata).toEqual({ total_records: 3, offset: 2, limit: 2 });
    });

    it.each([
      ['offset', '?offset=0'],
      ['limit', '?limit=1001'],
      ['order_ids', '?order_ids='],
      ['order_ids', '?order_ids=a,,b'],
      ['order_ids', `?order_ids=${Array.from({ length: 101 }, (_, i) => `o${i}`).join(',')}`],
      ['order_id', '?order_id='],
      ['foo', '?foo=1'],
    ])('refuses a bad query (%s) with 400 e-110 naming the parameter', async (field, query) => {
      const res = await get(`${TRADES}${query}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.INVALID_QUERY.code);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });

  describe('positions and holdings', () => {
    it('shows the unsettled allotments as positions, per instrument, with average prices', async () => {
      const res = await get(`${POSITIONS}/all`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'success', code: 's-101', message: 'Positions fetched successfully' });
      const trades = (await get(TRADES)).body.data as { order_id: string; traded_price: string }[];
      const price = (orderId: string) =>
        Math.round(Number(trades.find((t) => t.order_id === orderId)!.traded_price) * 100);
      const nseValue = 10 * price(ids.a1!) + 20 * price(ids.a2!);
      const rupees = (paise: number) => (paise / 100).toFixed(2);
      expect(res.body.data).toEqual([
        {
          exchange: 'NSE_EQ',
          scrip_token: 500112,
          symbol: 'SBIN',
          series: 'OF',
          product_type: 'OFS',
          buy_quantity: 30,
          buy_average_price: rupees(Math.round(nseValue / 30)),
          buy_value: rupees(nseValue),
          sell_quantity: 0,
          sell_average_price: '0.00',
          sell_value: '0.00',
          net_quantity: 30,
          net_average_price: rupees(Math.round(nseValue / 30)),
          last_traded: ist(closeAt),
          settles_at: ist(closeAt + 60_000),
        },
        expect.objectContaining({ exchange: 'BSE_EQ', buy_quantity: 5, settles_at: '2026-11-24 09:00:00' }),
      ]);
      expect((await get(`${POSITIONS}/daily?intropStatus=1`)).body.data).toEqual(res.body.data);
      expect((await get(`${POSITIONS}/expiry`)).body.data).toEqual([]);
      expect((await get(HOLDINGS)).body.data).toEqual([]);
      expect((await get(`${POSITIONS}/all`, bob)).body.data).toEqual([expect.objectContaining({ buy_quantity: 7 })]);
      expect((await get(`${POSITIONS}/all`, nora)).body.data).toEqual([expect.objectContaining({ buy_quantity: 100 })]);
    });

    it("turns a position into a holding when its trade settles: the issue's delay, else T+1 at 09:00 India time", async () => {
      server.clock.now = closeAt + 60_000;
      const positions = await get(`${POSITIONS}/all`);
      expect(positions.body.data).toEqual([expect.objectContaining({ exchange: 'BSE_EQ', buy_quantity: 5 })]);
      const holdings = await get(HOLDINGS);
      expect(holdings.status, holdings.text).toBe(200);
      expect(holdings.body).toMatchObject({
        status: 'success',
        code: 's-101',
        message: 'Holdings fetched successfully',
      });
      expect(holdings.body.data).toEqual([
        expect.objectContaining({
          exchange: 'NSE_EQ',
          symbol: 'SBIN',
          quantity: 30,
          settled_at: ist(closeAt + 60_000),
          last_traded: ist(closeAt),
        }),
      ]);

      server.clock.now = Date.parse('2026-11-24T09:00:00+05:30');
      expect((await get(`${POSITIONS}/all`)).body.data).toEqual([]);
      expect(
        (await get(HOLDINGS)).body.data.map((h: { exchange: string; quantity: number }) => [h.exchange, h.quantity]),
      ).toEqual([
        ['NSE_EQ', 30],
        ['BSE_EQ', 5],
      ]);
      // The next day nothing was traded: no daily positions either way.
      expect((await get(`${POSITIONS}/daily`)).body.data).toEqual([]);
    });

    it('refuses another positions type with 400 e-381 naming it, and unknown query parameters with 400 e-110', async () => {
      const res = await get(`${POSITIONS}/weekly`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.POSITION_TYPE.code);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['type']);
      for (const path of [`${POSITIONS}/all?intropStatus=2`, `${HOLDINGS}?limit=5`]) {
        const bad = await get(path);
        expect(bad.status, path).toBe(400);
        expect(bad.body.code).toBe(Errors.INVALID_QUERY.code);
      }
    });

    it('needs the bearer token on every call', async () => {
      for (const path of [TRADES, `${POSITIONS}/all`, HOLDINGS]) {
        const res = await server.call('GET', path);
        expect(res.status, path).toBe(401);
        expect(res.body.code).toBe(Errors.TOKEN_MISSING.code);
      }
    });
  });
});
