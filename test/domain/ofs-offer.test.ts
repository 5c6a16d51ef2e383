/** The offer model (src/domain/ofs-offer.ts): portions, discounts, the state and the indicative price, by hand. */
import { describe, expect, it } from 'vitest';
import {
  biddingDay,
  discountedPricePaise,
  formatDiscount,
  indicativePrice,
  listingOf,
  offerPortions,
  offerState,
  type OfferProgress,
} from '../../src/domain/ofs-offer.js';

const terms = { baseQuantity: 1_000_000, greenShoeQuantity: 1_000_000, greenShoeExercised: false, retailReservePct: 10, employeeQuantity: 0 };

describe('offerPortions', () => {
  it('prints the portions of a notice in shares: retail ceil, MF/IC ceil, the cap floor', () => {
    expect(offerPortions({ ...terms, baseQuantity: 1_234_567 })).toEqual({
      total: 1_234_567,
      retailReserved: 123_457, // 123,456.7 rounds up
      nonRetail: 1_111_110,
      mfIcReserved: 308_642, // 308,641.75 rounds up
      employee: 0,
      singleBidderCap: 308_641, // rounds down
    });
  });

  it('counts the green shoe only when it is exercised, and recomputes the reservations', () => {
    expect(offerPortions(terms).total).toBe(1_000_000);
    const exercised = offerPortions({ ...terms, greenShoeExercised: true });
    expect(exercised).toMatchObject({ total: 2_000_000, retailReserved: 200_000, nonRetail: 1_800_000, mfIcReserved: 500_000, singleBidderCap: 500_000 });
  });

  it('takes a fractional retail reservation (12.5 %) exactly', () => {
    expect(offerPortions({ ...terms, baseQuantity: 7, retailReservePct: 12.5 }).retailReserved).toBe(1); // 0.875 up
    expect(offerPortions({ ...terms, baseQuantity: 8, retailReservePct: 12.5 }).retailReserved).toBe(1); // exactly 1
    expect(offerPortions({ ...terms, baseQuantity: 9, retailReservePct: 12.5 }).retailReserved).toBe(2); // 1.125 up
  });

  it('keeps the employee portion on top of the total', () => {
    expect(offerPortions({ ...terms, employeeQuantity: 5_000 })).toMatchObject({ total: 1_000_000, employee: 5_000, nonRetail: 900_000 });
  });

  it('never reserves more for MF/IC than the non-retail portion', () => {
    expect(offerPortions({ ...terms, baseQuantity: 100, retailReservePct: 80 })).toMatchObject({ nonRetail: 20, mfIcReserved: 20 });
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
  const progress = (p: Partial<OfferProgress> = {}): OfferProgress => ({ tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: null, ...p });

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
    expect(result.all).toEqual({ pricePaise: 10_117, quantity: 600 });
    expect(result.margin100).toEqual({ pricePaise: 10_075, quantity: 400 });
    expect(result.margin0).toEqual({ pricePaise: 10_200, quantity: 200 });
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
    expect(result.margin0).toEqual({ pricePaise: null, quantity: 0 });
  });
});
