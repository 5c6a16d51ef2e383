/**
 * The operator's forecast (src/domain/ofs/offer/forecast.ts): ordergate's own allocation over its own live
 * orders of an offer, both listings pooled, summed per category, on books whose outcome is computed by hand.
 */
import { describe, expect, it } from 'vitest';
import {
  defaultForecastDay,
  FORECAST_LABEL,
  offerForecast,
  type ForecastOrder,
} from '../../src/domain/ofs/offer/forecast.js';
import type { Offer, OfferRegistration } from '../../src/domain/ofs/offer/offer.js';
import { offerTerms } from '../support/offer-terms.js';

const HOUR = 60 * 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');

/** The allocation tests' offer (1,000 shares: retail 100, non-retail 900, MF/IC reserved 250, cap 250; floor 100.00). */
function registration(overrides: Partial<OfferRegistration> = {}, terms: Partial<Offer> = {}): OfferRegistration {
  const offer: Offer = {
    ...offerTerms(),
    offerId: 'ACME-OFS',
    symbol: 'ACME',
    listings: [
      { exchange: 'NSE_EQ', scripToken: 700001, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } },
      { exchange: 'BSE_EQ', scripToken: 800001, series: { RETAIL: 'A', NON_RETAIL: 'A', EMPLOYEE: null } },
    ],
    tickSizePaise: 5,
    greenShoeDecidedAt: null,
    greenShoeDecisionBy: T + 7 * HOUR,
    tDay: { opensAt: T, closesAt: T + 6 * HOUR },
    t1Day: { opensAt: T + 24 * HOUR, closesAt: T + 30 * HOUR },
    settlementDelayMs: null,
    ...terms,
  };
  return {
    offer,
    progress: { tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: null },
    tCutoffPricePaise: null,
    tUnallotted: null,
    tProceedAt: null,
    tHeldAt: null,
    t1RetailCutoffPricePaise: null,
    ...overrides,
  };
}

let seq = 0;
function order(
  orderId: string,
  userId: string,
  category: string,
  pricePaise: number,
  quantity: number,
  more: Partial<ForecastOrder> = {},
): ForecastOrder {
  return {
    orderId,
    userId,
    exchange: 'NSE_EQ',
    scripToken: 700001,
    category,
    status: 'PENDING',
    pricePaise,
    quantity,
    tradedQuantity: 0,
    carriedForward: false,
    placedAt: T + ++seq,
    ...more,
  };
}

const category = (forecast: ReturnType<typeof offerForecast>, name: string) =>
  forecast.categories.find((c) => c.category === name)!;

describe('offerForecast', () => {
  it('an oversubscribed T day over both listings: the cut-off, each category’s allotment and prices, the bids allotted, partly and not', () => {
    // 1,300 shares bid (1,050 after the cap) for 900. Reserved 250: M1 100 in full, M2 150 of 200. The rest,
    // 650, by price: N1 250 (capped at 110.00), N2 250 (capped, 104.00), O1 150 of 300 at 102.00, N3 at
    // 101.50 nothing: the cut-off is 102.00.
    const orders = [
      order('M1', 'm1', 'MF', 10_500, 100, { exchange: 'BSE_EQ', scripToken: 800001 }),
      order('N1', 'n1', 'NII', 11_000, 300, { status: 'OMSXMITTED' }),
      order('N2', 'n2', 'NII', 10_400, 400, { status: 'EXXMITTED', exchange: 'BSE_EQ', scripToken: 800001 }),
      order('O1', 'o1', 'OTHS', 10_200, 300),
      order('M2', 'i1', 'IC', 10_100, 200),
      order('N3', 'n3', 'NII', 10_150, 50),
      // Not at the exchange: cancelled, refused; and a retail bid, which waits for T+1.
      order('X1', 'n4', 'NII', 20_000, 900, { status: 'CANCELLED' }),
      order('X2', 'n4', 'NII', 20_000, 900, { status: 'ORDERERROR' }),
      order('R1', 'r1', 'RETAIL', 0, 10, { status: 'OMSXMITTED' }),
    ];
    const forecast = offerForecast(registration(), orders, 'T', T + HOUR);
    expect(forecast.label).toBe(FORECAST_LABEL);
    expect(forecast.day).toBe('T');
    expect(forecast.cutoffPricePaise).toBe(10_200);
    expect(forecast.steps).toEqual([
      { name: 'MF/IC reserved', portion: 250, demand: 300n, allotted: 250, clearingPricePaise: 10_100 },
      { name: 'non-retail', portion: 900, demand: 1_100n, allotted: 900, clearingPricePaise: 10_200 },
    ]);
    expect(
      Object.fromEntries(forecast.bids.map((b) => [b.orderId, [b.allottedQuantity, b.allottedPricePaise]])),
    ).toEqual({
      M1: [100, 10_500],
      N1: [250, 11_000],
      N2: [250, 10_400],
      O1: [150, 10_200],
      M2: [150, 10_100],
      N3: [0, null],
    });
    expect(category(forecast, 'NII')).toEqual({
      category: 'NII',
      portion: 'non-retail',
      sharesOnOffer: 900,
      cutoffPricePaise: 10_200,
      demand: 750n,
      allotted: 500,
      allottedValuePaise: 250n * 11_000n + 250n * 10_400n,
      lowestPricePaise: 10_400,
      highestPricePaise: 11_000,
      bids: { allotted: 0, partly: 2, not: 1 },
    });
    expect(category(forecast, 'MF')).toMatchObject({
      demand: 100n,
      allotted: 100,
      bids: { allotted: 1, partly: 0, not: 0 },
    });
    expect(category(forecast, 'IC')).toMatchObject({
      demand: 200n,
      allotted: 150,
      lowestPricePaise: 10_100,
      bids: { allotted: 0, partly: 1, not: 0 },
    });
    expect(category(forecast, 'OTHS')).toMatchObject({ demand: 300n, allotted: 150, bids: { partly: 1 } });
    expect(forecast.categories.map((c) => c.category)).toEqual(['NII', 'MF', 'IC', 'OTHS']);
    expect(forecast.leftOut).toEqual([
      { orderId: 'R1', category: 'RETAIL', status: 'OMSXMITTED', why: 'a RETAIL bid is allotted on T+1' },
    ]);
    expect(forecast.notes).toEqual([]);
  });

  it('an undersubscribed T day: every bid within the cap allotted, the cut-off at the floor, the operator’s wait noted', () => {
    // 400 shares bid for 900: M1 100 from the reservation; N1 250 of 300 (the cap of 250); 550 left.
    const orders = [order('N1', 'n1', 'NII', 11_000, 300), order('M1', 'm1', 'MF', 10_500, 100)];
    const forecast = offerForecast(registration(), orders, 'T', T + HOUR);
    expect(forecast.cutoffPricePaise).toBe(10_000);
    expect(forecast.steps[1]).toEqual({
      name: 'non-retail',
      portion: 900,
      demand: 350n,
      allotted: 350,
      clearingPricePaise: 10_000,
    });
    expect(category(forecast, 'NII')).toMatchObject({
      demand: 300n,
      allotted: 250,
      cutoffPricePaise: 10_000,
      bids: { allotted: 0, partly: 1, not: 0 },
    });
    expect(category(forecast, 'MF')).toMatchObject({ allotted: 100, bids: { allotted: 1, partly: 0, not: 0 } });
    expect(forecast.bids.find((b) => b.orderId === 'N1')!.reason).toContain('over the single-bidder cap');
    expect(forecast.notes).toEqual([
      'non-retail demand after the single-bidder cap (350) is short of the non-retail portion (900): the T allocation waits for the operator (ofs proceed or ofs cancel), and the T-day cut-off is the floor price',
    ]);
  });

  it('T+1: retail oversubscribed at the recorded cut-off, carried-forward bids only, the T allotments counted', () => {
    // The T-day cut-off 102.00; T left nothing. Retail 100 shares: R2 80 at 103.00 in full, R1's cut-off bid
    // (valued 102.00) 20 of 60; every retail allottee at the UNIFORM price, the T-day cut-off. N2 carried
    // forward its 150 unallotted shares: no retail share is left for it. N5 did not carry forward.
    const orders = [
      order('R1', 'r1', 'RETAIL', 0, 60),
      order('R2', 'r2', 'RETAIL', 10_300, 80, { exchange: 'BSE_EQ', scripToken: 800001 }),
      order('N2', 'n2', 'NII', 10_400, 400, { tradedQuantity: 250, carriedForward: true }),
      order('N5', 'n5', 'NII', 10_100, 100),
      order('M1', 'm1', 'MF', 10_500, 100, { status: 'EXECUTED', tradedQuantity: 100 }),
    ];
    const forecast = offerForecast(
      registration({
        progress: { tAllocatedAt: T + 6 * HOUR, t1AllocatedAt: null, cancelledAt: null },
        tCutoffPricePaise: 10_200,
        tUnallotted: 0,
      }),
      orders,
      'T+1',
      T + 25 * HOUR,
    );
    expect(forecast.tCutoffPricePaise).toBe(10_200);
    expect(forecast.cutoffPricePaise).toBe(10_200);
    expect(
      Object.fromEntries(forecast.bids.map((b) => [b.orderId, [b.quantity, b.allottedQuantity, b.allottedPricePaise]])),
    ).toEqual({
      R1: [60, 20, 10_200],
      R2: [80, 80, 10_200],
      N2: [150, 0, null],
    });
    expect(category(forecast, 'RETAIL')).toMatchObject({
      portion: 'retail',
      sharesOnOffer: 100,
      demand: 140n,
      allotted: 100,
      bids: { allotted: 1, partly: 1, not: 0 },
    });
    expect(category(forecast, 'NII')).toMatchObject({
      portion: 'unsubscribed retail',
      sharesOnOffer: 0,
      demand: 150n,
      allotted: 0,
      bids: { allotted: 0, partly: 0, not: 1 },
    });
    expect(forecast.leftOut.map((l) => l.orderId)).toEqual(['N5']);
    expect(forecast.notes).toEqual([]);
  });

  it('T+1 with no T-day cut-off recorded values cut-off bids at the floor, and says so', () => {
    const forecast = offerForecast(registration(), [order('R1', 'r1', 'RETAIL', 0, 10)], 'T+1', T + 25 * HOUR);
    expect(forecast.bids[0]).toMatchObject({ allottedQuantity: 10, allottedPricePaise: 10_000 });
    expect(forecast.notes).toEqual([
      'no T-day cut-off is recorded: cut-off bids are valued at the floor price 100.00',
      'what the T allocation left of the non-retail portion is not recorded: the retail portion is its own',
      '90 shares would return to the seller',
    ]);
  });

  it('forecasts T until T+1 opens, then T+1', () => {
    const r = registration();
    expect(defaultForecastDay(r, T - HOUR)).toBe('T');
    expect(defaultForecastDay(r, T + 10 * HOUR)).toBe('T');
    expect(defaultForecastDay(r, T + 24 * HOUR)).toBe('T+1');
  });
});
