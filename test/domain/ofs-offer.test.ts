/** The offer model (src/domain/ofs/offer/offer.ts): portions, discounts, the state and the indicative price, by hand. */
import { describe, expect, it } from 'vitest';
import {
  biddingDay,
  defaultGreenShoeDecisionBy,
  discountedPricePaise,
  formatDiscount,
  indicativePrice,
  listingOf,
  offerPortions,
  offerCalendarProblems,
  offerState,
  offerTermsProblems,
  printedPortionsProblems,
  tAllocationWait,
  tAllocationWaitAsHeld,
  type Offer,
  type OfferProgress,
} from '../../src/domain/ofs/offer/offer.js';
import { NO_HOLIDAYS } from '../../src/domain/ofs/trading-calendar.js';

const terms = {
  baseQuantity: 1_000_000,
  greenShoeQuantity: 1_000_000,
  greenShoeExercised: 0,
  retailReservePct: 10,
  employeeQuantity: 0,
  employeeGreenShoeQuantity: 0,
  printedPortions: null,
};

describe('offerPortions', () => {
  it('prints the portions of a notice in shares: retail ceil, MF/IC ceil, the cap floor', () => {
    expect(offerPortions({ ...terms, baseQuantity: 1_234_567 })).toEqual({
      total: 1_234_567,
      retailReserved: 123_457, // 123,456.7 rounds up
      nonRetail: 1_111_110,
      mfIcReserved: 308_642, // 308,641.75 rounds up
      employee: 0,
      singleBidderCap: 308_641, // rounds down
      source: 'computed',
    });
  });

  it('counts what is exercised of the green shoe, in whole or in part, and recomputes the reservations', () => {
    expect(offerPortions(terms).total).toBe(1_000_000);
    const exercised = offerPortions({ ...terms, greenShoeExercised: 1_000_000 });
    expect(exercised).toMatchObject({
      total: 2_000_000,
      retailReserved: 200_000,
      nonRetail: 1_800_000,
      mfIcReserved: 500_000,
      singleBidderCap: 500_000,
    });
    // In part: 333,333 of the option.
    expect(offerPortions({ ...terms, greenShoeExercised: 333_333 })).toMatchObject({
      total: 1_333_333,
      retailReserved: 133_334, // 133,333.3 rounds up
      nonRetail: 1_199_999,
      mfIcReserved: 333_334, // 333,333.25 rounds up
      singleBidderCap: 333_333,
    });
  });

  it("grows the employee portion with the green shoe, in the offer's proportion (NHPC 2026: 45,20,265 became 90,40,530)", () => {
    const nhpc = { ...terms, employeeQuantity: 4_520_265, employeeGreenShoeQuantity: 4_520_265 };
    expect(offerPortions(nhpc).employee).toBe(4_520_265);
    expect(offerPortions({ ...nhpc, greenShoeExercised: 1_000_000 }).employee).toBe(9_040_530);
    // A third of the option exercised: a third of the employees' part, rounded up (1,506,755 exactly).
    expect(offerPortions({ ...nhpc, greenShoeExercised: 333_333 }).employee).toBe(
      4_520_265 + Math.ceil((4_520_265 * 333_333) / 1_000_000),
    );
  });

  it("takes the notice's printed portions while the green shoe is the one they were printed for", () => {
    // Notices that print ceil(base part) + ceil(green-shoe part): one share more retail than ceil of the whole.
    const printed = {
      greenShoe: 1_000_000,
      retailReserved: 200_001,
      nonRetail: 1_799_999,
      mfIcReserved: 500_000,
      employee: 0,
    };
    expect(offerPortions({ ...terms, greenShoeExercised: 1_000_000, printedPortions: printed })).toEqual({
      total: 2_000_000,
      retailReserved: 200_001,
      nonRetail: 1_799_999,
      mfIcReserved: 500_000,
      employee: 0,
      singleBidderCap: 500_000,
      source: 'notice',
    });
    // Another decision: the notice did not print for it, the portions are computed.
    expect(offerPortions({ ...terms, greenShoeExercised: 500_000, printedPortions: printed })).toMatchObject({
      retailReserved: 150_000,
      source: 'computed',
    });
  });

  it('refuses printed portions that do not add up to their total', () => {
    const printed = (p: Partial<NonNullable<Offer['printedPortions']>>) => ({
      ...terms,
      printedPortions: {
        greenShoe: 0,
        retailReserved: 100_000,
        nonRetail: 900_000,
        mfIcReserved: 250_000,
        employee: 0,
        ...p,
      },
    });
    expect(printedPortionsProblems(printed({}))).toEqual([]);
    expect(printedPortionsProblems(printed({ nonRetail: 900_001 }))).toEqual([
      'portions: retail_reserved 100000 + non_retail 900001 = 1000001, not the total 1000000 (base 1000000 + green shoe 0)',
    ]);
    expect(printedPortionsProblems(printed({ mfIcReserved: 900_001 }))[0]).toContain(
      'mf_ic_reserved 900001 is more than non_retail 900000',
    );
    // SEBI reserves at least 25 %: a notice cannot print less; one that prints none leaves it computed.
    expect(printedPortionsProblems(printed({ mfIcReserved: 249_999 }))).toEqual([
      'portions: mf_ic_reserved 249999 is less than 25 % of the total 1000000 (250000)',
    ]);
    expect(printedPortionsProblems(printed({ mfIcReserved: null, employee: null }))).toEqual([]);
    expect(
      offerPortions({ ...printed({ mfIcReserved: null, employee: null }), employeeQuantity: 5_000 }),
    ).toMatchObject({
      mfIcReserved: 250_000,
      employee: 5_000,
      source: 'notice',
    });
    expect(printedPortionsProblems(printed({ retailReserved: 99_999, nonRetail: 900_001 }))[0]).toContain(
      'less than 10 % of the total 1000000',
    );
  });

  it('takes a fractional retail reservation (12.5 %) exactly', () => {
    expect(offerPortions({ ...terms, baseQuantity: 7, retailReservePct: 12.5 }).retailReserved).toBe(1); // 0.875 up
    expect(offerPortions({ ...terms, baseQuantity: 8, retailReservePct: 12.5 }).retailReserved).toBe(1); // exactly 1
    expect(offerPortions({ ...terms, baseQuantity: 9, retailReservePct: 12.5 }).retailReserved).toBe(2); // 1.125 up
  });

  it('keeps the employee portion on top of the total', () => {
    expect(offerPortions({ ...terms, employeeQuantity: 5_000 })).toMatchObject({
      total: 1_000_000,
      employee: 5_000,
      nonRetail: 900_000,
    });
  });

  it('never reserves more for MF/IC than the non-retail portion', () => {
    expect(offerPortions({ ...terms, baseQuantity: 100, retailReservePct: 80 })).toMatchObject({
      nonRetail: 20,
      mfIcReserved: 20,
    });
  });
});

describe('discountedPricePaise', () => {
  it('takes rupees off, or a percentage rounded down to a paisa, or nothing', () => {
    expect(discountedPricePaise(10_105, { paise: 1_000 })).toBe(9_105);
    expect(discountedPricePaise(10_105, { basisPoints: 500 })).toBe(9_599); // 95.9975 rounds down
    expect(discountedPricePaise(10_105, null)).toBe(10_105);
  });

  it('never goes below one paisa', () => {
    expect(discountedPricePaise(100, { paise: 500 })).toBe(1);
  });

  it('states a discount as the notices do', () => {
    expect(formatDiscount({ paise: 1_000 })).toBe('Rs 10.00 off');
    expect(formatDiscount({ basisPoints: 250 })).toBe('2.5 % off');
    expect(formatDiscount(null)).toBe('none');
  });
});

describe('offerState', () => {
  const offer = { tDay: { opensAt: 1_000, closesAt: 2_000 }, t1Day: { opensAt: 5_000, closesAt: 6_000 } };
  const progress = (p: Partial<OfferProgress> = {}): OfferProgress => ({
    tAllocatedAt: null,
    t1AllocatedAt: null,
    cancelledAt: null,
    ...p,
  });

  it('follows the clock and what has run', () => {
    expect(offerState(offer, progress(), 999)).toBe('ANNOUNCED');
    expect(offerState(offer, progress(), 1_000)).toBe('T_OPEN');
    // T closed but the T allocation has not run (it waits for the operator when demand is short).
    expect(offerState(offer, progress(), 3_000)).toBe('T_OPEN');
    expect(offerState(offer, progress({ tAllocatedAt: 2_005 }), 3_000)).toBe('T_ALLOCATED');
    expect(offerState(offer, progress({ tAllocatedAt: 2_005 }), 5_000)).toBe('T1_OPEN');
    expect(offerState(offer, progress({ tAllocatedAt: 2_005 }), 7_000)).toBe('T1_OPEN');
    expect(offerState(offer, progress({ tAllocatedAt: 2_005, t1AllocatedAt: 6_005 }), 7_000)).toBe('ALLOCATED');
  });

  it('is CANCELLED once the operator cancels, whatever else', () => {
    expect(offerState(offer, progress({ cancelledAt: 2_500 }), 3_000)).toBe('CANCELLED');
  });
});

describe('the days and listings', () => {
  it('takes non-retail bids on T and retail and employee bids on T+1', () => {
    expect(['NII', 'MF', 'IC', 'OTHS'].map((c) => biddingDay(c as 'NII'))).toEqual(['T', 'T', 'T', 'T']);
    expect(biddingDay('RETAIL')).toBe('T1');
    expect(biddingDay('EMPLOYEE')).toBe('T1');
  });

  it('finds a listing by exchange and scrip token', () => {
    const series = { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' };
    const offer = {
      listings: [
        { exchange: 'NSE_EQ' as const, scripToken: 1, series },
        { exchange: 'BSE_EQ' as const, scripToken: 2, series },
      ],
    };
    expect(listingOf(offer, 'BSE_EQ', 2)?.exchange).toBe('BSE_EQ');
    expect(listingOf(offer, 'BSE_EQ', 1)).toBeUndefined();
  });
});

describe('indicativePrice', () => {
  it('is the VWAP of the valid non-retail bids, all and by margin type, with the quantity bid', () => {
    const result = indicativePrice(
      [
        { category: 'NII', marginType: 'H', pricePaise: 10_000, quantity: 100 },
        { category: 'MF', marginType: 'H', pricePaise: 10_100, quantity: 300 },
        { category: 'OTHS', marginType: 'T', pricePaise: 10_200, quantity: 200 },
        // Not counted: below the floor, retail, employee.
        { category: 'NII', marginType: 'H', pricePaise: 9_900, quantity: 1_000 },
        { category: 'RETAIL', marginType: 'H', pricePaise: 20_000, quantity: 1_000 },
        { category: 'EMPLOYEE', marginType: 'H', pricePaise: 0, quantity: 1_000 },
      ],
      10_000,
    );
    // (100 x 100 + 300 x 101 + 200 x 102) / 600 = 101.1666... -> 101.17
    expect(result.all).toEqual({ pricePaise: 10_117, quantity: 600n });
    expect(result.margin100).toEqual({ pricePaise: 10_075, quantity: 400n });
    expect(result.margin0).toEqual({ pricePaise: 10_200, quantity: 200n });
  });

  it('rounds half a paisa up, and has no price while nothing is bid', () => {
    const result = indicativePrice(
      [
        { category: 'NII', marginType: 'H', pricePaise: 10_000, quantity: 1 },
        { category: 'NII', marginType: 'H', pricePaise: 10_001, quantity: 1 },
      ],
      10_000,
    );
    expect(result.all.pricePaise).toBe(10_001); // 100.005 -> 100.01
    expect(result.margin0).toEqual({ pricePaise: null, quantity: 0n });
  });
});

/** A whole offer: T Tuesday 2026-12-01 09:15-15:30 IST, T+1 Wednesday 2026-12-02. */
function fullOffer(overrides: Partial<Offer> = {}): Offer {
  const tOpens = Date.parse('2026-12-01T03:45:00Z');
  const day = 24 * 60 * 60 * 1000;
  const session = 375 * 60 * 1000;
  return {
    offerId: 'X',
    symbol: 'ACME',
    listings: [{ exchange: 'NSE_EQ', scripToken: 1, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } }],
    floorPricePaise: 10_000,
    tickSizePaise: 5,
    ...terms,
    greenShoeDecidedAt: null,
    greenShoeDecisionBy: Date.parse('2026-12-01T11:30:00Z'),
    retailDiscount: null,
    retailAllocationPrice: 'UNIFORM',
    employeeDiscount: null,
    allocation: 'PRICE_PRIORITY',
    tDay: { opensAt: tOpens, closesAt: tOpens + session },
    t1Day: { opensAt: tOpens + day, closesAt: tOpens + day + session },
    settlementDelayMs: null,
    ...overrides,
  };
}

describe('offerTermsProblems', () => {
  it('takes a whole offer as the notices give it', () => {
    expect(offerTermsProblems(fullOffer())).toEqual([]);
  });

  it('refuses BID pricing with a proportionate allocation: it has one price', () => {
    expect(offerTermsProblems(fullOffer({ retailAllocationPrice: 'BID', allocation: 'PROPORTIONATE' }))).toEqual([
      'retail_allocation_price: BID (each retail bid at its own price) needs allocation PRICE_PRIORITY; a proportionate allocation has one price',
    ]);
    expect(offerTermsProblems(fullOffer({ retailAllocationPrice: 'BID', allocation: 'PRICE_PRIORITY' }))).toEqual([]);
  });

  it('refuses a decision beyond the option, and a deadline outside the close of T and the opening of T+1', () => {
    const offer = fullOffer();
    expect(offerTermsProblems(fullOffer({ greenShoeExercised: 1_000_001 }))).toEqual([
      'green_shoe_exercised: 1000001 shares is more than the green shoe of 1000000',
    ]);
    expect(offerTermsProblems(fullOffer({ greenShoeDecisionBy: offer.tDay.closesAt - 1 }))).toEqual([
      'green_shoe_decision_by: must not be before t_day.closes_at',
    ]);
    expect(offerTermsProblems(fullOffer({ greenShoeDecisionBy: offer.t1Day.opensAt }))).toEqual([
      'green_shoe_decision_by: must be before t1_day.opens_at',
    ]);
    expect(offerTermsProblems(fullOffer({ employeeGreenShoeQuantity: 10 }))).toEqual([
      'employee_green_shoe_quantity: needs a green_shoe_quantity and an employee_quantity',
    ]);
  });
});

describe('defaultGreenShoeDecisionBy', () => {
  it('is 17:00 India time on T, or the close of T when that is later, or when 17:00 would not come before T+1 opens', () => {
    const { tDay, t1Day } = fullOffer();
    expect(new Date(defaultGreenShoeDecisionBy(tDay, t1Day)).toISOString()).toBe('2026-12-01T11:30:00.000Z');
    const late = { opensAt: Date.parse('2026-12-01T10:00:00Z'), closesAt: Date.parse('2026-12-01T12:00:00Z') };
    expect(defaultGreenShoeDecisionBy(late, t1Day)).toBe(late.closesAt);
    // A drill: T closes 10:02Z, T+1 opens 10:03Z.
    const drillT = { opensAt: Date.parse('2026-12-01T10:00:00Z'), closesAt: Date.parse('2026-12-01T10:02:00Z') };
    expect(
      defaultGreenShoeDecisionBy(drillT, {
        opensAt: Date.parse('2026-12-01T10:03:00Z'),
        closesAt: Date.parse('2026-12-01T10:05:00Z'),
      }),
    ).toBe(drillT.closesAt);
  });
});

describe('tAllocationWait', () => {
  const offer = fullOffer({ greenShoeExercised: 0 });
  const afterClose = offer.tDay.closesAt + 60_000;

  it("waits for the seller's green-shoe decision until its deadline, then takes the default", () => {
    expect(tAllocationWait(offer, null, 2_000_000n, afterClose)).toEqual({
      for: 'green-shoe',
      until: offer.greenShoeDecisionBy,
    });
    expect(tAllocationWait(offer, null, 2_000_000n, offer.greenShoeDecisionBy)).toBeNull();
    // Recorded: no wait.
    expect(tAllocationWait({ ...offer, greenShoeDecidedAt: afterClose }, null, 2_000_000n, afterClose)).toBeNull();
    // No option: nothing to wait for.
    expect(tAllocationWait({ ...offer, greenShoeQuantity: 0 }, null, 2_000_000n, afterClose)).toBeNull();
  });

  it('then waits for the operator while non-retail demand is short of the portion the decision gives', () => {
    const decided = { ...offer, greenShoeDecidedAt: afterClose, greenShoeExercised: 1_000_000 };
    // 1,800,000 non-retail with the whole option exercised.
    expect(tAllocationWait(decided, null, 1_799_999n, afterClose)).toEqual({ for: 'operator' });
    expect(tAllocationWait(decided, null, 1_800_000n, afterClose)).toBeNull();
    expect(tAllocationWait(decided, afterClose, 1n, afterClose)).toBeNull();
  });

  it("as the read calls show it: the operator's wait once the exchange has held the allocation, until the operator goes on", () => {
    const decided = { ...offer, greenShoeDecidedAt: afterClose, greenShoeExercised: 1_000_000 };
    expect(tAllocationWaitAsHeld(decided, null, null, afterClose)).toBeNull();
    expect(tAllocationWaitAsHeld(decided, null, afterClose, afterClose)).toEqual({ for: 'operator' });
    expect(tAllocationWaitAsHeld(decided, afterClose + 1, afterClose, afterClose + 2)).toBeNull();
    // The green shoe first, as the exchange waits for it first.
    expect(tAllocationWaitAsHeld(offer, null, afterClose, afterClose)).toEqual({
      for: 'green-shoe',
      until: offer.greenShoeDecisionBy,
    });
  });
});

describe('offerCalendarProblems', () => {
  it('takes T on a trading day and T+1 on the next one', () => {
    expect(offerCalendarProblems(fullOffer(), NO_HOLIDAYS)).toEqual([]);
  });

  it('refuses a weekend or a holiday for T, and a T+1 that is not the first trading day after T', () => {
    const day = 24 * 60 * 60 * 1000;
    const shift = (offer: Offer, days: number): Offer => ({
      ...offer,
      tDay: { opensAt: offer.tDay.opensAt + days * day, closesAt: offer.tDay.closesAt + days * day },
      t1Day: { opensAt: offer.t1Day.opensAt + days * day, closesAt: offer.t1Day.closesAt + days * day },
    });
    // T on Saturday 2026-12-05, T+1 on Sunday.
    expect(offerCalendarProblems(shift(fullOffer(), 4), NO_HOLIDAYS)).toEqual([
      't_day: 2026-12-05 is a Saturday, not a trading day',
      't1_day: 2026-12-06 is a Sunday, not a trading day',
    ]);
    // T on Friday 2026-12-04: T+1 is Monday 2026-12-07, not Saturday.
    const friday = shift(fullOffer(), 3);
    expect(
      offerCalendarProblems(
        { ...friday, t1Day: { opensAt: friday.t1Day.opensAt + 2 * day, closesAt: friday.t1Day.closesAt + 2 * day } },
        NO_HOLIDAYS,
      ),
    ).toEqual([]);
    const holiday = { holidays: new Map([['2026-12-02', 'A holiday']]) };
    expect(offerCalendarProblems(fullOffer(), holiday)).toEqual([
      't1_day: 2026-12-02 is an exchange holiday (A holiday), not a trading day',
    ]);
  });

  it('exempts a drill offer (settlement_delay_seconds), whose days are minutes long', () => {
    expect(
      offerCalendarProblems(
        { ...fullOffer(), settlementDelayMs: 60_000, t1Day: { opensAt: 0, closesAt: 1 } },
        NO_HOLIDAYS,
      ),
    ).toEqual([]);
  });
});
