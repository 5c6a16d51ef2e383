/**
 * The console's view of an OFS issue (src/domain/ofs/issue/book.ts): window states against the clock, the book
 * of demand by price level, the clearing prices, and the allotments. Properties: the running totals never
 * fall as the price falls, and the clearing prices and portions are those the allocation at close
 * (src/domain/ofs/issue/allocation.ts) reaches on the same bids, one by one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateOfs, type AllocationBid } from '../../src/domain/ofs/issue/allocation.js';
import {
  allottedBook,
  byNewestWindows,
  issueStatus,
  ofsBook,
  offerSplit,
  windowState,
  type BookGroup,
} from '../../src/domain/ofs/issue/book.js';
import { allocationViolations } from '../../src/domain/ofs/rules.js';
import { sbinIssue } from '../support/fixtures.js';

const HOUR = 60 * 60 * 1000;
const T = Date.parse('2026-11-23T03:45:00Z');

describe('window states', () => {
  it('a window is UPCOMING before opens_at, OPEN from opens_at until just before closes_at, CLOSED from closes_at', () => {
    const window = { opensAt: T, closesAt: T + HOUR };
    expect(windowState(window, T - 1)).toBe('UPCOMING');
    expect(windowState(window, T)).toBe('OPEN');
    expect(windowState(window, T + HOUR - 1)).toBe('OPEN');
    expect(windowState(window, T + HOUR)).toBe('CLOSED');
  });

  it("the state is the caller's category window until the allocation has run, then ALLOCATED", () => {
    // Day T non-retail, day T+1 retail.
    const issue = sbinIssue({
      nonRetailOpensAt: T,
      nonRetailClosesAt: T + 6 * HOUR,
      retailOpensAt: T + 24 * HOUR,
      retailClosesAt: T + 30 * HOUR,
    });
    expect(issueStatus(issue, null, 'NON_RETAIL', T + HOUR)).toEqual({
      retailWindow: 'UPCOMING',
      nonRetailWindow: 'OPEN',
      allocated: false,
      state: 'OPEN',
    });
    expect(issueStatus(issue, null, 'RETAIL', T + HOUR)).toEqual({
      retailWindow: 'UPCOMING',
      nonRetailWindow: 'OPEN',
      allocated: false,
      state: 'UPCOMING',
    });
    expect(issueStatus(issue, null, 'NON_RETAIL', T + 25 * HOUR)).toMatchObject({
      retailWindow: 'OPEN',
      nonRetailWindow: 'CLOSED',
      state: 'CLOSED',
    });
    expect(issueStatus(issue, null, 'RETAIL', T + 25 * HOUR)).toMatchObject({ state: 'OPEN' });
    expect(issueStatus(issue, null, 'RETAIL', T + 30 * HOUR)).toMatchObject({
      retailWindow: 'CLOSED',
      state: 'CLOSED',
      allocated: false,
    });
    expect(issueStatus(issue, T + 30 * HOUR, 'RETAIL', T + 30 * HOUR + 5)).toEqual({
      retailWindow: 'CLOSED',
      nonRetailWindow: 'CLOSED',
      allocated: true,
      state: 'ALLOCATED',
    });
  });

  it('orders issues by the later of their two openings, newest first, then by exchange and scrip token', () => {
    const at = (opensAt: number, exchange: 'NSE_EQ' | 'BSE_EQ' = 'NSE_EQ', scripToken = 1) =>
      sbinIssue({ exchange, scripToken, nonRetailOpensAt: opensAt - 24 * HOUR, retailOpensAt: opensAt });
    const issues = [
      at(T),
      at(T + HOUR, 'NSE_EQ', 2),
      at(T + HOUR, 'BSE_EQ', 3),
      at(T + HOUR, 'NSE_EQ', 1),
      at(T - HOUR),
    ];
    expect(issues.sort(byNewestWindows).map((i) => `${i.exchange} ${i.scripToken} ${i.retailOpensAt - T}`)).toEqual([
      `BSE_EQ 3 ${HOUR}`,
      `NSE_EQ 1 ${HOUR}`,
      `NSE_EQ 2 ${HOUR}`,
      'NSE_EQ 1 0',
      `NSE_EQ 1 ${-HOUR}`,
    ]);
  });
});

describe('the book of demand', () => {
  // Offer 1000, 10% retail (100 shares), floor 100.00, cut-off 101.00, proportionate.
  const issue = sbinIssue({ offerQuantity: 1000 });

  it('sums the bids by price level, highest first, cut-off bids at the cut-off price, with the demand at or above each level', () => {
    const groups: BookGroup[] = [
      { category: 'RETAIL', pricePaise: 0, quantity: 60n, bids: 2 },
      { category: 'RETAIL', pricePaise: 10_150, quantity: 40n, bids: 1 },
      { category: 'RETAIL', pricePaise: 10_100, quantity: 30n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 600n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_100, quantity: 600n, bids: 3 },
      { category: 'NON_RETAIL', pricePaise: 10_000, quantity: 100n, bids: 1 },
    ];
    const book = ofsBook(issue, groups);
    expect(book.offer).toEqual({ total: 1000, retail: 100, nonRetail: 900 });
    expect(book.demand).toEqual([
      {
        pricePaise: 10_200,
        retailQuantity: 0n,
        retailCutoffQuantity: 0n,
        nonRetailQuantity: 600n,
        retailCumulative: 0n,
        nonRetailCumulative: 600n,
        bids: 1,
      },
      {
        pricePaise: 10_150,
        retailQuantity: 40n,
        retailCutoffQuantity: 0n,
        nonRetailQuantity: 0n,
        retailCumulative: 40n,
        nonRetailCumulative: 600n,
        bids: 1,
      },
      {
        pricePaise: 10_100,
        retailQuantity: 90n,
        retailCutoffQuantity: 60n,
        nonRetailQuantity: 600n,
        retailCumulative: 130n,
        nonRetailCumulative: 1200n,
        bids: 6,
      },
      {
        pricePaise: 10_000,
        retailQuantity: 0n,
        retailCutoffQuantity: 0n,
        nonRetailQuantity: 100n,
        retailCumulative: 130n,
        nonRetailCumulative: 1300n,
        bids: 1,
      },
    ]);
    // Retail wants 130 of its 100: 101.00 is where the retail demand at or above first covers 100 shares.
    // Non-retail wants 1300 of 900: at 101.00, 1200 shares cover it.
    expect(book.clearing).toEqual({
      retail: { portion: 100, demand: 130n, clearingPricePaise: 10_100 },
      nonRetail: { portion: 900, demand: 1300n, clearingPricePaise: 10_100 },
    });
    expect(book.ineligible).toEqual({ retailQuantity: 0n, nonRetailQuantity: 0n, bids: 0 });
  });

  it('has no clearing price for a category whose demand fits its portion, and moves unsubscribed retail shares to non-retail', () => {
    const book = ofsBook(issue, [
      { category: 'RETAIL', pricePaise: 10_100, quantity: 40n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_300, quantity: 500n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 500n, bids: 1 },
    ]);
    // 60 retail shares nobody bid for go to non-retail: 960, of which the level at 102.00 fills the last 460.
    expect(book.clearing).toEqual({
      retail: { portion: 40, demand: 40n, clearingPricePaise: null },
      nonRetail: { portion: 960, demand: 1000n, clearingPricePaise: 10_200 },
    });
  });

  it('with price priority the clearing price is the lowest price allotted', () => {
    const book = ofsBook(sbinIssue({ offerQuantity: 1000, allocation: 'PRICE_PRIORITY' }), [
      { category: 'NON_RETAIL', pricePaise: 10_300, quantity: 800n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 800n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_000, quantity: 800n, bids: 1 },
    ]);
    expect(book.clearing.nonRetail).toEqual({ portion: 1000, demand: 2400n, clearingPricePaise: 10_200 });
  });

  it('leaves out what the allocation would refuse: bids below a raised floor, cut-off bids without a cut-off price', () => {
    const groups: BookGroup[] = [
      { category: 'RETAIL', pricePaise: 0, quantity: 60n, bids: 2 },
      { category: 'RETAIL', pricePaise: 10_050, quantity: 5n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_050, quantity: 7n, bids: 1 },
      { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 10n, bids: 1 },
    ];
    const book = ofsBook(
      sbinIssue({ offerQuantity: 1000, floorPricePaise: 10_100, retailCutoffPricePaise: null }),
      groups,
    );
    expect(book.demand.map((level) => [level.pricePaise, level.nonRetailQuantity])).toEqual([[10_200, 10n]]);
    expect(book.ineligible).toEqual({ retailQuantity: 65n, nonRetailQuantity: 7n, bids: 4 });
  });

  it('a level whose sum passes 2^53 shares still clears where the allocation of its bids, one by one, does', () => {
    const huge = 999_999_999_999_999;
    const list: AllocationBid[] = Array.from({ length: 12 }, (_, i) => ({
      orderId: `n${i}`,
      category: 'NON_RETAIL',
      pricePaise: 10_200,
      quantity: huge,
      placedSeq: i,
    }));
    list.push({ orderId: 'n-low', category: 'NON_RETAIL', pricePaise: 10_000, quantity: 5, placedSeq: 99 });
    const wide = sbinIssue({ offerQuantity: huge });
    const book = ofsBook(wide, [
      { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 12n * BigInt(huge), bids: 12 },
      { category: 'NON_RETAIL', pricePaise: 10_000, quantity: 5n, bids: 1 },
    ]);
    const allocation = allocateOfs({ ...wide, bids: list });
    expect(book.clearing.nonRetail).toMatchObject({
      portion: allocation.nonRetail.portion,
      clearingPricePaise: 10_200,
    });
    // Every share counted (issue 47 row 3): 11,999,999,999,999,988 + 5, which no double holds.
    expect(book.clearing.nonRetail.demand).toBe(11_999_999_999_999_993n);
    expect(book.demand.map((level) => level.nonRetailCumulative)).toEqual([
      11_999_999_999_999_988n,
      11_999_999_999_999_993n,
    ]);
    expect(allocation.nonRetail.clearingPricePaise).toBe(10_200);
  });

  it('an empty book has no levels, no demand and no clearing price; the offer is still split', () => {
    const book = ofsBook(sbinIssue({ offerQuantity: 999, retailReservePct: 15 }), []);
    expect(book.offer).toEqual({ total: 999, retail: 149, nonRetail: 850 });
    expect(book.demand).toEqual([]);
    expect(book.clearing.retail).toEqual({ portion: 149, demand: 0n, clearingPricePaise: null });
    expect(offerSplit(sbinIssue({ offerQuantity: 999, retailReservePct: 15 }))).toEqual(book.offer);
  });
});

describe('the allotments', () => {
  it('sums the allotted quantities by trade price, highest first, and per category', () => {
    expect(
      allottedBook([
        { category: 'RETAIL', pricePaise: 10_100, quantity: 100n, bids: 2 },
        { category: 'NON_RETAIL', pricePaise: 10_100, quantity: 450n, bids: 1 },
        { category: 'NON_RETAIL', pricePaise: 10_200, quantity: 450n, bids: 1 },
      ]),
    ).toEqual({
      retail: 100n,
      nonRetail: 900n,
      byPrice: [
        { pricePaise: 10_200, retailQuantity: 0n, nonRetailQuantity: 450n },
        { pricePaise: 10_100, retailQuantity: 100n, nonRetailQuantity: 450n },
      ],
    });
  });
});

// --- properties ------------------------------------------------------------------------------------

const FLOOR = 10_000;
/** A few levels around the floor (one below it), so that bids share levels and some are refused. */
const price = fc.integer({ min: -1, max: 6 }).map((step) => FLOOR + step * 25);
const quantity = fc.oneof(
  fc.integer({ min: 1, max: 50 }),
  fc.integer({ min: 1, max: 1_000_000 }),
  fc.integer({ min: 1, max: 999_999_999_999_999 }),
);

const bids: fc.Arbitrary<AllocationBid[]> = fc
  .array(
    fc.record({
      category: fc.constantFrom('RETAIL' as const, 'NON_RETAIL' as const),
      pricePaise: fc.oneof(price, fc.constant(0)),
      quantity,
    }),
    { maxLength: 30 },
  )
  // A cut-off bid is retail (order entry takes no other).
  .map((list) =>
    list.map((bid, i) => ({
      ...bid,
      pricePaise: bid.category === 'RETAIL' ? bid.pricePaise : bid.pricePaise || FLOOR,
      orderId: `o${i}`,
      placedSeq: i,
    })),
  );

const issueArb = fc.record({
  offerQuantity: fc.oneof(
    fc.integer({ min: 0, max: 100 }),
    fc.integer({ min: 0, max: 10_000_000 }),
    fc.integer({ min: 0, max: 999_999_999_999_999 }),
  ),
  retailReservePct: fc.integer({ min: 10, max: 100 }),
  allocation: fc.constantFrom('PROPORTIONATE' as const, 'PRICE_PRIORITY' as const),
  floorPricePaise: fc.constant(FLOOR),
  retailCutoffPricePaise: fc.option(price, { nil: null }),
});

/** The bids as the store reads them: summed per category and bid price. */
function groupsOf(list: readonly AllocationBid[]): BookGroup[] {
  const groups = new Map<string, BookGroup>();
  for (const bid of list) {
    const key = `${bid.category} ${bid.pricePaise}`;
    const group = groups.get(key) ?? { category: bid.category, pricePaise: bid.pricePaise, quantity: 0n, bids: 0 };
    group.quantity += BigInt(bid.quantity);
    group.bids += 1;
    groups.set(key, group);
  }
  return [...groups.values()];
}

describe('properties of the book', () => {
  it('levels fall strictly in price; each running total is the demand at or above the level and never falls', () => {
    fc.assert(
      fc.property(issueArb, bids, (issue, list) => {
        const { demand } = ofsBook(issue, groupsOf(list));
        for (let i = 1; i < demand.length; i++) {
          expect(demand[i]!.pricePaise).toBeLessThan(demand[i - 1]!.pricePaise);
          expect(demand[i]!.retailCumulative).toBeGreaterThanOrEqual(demand[i - 1]!.retailCumulative);
          expect(demand[i]!.nonRetailCumulative).toBeGreaterThanOrEqual(demand[i - 1]!.nonRetailCumulative);
        }
        for (const level of demand) {
          expect(level.retailCumulative).toBe(
            demand.filter((l) => l.pricePaise >= level.pricePaise).reduce((sum, l) => sum + l.retailQuantity, 0n),
          );
          expect(level.nonRetailCumulative).toBe(
            demand.filter((l) => l.pricePaise >= level.pricePaise).reduce((sum, l) => sum + l.nonRetailQuantity, 0n),
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the portions and clearing prices are those the allocation reaches on the same bids, one by one', () => {
    fc.assert(
      fc.property(issueArb, bids, (issue, list) => {
        const book = ofsBook(issue, groupsOf(list));
        // The simulated exchange allocates the bids that allocationViolations lets through.
        const eligible = list.filter(
          (bid) =>
            allocationViolations(
              { orderType: bid.pricePaise === 0 ? 'RL-MKT' : 'RL', quantity: bid.quantity, pricePaise: bid.pricePaise },
              issue,
              bid.category,
            ).length === 0,
        );
        const allocation = allocateOfs({ ...issue, bids: eligible });
        const demandOf = (category: string) =>
          eligible.filter((b) => b.category === category).reduce((sum, b) => sum + BigInt(b.quantity), 0n);
        for (const [side, category] of [
          ['retail', 'RETAIL'],
          ['nonRetail', 'NON_RETAIL'],
        ] as const) {
          const expected = allocation[side];
          const oversubscribed = demandOf(category) > BigInt(expected.portion);
          expect(book.clearing[side].portion).toBe(expected.portion);
          expect(book.clearing[side].clearingPricePaise).toBe(oversubscribed ? expected.clearingPricePaise : null);
          // Exact, past 2^53 too (issue 47 row 3).
          expect(book.clearing[side].demand).toBe(demandOf(category));
        }
      }),
      { numRuns: 500 },
    );
  });
});
