/**
 * An offer's allocations (src/domain/ofs/offer/allocation.ts) set a bad stored bid aside alone: a bid set
 * aside for a fault of its own takes no part at all, not even its id; of the bids that can take part, the
 * first placed takes an id and any later copy is the repeat; the answer does not depend on the input order.
 */
import { describe, expect, it } from 'vitest';
import { offerBid, offerTerms } from '../support/offer-terms.js';
import {
  allocateT1Day,
  allocateTDay,
  tDayDemand,
  type OfferAllotment,
  type OfferBid,
  type T1DayInput,
} from '../../src/domain/ofs/offer/allocation.js';
import type { OfferCategory, OfferTerms } from '../../src/domain/ofs/offer/offer.js';

/** 1,000 shares: retail 100, non-retail 900, MF/IC reserved 250, single-bidder cap 250; employees 100. Floor 100.00. */
const offer = (overrides: Partial<OfferTerms> = {}): OfferTerms => offerTerms({ employeeQuantity: 100, ...overrides });
const bid = offerBid;

const SET_ASIDE = /^not allotted on T(\+1)?: set aside, /;

/** [orderId, allotted quantity, trade price, reason] in the order answered. */
function outcomes(allotments: readonly OfferAllotment[]): [string, number, number | null, string][] {
  return allotments.map((a) => [a.orderId, a.allottedQuantity, a.pricePaise, a.reason]);
}

function kept(allotments: readonly OfferAllotment[]) {
  return outcomes(allotments.filter((a) => !SET_ASIDE.test(a.reason)));
}

function setAside(allotments: readonly OfferAllotment[]): string[] {
  return allotments.filter((a) => SET_ASIDE.test(a.reason)).map((a) => a.reason);
}

/** T: X (NII, 300 at 101.00) and Y (NII, 800 at 102.00), each cut to the single-bidder cap of 250. */
const tValid = [bid('X', 'n1', 'NII', 10_100, 300, 2), bid('Y', 'n2', 'NII', 10_200, 800, 3)];

/** Bad stored copies of X, each with one fault of its own, placed before the valid X. */
const tBadX: [OfferBid, string][] = [
  [bid('X', 'n9', 'NII', Number.NaN, 300, 1), 'price NaN is not a whole number of paise'],
  [bid('X', 'n9', 'NII', 9_999, 300, 1), 'price 99.99 is below the floor price 100.00'],
  [bid('X', 'n9', 'NII', 10_100, 0, 1), 'quantity 0 is not a whole number of at least 1'],
  [bid('X', 'n9', 'NII', 10_100, 2 ** 60, 1), `quantity ${2 ** 60} is not a whole number of at least 1`],
  [bid('X', 'n9', 'NII', 10_100, 300, Number.NaN), 'its place in the book (NaN) is not a whole number'],
  [bid('X', 'n9', 'NON_RETAIL' as OfferCategory, 10_100, 300, 1), 'category "NON_RETAIL" is not a bid category'],
  [bid('X', 'r9', 'RETAIL', 10_100, 300, 1), 'a RETAIL bid is not allotted on T'],
];

describe('allocateTDay sets a bad stored bid aside alone', () => {
  it('[bad X, good X] and [good X, bad X]: the good X is allotted as without the bad one, which is set aside for its own fault', () => {
    const without = allocateTDay(offer(), tValid);
    expect(kept(without.allotments).map((o) => o.slice(0, 3))).toEqual([
      ['X', 250, 10_100],
      ['Y', 250, 10_200],
    ]);
    for (const [bad, why] of tBadX) {
      for (const bids of [
        [bad, ...tValid],
        [...tValid, bad],
      ]) {
        const result = allocateTDay(offer(), bids);
        expect(setAside(result.allotments)).toEqual([`not allotted on T: set aside, ${why}`]);
        expect(kept(result.allotments)).toEqual(kept(without.allotments));
        expect({ ...result, allotments: [] }).toEqual({ ...without, allotments: [] });
      }
    }
  });

  it('the demand (tDayDemand, what the under-subscription wait judges) counts the valid X behind a bad copy of its id', () => {
    const bids = [bid('X', 'n9', 'NII', Number.NaN, 300, 1), ...tValid];
    expect(tDayDemand(offer(), bids)).toBe(250n + 250n);
    expect(allocateTDay(offer(), bids).nonRetail.demand).toBe(250n + 250n);
  });

  it('of two valid copies of an id the first placed is taken and the later one is the repeat, whatever the input order', () => {
    const later = bid('X', 'n1', 'NII', 10_100, 40, 7);
    const earlier = bid('X', 'n2', 'NII', 10_300, 30, 5);
    const expected: [string, number, number | null, string][] = [
      [
        'X',
        30,
        10_300,
        'allotted 30 of 30 on T at 103.00 (30 from the non-retail portion, in full, the non-retail portion was not oversubscribed)',
      ],
      ['X', 0, null, 'not allotted on T: set aside, bid X appears more than once'],
    ];
    expect(outcomes(allocateTDay(offer(), [later, earlier]).allotments)).toEqual(expected);
    expect(outcomes(allocateTDay(offer(), [earlier, later]).allotments)).toEqual(expected);
  });

  it('two valid copies of an id at one place: the same copy is taken whatever the input order', () => {
    const copies = [
      bid('X', 'n1', 'NII', 10_100, 40, 5),
      bid('X', 'n2', 'NII', 10_100, 30, 5),
      bid('X', 'n1', 'NII', 10_200, 40, 5),
    ];
    const forward = allocateTDay(offer(), copies);
    for (const order of [
      [...copies].reverse(),
      [copies[1]!, copies[0]!, copies[2]!],
      [copies[2]!, copies[0]!, copies[1]!],
    ]) {
      expect(allocateTDay(offer(), order)).toEqual(forward);
    }
    // Same category and place: the lower price, then the smaller quantity, comes first and takes the id.
    expect(forward.allotments.map((a) => [a.allottedQuantity, a.pricePaise])).toEqual([
      [30, 10_100],
      [0, null],
      [0, null],
    ]);
    expect(forward.allottedByBidder).toEqual(new Map([['n2', 30]]));
  });

  it('the same bid object twice: one is allotted, the other is the repeat', () => {
    const x = bid('X', 'n1', 'NII', 10_100, 40, 5);
    const result = allocateTDay(offer(), [x, x]);
    expect(outcomes(result.allotments).map((o) => o.slice(0, 2))).toEqual([
      ['X', 40],
      ['X', 0],
    ]);
    expect(result.unallotted).toBe(900 - 40);
  });

  it('a bid at no place in the book sorts last and leaves the others in placement order, whatever the input order', () => {
    const a = bid('A', 'n1', 'NII', 10_000, 1, 2);
    const b = bid('B', 'n2', 'NII', 10_000, 1, 1);
    const n = bid('N', 'n3', 'NII', 10_000, 1, Number.NaN);
    const i = bid('I', 'n4', 'NII', 10_000, 1, Infinity);
    const expected = allocateTDay(offer(), [a, b, n, i]);
    expect(expected.allotments.map((x) => x.orderId)).toEqual(['B', 'A', 'I', 'N']);
    for (const order of [
      [a, n, b, i],
      [b, n, a, i],
      [n, i, a, b],
      [i, a, n, b],
    ]) {
      expect(allocateTDay(offer(), order)).toEqual(expected);
    }
  });
});

describe('allocateT1Day sets a bad stored bid aside alone', () => {
  /** Cut-off 102.00, nothing left on T: retail 100 shares (S at 103.00 first by price priority, then the cut-off bid R), employees 100. */
  const input: T1DayInput = { cutoffPricePaise: 10_200, nonRetailUnallotted: 0, tAllottedByBidder: new Map() };
  const valid = [
    bid('R', 'r1', 'RETAIL', 0, 60, 12),
    bid('S', 'r2', 'RETAIL', 10_300, 80, 13),
    bid('E', 'e1', 'EMPLOYEE', 0, 50, 14),
  ];

  it('a bad copy of a retail or employee id, before or after it in the input, leaves the valid bid as without it', () => {
    const without = allocateT1Day(offer(), input, valid);
    expect(kept(without.allotments).map((o) => o.slice(0, 2))).toEqual([
      ['R', 20],
      ['S', 80],
      ['E', 50],
    ]);
    for (const [bad, why] of [
      [bid('R', 'r9', 'RETAIL', 10_100, 60, 11), 'a retail bid at 101.00 is below the T-day cut-off 102.00'],
      [bid('R', 'r9', 'RETAIL', 0, Number.NaN, 11), 'quantity NaN is not a whole number of at least 1'],
      [bid('E', 'e9', 'EMPLOYEE', 10_200, 50, 11), 'an employee bid is a cut-off bid'],
      [bid('E', 'n9', 'NII', 10_100, 50, 11), 'a carried-forward bid at 101.00 is below the T-day cut-off 102.00'],
    ] as [OfferBid, string][]) {
      for (const bids of [
        [bad, ...valid],
        [...valid, bad],
      ]) {
        const result = allocateT1Day(offer(), input, bids);
        expect(setAside(result.allotments)).toEqual([`not allotted on T+1: set aside, ${why}`]);
        expect(kept(result.allotments)).toEqual(kept(without.allotments));
        expect({ ...result, allotments: [] }).toEqual({ ...without, allotments: [] });
      }
    }
  });

  it('of two valid copies of an id the first placed is taken, whatever the input order', () => {
    const later = bid('R', 'r1', 'RETAIL', 0, 60, 15);
    const earlier = bid('R', 'r2', 'RETAIL', 10_300, 20, 11);
    for (const bids of [
      [later, earlier],
      [earlier, later],
    ]) {
      expect(outcomes(allocateT1Day(offer(), input, bids).allotments).map((o) => o.slice(0, 3))).toEqual([
        ['R', 20, 10_200],
        ['R', 0, null],
      ]);
    }
  });
});
