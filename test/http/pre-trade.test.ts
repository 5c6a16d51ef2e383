/**
 * The pre-trade checks of a bid, through the real server (product.md "OFS market rules"; issue 3 part 1):
 * the caller's category window, the floor price, cut-off bids, the retail cut-off and the Rs 2,00,000
 * retail limit across exchanges. Each refusal answers 422 with its own code, names the field, and stores
 * nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { formatInstant } from '../../src/domain/ofs/rules.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const HOUR = 60 * 60 * 1000;

type Instrument = { exchange: string; scrip_token: number; symbol: string; series: string };

const SBIN_NSE: Instrument = { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' };
/** An issue whose retail cut-off price is not known yet. */
const NOCUT: Instrument = { exchange: 'NSE_EQ', scrip_token: 500300, symbol: 'NOCUT', series: 'OF' };
/** One OFS on two exchanges, with different retail cut-off prices: Rs 100.00 on NSE, Rs 120.00 on BSE. */
const LIMCO_NSE: Instrument = { exchange: 'NSE_EQ', scrip_token: 600001, symbol: 'LIMCO', series: 'OF' };
const LIMCO_BSE: Instrument = { exchange: 'BSE_EQ', scrip_token: 600002, symbol: 'LIMCO', series: 'OF' };
/** Day T for non-retail (open now), T+1 for retail (opens in 2 hours). */
const DAYS: Instrument = { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'DAYS', series: 'OF' };

const bidOn = (instrument: Instrument, overrides: Record<string, unknown> = {}) =>
  validBid({ scrip_info: { ...instrument }, ...overrides });
const priceBid = (instrument: Instrument, quantity: number, price: number) =>
  bidOn(instrument, { quantity: String(quantity), price });
const cutoffBid = (instrument: Instrument, quantity: number) =>
  bidOn(instrument, { quantity: String(quantity), order_type: 'RL-MKT', price: 0 });

describe('pre-trade checks of a bid', () => {
  let server: TestServer;
  let rita: TestUser;
  let nora: TestUser;
  let start: number;
  let days: { nonRetailOpensAt: number; nonRetailClosesAt: number; retailOpensAt: number; retailClosesAt: number };
  let ordersBefore: number;

  beforeAll(async () => {
    server = await startTestServer();
    start = server.clock.now;
    await server.registerIssue();
    await server.registerIssue({ scripToken: NOCUT.scrip_token, symbol: NOCUT.symbol, retailCutoffPricePaise: null });
    await server.registerIssue({
      scripToken: LIMCO_NSE.scrip_token,
      symbol: 'LIMCO',
      floorPricePaise: 10_000,
      retailCutoffPricePaise: 10_000,
    });
    await server.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: LIMCO_BSE.scrip_token,
      symbol: 'LIMCO',
      floorPricePaise: 10_000,
      retailCutoffPricePaise: 12_000,
    });
    days = {
      nonRetailOpensAt: start - HOUR,
      nonRetailClosesAt: start + HOUR,
      retailOpensAt: start + 2 * HOUR,
      retailClosesAt: start + 4 * HOUR,
    };
    await server.registerIssue({ scripToken: DAYS.scrip_token, symbol: DAYS.symbol, ...days });
    rita = await server.createUser('rita');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  const countOrders = async () =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeEach(async () => {
    server.clock.now = start;
    ordersBefore = await countOrders();
  });

  const place = (body: unknown, user: TestUser = rita): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body, token: user.token, apiKey: user.apiKey });

  async function expectAccepted(res: CallResult): Promise<string> {
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order Entry Sent to OMS',
      data: { orderId: expect.any(String) },
    });
    return res.body.data.orderId as string;
  }

  /** 422 with the rule's code, the field named, the envelope, and no order stored. */
  async function expectRefusal(res: CallResult, kind: ErrorKind, field: string): Promise<void> {
    expect(kind.status).toBe(422);
    expect(res.status, res.text).toBe(422);
    expect(res.body.code, res.text).toBe(kind.code);
    expect(res.body.status).toBe('error');
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(
      res.body.errors.map((e: { field: string }) => e.field),
      res.text,
    ).toContain(field);
    expect(await countOrders()).toBe(ordersBefore);
  }

  describe("the caller's category window: opens_at <= now < closes_at", () => {
    it('refuses a retail bid before the retail window opens (422 e-354), saying when it opens in India time', async () => {
      server.clock.now = days.retailOpensAt - 1;
      const res = await place(priceBid(DAYS, 1, 101.5));
      await expectRefusal(res, Errors.OFS_WINDOW_NOT_OPEN, '');
      expect(res.body.message).toContain(`opens at ${formatInstant(days.retailOpensAt)};`);
      // In a trader's words: no UTC instant beside it.
      expect(res.body.message).not.toContain(new Date(days.retailOpensAt).toISOString());
    });

    it('takes a retail bid from the instant the retail window opens', async () => {
      server.clock.now = days.retailOpensAt;
      await expectAccepted(await place(priceBid(DAYS, 1, 101.5)));
    });

    it('takes a retail bid one millisecond before the retail window closes', async () => {
      server.clock.now = days.retailClosesAt - 1;
      await expectAccepted(await place(priceBid(DAYS, 1, 101.5)));
    });

    it('refuses a retail bid at the closing instant (422 e-355), saying when it closed', async () => {
      server.clock.now = days.retailClosesAt;
      const res = await place(priceBid(DAYS, 1, 101.5));
      await expectRefusal(res, Errors.OFS_WINDOW_CLOSED, '');
      expect(res.body.message).toContain(formatInstant(days.retailClosesAt));
      expect(res.body.message).not.toContain(new Date(days.retailClosesAt).toISOString());
    });

    it('judges a non-retail bid by the non-retail window: open on day T, closed on T+1', async () => {
      await expectAccepted(await place(priceBid(DAYS, 1, 100), nora));
      server.clock.now = days.retailOpensAt;
      ordersBefore = await countOrders();
      await expectRefusal(await place(priceBid(DAYS, 1, 100), nora), Errors.OFS_WINDOW_CLOSED, '');
    });

    it('refuses a retail bid on day T, while only the non-retail window is open (422 e-354)', async () => {
      await expectRefusal(await place(priceBid(DAYS, 1, 101.5)), Errors.OFS_WINDOW_NOT_OPEN, '');
    });
  });

  describe('prices', () => {
    it('takes a non-retail bid at exactly the floor price', async () => {
      await expectAccepted(await place(priceBid(SBIN_NSE, 1, 100), nora));
    });

    it('refuses a bid one tick below the floor price (422 e-356, price)', async () => {
      const res = await place(priceBid(SBIN_NSE, 1, 99.95), nora);
      await expectRefusal(res, Errors.OFS_BELOW_FLOOR, 'price');
      expect(res.body.message).toContain('100.00');
    });

    it('refuses a cut-off bid from a non-retail user (422 e-357, order_type)', async () => {
      await expectRefusal(await place(cutoffBid(SBIN_NSE, 1), nora), Errors.OFS_CUTOFF_NOT_RETAIL, 'order_type');
    });

    it('refuses a retail cut-off bid while the retail cut-off price is not set (422 e-358, order_type)', async () => {
      await expectRefusal(await place(cutoffBid(NOCUT, 1)), Errors.OFS_CUTOFF_PRICE_UNKNOWN, 'order_type');
    });

    it('takes a retail price bid at the floor while the retail cut-off price is not set', async () => {
      await expectAccepted(await place(priceBid(NOCUT, 1, 100)));
    });

    it('takes a retail cut-off bid once the retail cut-off price is set', async () => {
      await expectAccepted(await place(cutoffBid(SBIN_NSE, 1)));
    });

    it('refuses a retail price bid one tick below the retail cut-off (422 e-359, price), which a non-retail user may bid', async () => {
      const res = await place(priceBid(SBIN_NSE, 1, 100.95));
      await expectRefusal(res, Errors.OFS_BELOW_RETAIL_CUTOFF, 'price');
      expect(res.body.message).toContain('101.00');
      await expectAccepted(await place(priceBid(SBIN_NSE, 1, 100.95), nora));
    });

    it('takes a retail price bid at exactly the retail cut-off', async () => {
      await expectAccepted(await place(priceBid(SBIN_NSE, 1, 101)));
    });
  });

  describe('the retail limit: Rs 2,00,000 of live bids per OFS, across exchanges, inclusive', () => {
    it("counts NSE and BSE bids of one symbol, a cut-off bid at its own issue's cut-off, up to exactly Rs 2,00,000", async () => {
      const lena = await server.createUser('lena');
      // Rs 60,000: 500 cut-off shares at the BSE cut-off, Rs 120.00.
      await expectAccepted(await place(cutoffBid(LIMCO_BSE, 500), lena));
      // Rs 1,00,000 on NSE.
      await expectAccepted(await place(priceBid(LIMCO_NSE, 1000, 100), lena));
      // Rs 40,100 more would make Rs 2,00,100: refused. (Valued at the NSE cut-off, the BSE bid would leave room.)
      ordersBefore = await countOrders();
      const over = await place(priceBid(LIMCO_NSE, 401, 100), lena);
      await expectRefusal(over, Errors.OFS_RETAIL_LIMIT, 'quantity');
      expect(over.body.message).toContain('Rs 1,60,000.00');
      expect(over.body.message).toContain('Rs 2,00,000.00');
      expect(over.body.message).toMatch(/at most 400 shares/);
      // Rs 40,000 more on BSE (320 x Rs 125.00), exactly Rs 2,00,000 in all: accepted.
      await expectAccepted(await place(priceBid(LIMCO_BSE, 320, 125), lena));
      // One share more, on either exchange, at a price or at cut-off: refused.
      ordersBefore = await countOrders();
      await expectRefusal(await place(priceBid(LIMCO_NSE, 1, 100), lena), Errors.OFS_RETAIL_LIMIT, 'quantity');
      await expectRefusal(await place(priceBid(LIMCO_BSE, 1, 120), lena), Errors.OFS_RETAIL_LIMIT, 'quantity');
      await expectRefusal(await place(cutoffBid(LIMCO_NSE, 1), lena), Errors.OFS_RETAIL_LIMIT, 'quantity');
      // Another symbol is another OFS, with its own limit.
      await expectAccepted(await place(priceBid(SBIN_NSE, 1000, 101), lena));
    });

    it('takes one bid of exactly Rs 2,00,000 and refuses one of a share more', async () => {
      const mira = await server.createUser('mira');
      await expectRefusal(await place(priceBid(LIMCO_NSE, 2001, 100), mira), Errors.OFS_RETAIL_LIMIT, 'quantity');
      await expectAccepted(await place(priceBid(LIMCO_NSE, 2000, 100), mira));
    });

    it('counts only live bids: a finished bid frees its value', async () => {
      const ravi = await server.createUser('ravi');
      const first = await expectAccepted(await place(priceBid(LIMCO_NSE, 2000, 100), ravi));
      ordersBefore = await countOrders();
      await expectRefusal(await place(priceBid(LIMCO_BSE, 1, 120), ravi), Errors.OFS_RETAIL_LIMIT, 'quantity');
      for (const status of ['EXXMITTED', 'PENDING'] as const) {
        await server.setOrderStatus(first, status);
        await expectRefusal(await place(priceBid(LIMCO_BSE, 1, 120), ravi), Errors.OFS_RETAIL_LIMIT, 'quantity');
      }
      await server.setOrderStatus(first, 'CANCELLED');
      await expectAccepted(await place(priceBid(LIMCO_BSE, 1600, 125), ravi));
    });

    it('puts no value cap on a non-retail user', async () => {
      await expectAccepted(await place(priceBid(LIMCO_NSE, 1_000_000, 100), nora));
    });
  });

  describe('order of checks', () => {
    it('the window is checked before the price rules', async () => {
      server.clock.now = days.retailClosesAt;
      await expectRefusal(await place(priceBid(DAYS, 1, 1)), Errors.OFS_WINDOW_CLOSED, '');
    });

    it('the price rules are checked before the retail limit', async () => {
      await expectRefusal(await place(priceBid(SBIN_NSE, 1_000_000, 100)), Errors.OFS_BELOW_RETAIL_CUTOFF, 'price');
    });

    it('the request-alone rules (400) come before the pre-trade checks', async () => {
      server.clock.now = days.retailClosesAt;
      const res = await place(bidOn(DAYS, { order_type: 'RL', price: 0 }));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(Errors.OFS_PRICE_ORDER_TYPE.code);
    });
  });
});
