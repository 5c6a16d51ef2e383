/**
 * Which rules judge a bid in an offer, and in which order (src/domain/ofs/offer/rules.ts:
 * offerPlacementViolations, offerModificationViolations, offerCancellationViolations): the instrument,
 * the category, the day, the tick, the price, the limits; a revision's margin and allotted quantity.
 */
import { describe, expect, it } from 'vitest';
import { Errors, type Violation } from '../../src/domain/errors.js';
import type { Offer, OfferListing } from '../../src/domain/ofs/offer/offer.js';
import {
  offerCancellationViolations,
  offerModificationViolations,
  offerPlacementViolations,
  type LiveOfferBid,
  type OfferBidder,
  type OfferContext,
} from '../../src/domain/ofs/offer/rules.js';

const nse: OfferListing = {
  exchange: 'NSE_EQ',
  scripToken: 11,
  series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
};
const offer: Offer = {
  offerId: 'O-1',
  symbol: 'ACME',
  listings: [nse],
  floorPricePaise: 10_000,
  tickSizePaise: 5,
  baseQuantity: 1000,
  greenShoeQuantity: 0,
  greenShoeExercised: 0,
  greenShoeDecidedAt: null,
  greenShoeDecisionBy: 2_000,
  retailReservePct: 10,
  retailDiscount: null,
  retailAllocationPrice: 'UNIFORM',
  employeeQuantity: 100,
  employeeGreenShoeQuantity: 0,
  printedPortions: null,
  employeeDiscount: null,
  allocation: 'PRICE_PRIORITY',
  tDay: { opensAt: 1_000, closesAt: 2_000 },
  t1Day: { opensAt: 5_000, closesAt: 6_000 },
  settlementDelayMs: null,
};
const onT: OfferContext = { offer, state: 'T_OPEN', tCutoffPricePaise: null };
const onT1: OfferContext = { offer, state: 'T1_OPEN', tCutoffPricePaise: 10_100 };
const bidder = (b: Partial<OfferBidder> = {}): OfferBidder => ({
  category: 'RETAIL',
  marginType: 'H',
  employeeOfOffer: false,
  ...b,
});
const codes = (violations: readonly Violation[]) => violations.map((v) => v.kind.code);
const request = (series: string, price: number, quantity = 10, symbol = 'ACME') => ({
  symbol,
  series,
  price,
  terms: { orderType: price === 0 ? 'RL-MKT' : 'RL', pricePaise: Math.round(price * 100), quantity },
});

describe('offerPlacementViolations', () => {
  it('answers the category and the margin of a bid that keeps every rule', () => {
    expect(
      offerPlacementViolations(onT, nse, bidder({ category: 'MF', marginType: 'T' }), request('IS', 101), [], 1_500),
    ).toEqual({
      category: 'MF',
      marginType: 'T',
      violations: [],
    });
    // A cash category always takes 100 % margin, whatever the user's setting.
    expect(
      offerPlacementViolations(onT, nse, bidder({ category: 'NII', marginType: 'T' }), request('IS', 101), [], 1_500),
    ).toMatchObject({
      category: 'NII',
      marginType: 'H',
    });
    expect(offerPlacementViolations(onT1, nse, bidder(), request('RS', 0), [], 5_500)).toEqual({
      category: 'RETAIL',
      marginType: 'H',
      violations: [],
    });
  });

  it('judges the instrument first, then the category, then the day', () => {
    expect(
      codes(offerPlacementViolations(onT, nse, bidder(), request('RS', 101, 10, 'OTHER'), [], 1_500).violations),
    ).toEqual([Errors.OFS_SCRIP_MISMATCH.code]);
    // A non-retail user in the retail series on T: the series is wrong before the day is.
    expect(
      codes(offerPlacementViolations(onT, nse, bidder({ category: 'NII' }), request('RS', 101), [], 1_500).violations),
    ).toEqual([Errors.OFS_SERIES_CATEGORY.code]);
    // A retail user in the non-retail series is a non-retail bid: on T+1 a fresh one is refused.
    expect(codes(offerPlacementViolations(onT1, nse, bidder(), request('IS', 101), [], 5_500).violations)).toEqual([
      Errors.OFS_NON_RETAIL_ON_T1.code,
    ]);
    expect(codes(offerPlacementViolations(onT, nse, bidder(), request('RS', 101), [], 1_500).violations)).toEqual([
      Errors.OFS_WINDOW_NOT_OPEN.code,
    ]);
  });

  it('judges the price only once the day and the tick pass, and the limits only once the price does', () => {
    // Off the tick and below the floor: the tick is named, the floor is not judged yet.
    expect(
      codes(
        offerPlacementViolations(onT, nse, bidder({ category: 'NII' }), request('IS', 99.02), [], 1_500).violations,
      ),
    ).toEqual([Errors.OFS_PRICE_TICK.code]);
    expect(
      codes(
        offerPlacementViolations(onT, nse, bidder({ category: 'NII' }), request('IS', 99.95), [], 1_500).violations,
      ),
    ).toEqual([Errors.OFS_BELOW_FLOOR.code]);
    // Below the T-day cut-off and over the limit: the price is named.
    const large: OfferContext = { ...onT1, offer: { ...offer, baseQuantity: 100_000 } };
    expect(
      codes(offerPlacementViolations(large, nse, bidder(), request('RS', 100.5, 5000), [], 5_500).violations),
    ).toEqual([Errors.OFS_BELOW_RETAIL_CUTOFF.code]);
  });

  it("holds a bid to its series' order value upper limit, a cut-off bid at the T-day cut-off (e-383, issue 47 row 3)", () => {
    const limited: OfferListing = {
      ...nse,
      valueLimitsPaise: { RETAIL: 10_100_000, NON_RETAIL: 101_000_000, EMPLOYEE: null },
    };
    const nii = bidder({ category: 'NII' });
    // 10,000 at 101.00 is the non-retail limit exactly; one share more is over it.
    const largeOnT: OfferContext = { ...onT, offer: { ...offer, baseQuantity: 100_000 } };
    expect(
      codes(offerPlacementViolations(largeOnT, limited, nii, request('IS', 101, 10_000), [], 1_500).violations),
    ).toEqual([]);
    expect(
      codes(offerPlacementViolations(largeOnT, limited, nii, request('IS', 101, 10_001), [], 1_500).violations),
    ).toEqual([Errors.OFS_ORDER_VALUE_LIMIT.code]);
    // Retail at the cut-off 101.00: 1,000 shares are Rs 1,01,000.00, the retail series' limit.
    const large: OfferContext = { ...onT1, offer: { ...offer, baseQuantity: 100_000 } };
    expect(
      codes(offerPlacementViolations(large, limited, bidder(), request('RS', 0, 1_000), [], 5_500).violations),
    ).toEqual([]);
    expect(
      codes(offerPlacementViolations(large, limited, bidder(), request('RS', 0, 1_001), [], 5_500).violations),
    ).toEqual([Errors.OFS_ORDER_VALUE_LIMIT.code]);
    // The employee series has none.
    expect(
      codes(
        offerPlacementViolations(large, limited, bidder({ employeeOfOffer: true }), request('ES', 0, 4_000), [], 5_500)
          .violations,
      ),
    ).toEqual([]);
  });

  it('refuses a bid for more than the offer sells, green shoe and employees included (e-382, issue 47 row 3)', () => {
    // 1,000 base + 100 for employees.
    const mf = bidder({ category: 'MF', marginType: 'T' });
    expect(codes(offerPlacementViolations(onT, nse, mf, request('IS', 101, 1_100), [], 1_500).violations)).toEqual([]);
    const over = offerPlacementViolations(onT, nse, mf, request('IS', 101, 1_101), [], 1_500).violations;
    expect(codes(over)).toEqual([Errors.OFS_QUANTITY_OVER_OFFER.code]);
    expect(over[0]).toMatchObject({
      field: 'quantity',
      message: 'quantity 1101 is more than the 1100 shares the offer of ACME sells',
    });
    // The green shoe counts, exercised or not: the seller may exercise it.
    const withShoe: OfferContext = { ...onT, offer: { ...offer, greenShoeQuantity: 150 } };
    expect(codes(offerPlacementViolations(withShoe, nse, mf, request('IS', 101, 1_250), [], 1_500).violations)).toEqual(
      [],
    );
    // The probe's bid: 999999999999999 shares at Rs 999,999,999.95.
    expect(
      codes(
        offerPlacementViolations(onT, nse, mf, request('IS', 999_999_999.95, 999_999_999_999_999), [], 1_500)
          .violations,
      ),
    ).toEqual([Errors.OFS_QUANTITY_OVER_OFFER.code]);
  });

  it("counts the bidder's other live retail bids in the offer, cut-off bids at the T-day cut-off", () => {
    // 1,900 at the cut-off 101.00 = Rs 1,91,900; 90 more at 101.00 would pass Rs 2,00,000 (at most 80).
    const others = [{ category: 'RETAIL' as const, orderType: 'RL-MKT', pricePaise: 0, quantity: 1900 }];
    const result = offerPlacementViolations(onT1, nse, bidder(), request('RS', 101, 90), others, 5_500);
    expect(codes(result.violations)).toEqual([Errors.OFS_RETAIL_LIMIT.code]);
    expect(result.violations[0]!.message).toContain('you may bid for at most 80 shares');
    // Employee bids do not count in the retail limit.
    const employee = [{ category: 'EMPLOYEE' as const, orderType: 'RL-MKT', pricePaise: 0, quantity: 1900 }];
    expect(offerPlacementViolations(onT1, nse, bidder(), request('RS', 101, 90), employee, 5_500).violations).toEqual(
      [],
    );
  });

  it("counts the employee's other live employee bids in its Rs 5,00,000 at the T-day cut-off", () => {
    const others = [{ category: 'EMPLOYEE' as const, orderType: 'RL-MKT', pricePaise: 0, quantity: 4900 }];
    // floor(5,00,000 / 101.00) = 4,950 shares in all: 50 more fit, 51 do not.
    expect(
      offerPlacementViolations(onT1, nse, bidder({ employeeOfOffer: true }), request('ES', 0, 50), others, 5_500)
        .violations,
    ).toEqual([]);
    expect(
      codes(
        offerPlacementViolations(onT1, nse, bidder({ employeeOfOffer: true }), request('ES', 0, 51), others, 5_500)
          .violations,
      ),
    ).toEqual([Errors.OFS_EMPLOYEE_LIMIT.code]);
  });
});

describe('offerModificationViolations', () => {
  const carried: LiveOfferBid = {
    category: 'NII',
    marginType: 'H',
    carriedForward: true,
    tradedQuantity: 300,
    orderType: 'RL',
    pricePaise: 10_200,
    quantity: 500,
  };

  it('takes a carried-forward bid revised at or above the T-day cut-off, its quantity above its T allotment', () => {
    expect(
      offerModificationViolations(
        onT1,
        carried,
        101.5,
        { orderType: 'RL', pricePaise: 10_150, quantity: 400 },
        [],
        5_500,
      ),
    ).toEqual([]);
  });

  it('refuses a quantity at or below what the bid was allotted on T, and a price below the cut-off', () => {
    expect(
      codes(
        offerModificationViolations(
          onT1,
          carried,
          102,
          { orderType: 'RL', pricePaise: 10_200, quantity: 300 },
          [],
          5_500,
        ),
      ),
    ).toEqual([Errors.OFS_QUANTITY_BELOW_ALLOTTED.code]);
    const both = offerModificationViolations(
      onT1,
      carried,
      100.5,
      { orderType: 'RL', pricePaise: 10_050, quantity: 250 },
      [],
      5_500,
    );
    expect(codes(both)).toEqual([Errors.OFS_BELOW_T_CUTOFF.code, Errors.OFS_QUANTITY_BELOW_ALLOTTED.code]);
    expect(both[1]!.message).toBe(
      'quantity 250 is not above the 300 shares the bid was allotted on T; send the allotted quantity plus what you carry forward',
    );
  });

  it('refuses a 0 %-margin bid revised down, and any bid not carried forward on T+1', () => {
    const zero: LiveOfferBid = { ...carried, marginType: 'T', tradedQuantity: 0 };
    expect(
      codes(
        offerModificationViolations(
          onT1,
          zero,
          101.5,
          { orderType: 'RL', pricePaise: 10_150, quantity: 500 },
          [],
          5_500,
        ),
      ),
    ).toEqual([Errors.OFS_MARGIN_T_UPWARD_ONLY.code]);
    expect(
      codes(
        offerModificationViolations(
          onT1,
          { ...carried, carriedForward: false },
          103,
          { orderType: 'RL', pricePaise: 10_300, quantity: 500 },
          [],
          5_500,
        ),
      ),
    ).toEqual([Errors.OFS_NOT_CARRIED_FORWARD.code]);
  });
});

describe('offerCancellationViolations', () => {
  it('lets a 100 %-margin bid be cancelled on T, never a 0 %-margin one, and nothing in a cancelled offer', () => {
    expect(
      offerCancellationViolations(onT, { category: 'NII', marginType: 'H', carriedForward: false }, 1_500),
    ).toEqual([]);
    expect(
      codes(offerCancellationViolations(onT, { category: 'IC', marginType: 'T', carriedForward: false }, 1_500)),
    ).toEqual([Errors.OFS_MARGIN_T_NO_CANCEL.code]);
    expect(
      codes(
        offerCancellationViolations(
          { ...onT, state: 'CANCELLED' },
          { category: 'NII', marginType: 'H', carriedForward: false },
          1_500,
        ),
      ),
    ).toEqual([Errors.OFS_OFFER_CANCELLED.code]);
  });
});
