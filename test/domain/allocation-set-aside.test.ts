/**
 * The OFS allocation (src/domain/ofs/issue/allocation.ts) sets a bad stored bid aside alone: it takes no part at all,
 * not even its id or its place in the sort, and the others are allotted exactly as without it. Examples
 * found by test/property/allocation.property.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  allocateOfs,
  type AllocationBid,
  type AllocationInput,
  type AllocationResult,
} from '../../src/domain/ofs/issue/allocation.js';

/** Floor 100.00, no retail cut-off price, proportionate. */
function issue(offerQuantity: number, bids: AllocationBid[]): AllocationInput {
  return {
    offerQuantity,
    retailReservePct: 10,
    allocation: 'PROPORTIONATE',
    floorPricePaise: 10_000,
    retailCutoffPricePaise: null,
    bids,
  };
}

function nonRetail(orderId: string, pricePaise: number, quantity: number, placedSeq: number): AllocationBid {
  return { orderId, category: 'NON_RETAIL', pricePaise, quantity, placedSeq };
}

/** [orderId, allotted quantity, trade price, reason] in the order answered. */
function outcomes(result: AllocationResult): [string, number, number | null, string][] {
  return result.allotments.map((a) => [a.orderId, a.allottedQuantity, a.pricePaise, a.reason]);
}

describe('allocateOfs sets a bad stored bid aside alone', () => {
  it('a stored bid under a valid bid id is set aside for its own fault, not as a repeat (the property test counterexample)', () => {
    // Shrunk from seed -780542073: a stored retail cut-off bid for 0 shares at no place in the book, under
    // the id S0 of a valid bid. It used to be set aside as "S0 appears more than once".
    const valid = [nonRetail('S0', 10_000, 1, 0), nonRetail(' ', 10_000, 1, 1)];
    const stored: AllocationBid = {
      orderId: 'S0',
      category: 'RETAIL',
      pricePaise: 0,
      quantity: 0,
      placedSeq: Number.NaN,
    };
    const result = allocateOfs(issue(1, [...valid, stored]));
    expect(outcomes(result)).toEqual([
      ['S0', 1, 10_000, 'allotted 1 of 1 at 100.00 (proportionate, oversubscribed 2x)'],
      [' ', 0, null, 'not allotted: the proportionate share of 1 is less than one share (oversubscribed 2x)'],
      ['S0', 0, null, 'not allotted: set aside, its place in the book (NaN) is not a whole number'],
    ]);
    const without = allocateOfs(issue(1, valid));
    expect(outcomes(result).slice(0, 2)).toEqual(outcomes(without));
    expect([result.retail, result.nonRetail]).toEqual([without.retail, without.nonRetail]);
  });

  it('a bad copy of an id placed before the valid bid does not take the id: the valid bid is allotted as without it', () => {
    const valid = [nonRetail('X', 10_000, 5, 2), nonRetail('Y', 10_000, 5, 3)];
    const without = allocateOfs(issue(8, valid));
    for (const bad of [
      nonRetail('X', Number.NaN, 5, 1),
      nonRetail('X', 9_999, 5, 1),
      nonRetail('X', 10_000, 0, 1),
      nonRetail('X', 10_000, 2 ** 60, 1),
      nonRetail('X', 10_000, 5, Number.NaN),
      { ...nonRetail('X', 10_000, 5, 1), category: 'NII' as AllocationBid['category'] },
    ]) {
      const result = allocateOfs(issue(8, [...valid, bad]));
      const setAside = result.allotments.filter((a) => a.reason.startsWith('not allotted: set aside, '));
      expect(setAside).toHaveLength(1);
      expect(setAside[0]!.reason).not.toMatch(/appears more than once/);
      expect(outcomes(result).filter((o) => !o[3].startsWith('not allotted: set aside, '))).toEqual(outcomes(without));
      expect([result.retail, result.nonRetail]).toEqual([without.retail, without.nonRetail]);
    }
    expect(outcomes(without).map((o) => o[1])).toEqual([4, 4]);
  });

  it('of two valid copies of an id the first placed is taken and the later one is the repeat', () => {
    const result = allocateOfs(issue(10, [nonRetail('X', 10_000, 4, 2), nonRetail('X', 10_000, 3, 1)]));
    expect(outcomes(result)).toEqual([
      ['X', 3, 10_000, 'allotted 3 of 3 at 100.00 (in full, the non-retail portion was not oversubscribed)'],
      ['X', 0, null, 'not allotted: set aside, bid X appears more than once'],
    ]);
  });

  it('two valid copies of an id at one place: the same copy is taken whatever the order of the input', () => {
    const copies = [nonRetail('X', 10_000, 4, 1), nonRetail('X', 10_000, 3, 1)];
    const forward = allocateOfs(issue(10, copies));
    expect(allocateOfs(issue(10, [...copies].reverse()))).toEqual(forward);
    expect(forward.allotments.map((a) => a.allottedQuantity)).toEqual([3, 0]);
  });

  it('a bid at no place in the book sorts last and leaves the others in placement order, whatever the input order', () => {
    const a = nonRetail('A', 10_000, 1, 2);
    const b = nonRetail('B', 10_000, 1, 1);
    const n = nonRetail('N', 10_000, 1, Number.NaN);
    const i = nonRetail('I', 10_000, 1, Infinity);
    const expected = allocateOfs(issue(1, [a, b, n, i]));
    expect(expected.allotments.map((x) => x.orderId)).toEqual(['B', 'A', 'I', 'N']);
    for (const order of [
      [a, n, b, i],
      [b, n, a, i],
      [n, i, a, b],
      [i, a, n, b],
    ]) {
      expect(allocateOfs(issue(1, order))).toEqual(expected);
    }
  });
});
