/** The bid rules of an offer (src/domain/ofs/offer/rules.ts): each rule, with its code and the figures in its message. */
import { describe, expect, it } from 'vitest';
import { Errors, type Violation } from '../../src/domain/errors.js';
import type { OfferCategory, OfferListing, OfferState } from '../../src/domain/ofs/offer/offer.js';
import {
  bidCategory,
  bidMarginType,
  carryForwardViolations,
  employeeLimitViolations,
  marginCancelViolations,
  marginRevisionViolations,
  offerDayViolations,
  offerPriceViolations,
  offerRetailLimitViolations,
  type OfferBidder,
} from '../../src/domain/ofs/offer/rules.js';

const nse: OfferListing = {
  exchange: 'NSE_EQ',
  scripToken: 11,
  series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
};
const bidder = (b: Partial<OfferBidder> = {}): OfferBidder => ({
  category: 'RETAIL',
  marginType: 'H',
  employeeOfOffer: false,
  ...b,
});
const codes = (violations: readonly Violation[]) => violations.map((v) => v.kind.code);

describe('bidCategory', () => {
  it('takes the category from the series and the bidder', () => {
    expect(bidCategory(nse, 'RS', bidder()).category).toBe('RETAIL');
    expect(bidCategory(nse, 'IS', bidder({ category: 'MF' })).category).toBe('MF');
    expect(bidCategory(nse, 'IS', bidder({ category: 'NII' })).category).toBe('NII');
    expect(bidCategory(nse, 'ES', bidder({ employeeOfOffer: true })).category).toBe('EMPLOYEE');
    // A registered employee may also bid as retail.
    expect(bidCategory(nse, 'RS', bidder({ employeeOfOffer: true })).category).toBe('RETAIL');
  });

  it('takes an individual (a RETAIL user) in the non-retail series as a non-retail (NII) bid, outside its retail limit', () => {
    expect(bidCategory(nse, 'IS', bidder())).toEqual({ category: 'NII', violations: [] });
  });

  it("refuses a non-retail user in the retail series, naming the bidder's series", () => {
    const othsInRs = bidCategory(nse, 'RS', bidder({ category: 'OTHS' }));
    expect(codes(othsInRs.violations)).toEqual([Errors.OFS_SERIES_CATEGORY.code]);
    expect(othsInRs.violations[0]!.message).toBe(
      'series "RS" is the retail series on NSE_EQ (scrip_token 11); you are registered in the other institutional (OTHS) category, whose series is IS',
    );
  });

  it('refuses a series the listing does not have, listing those it has', () => {
    const result = bidCategory(nse, 'EQ', bidder());
    expect(codes(result.violations)).toEqual([Errors.OFS_SERIES_CATEGORY.code]);
    expect(result.violations[0]!.message).toContain('its series are RS (retail), IS (non-retail), ES (employees)');
  });

  it('refuses an employee bid from a user not registered for the offer', () => {
    const result = bidCategory(nse, 'ES', bidder());
    expect(codes(result.violations)).toEqual([Errors.OFS_EMPLOYEE_NOT_ELIGIBLE.code]);
    expect(result.violations[0]!.field).toBe('scrip_info.series');
  });

  it('on a listing without an employee series, the employee series is no series', () => {
    const bse: OfferListing = {
      exchange: 'BSE_EQ',
      scripToken: 5,
      series: { RETAIL: 'A', NON_RETAIL: 'A', EMPLOYEE: null },
    };
    // One series for both categories: the bidder decides.
    expect(bidCategory(bse, 'A', bidder()).category).toBe('RETAIL');
    expect(bidCategory(bse, 'A', bidder({ category: 'IC' })).category).toBe('IC');
    expect(codes(bidCategory(bse, 'ES', bidder({ employeeOfOffer: true })).violations)).toEqual([
      Errors.OFS_SERIES_CATEGORY.code,
    ]);
  });

  it('gives institutions their margin type, and cash categories 100 %', () => {
    expect(bidMarginType('MF', { marginType: 'T' })).toBe('T');
    expect(bidMarginType('OTHS', { marginType: 'T' })).toBe('T');
    expect(bidMarginType('NII', { marginType: 'T' })).toBe('H');
    expect(bidMarginType('RETAIL', { marginType: 'T' })).toBe('H');
  });
});

describe('offerDayViolations', () => {
  const offer = {
    symbol: 'ACME',
    tDay: { opensAt: 1_000, closesAt: 2_000 },
    t1Day: { opensAt: 5_000, closesAt: 6_000 },
  };
  const day = (
    state: OfferState,
    category: OfferCategory,
    now: number,
    action: 'place' | 'modify' | 'cancel' = 'place',
    carried = false,
  ) => codes(offerDayViolations(offer, state, category, action, carried, now));

  it('takes non-retail bids, modifications and cancellations during T only', () => {
    expect(day('ANNOUNCED', 'NII', 999)).toEqual([Errors.OFS_WINDOW_NOT_OPEN.code]);
    expect(day('T_OPEN', 'NII', 1_000)).toEqual([]);
    expect(day('T_OPEN', 'MF', 1_999, 'cancel')).toEqual([]);
    expect(day('T_OPEN', 'NII', 2_000)).toEqual([Errors.OFS_WINDOW_CLOSED.code]);
    expect(day('T_ALLOCATED', 'NII', 3_000, 'modify')).toEqual([Errors.OFS_WINDOW_CLOSED.code]);
  });

  it('refuses fresh non-retail bids on T+1 with their own code', () => {
    const violations = offerDayViolations(offer, 'T1_OPEN', 'NII', 'place', false, 5_000);
    expect(codes(violations)).toEqual([Errors.OFS_NON_RETAIL_ON_T1.code]);
    expect(violations[0]!.message).toContain('carry forward an unallotted bid');
  });

  it('on T+1 modifies or cancels a non-retail bid only once carried forward', () => {
    expect(day('T1_OPEN', 'OTHS', 5_500, 'modify')).toEqual([Errors.OFS_NOT_CARRIED_FORWARD.code]);
    expect(day('T1_OPEN', 'OTHS', 5_500, 'modify', true)).toEqual([]);
    expect(day('T1_OPEN', 'OTHS', 6_000, 'modify', true)).toEqual([Errors.OFS_WINDOW_CLOSED.code]);
  });

  it('takes retail and employee bids during T+1, once the T allocation has run', () => {
    expect(day('T_OPEN', 'RETAIL', 1_500)).toEqual([Errors.OFS_WINDOW_NOT_OPEN.code]);
    expect(day('T_ALLOCATED', 'EMPLOYEE', 3_000)).toEqual([Errors.OFS_WINDOW_NOT_OPEN.code]);
    expect(day('T1_OPEN', 'RETAIL', 5_000)).toEqual([]);
    expect(day('T1_OPEN', 'EMPLOYEE', 5_999, 'cancel')).toEqual([]);
    expect(day('T1_OPEN', 'RETAIL', 6_000)).toEqual([Errors.OFS_WINDOW_CLOSED.code]);
    expect(day('ALLOCATED', 'RETAIL', 5_500)).toEqual([Errors.OFS_WINDOW_CLOSED.code]);
  });

  it('says so when T+1 has come but the T allocation waits for the operator', () => {
    const [violation] = offerDayViolations(offer, 'T_OPEN', 'RETAIL', 'place', false, 5_500);
    expect(violation!.kind).toBe(Errors.OFS_WINDOW_NOT_OPEN);
    expect(violation!.message).toContain('after the T allocation has fixed the cut-off price (it has not run yet)');
  });

  it('takes nothing in a cancelled offer', () => {
    expect(day('CANCELLED', 'NII', 1_500)).toEqual([Errors.OFS_OFFER_CANCELLED.code]);
    expect(day('CANCELLED', 'RETAIL', 5_500, 'cancel')).toEqual([Errors.OFS_OFFER_CANCELLED.code]);
  });
});

describe('offerPriceViolations', () => {
  const offer = { floorPricePaise: 10_000 };
  const rl = (pricePaise: number) => ({ orderType: 'RL', quantity: 10, pricePaise });
  const cutoff = { orderType: 'RL-MKT', quantity: 10, pricePaise: 0 };

  it('non-retail: at or above the floor, never at cut-off', () => {
    expect(offerPriceViolations(rl(10_000), offer, 'NII', null, false)).toEqual([]);
    expect(codes(offerPriceViolations(rl(9_995), offer, 'MF', null, false))).toEqual([Errors.OFS_BELOW_FLOOR.code]);
    expect(codes(offerPriceViolations(cutoff, offer, 'OTHS', null, false))).toEqual([
      Errors.OFS_CUTOFF_NOT_RETAIL.code,
    ]);
  });

  it('a carried-forward bid is revised to the T-day cut-off or above', () => {
    const [violation] = offerPriceViolations(rl(10_100), offer, 'NII', 10_200, true);
    expect(violation!.kind).toBe(Errors.OFS_BELOW_T_CUTOFF);
    expect(violation!.message).toBe(
      'price 101.00 is below the T-day cut-off price 102.00; a carried-forward bid may be revised to 102.00 or more',
    );
    expect(offerPriceViolations(rl(10_200), offer, 'NII', 10_200, true)).toEqual([]);
  });

  it('retail: at or above the T-day cut-off, or a cut-off bid', () => {
    expect(offerPriceViolations(cutoff, offer, 'RETAIL', 10_200, false)).toEqual([]);
    expect(offerPriceViolations(rl(10_200), offer, 'RETAIL', 10_200, false)).toEqual([]);
    const [violation] = offerPriceViolations(rl(10_195), offer, 'RETAIL', 10_200, false);
    expect(violation!.kind).toBe(Errors.OFS_BELOW_RETAIL_CUTOFF);
    expect(violation!.message).toContain('below the T-day cut-off price 102.00');
  });

  it('employees: cut-off bids only', () => {
    expect(offerPriceViolations(cutoff, offer, 'EMPLOYEE', 10_200, false)).toEqual([]);
    expect(codes(offerPriceViolations(rl(10_500), offer, 'EMPLOYEE', 10_200, false))).toEqual([
      Errors.OFS_EMPLOYEE_CUTOFF_ONLY.code,
    ]);
  });
});

describe('0 %-margin bids', () => {
  it('are revised upward only, in price and in quantity', () => {
    const before = { quantity: 100, pricePaise: 10_100 };
    expect(marginRevisionViolations('T', before, { quantity: 150, pricePaise: 10_200 })).toEqual([]);
    expect(marginRevisionViolations('T', before, before)).toEqual([]);
    const down = marginRevisionViolations('T', before, { quantity: 99, pricePaise: 10_095 });
    expect(down.map((v) => [v.kind.code, v.field])).toEqual([
      [Errors.OFS_MARGIN_T_UPWARD_ONLY.code, 'price'],
      [Errors.OFS_MARGIN_T_UPWARD_ONLY.code, 'quantity'],
    ]);
    expect(down[1]!.message).toContain('quantity 99 is below its current 100');
    expect(marginRevisionViolations('H', before, { quantity: 1, pricePaise: 10_000 })).toEqual([]);
  });

  it('are never cancelled; 100 %-margin bids are', () => {
    expect(codes(marginCancelViolations('T'))).toEqual([Errors.OFS_MARGIN_T_NO_CANCEL.code]);
    expect(marginCancelViolations('H')).toEqual([]);
  });
});

describe('carryForwardViolations', () => {
  const offer = { symbol: 'ACME', t1Day: { opensAt: 5_000, closesAt: 6_000 } };
  const unallotted = { category: 'NII' as const, live: true, unallottedQuantity: 40, pricePaise: 10_500 };
  const cutoff = 10_500;

  it('carries an unallotted non-retail bid forward during T+1, at or above the T-day cut-off', () => {
    expect(carryForwardViolations(offer, 'T1_OPEN', unallotted, cutoff, 5_000)).toEqual([]);
  });

  it('refuses before T+1, after it, for retail, and for a bid with nothing left', () => {
    const code = Errors.OFS_CARRY_FORWARD_NOT_ALLOWED.code;
    expect(codes(carryForwardViolations(offer, 'T_ALLOCATED', unallotted, cutoff, 4_000))).toEqual([code]);
    expect(codes(carryForwardViolations(offer, 'T1_OPEN', unallotted, cutoff, 6_000))).toEqual([code]);
    expect(
      codes(carryForwardViolations(offer, 'T1_OPEN', { ...unallotted, category: 'RETAIL' }, cutoff, 5_500)),
    ).toEqual([code]);
    expect(
      codes(carryForwardViolations(offer, 'T1_OPEN', { ...unallotted, unallottedQuantity: 0 }, cutoff, 5_500)),
    ).toEqual([code]);
    expect(codes(carryForwardViolations(offer, 'T1_OPEN', { ...unallotted, live: false }, cutoff, 5_500))).toEqual([
      code,
    ]);
    expect(codes(carryForwardViolations(offer, 'CANCELLED', unallotted, cutoff, 5_500))).toEqual([
      Errors.OFS_OFFER_CANCELLED.code,
    ]);
  });

  it('refuses a bid below the T-day cut-off, naming the cut-off and the revision that carries it', () => {
    const below = carryForwardViolations(offer, 'T1_OPEN', { ...unallotted, pricePaise: 10_000 }, cutoff, 5_500);
    expect(below).toEqual([
      {
        kind: Errors.OFS_BELOW_T_CUTOFF,
        field: 'price',
        message:
          'The bid\'s price 100.00 is below the T-day cut-off price 105.00: a carried-forward bid must stand at or above it. Carry it forward with a revised price of at least 105.00 (body {"price": 105.00})',
      },
    ]);
  });
});

describe('the limits', () => {
  it('retail: Rs 2,00,000 over the offer, cut-off bids at the T-day cut-off, inclusive', () => {
    // 1,000 shares at 200.00 = Rs 2,00,000 exactly.
    expect(
      offerRetailLimitViolations('ACME', { orderType: 'RL-MKT', quantity: 1_000, pricePaise: 0 }, 20_000, 0n),
    ).toEqual([]);
    expect(
      offerRetailLimitViolations('ACME', { orderType: 'RL', quantity: 600, pricePaise: 20_000 }, 19_000, 8_000_000n),
    ).toEqual([]);
    const [violation] = offerRetailLimitViolations(
      'ACME',
      { orderType: 'RL', quantity: 600, pricePaise: 20_000 },
      19_000,
      8_000_100n,
    );
    expect(violation!.kind).toBe(Errors.OFS_RETAIL_LIMIT);
    expect(violation!.message).toBe(
      'Your live retail bids in the offer of ACME total Rs 80,001.00; with this bid they would total Rs 2,00,001.00, over the retail limit of Rs 2,00,000.00. At 200.00 you may bid for at most 599 shares',
    );
  });

  it('employees: Rs 5,00,000 at the T-day cut-off', () => {
    // 2,500 shares at 200.00 = Rs 5,00,000 exactly.
    expect(employeeLimitViolations('ACME', 2_000, 20_000, 500)).toEqual([]);
    const [violation] = employeeLimitViolations('ACME', 2_001, 20_000, 500);
    expect(violation!.kind).toBe(Errors.OFS_EMPLOYEE_LIMIT);
    expect(violation!.message).toContain('You may bid for at most 2000 more shares');
  });
});
