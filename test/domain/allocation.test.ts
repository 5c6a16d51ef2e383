/** The OFS allocation rule (src/domain/ofs/issue/allocation.ts), on hand-computed examples. */
import { describe, expect, it } from 'vitest';
import { allocateOfs, type AllocationBid, type AllocationInput } from '../../src/domain/ofs/issue/allocation.js';

/** Floor 100.00, retail cut-off 101.00. */
function issue(overrides: Partial<AllocationInput> = {}): AllocationInput {
  return {
    offerQuantity: 1000,
    retailReservePct: 10,
    allocation: 'PROPORTIONATE',
    floorPricePaise: 10_000,
    retailCutoffPricePaise: 10_100,
    bids: [],
    ...overrides,
  };
}

function retail(orderId: string, pricePaise: number, quantity: number, placedSeq: number): AllocationBid {
  return { orderId, category: 'RETAIL', pricePaise, quantity, placedSeq };
}
function nonRetail(orderId: string, pricePaise: number, quantity: number, placedSeq: number): AllocationBid {
  return { orderId, category: 'NON_RETAIL', pricePaise, quantity, placedSeq };
}

/** orderId -> [allotted quantity, trade price]. */
function allotted(result: ReturnType<typeof allocateOfs>): Record<string, [number, number | null]> {
  return Object.fromEntries(result.allotments.map((a) => [a.orderId, [a.allottedQuantity, a.pricePaise]]));
}

function reasonOf(result: ReturnType<typeof allocateOfs>, orderId: string): string {
  return result.allotments.find((a) => a.orderId === orderId)!.reason;
}

describe('allocateOfs', () => {
  it('with no bids allots nothing and keeps the reserved portions', () => {
    const result = allocateOfs(issue());
    expect(result).toEqual({
      retail: { portion: 100, demand: 0n, allotted: 0, clearingPricePaise: null },
      nonRetail: { portion: 900, demand: 0n, allotted: 0, clearingPricePaise: null },
      allotments: [],
    });
  });

  it('reserves floor(offer * pct / 100) for retail', () => {
    const result = allocateOfs(issue({ offerQuantity: 999, retailReservePct: 15 }));
    expect(result.retail.portion).toBe(149); // 149.85 floored
    expect(result.nonRetail.portion).toBe(850);
  });

  describe('undersubscribed: every bid in full', () => {
    const bids = [
      retail('R1', 0, 30, 1),
      retail('R2', 10_200, 20, 2),
      nonRetail('N1', 10_050, 300, 3),
      nonRetail('N2', 10_500, 200, 4),
    ];

    it('PROPORTIONATE trades everyone at the lowest bid price of the category, cut-off bids at the cut-off', () => {
      const result = allocateOfs(issue({ bids }));
      expect(result.retail).toEqual({ portion: 100, demand: 50n, allotted: 50, clearingPricePaise: 10_100 });
      expect(result.nonRetail).toEqual({ portion: 900, demand: 500n, allotted: 500, clearingPricePaise: 10_050 });
      expect(allotted(result)).toEqual({ R1: [30, 10_100], R2: [20, 10_100], N1: [300, 10_050], N2: [200, 10_050] });
      expect(reasonOf(result, 'R2')).toBe(
        'allotted 20 of 20 at 101.00 (in full, the retail portion was not oversubscribed)',
      );
      expect(reasonOf(result, 'R1')).toBe(
        'allotted 30 of 30 at 101.00 (cut-off bid; in full, the retail portion was not oversubscribed)',
      );
      expect(reasonOf(result, 'N2')).toBe(
        'allotted 200 of 200 at 100.50 (in full, the non-retail portion was not oversubscribed)',
      );
    });

    it('PRICE_PRIORITY trades each bid at its own price', () => {
      const result = allocateOfs(issue({ bids, allocation: 'PRICE_PRIORITY' }));
      expect(allotted(result)).toEqual({ R1: [30, 10_100], R2: [20, 10_200], N1: [300, 10_050], N2: [200, 10_500] });
      expect(result.nonRetail.clearingPricePaise).toBe(10_050);
    });
  });

  describe('PROPORTIONATE, oversubscribed', () => {
    // Offer 100: retail 10 (filled exactly by R1), non-retail 90. At 102.00 demand is 50 (< 90); at 101.00
    // it is 150, so the clearing price is 101.00 and 150 bid for 90: N1 30, N2 42.6, N3 17.4. Floors
    // 30 + 42 + 17 = 89; the leftover share goes to N2 (remainder 0.6 beats 0.4).
    const bids = [
      retail('R1', 10_100, 10, 1),
      nonRetail('N1', 10_200, 50, 2),
      nonRetail('N2', 10_100, 71, 3),
      nonRetail('N3', 10_100, 29, 4),
      nonRetail('N4', 10_000, 40, 5),
    ];
    const result = allocateOfs(issue({ offerQuantity: 100, bids }));

    it('finds the clearing price and shares the portion in proportion, leftovers to the largest remainders', () => {
      expect(result.nonRetail).toEqual({ portion: 90, demand: 190n, allotted: 90, clearingPricePaise: 10_100 });
      expect(allotted(result)).toEqual({
        R1: [10, 10_100],
        N1: [30, 10_100],
        N2: [43, 10_100],
        N3: [17, 10_100],
        N4: [0, null],
      });
    });

    it('says why, in rupees', () => {
      expect(reasonOf(result, 'N1')).toBe('allotted 30 of 50 at 101.00 (proportionate, oversubscribed 1.67x)');
      expect(reasonOf(result, 'N2')).toBe('allotted 43 of 71 at 101.00 (proportionate, oversubscribed 1.67x)');
      expect(reasonOf(result, 'N4')).toBe('not allotted: bid 100.00 below the clearing price 101.00');
    });

    it('breaks equal remainders by earliest placedSeq, then orderId', () => {
      // Offer 10 at 30%: retail 3, non-retail 7 (filled exactly). Four retail bids of 1 for 3 shares: each
      // exact share is 0.75, so the three leftover shares go to c (seq 4), then a and b (seq 5, by id).
      const tied = allocateOfs(
        issue({
          offerQuantity: 10,
          retailReservePct: 30,
          bids: [
            nonRetail('n', 10_000, 7, 1),
            retail('b', 10_200, 1, 5),
            retail('d', 10_200, 1, 6),
            retail('a', 10_200, 1, 5),
            retail('c', 10_200, 1, 4),
          ],
        }),
      );
      expect(tied.allotments.map((a) => [a.orderId, a.allottedQuantity])).toEqual([
        ['n', 7],
        ['c', 1],
        ['a', 1],
        ['b', 1],
        ['d', 0],
      ]);
      expect(reasonOf(tied, 'd')).toBe(
        'not allotted: the proportionate share of 1 is less than one share (oversubscribed 1.33x)',
      );
    });

    it('allots cut-off bids proportionately when retail is oversubscribed, at the cut-off price', () => {
      // Retail 100: at 102.00 demand 20, at 101.00 (cut-off) 200, so 101.00 clears and 200 bid for 100.
      const cutoff = allocateOfs(
        issue({
          bids: [
            retail('C1', 0, 120, 1),
            retail('C2', 0, 60, 2),
            retail('R3', 10_200, 20, 3),
            nonRetail('N1', 10_000, 900, 4),
          ],
        }),
      );
      expect(cutoff.retail).toEqual({ portion: 100, demand: 200n, allotted: 100, clearingPricePaise: 10_100 });
      expect(allotted(cutoff)).toEqual({ C1: [60, 10_100], C2: [30, 10_100], R3: [10, 10_100], N1: [900, 10_000] });
      expect(reasonOf(cutoff, 'C1')).toBe(
        'allotted 60 of 120 at 101.00 (cut-off bid; proportionate, oversubscribed 2x)',
      );
    });

    it('gives cut-off bids nothing when the clearing price is above the cut-off price', () => {
      const above = allocateOfs(
        issue({ bids: [retail('R1', 10_300, 150, 1), retail('C1', 0, 50, 2), nonRetail('N1', 10_000, 900, 3)] }),
      );
      expect(above.retail.clearingPricePaise).toBe(10_300);
      expect(allotted(above)).toEqual({ R1: [100, 10_300], C1: [0, null], N1: [900, 10_000] });
      expect(reasonOf(above, 'R1')).toBe('allotted 100 of 150 at 103.00 (proportionate, oversubscribed 1.5x)');
      expect(reasonOf(above, 'C1')).toBe('not allotted: cut-off bid (101.00) below the clearing price 103.00');
    });
  });

  describe('PRICE_PRIORITY, oversubscribed', () => {
    // Non-retail 900: 105.00 takes 300 in full (600 left); 103.00 asks 700 for 600: N2 171.43, N3 428.57,
    // floors 599, the leftover share to N3 (remainder .57 beats .43); 100.00 gets nothing.
    const bids = [
      retail('R1', 10_100, 100, 1),
      nonRetail('N1', 10_500, 300, 2),
      nonRetail('N2', 10_300, 200, 3),
      nonRetail('N3', 10_300, 500, 4),
      nonRetail('N4', 10_000, 100, 5),
    ];
    const result = allocateOfs(issue({ allocation: 'PRICE_PRIORITY', bids }));

    it('allots whole levels, shares the marginal level proportionately and gives lower levels nothing', () => {
      expect(result.nonRetail).toEqual({ portion: 900, demand: 1100n, allotted: 900, clearingPricePaise: 10_300 });
      expect(allotted(result)).toEqual({
        R1: [100, 10_100],
        N1: [300, 10_500],
        N2: [171, 10_300],
        N3: [429, 10_300],
        N4: [0, null],
      });
      expect(reasonOf(result, 'N1')).toBe(
        'allotted 300 of 300 at 105.00 (price priority, price level allotted in full)',
      );
      expect(reasonOf(result, 'N3')).toBe(
        'allotted 429 of 500 at 103.00 (price priority, marginal price level shared proportionately, oversubscribed 1.17x)',
      );
      expect(reasonOf(result, 'N4')).toBe(
        'not allotted: bid 100.00 below the lowest allotted price 103.00 (price priority)',
      );
    });

    it('gives nothing below a level that used the portion up exactly', () => {
      const exact = allocateOfs(
        issue({
          allocation: 'PRICE_PRIORITY',
          bids: [
            retail('R1', 10_100, 100, 1),
            nonRetail('N1', 10_500, 300, 2),
            nonRetail('N2', 10_300, 600, 3),
            nonRetail('N3', 10_000, 50, 4),
          ],
        }),
      );
      expect(allotted(exact)).toEqual({ R1: [100, 10_100], N1: [300, 10_500], N2: [600, 10_300], N3: [0, null] });
      expect(exact.nonRetail.clearingPricePaise).toBe(10_300);
      expect(reasonOf(exact, 'N3')).toBe(
        'not allotted: bid 100.00 below the lowest allotted price 103.00 (price priority)',
      );
    });

    it('allots oversubscribed cut-off bids proportionately at the cut-off price, after higher retail bids', () => {
      // Retail 100: 102.00 takes 20 (80 left); the cut-off level asks 180 for 80: C1 53.33, C2 26.67,
      // the leftover share to C2.
      const cutoff = allocateOfs(
        issue({
          allocation: 'PRICE_PRIORITY',
          bids: [
            retail('C1', 0, 120, 1),
            retail('C2', 0, 60, 2),
            retail('R3', 10_200, 20, 3),
            nonRetail('N1', 10_000, 900, 4),
          ],
        }),
      );
      expect(cutoff.retail).toEqual({ portion: 100, demand: 200n, allotted: 100, clearingPricePaise: 10_100 });
      expect(allotted(cutoff)).toEqual({ C1: [53, 10_100], C2: [27, 10_100], R3: [20, 10_200], N1: [900, 10_000] });
      expect(reasonOf(cutoff, 'C1')).toBe(
        'allotted 53 of 120 at 101.00 (cut-off bid; price priority, marginal price level shared proportionately, oversubscribed 2.25x)',
      );
    });
  });

  describe('spill between the portions', () => {
    it('gives unsubscribed retail shares to oversubscribed non-retail', () => {
      // Retail 300 but only 100 bid: 200 go to non-retail, whose portion becomes 900 for 1000 bid.
      const result = allocateOfs(
        issue({
          retailReservePct: 30,
          bids: [retail('R1', 10_100, 100, 1), nonRetail('N1', 10_200, 600, 2), nonRetail('N2', 10_100, 400, 3)],
        }),
      );
      expect(result.retail).toEqual({ portion: 100, demand: 100n, allotted: 100, clearingPricePaise: 10_100 });
      expect(result.nonRetail).toEqual({ portion: 900, demand: 1000n, allotted: 900, clearingPricePaise: 10_100 });
      expect(allotted(result)).toEqual({ R1: [100, 10_100], N1: [540, 10_100], N2: [360, 10_100] });
      expect(reasonOf(result, 'N1')).toBe('allotted 540 of 600 at 101.00 (proportionate, oversubscribed 1.11x)');
    });

    it('gives unsubscribed non-retail shares to oversubscribed retail', () => {
      // Non-retail 900 but 850 bid: 50 go to retail, whose portion becomes 150 for 200 bid.
      const result = allocateOfs(
        issue({
          allocation: 'PRICE_PRIORITY',
          bids: [nonRetail('N1', 10_000, 850, 1), retail('C1', 0, 120, 2), retail('R2', 10_200, 80, 3)],
        }),
      );
      expect(result.retail).toEqual({ portion: 150, demand: 200n, allotted: 150, clearingPricePaise: 10_100 });
      expect(result.nonRetail).toEqual({ portion: 850, demand: 850n, allotted: 850, clearingPricePaise: 10_000 });
      expect(allotted(result)).toEqual({ N1: [850, 10_000], C1: [70, 10_100], R2: [80, 10_200] });
    });

    it('allots every bid in full when the whole demand fits the offer, even beyond the retail reserve', () => {
      const result = allocateOfs(issue({ bids: [retail('R1', 10_100, 500, 1), retail('C1', 0, 300, 2)] }));
      // Only as much moves as retail bid beyond its reserve: 700 of the 900 unsubscribed non-retail shares.
      expect(result.retail).toEqual({ portion: 800, demand: 800n, allotted: 800, clearingPricePaise: 10_100 });
      expect(result.nonRetail).toEqual({ portion: 200, demand: 0n, allotted: 0, clearingPricePaise: null });
      expect(allotted(result)).toEqual({ R1: [500, 10_100], C1: [300, 10_100] });
    });

    it('moves nothing when both categories are undersubscribed: the rest stays with the seller', () => {
      const result = allocateOfs(issue({ bids: [retail('R1', 10_100, 40, 1), nonRetail('N1', 10_000, 500, 2)] }));
      expect(result.retail.portion).toBe(100);
      expect(result.nonRetail.portion).toBe(900);
      expect(result.retail.allotted + result.nonRetail.allotted).toBe(540);
    });

    it('with a 100% retail reserve, non-retail gets only what retail leaves', () => {
      const full = allocateOfs(
        issue({ retailReservePct: 100, bids: [retail('R1', 10_100, 1000, 1), nonRetail('N1', 10_000, 10, 2)] }),
      );
      expect(full.nonRetail).toEqual({ portion: 0, demand: 10n, allotted: 0, clearingPricePaise: null });
      expect(reasonOf(full, 'N1')).toBe('not allotted: nothing is left of the non-retail portion');
      const partial = allocateOfs(
        issue({ retailReservePct: 100, bids: [retail('R1', 10_100, 995, 1), nonRetail('N1', 10_000, 10, 2)] }),
      );
      expect(allotted(partial)).toEqual({ R1: [995, 10_100], N1: [5, 10_000] });
    });
  });

  describe('large numbers', () => {
    const M = Number.MAX_SAFE_INTEGER; // 9007199254740991: retail 900719925474099, non-retail 8106479329266892

    it('allots a single huge bid exactly its portion', () => {
      const result = allocateOfs(
        issue({
          offerQuantity: M,
          allocation: 'PRICE_PRIORITY',
          bids: [nonRetail('N1', 10_000, M, 1), retail('C1', 0, 999_999_999_999_999, 2)],
        }),
      );
      expect(allotted(result)).toEqual({ N1: [8_106_479_329_266_892, 10_000], C1: [900_719_925_474_099, 10_100] });
      expect(result.retail.allotted + result.nonRetail.allotted).toBe(M);
      expect(reasonOf(result, 'C1')).toBe(
        'allotted 900719925474099 of 999999999999999 at 101.00 (cut-off bid; price priority, marginal price level shared proportionately, oversubscribed 1.11x)',
      );
    });

    it('shares beyond 2^53 exactly (quantity * portion is computed in BigInt)', () => {
      // 18014398509481981 bid for 8106479329266892: exact shares 4053239664633446.22 and
      // 4053239664633445.77; the leftover share goes to N2.
      const result = allocateOfs(
        issue({
          offerQuantity: M,
          bids: [
            nonRetail('N1', 10_000, M, 1),
            nonRetail('N2', 10_000, M - 1, 2),
            retail('R1', 10_100, 900_719_925_474_099, 3),
          ],
        }),
      );
      expect(allotted(result)).toEqual({
        N1: [4_053_239_664_633_446, 10_000],
        N2: [4_053_239_664_633_446, 10_000],
        R1: [900_719_925_474_099, 10_100],
      });
      expect(result.nonRetail.demand).toBe(18_014_398_509_481_981n); // exact (issue 47 row 3), no double holds it
      expect(result.nonRetail.allotted).toBe(8_106_479_329_266_892);
    });
  });

  describe('order of the bids', () => {
    const bids = [
      nonRetail('N2', 10_100, 71, 3),
      retail('R1', 10_100, 10, 1),
      nonRetail('N1', 10_200, 50, 2),
      nonRetail('N3', 10_100, 29, 3),
    ];

    it('answers in placedSeq, then orderId order, whatever the input order', () => {
      const result = allocateOfs(issue({ offerQuantity: 100, bids }));
      expect(result.allotments.map((a) => a.orderId)).toEqual(['R1', 'N1', 'N2', 'N3']);
      expect(allocateOfs(issue({ offerQuantity: 100, bids: [...bids].reverse() }))).toEqual(result);
    });
  });

  describe('impossible input', () => {
    it.each<[string, Partial<AllocationInput>, RegExp]>([
      [
        'a cut-off bid without a retail cut-off price',
        { retailCutoffPricePaise: null, bids: [retail('C1', 0, 10, 1)] },
        /C1: The retail cut-off price is not set yet/,
      ],
      [
        'a zero quantity',
        { bids: [retail('R1', 10_100, 0, 1)] },
        /R1: quantity 0 is not a whole number of shares of at least 1/,
      ],
      ['a negative quantity', { bids: [nonRetail('N1', 10_100, -5, 1)] }, /quantity -5/],
      ['a fractional quantity', { bids: [nonRetail('N1', 10_100, 1.5, 1)] }, /quantity 1.5/],
      [
        'a non-retail cut-off bid',
        { bids: [nonRetail('N1', 0, 10, 1)] },
        /N1: Only retail users may bid at the cut-off price/,
      ],
      [
        'a price bid below the floor',
        { bids: [nonRetail('N1', 9_995, 10, 1)] },
        /N1: price 99.95 is below the floor price 100.00/,
      ],
      [
        'a cut-off price below the floor',
        { retailCutoffPricePaise: 9_900, bids: [retail('C1', 0, 10, 1)] },
        /C1: The retail cut-off price 99.00 is below the floor price 100.00/,
      ],
      ['a fractional price', { bids: [nonRetail('N1', 10_000.5, 10, 1)] }, /not a whole number of paise/],
      [
        'the same order twice',
        { bids: [retail('R1', 10_100, 10, 1), retail('R1', 10_100, 10, 2)] },
        /R1 appears more than once/,
      ],
    ])('sets aside %s, unallotted with the reason (no stored bid stops an allocation)', (_, overrides, message) => {
      const result = allocateOfs(issue(overrides));
      const setAside = result.allotments.filter((a) => a.reason.startsWith('not allotted: set aside, '));
      expect(setAside).toHaveLength(1);
      expect(setAside[0]).toMatchObject({ allottedQuantity: 0, pricePaise: null });
      expect(`${setAside[0]!.orderId}: ${setAside[0]!.reason.replace('not allotted: set aside, ', '')}`).toMatch(
        message,
      );
      // The others are allotted as if it were not there.
      expect(result.allotments).toHaveLength(overrides.bids!.length);
    });
  });
});
