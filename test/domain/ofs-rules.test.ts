/**
 * The pre-trade checks as plain functions (src/domain/ofs/rules.ts): the category window, the price rules
 * (floor, cut-off bids, retail cut-off) and the Rs 2,00,000 retail limit, with properties for the limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { sbinIssue } from '../support/fixtures.js';
import {
  exposureOfBid,
  exposureValuePaise,
  formatInstant,
  formatRupees,
  priceViolations,
  RETAIL_LIMIT_PAISE,
  retailLimitViolations,
  windowViolations,
  type BidTerms,
  type IssueExposure,
  unitValuePaise,
} from '../../src/domain/ofs/rules.js';

const T = Date.parse('2026-11-23T03:45:00Z');
const T_CLOSE = Date.parse('2026-11-23T10:00:00Z');
const T1 = Date.parse('2026-11-24T03:45:00Z');
const T1_CLOSE = Date.parse('2026-11-24T10:00:00Z');

const issue = sbinIssue({
  nonRetailOpensAt: T,
  nonRetailClosesAt: T_CLOSE,
  retailOpensAt: T1,
  retailClosesAt: T1_CLOSE,
});

const priceBid = (quantity: number, pricePaise: number): BidTerms => ({ orderType: 'RL', quantity, pricePaise });
const cutoffBid = (quantity: number): BidTerms => ({ orderType: 'RL-MKT', quantity, pricePaise: 0 });
/** A live bid of the bidder in an issue with these prices. */
type LiveBid = BidTerms & { retailCutoffPricePaise: number | null; floorPricePaise: number };
const live = (bid: BidTerms, retailCutoffPricePaise: number | null = 10_100, floorPricePaise = 10_000): LiveBid => ({
  ...bid,
  retailCutoffPricePaise,
  floorPricePaise,
});
/** The running totals the store keeps, one entry per live bid here (the rule sums them all the same). */
const exposures = (liveBids: readonly LiveBid[]): IssueExposure[] =>
  liveBids.map((b) => ({
    ...exposureOfBid(b),
    retailCutoffPricePaise: b.retailCutoffPricePaise,
    floorPricePaise: b.floorPricePaise,
  }));
const limitViolations = (bid: BidTerms, category: 'RETAIL' | 'NON_RETAIL', liveBids: readonly LiveBid[] = []) =>
  retailLimitViolations(bid, issue, category, exposures(liveBids));

const codesAndFields = (violations: { kind: { code: string }; field: string }[]) =>
  violations.map((v) => [v.kind.code, v.field]);

describe('formatting for traders', () => {
  it('shows an instant in IST, without the UTC instant', () => {
    expect(formatInstant(T1)).toBe('2026-11-24 09:15 IST');
    expect(formatInstant(T1 + 1500)).toBe('2026-11-24 09:15:01 IST');
    expect(formatInstant(Date.parse('2026-11-23T20:00:00Z'))).toBe('2026-11-24 01:30 IST');
  });

  it('shows rupees in Indian grouping', () => {
    expect(formatRupees(20_000_000n)).toBe('Rs 2,00,000.00');
    expect(formatRupees(5n)).toBe('Rs 0.05');
    expect(formatRupees(12_345_678_901n)).toBe('Rs 12,34,56,789.01');
    expect(formatRupees(99_900n)).toBe('Rs 999.00');
  });
});

describe("windowViolations: opens_at <= now < closes_at of the caller's category", () => {
  it('takes a retail bid from the instant the retail window opens to just before it closes', () => {
    expect(windowViolations(issue, 'RETAIL', T1)).toEqual([]);
    expect(windowViolations(issue, 'RETAIL', T1_CLOSE - 1)).toEqual([]);
  });

  it('refuses a retail bid before the retail window opens (e-354), saying when it opens in IST', () => {
    const violations = windowViolations(issue, 'RETAIL', T1 - 1);
    expect(codesAndFields(violations)).toEqual([[Errors.OFS_WINDOW_NOT_OPEN.code, '']]);
    expect(violations[0]!.message).toContain('retail');
    expect(violations[0]!.message).toContain('2026-11-24 09:15 IST');
  });

  it('refuses a retail bid on day T, while only the non-retail window is open (e-354)', () => {
    expect(codesAndFields(windowViolations(issue, 'RETAIL', T + 1000))).toEqual([
      [Errors.OFS_WINDOW_NOT_OPEN.code, ''],
    ]);
  });

  it('refuses a retail bid at the closing instant and after (e-355), saying when it closed', () => {
    for (const now of [T1_CLOSE, T1_CLOSE + 60_000]) {
      const violations = windowViolations(issue, 'RETAIL', now);
      expect(codesAndFields(violations)).toEqual([[Errors.OFS_WINDOW_CLOSED.code, '']]);
      expect(violations[0]!.message).toContain('2026-11-24 15:30 IST');
    }
  });

  it('judges a non-retail bid by the non-retail window', () => {
    expect(windowViolations(issue, 'NON_RETAIL', T)).toEqual([]);
    expect(codesAndFields(windowViolations(issue, 'NON_RETAIL', T - 1))).toEqual([
      [Errors.OFS_WINDOW_NOT_OPEN.code, ''],
    ]);
    expect(codesAndFields(windowViolations(issue, 'NON_RETAIL', T1))).toEqual([[Errors.OFS_WINDOW_CLOSED.code, '']]);
    expect(windowViolations(issue, 'NON_RETAIL', T1)[0]!.message).toContain('non-retail');
  });
});

describe('priceViolations', () => {
  it('accepts a price bid at exactly the floor from a non-retail bidder, and at the retail cut-off from a retail one', () => {
    expect(priceViolations(priceBid(1, 10_000), issue, 'NON_RETAIL')).toEqual([]);
    expect(priceViolations(priceBid(1, 10_100), issue, 'RETAIL')).toEqual([]);
  });

  it('refuses a price one tick below the floor (e-356, price)', () => {
    const violations = priceViolations(priceBid(1, 9_995), issue, 'NON_RETAIL');
    expect(codesAndFields(violations)).toEqual([[Errors.OFS_BELOW_FLOOR.code, 'price']]);
    expect(violations[0]!.message).toContain('99.95');
    expect(violations[0]!.message).toContain('100.00');
  });

  it('refuses a cut-off bid from a non-retail bidder (e-357, order_type)', () => {
    expect(codesAndFields(priceViolations(cutoffBid(1), issue, 'NON_RETAIL'))).toEqual([
      [Errors.OFS_CUTOFF_NOT_RETAIL.code, 'order_type'],
    ]);
  });

  it('refuses a retail cut-off bid while the retail cut-off price is not set (e-358, order_type), and takes it once it is', () => {
    const unset = { ...issue, retailCutoffPricePaise: null };
    expect(codesAndFields(priceViolations(cutoffBid(1), unset, 'RETAIL'))).toEqual([
      [Errors.OFS_CUTOFF_PRICE_UNKNOWN.code, 'order_type'],
    ]);
    expect(priceViolations(cutoffBid(1), issue, 'RETAIL')).toEqual([]);
  });

  it('refuses a retail price bid below the retail cut-off (e-359, price), but not a non-retail one', () => {
    const violations = priceViolations(priceBid(1, 10_095), issue, 'RETAIL');
    expect(codesAndFields(violations)).toEqual([[Errors.OFS_BELOW_RETAIL_CUTOFF.code, 'price']]);
    expect(violations[0]!.message).toContain('101.00');
    expect(priceViolations(priceBid(1, 10_095), issue, 'NON_RETAIL')).toEqual([]);
  });

  it('takes a retail price bid between floor and anything while the retail cut-off is not set', () => {
    expect(priceViolations(priceBid(1, 10_000), { ...issue, retailCutoffPricePaise: null }, 'RETAIL')).toEqual([]);
  });

  it('a retail bid below the floor breaks both the floor and the retail cut-off', () => {
    expect(codesAndFields(priceViolations(priceBid(1, 9_000), issue, 'RETAIL'))).toEqual([
      [Errors.OFS_BELOW_FLOOR.code, 'price'],
      [Errors.OFS_BELOW_RETAIL_CUTOFF.code, 'price'],
    ]);
  });
});

describe('retailLimitViolations: at most Rs 2,00,000 in live bids of one OFS, inclusive', () => {
  it('takes a bid worth exactly Rs 2,00,000 and refuses one share more (e-360, quantity)', () => {
    // 2000 shares at Rs 100.00 = Rs 2,00,000.
    expect(limitViolations(priceBid(2000, 10_000), 'RETAIL')).toEqual([]);
    expect(codesAndFields(limitViolations(priceBid(2001, 10_000), 'RETAIL'))).toEqual([
      [Errors.OFS_RETAIL_LIMIT.code, 'quantity'],
    ]);
  });

  it('counts the live bids: Rs 1,50,000 live leaves room for exactly Rs 50,000 more', () => {
    const liveBids = [live(priceBid(1000, 10_000)), live(priceBid(500, 10_000))];
    expect(limitViolations(priceBid(500, 10_000), 'RETAIL', liveBids)).toEqual([]);
    const violations = limitViolations(priceBid(501, 10_000), 'RETAIL', liveBids);
    expect(codesAndFields(violations)).toEqual([[Errors.OFS_RETAIL_LIMIT.code, 'quantity']]);
    // The message shows the current total, the limit and the most shares still allowed at this price.
    expect(violations[0]!.message).toContain('Rs 1,50,000.00');
    expect(violations[0]!.message).toContain('Rs 2,00,000.00');
    expect(violations[0]!.message).toContain('Rs 2,00,100.00');
    expect(violations[0]!.message).toMatch(/at most 500 shares/);
  });

  it('values a cut-off bid at the retail cut-off price of its own issue, new and live alike', () => {
    // 1980 x Rs 101.00 = Rs 1,99,980; 1981 x = Rs 2,00,081.
    expect(limitViolations(cutoffBid(1980), 'RETAIL')).toEqual([]);
    expect(limitViolations(cutoffBid(1981), 'RETAIL')).toHaveLength(1);
    // A live cut-off bid on the BSE issue, whose cut-off is Rs 100.00: 1000 x 100 = Rs 1,00,000.
    const bse = live(cutoffBid(1000), 10_000);
    expect(limitViolations(priceBid(1000, 10_000), 'RETAIL', [bse])).toEqual([]);
    expect(limitViolations(priceBid(1001, 10_000), 'RETAIL', [bse])).toHaveLength(1);
  });

  it('values a live cut-off bid whose issue has no cut-off price (any more) at its floor', () => {
    expect(unitValuePaise(cutoffBid(10), { retailCutoffPricePaise: null, floorPricePaise: 9_000 })).toBe(9_000n);
    expect(exposureValuePaise(exposures([live(cutoffBid(10), null, 9_000)]))).toBe(90_000n);
  });

  it('sums the running totals of one issue as it sums the bids they stand for', () => {
    const bids = [live(priceBid(3, 10_150)), live(cutoffBid(7)), live(priceBid(2, 10_200))];
    const byBid = exposureValuePaise(exposures(bids));
    const summed = exposures(bids).reduce((a, b) => ({
      ...a,
      priceValuePaise: a.priceValuePaise + b.priceValuePaise,
      cutoffQuantity: a.cutoffQuantity + b.cutoffQuantity,
    }));
    expect(exposureValuePaise([summed])).toBe(byBid);
    expect(byBid).toBe(3n * 10_150n + 7n * 10_100n + 2n * 10_200n);
  });

  it('shows a max quantity of 0 when the live bids already use the whole limit', () => {
    const full = [live(priceBid(2000, 10_000))];
    expect(limitViolations(priceBid(1, 10_000), 'RETAIL', full)[0]!.message).toMatch(/at most 0 shares/);
  });

  it('puts no value cap on a non-retail bidder', () => {
    expect(limitViolations(priceBid(1_000_000_000, 10_000), 'NON_RETAIL', [live(priceBid(1_000_000, 10_000))])).toEqual(
      [],
    );
  });

  it('is exact for quantities and prices whose product is beyond 2^53', () => {
    expect(limitViolations(priceBid(999_999_999_999_999, 100_000_000_000), 'RETAIL')).toHaveLength(1);
    const [violation] = limitViolations(priceBid(999_999_999_999_999, 100_000_000_000), 'RETAIL');
    expect(violation!.message).toContain(`would total ${formatRupees(99_999_999_999_999_900_000_000_000n)}`);
  });

  const terms = fc.oneof(
    fc.record({
      orderType: fc.constant('RL'),
      quantity: fc.integer({ min: 1, max: 5000 }),
      pricePaise: fc.integer({ min: 1, max: 40_000 }).map((t) => t * 5),
    }),
    fc.record({
      orderType: fc.constant('RL-MKT'),
      quantity: fc.integer({ min: 1, max: 5000 }),
      pricePaise: fc.constant(0),
    }),
  );
  const liveBid = fc
    .tuple(
      terms,
      fc.option(
        fc.integer({ min: 1, max: 40_000 }).map((t) => t * 5),
        { nil: null },
      ),
      fc.integer({ min: 1, max: 40_000 }).map((t) => t * 5),
    )
    .map(([bid, cutoff, floor]) => live(bid, cutoff, floor));

  /** The total value by plain arithmetic, independently of the module's helpers. */
  function total(bid: BidTerms, liveBids: LiveBid[]): bigint {
    const value = (b: BidTerms, cutoff: number | null, floor: number) =>
      BigInt(b.quantity) * BigInt(b.orderType === 'RL-MKT' ? (cutoff ?? floor) : b.pricePaise);
    return liveBids.reduce(
      (sum, b) => sum + value(b, b.retailCutoffPricePaise, b.floorPricePaise),
      value(bid, issue.retailCutoffPricePaise, issue.floorPricePaise),
    );
  }

  it('property: accepts exactly the retail bids whose total with the live bids is at most Rs 2,00,000', () => {
    fc.assert(
      fc.property(terms, fc.array(liveBid, { maxLength: 6 }), (bid, liveBids) => {
        const refused = limitViolations(bid, 'RETAIL', liveBids).length > 0;
        expect(refused).toBe(total(bid, liveBids) > RETAIL_LIMIT_PAISE);
      }),
      { numRuns: 5_000 },
    );
  });

  it('property: the max quantity in the message is allowed, and one share more is not', () => {
    fc.assert(
      fc.property(terms, fc.array(liveBid, { maxLength: 6 }), (bid, liveBids) => {
        const [violation] = limitViolations(bid, 'RETAIL', liveBids);
        if (violation === undefined) return;
        const max = Number(/at most (\d+) shares/.exec(violation.message)![1]);
        expect(max).toBeLessThan(bid.quantity);
        if (max > 0) expect(limitViolations({ ...bid, quantity: max }, 'RETAIL', liveBids)).toEqual([]);
        expect(limitViolations({ ...bid, quantity: max + 1 }, 'RETAIL', liveBids)).toHaveLength(1);
      }),
      { numRuns: 5_000 },
    );
  });
});
