/**
 * GET /transactional/v1/ofs/offers and /transactional/v1/ofs/offers/{offer_id} through the real server:
 * an offer's terms with its portions in shares as the notices print them, its days, and where it stands on
 * the server's clock; the green shoe recomputes the portions; the T-day cut-off and the employee price
 * once the T allocation has found the cut-off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { offerImport } from '../support/offers.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';

const OFFERS = '/transactional/v1/ofs/offers';
const HOUR = 60 * 60 * 1000;
/** Day T opens at 09:15 India time. */
const T = Date.parse('2026-12-01T03:45:00Z');

describe('the offers read calls', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T - HOUR });
    alice = await server.createUser('alice');
    // The seller's green-shoe decision is due at 17:00 India time on T (the default).
    await server.admin.importOfs([offerImport({ green_shoe_decision_by: undefined }, T)]);
  });
  afterAll(() => server.close());

  const list = async () => {
    const res = await server.call('GET', OFFERS, { token: alice.token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('lists the offer with its terms and portions in shares, ANNOUNCED on T-1', async () => {
    const body = await list();
    expect(body).toMatchObject({ status: 'success', code: 's-101', message: 'OFS offers fetched successfully' });
    expect(body.data.server_time).toBe(new Date(T - HOUR).toISOString());
    expect(body.data.offers).toEqual([
      {
        offer_id: 'ACME-OFS-1',
        symbol: 'ACME',
        listings: [
          {
            exchange: 'BSE_EQ',
            scrip_token: 800001,
            series: { RETAIL: 'A', NON_RETAIL: 'A', EMPLOYEE: null },
            order_value_upper_limit: { RETAIL: null, NON_RETAIL: null, EMPLOYEE: null },
          },
          {
            exchange: 'NSE_EQ',
            scrip_token: 700001,
            series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
            order_value_upper_limit: { RETAIL: null, NON_RETAIL: null, EMPLOYEE: null },
          },
        ],
        floor_price: 100,
        tick_size: 0.05,
        base_quantity: 1_000_000,
        green_shoe_quantity: 1_000_000,
        green_shoe_exercised: 0,
        green_shoe_decided_at: null,
        green_shoe_decision_by: '2026-12-01T11:30:00.000Z',
        retail_reserve_pct: 12.5,
        portions: {
          total: 1_000_000,
          retail_reserved: 125_000,
          non_retail: 875_000,
          mf_ic_reserved: 250_000,
          employee: 20_000,
          single_bidder_cap: 250_000,
          source: 'computed',
        },
        employee_quantity: 20_000,
        employee_green_shoe_quantity: 0,
        retail_discount: { rupees: 2.5 },
        retail_allocation_price: 'UNIFORM',
        employee_discount: { pct: 5 },
        allocation: 'PRICE_PRIORITY',
        t_day: { opens_at: '2026-12-01T03:45:00.000Z', closes_at: '2026-12-01T10:00:00.000Z' },
        t1_day: { opens_at: '2026-12-02T03:45:00.000Z', closes_at: '2026-12-02T10:00:00.000Z' },
        current_day: 'T-1',
        state: 'ANNOUNCED',
        t_cutoff_price: null,
        employee_price: null,
        retail_cutoff_price: null,
        retail_price: null,
        indicative: null,
        awaiting_operator: false,
        awaiting_green_shoe_until: null,
        settlement: 'by-day',
        // T-day allotments on Wednesday 2 December, T+1 ones on Thursday 3 December, at 13:30 India time.
        settlement_dates: { t_day: '2026-12-02T08:00:00.000Z', t1_day: '2026-12-03T08:00:00.000Z' },
      },
    ]);
  });

  it("follows the clock: T_OPEN on T, still T_OPEN after the close while the T allocation waits for the seller's green-shoe decision", async () => {
    server.clock.now = T;
    expect((await list()).data.offers[0]).toMatchObject({
      current_day: 'T',
      state: 'T_OPEN',
      awaiting_green_shoe_until: null,
    });
    // An individual (a RETAIL user) may bid on T in the non-retail series: a non-retail (NII) bid, outside the retail limit.
    const body = validBid({
      scrip_info: {
        exchange: 'NSE_EQ',
        scrip_token: 700001,
        symbol: 'ACME',
        series: 'IS',
        expiry_date: '',
        strike_price: '',
        option_type: '',
      },
      quantity: '3000',
      price: 101,
    });
    const placed = await server.call('POST', '/transactional/v1/orders/regular', {
      body,
      token: alice.token,
      apiKey: alice.apiKey,
    });
    expect(placed.status, placed.text).toBe(200);
    const book = await server.call('GET', '/transactional/v1/orders', { token: alice.token });
    expect(book.body.data[0]).toMatchObject({
      order_id: placed.body.data.orderId,
      bid_category: 'NII',
      category: 'NON_RETAIL',
      margin_type: 'H',
    });
    server.clock.now = T + 7 * HOUR;
    expect((await list()).data.offers[0]).toMatchObject({
      current_day: 'T',
      state: 'T_OPEN',
      awaiting_green_shoe_until: '2026-12-01T11:30:00.000Z',
      awaiting_operator: false,
    });
  });

  it('recomputes the total and the reservations for the decision, in whole or in part; then waits for the operator, nobody having bid', async () => {
    await server.admin.setGreenShoe('ACME-OFS-1', 400_000);
    expect((await list()).data.offers[0]).toMatchObject({
      green_shoe_exercised: 400_000,
      green_shoe_decided_at: new Date(T + 7 * HOUR).toISOString(),
      portions: {
        total: 1_400_000,
        retail_reserved: 175_000,
        non_retail: 1_225_000,
        mf_ic_reserved: 350_000,
        employee: 20_000,
        single_bidder_cap: 350_000,
      },
      awaiting_green_shoe_until: null,
      // Nobody has bid, but it is the exchange that holds the allocation for the operator (no OMS runs here).
      awaiting_operator: false,
    });
    await new OfsOfferRepository(server.store.db).holdTAllocation('ACME-OFS-1', server.clock.now);
    expect((await list()).data.offers[0]).toMatchObject({ awaiting_operator: true });
    await server.admin.setGreenShoe('ACME-OFS-1', true);
    expect((await list()).data.offers[0]).toMatchObject({
      green_shoe_exercised: 1_000_000,
      portions: {
        total: 2_000_000,
        retail_reserved: 250_000,
        non_retail: 1_750_000,
        mf_ic_reserved: 500_000,
        employee: 20_000,
        single_bidder_cap: 500_000,
      },
    });
    // After its deadline the decision stands.
    server.clock.now = T + 8 * HOUR;
    await expect(server.admin.setGreenShoe('ACME-OFS-1', 0)).rejects.toThrow(
      /the decision was due by 2026-12-01 17:00 IST; .* \(1000000 shares\) stands/,
    );
  });

  it('shows the T-day cut-off and the employee price once the T allocation has run, and T+1 from its opening', async () => {
    await server.store.db
      .updateTable('ofs_offers')
      .set({ t_allocated_at: T + 7 * HOUR, t_cutoff_price_paise: 10_105, t_unallotted: 0 })
      .execute();
    // The employees' price is 101.05 less 5 %, rounded down; UNIFORM retail pays the T-day cut-off less Rs 2.50.
    expect((await list()).data.offers[0]).toMatchObject({
      state: 'T_ALLOCATED',
      t_cutoff_price: 101.05,
      employee_price: 95.99,
      retail_price: 98.55,
    });
    server.clock.now = T + 24 * HOUR;
    alice = await server.createUser('alice-t1'); // a session lasts 24 h
    expect((await list()).data.offers[0]).toMatchObject({ current_day: 'T+1', state: 'T1_OPEN' });
    server.clock.now = T + 31 * HOUR;
    expect((await list()).data.offers[0]).toMatchObject({ current_day: 'CLOSED', state: 'T1_OPEN' });
  });

  it('settles on trading days: a holiday the operator imports moves the pay-out', async () => {
    await new TradingHolidayRepository(server.store.db).replaceYears(
      [{ date: '2026-12-03', description: 'A holiday' }],
      server.clock.now,
    );
    expect((await list()).data.offers[0].settlement_dates).toEqual({
      t_day: '2026-12-02T08:00:00.000Z',
      t1_day: '2026-12-04T08:00:00.000Z',
    });
  });

  it('answers one offer by id, 404 e-368 for an unknown one, 401 without a token', async () => {
    const one = await server.call('GET', `${OFFERS}/ACME-OFS-1`, { token: alice.token });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({
      message: 'OFS offer fetched successfully',
      data: { offer: { offer_id: 'ACME-OFS-1', symbol: 'ACME' } },
    });
    expect(one.body.data.offer).toEqual((await list()).data.offers[0]);
    expect(one.body.data.indicative_history).toEqual([]);

    const unknown = await server.call('GET', `${OFFERS}/NOPE`, { token: alice.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      status: 'error',
      code: 'e-368',
      message: 'No OFS offer has offer_id "NOPE"',
      errors: [{ field: 'offer_id', message: 'no such offer' }],
    });
    expect((await server.call('GET', OFFERS)).status).toBe(401);
  });
});
