/**
 * Property tests of an offer's two allocations (src/domain/ofs/offer/allocation.ts): whatever the bids,
 * shares are conserved across categories and days, no category gets more than its portion unless a
 * spill rule gives it more, the single-bidder cap holds over both days, the MF/IC reservation is
 * honoured when they bid enough, employees stay within their Rs 2 lakh / Rs 5 lakh rules, the result
 * does not depend on the order of the bids, and the T-day cut-off is the lowest allotted price (price
 * priority) or the clearing price (proportionate).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateT1Day,
  allocateTDay,
  type OfferBid,
  type TDayAllocation,
} from '../../src/domain/ofs/offer/allocation.js';
import { EMPLOYEE_FIRST_ROUND_PAISE, EMPLOYEE_LIMIT_PAISE } from '../../src/domain/ofs/offer/rules.js';
import {
  discountedPricePaise,
  isMfIc,
  isNonRetailCategory,
  offerPortions,
  type NonRetailCategory,
  type OfferTerms,
} from '../../src/domain/ofs/offer/offer.js';

const RUNS = 300;
const FLOOR = 10_000;

/** Bidders with a fixed category each: several per category, so that the cap adds bids up. */
const NON_RETAIL_BIDDERS: readonly [string, NonRetailCategory][] = [
  ['n0', 'NII'],
  ['n1', 'NII'],
  ['m0', 'MF'],
  ['m1', 'MF'],
  ['i0', 'IC'],
  ['o0', 'OTHS'],
  ['o1', 'OTHS'],
];

const level = fc.integer({ min: 0, max: 6 }).map((step) => FLOOR + step * 25);

const quantity = fc.oneof(
  fc.integer({ min: 1, max: 30 }),
  fc.integer({ min: 1, max: 5_000 }),
  fc.integer({ min: 1, max: 10_000_000_000 }),
);

const discount = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 1, max: 2_000 }).map((paise) => ({ paise })),
  fc.integer({ min: 1, max: 2_000 }).map((basisPoints) => ({ basisPoints })),
);

const terms: fc.Arbitrary<OfferTerms> = fc
  .record({
    baseQuantity: fc.oneof(
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 1, max: 100_000 }),
      fc.integer({ min: 1, max: 1_000_000_000_000 }),
    ),
    greenShoeQuantity: fc.integer({ min: 0, max: 50_000 }),
    // The share of the option exercised: none, in part, all.
    exercisedShare: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(1)),
    retailReservePct: fc.constantFrom(10, 12.5, 20, 25, 50),
    employeeQuantity: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
    employeeGreenShoeQuantity: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
    allocation: fc.constantFrom('PROPORTIONATE' as const, 'PRICE_PRIORITY' as const),
    floorPricePaise: fc.constant(FLOOR),
    retailDiscount: discount,
    retailAllocationPrice: fc.constantFrom('UNIFORM' as const, 'BID' as const),
    employeeDiscount: discount,
  })
  .map(({ exercisedShare, ...t }) => ({
    ...t,
    greenShoeExercised: Math.floor(exercisedShare * t.greenShoeQuantity),
    employeeGreenShoeQuantity: t.employeeQuantity === 0 ? 0 : t.employeeGreenShoeQuantity,
    // BID is priced per bid: price priority only (the import refuses it with a proportionate allocation).
    retailAllocationPrice: t.allocation === 'PROPORTIONATE' ? ('UNIFORM' as const) : t.retailAllocationPrice,
    printedPortions: null,
  }));

const tBids: fc.Arbitrary<OfferBid[]> = fc
  .array(
    fc.record({
      bidder: fc.integer({ min: 0, max: NON_RETAIL_BIDDERS.length - 1 }),
      pricePaise: level,
      quantity,
      placedSeq: fc.integer({ min: 0, max: 10 }),
    }),
    { maxLength: 20 },
  )
  .map((raw) =>
    raw.map((r, i) => {
      const [bidderId, category] = NON_RETAIL_BIDDERS[r.bidder]!;
      return {
        orderId: `T${i}`,
        bidderId,
        category,
        pricePaise: r.pricePaise,
        quantity: r.quantity,
        placedSeq: r.placedSeq,
      };
    }),
  );

/** T+1's own bids, priced from the T-day cut-off up (0: a cut-off bid). */
function t1Bids(cutoffPricePaise: number): fc.Arbitrary<OfferBid[]> {
  const retail = fc.record({
    who: fc.integer({ min: 0, max: 5 }),
    step: fc.integer({ min: -1, max: 4 }),
    quantity,
    placedSeq: fc.integer({ min: 11, max: 20 }),
  });
  const employee = fc.record({
    who: fc.integer({ min: 0, max: 3 }),
    quantity: fc.integer({ min: 1, max: 6_000 }),
    placedSeq: fc.integer({ min: 11, max: 20 }),
  });
  return fc.tuple(fc.array(retail, { maxLength: 12 }), fc.array(employee, { maxLength: 8 })).map(([r, e]) => [
    ...r.map((b, i): OfferBid => ({
      orderId: `R${i}`,
      bidderId: `r${b.who}`,
      category: 'RETAIL',
      pricePaise: b.step < 0 ? 0 : cutoffPricePaise + b.step * 25,
      quantity: b.quantity,
      placedSeq: b.placedSeq,
    })),
    ...e.map((b, i): OfferBid => ({
      orderId: `E${i}`,
      bidderId: `e${b.who}`,
      category: 'EMPLOYEE',
      pricePaise: 0,
      quantity: b.quantity,
      placedSeq: b.placedSeq,
    })),
  ]);
}

/** The T-day bids that were not allotted in full, at or above the cut-off, carried forward for what is left (those `carry` picks). */
function carriedForward(bids: readonly OfferBid[], t: TDayAllocation, carry: readonly boolean[]): OfferBid[] {
  return bids.flatMap((bid, i) => {
    const allotted = t.allotments.find((a) => a.orderId === bid.orderId)!.allottedQuantity;
    if (!carry[i % Math.max(carry.length, 1)] || allotted >= bid.quantity || bid.pricePaise < t.cutoffPricePaise)
      return [];
    return [{ ...bid, orderId: `C${bid.orderId}`, quantity: bid.quantity - allotted }];
  });
}

const scenario = terms.chain((offer) =>
  tBids.chain((tDayBids) => {
    const t = allocateTDay(offer, tDayBids);
    return fc.tuple(
      fc.constant(offer),
      fc.constant(tDayBids),
      t1Bids(t.cutoffPricePaise),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
    );
  }),
);

function sumBy<T>(items: readonly T[], key: (item: T) => string, value: (item: T) => number): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  for (const item of items) sums.set(key(item), (sums.get(key(item)) ?? 0n) + BigInt(value(item)));
  return sums;
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('allocateTDay, for any bids', () => {
  it('conserves the non-retail portion, gives no bid more than it asked, and holds the cap', () => {
    fc.assert(
      fc.property(terms, tBids, (offer, bids) => {
        const t = allocateTDay(offer, bids);
        const portions = offerPortions(offer);
        const allotted = t.allotments.reduce((sum, a) => sum + BigInt(a.allottedQuantity), 0n);
        expect(allotted + BigInt(t.unallotted)).toBe(BigInt(portions.nonRetail));
        expect(t.unallotted).toBeGreaterThanOrEqual(0);
        for (const a of t.allotments) {
          const bid = bids.find((b) => b.orderId === a.orderId)!;
          expect(a.allottedQuantity).toBeLessThanOrEqual(bid.quantity);
          expect(a.allottedQuantity === 0).toBe(a.pricePaise === null);
        }
        const byBidder = sumBy(
          t.allotments,
          (a) => bids.find((b) => b.orderId === a.orderId)!.bidderId,
          (a) => a.allottedQuantity,
        );
        for (const [bidderId, total] of byBidder) {
          const category = NON_RETAIL_BIDDERS.find(([id]) => id === bidderId)![1];
          if (!isMfIc(category)) expect(total).toBeLessThanOrEqual(BigInt(portions.singleBidderCap));
          expect(t.allottedByBidder.get(bidderId)).toBe(Number(total));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('fills the MF/IC reservation from their bids at any valid price, first', () => {
    fc.assert(
      fc.property(terms, tBids, (offer, bids) => {
        const t = allocateTDay(offer, bids);
        const mfIcDemand = bids.filter((b) => isMfIc(b.category)).reduce((sum, b) => sum + BigInt(b.quantity), 0n);
        const mfIcAllotted = t.allotments
          .filter((a) => isMfIc(bids.find((b) => b.orderId === a.orderId)!.category))
          .reduce((sum, a) => sum + BigInt(a.allottedQuantity), 0n);
        const reserved = BigInt(t.portions.mfIcReserved);
        expect(mfIcAllotted).toBeGreaterThanOrEqual(mfIcDemand < reserved ? mfIcDemand : reserved);
      }),
      { numRuns: RUNS },
    );
  });

  it('fixes the cut-off at the floor when not oversubscribed, else where the market outside the reservation cleared', () => {
    fc.assert(
      fc.property(terms, tBids, (offer, bids) => {
        const t = allocateTDay(offer, bids);
        const allotted = t.allotments.filter((a) => a.allottedQuantity > 0);
        const bidOf = (orderId: string) => bids.find((b) => b.orderId === orderId)!;
        if (t.nonRetail.demand <= t.portions.nonRetail) expect(t.cutoffPricePaise).toBe(FLOOR);
        for (const a of allotted) {
          const bid = bidOf(a.orderId);
          // Nobody pays more than its bid; price priority, its own price; proportionate, one price at or above the cut-off.
          expect(a.pricePaise!).toBeLessThanOrEqual(bid.pricePaise);
          if (offer.allocation === 'PRICE_PRIORITY') expect(a.pricePaise).toBe(bid.pricePaise);
          else if (bid.pricePaise >= t.cutoffPricePaise) expect(a.pricePaise).toBe(t.cutoffPricePaise);
        }
        // No bid below the cut-off is allotted, but from the MF/IC reservation.
        for (const bid of bids) {
          const a = t.allotments.find((x) => x.orderId === bid.orderId)!;
          if (bid.pricePaise < t.cutoffPricePaise && !isMfIc(bid.category)) expect(a.allottedQuantity).toBe(0);
        }
        // Price priority, oversubscribed: the cut-off is exactly the lowest price the rest of the portion
        // (outside the MF/IC reservation) allotted; what the reservation allotted never lowers it.
        const fromRest = allotted
          .filter((a) => a.reason.includes('from the non-retail portion'))
          .map((a) => bidOf(a.orderId).pricePaise);
        if (offer.allocation === 'PRICE_PRIORITY' && t.nonRetail.demand > t.portions.nonRetail && fromRest.length > 0) {
          expect(t.cutoffPricePaise).toBe(Math.min(...fromRest));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('does not depend on the order of the bids', () => {
    fc.assert(
      fc.property(terms, tBids, fc.integer({ min: 1, max: 1_000_000 }), (offer, bids, seed) => {
        const sorted = (t: TDayAllocation) => [...t.allotments].sort((a, b) => (a.orderId < b.orderId ? -1 : 1));
        expect(sorted(allocateTDay(offer, shuffled(bids, seed)))).toEqual(sorted(allocateTDay(offer, bids)));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('both days, for any bids', () => {
  it('conserve the offer: what T and T+1 allot plus what returns to the seller is the total plus the employee portion', () => {
    fc.assert(
      fc.property(scenario, ([offer, tDayBids, ownBids, carry]) => {
        const t = allocateTDay(offer, tDayBids);
        const t1 = allocateT1Day(
          offer,
          {
            cutoffPricePaise: t.cutoffPricePaise,
            nonRetailUnallotted: t.unallotted,
            tAllottedByBidder: t.allottedByBidder,
          },
          [...carriedForward(tDayBids, t, carry), ...ownBids],
        );
        const portions = offerPortions(offer);
        const sum = (xs: readonly { allottedQuantity: number }[]) =>
          xs.reduce((s, a) => s + BigInt(a.allottedQuantity), 0n);
        expect(sum(t.allotments) + sum(t1.allotments) + BigInt(t1.returnedToSeller)).toBe(
          BigInt(portions.total + portions.employee),
        );
        // Each category within its portion, except where a spill rule gives it more.
        expect(t1.retail.allotted).toBeLessThanOrEqual(portions.retailReserved + t.unallotted);
        expect(t1.employee.allotted).toBeLessThanOrEqual(portions.employee);
        expect(t1.carriedForward.allotted).toBeLessThanOrEqual(t1.retail.portion - t1.retail.allotted);
        expect(t1.returnedToSeller).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: RUNS },
    );
  });

  it('hold the single-bidder cap over both days', () => {
    fc.assert(
      fc.property(scenario, ([offer, tDayBids, ownBids, carry]) => {
        const t = allocateTDay(offer, tDayBids);
        const carried = carriedForward(tDayBids, t, carry);
        const t1 = allocateT1Day(
          offer,
          {
            cutoffPricePaise: t.cutoffPricePaise,
            nonRetailUnallotted: t.unallotted,
            tAllottedByBidder: t.allottedByBidder,
          },
          [...carried, ...ownBids],
        );
        const cap = BigInt(offerPortions(offer).singleBidderCap);
        const t1ByBidder = sumBy(
          t1.allotments.filter((a) => a.orderId.startsWith('C')),
          (a) => carried.find((b) => b.orderId === a.orderId)!.bidderId,
          (a) => a.allottedQuantity,
        );
        for (const [bidderId, category] of NON_RETAIL_BIDDERS) {
          if (isMfIc(category)) continue;
          expect(BigInt(t.allottedByBidder.get(bidderId) ?? 0) + (t1ByBidder.get(bidderId) ?? 0n)).toBeLessThanOrEqual(
            cap,
          );
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('keep employees within Rs 5 lakh, and give anyone past Rs 2 lakh only once everyone had their Rs 2 lakh', () => {
    fc.assert(
      fc.property(scenario, ([offer, tDayBids, ownBids]) => {
        const t = allocateTDay(offer, tDayBids);
        const t1 = allocateT1Day(
          offer,
          {
            cutoffPricePaise: t.cutoffPricePaise,
            nonRetailUnallotted: t.unallotted,
            tAllottedByBidder: t.allottedByBidder,
          },
          ownBids,
        );
        const employeeBids = ownBids.filter((b) => b.category === 'EMPLOYEE');
        const allotted = sumBy(
          t1.allotments.filter((a) => a.orderId.startsWith('E')),
          (a) => employeeBids.find((b) => b.orderId === a.orderId)!.bidderId,
          (a) => a.allottedQuantity,
        );
        const wanted = sumBy(
          employeeBids,
          (b) => b.bidderId,
          (b) => b.quantity,
        );
        const cutoff = BigInt(t.cutoffPricePaise);
        const firstRound = EMPLOYEE_FIRST_ROUND_PAISE / cutoff;
        for (const [, shares] of allotted) expect(shares * cutoff).toBeLessThanOrEqual(EMPLOYEE_LIMIT_PAISE);
        if ([...allotted.values()].some((shares) => shares > firstRound)) {
          for (const [who, shares] of allotted) {
            const want = wanted.get(who)!;
            expect(shares).toBeGreaterThanOrEqual(want < firstRound ? want : firstRound);
          }
        }
        // One price for every employee: the T-day cut-off less the employee discount.
        for (const a of t1.allotments.filter((x) => x.orderId.startsWith('E') && x.allottedQuantity > 0))
          expect(a.pricePaise).toBe(t1.employeePricePaise);
      }),
      { numRuns: RUNS },
    );
  });

  it("price retail by the offer's rule, and do not depend on the order of the bids", () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 1, max: 1_000_000 }), ([offer, tDayBids, ownBids, carry], seed) => {
        const t = allocateTDay(offer, tDayBids);
        const input = {
          cutoffPricePaise: t.cutoffPricePaise,
          nonRetailUnallotted: t.unallotted,
          tAllottedByBidder: t.allottedByBidder,
        };
        const bids = [...carriedForward(tDayBids, t, carry), ...ownBids];
        const t1 = allocateT1Day(offer, input, bids);
        const retailPrices = new Set(
          t1.allotments.filter((a) => a.orderId.startsWith('R') && a.allottedQuantity > 0).map((a) => a.pricePaise),
        );
        // UNIFORM: every retail allottee at the T-day cut-off less the discount.
        if (offer.retailAllocationPrice === 'UNIFORM' && retailPrices.size > 0) {
          expect([...retailPrices]).toEqual([discountedPricePaise(t.cutoffPricePaise, offer.retailDiscount)]);
        }
        for (const a of t1.allotments.filter((x) => x.orderId.startsWith('C') && x.allottedQuantity > 0)) {
          const bid = bids.find((b) => b.orderId === a.orderId)!;
          expect(isNonRetailCategory(bid.category)).toBe(true);
          expect(a.pricePaise).toBe(bid.pricePaise);
        }
        const byId = (xs: typeof t1.allotments) => [...xs].sort((a, b) => (a.orderId < b.orderId ? -1 : 1));
        expect(byId(allocateT1Day(offer, input, shuffled(bids, seed)).allotments)).toEqual(byId(t1.allotments));
      }),
      { numRuns: RUNS },
    );
  });
});

/** A bid as a store might hold it: any price, quantity, place or category string, ids that repeat. */
const storedBid = fc.record({
  orderId: fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F'),
  bidderId: fc.constantFrom('n0', 'm0', 'r0', 'e0'),
  category: fc.constantFrom('RETAIL', 'EMPLOYEE', 'NII', 'MF', 'IC', 'OTHS', 'NON_RETAIL', '') as fc.Arbitrary<
    OfferBid['category']
  >,
  pricePaise: fc.oneof(
    fc.integer({ min: -5, max: 20_000 }),
    fc.constantFrom(0, FLOOR - 1, FLOOR, Number.NaN, Infinity, 2 ** 60, 0.5),
  ),
  quantity: fc.oneof(fc.integer({ min: -2, max: 10_000 }), fc.constantFrom(0, Number.NaN, 2 ** 60, 1.5)),
  placedSeq: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom(Number.NaN, Infinity)),
});

describe('no stored bid stops an allocation', () => {
  it('allocateTDay and allocateT1Day never throw, answer one outcome per bid, and allot only whole shares to valid bids', () => {
    fc.assert(
      fc.property(
        terms,
        fc.array(storedBid, { maxLength: 12 }),
        fc.integer({ min: 1, max: 20_000 }),
        (offer, bids, cutoff) => {
          const t = allocateTDay(offer, bids);
          const t1 = allocateT1Day(
            offer,
            { cutoffPricePaise: cutoff, nonRetailUnallotted: t.unallotted, tAllottedByBidder: t.allottedByBidder },
            bids,
          );
          for (const result of [t, t1]) {
            expect(result.allotments).toHaveLength(bids.length);
            for (const a of result.allotments) {
              expect(Number.isSafeInteger(a.allottedQuantity) && a.allottedQuantity >= 0).toBe(true);
              expect(a.reason).not.toBe('');
              if (a.reason.includes('set aside')) expect(a).toMatchObject({ allottedQuantity: 0, pricePaise: null });
            }
          }
          const sum = (xs: readonly { allottedQuantity: number }[]) =>
            xs.reduce((total, a) => total + a.allottedQuantity, 0);
          expect(sum(t.allotments)).toBeLessThanOrEqual(offerPortions(offer).nonRetail);
          expect(sum(t1.allotments)).toBeLessThanOrEqual(
            offerPortions(offer).retailReserved + t.unallotted + offerPortions(offer).employee,
          );
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the bids set aside change nothing for the others', () => {
    const outcomes = (
      allotments: readonly { orderId: string; allottedQuantity: number; pricePaise: number | null; reason: string }[],
    ) =>
      allotments
        .filter((a) => !a.reason.includes('set aside'))
        .map((a) => `${a.orderId} ${a.allottedQuantity} ${a.pricePaise}`)
        .sort();
    fc.assert(
      fc.property(terms, tBids, fc.array(storedBid, { maxLength: 6 }), (offer, valid, stored) => {
        // Stored bids under ids of their own, so that they never repeat a valid one's.
        const extra = stored.map((b, i) => ({ ...b, orderId: `S${i}` }));
        const t = allocateTDay(offer, [...valid, ...extra]);
        const setAside = new Set(t.allotments.filter((a) => a.reason.includes('set aside')).map((a) => a.orderId));
        const kept = [...valid, ...extra].filter((b) => !setAside.has(b.orderId));
        expect(outcomes(t.allotments)).toEqual(outcomes(allocateTDay(offer, kept).allotments));
      }),
      { numRuns: RUNS },
    );
  });
});

/** One fault a store might hold, each enough alone to set a bid aside on either day (the T+1 cut-off is at or above the floor). */
const fault = fc.constantFrom<Partial<OfferBid>>(
  { pricePaise: Number.NaN },
  { pricePaise: Infinity },
  { pricePaise: 0.5 },
  { pricePaise: -25 },
  { pricePaise: 2 ** 60 },
  { quantity: 0 },
  { quantity: -1 },
  { quantity: 1.5 },
  { quantity: Number.NaN },
  { quantity: 2 ** 60 },
  { placedSeq: Number.NaN },
  { placedSeq: Infinity },
  { placedSeq: 0.5 },
  { category: 'NON_RETAIL' as OfferBid['category'] },
  { category: '' as OfferBid['category'] },
);

/** Bad copies of the bids' ids (or ids of their own), placed anywhere, each with one fault; and a day's own refusals. */
function faultyCopies(bids: readonly OfferBid[], dayFaults: fc.Arbitrary<Partial<OfferBid>>): fc.Arbitrary<OfferBid[]> {
  const ids = bids.map((b) => b.orderId);
  const orderId = ids.length === 0 ? fc.constant('Z') : fc.oneof(fc.constantFrom(...ids), fc.constant('Z'));
  const faulty = fc
    .tuple(
      fc.record({
        orderId,
        bidderId: fc.constantFrom('n0', 'm0', 'r0', 'e0'),
        category: fc.constantFrom<OfferBid['category']>('RETAIL', 'EMPLOYEE', 'NII', 'MF', 'IC', 'OTHS'),
        pricePaise: fc.integer({ min: FLOOR, max: FLOOR + 500 }),
        quantity: fc.integer({ min: 1, max: 5_000 }),
        placedSeq: fc.integer({ min: -1, max: 21 }),
      }),
      fc.oneof(fault, dayFaults),
    )
    .map(([bid, f]): OfferBid => ({ ...bid, ...f }));
  return fc.array(faulty, { minLength: 1, maxLength: 6 });
}

const isSetAside = (reason: string) => /^not allotted on T(\+1)?: set aside, /.test(reason);
/** The outcomes of the bids that took part, with their reasons, in the order answered. */
const takingPart = (
  allotments: readonly { orderId: string; allottedQuantity: number; pricePaise: number | null; reason: string }[],
) =>
  allotments
    .filter((a) => !isSetAside(a.reason))
    .map((a) => `${a.orderId} ${a.allottedQuantity} ${a.pricePaise} ${a.reason}`);

describe('a bad stored bid is set aside alone, even under a valid bid id', () => {
  it('allocateTDay: it takes neither the id nor any share, wherever it is placed or stands in the input', () => {
    // T's own refusals: below the floor, a category not allotted on T.
    const tFaults = fc.constantFrom<Partial<OfferBid>>(
      { pricePaise: FLOOR - 1 },
      { pricePaise: 0 },
      { category: 'RETAIL' },
      { category: 'EMPLOYEE', pricePaise: 0 },
    );
    const withFaulty = fc
      .tuple(terms, tBids)
      .chain(([offer, valid]) =>
        faultyCopies(valid, tFaults).chain((faulty) =>
          fc.tuple(
            fc.constant(offer),
            fc.constant(valid),
            fc.constant(faulty),
            fc.shuffledSubarray([...valid, ...faulty], { minLength: valid.length + faulty.length }),
          ),
        ),
      );
    fc.assert(
      fc.property(withFaulty, ([offer, valid, faulty, bids]) => {
        const result = allocateTDay(offer, bids);
        const without = allocateTDay(offer, valid);
        const aside = result.allotments.filter((a) => isSetAside(a.reason));
        expect(aside).toHaveLength(faulty.length);
        for (const a of aside) expect(a.reason).not.toMatch(/appears more than once/);
        expect(takingPart(result.allotments)).toEqual(takingPart(without.allotments));
        expect({ ...result, allotments: [] }).toEqual({ ...without, allotments: [] });
      }),
      { numRuns: RUNS },
    );
  });

  it('allocateT1Day: it takes neither the id nor any share, wherever it is placed or stands in the input', () => {
    const withFaulty = scenario.chain(([offer, tDayBids, ownBids, carry]) => {
      const t = allocateTDay(offer, tDayBids);
      const input = {
        cutoffPricePaise: t.cutoffPricePaise,
        nonRetailUnallotted: t.unallotted,
        tAllottedByBidder: t.allottedByBidder,
      };
      const valid = [...carriedForward(tDayBids, t, carry), ...ownBids];
      // T+1's own refusals: an employee bid at a price, a retail or carried-forward bid below the T-day cut-off.
      const t1Faults = fc.constantFrom<Partial<OfferBid>>(
        { category: 'EMPLOYEE', pricePaise: t.cutoffPricePaise },
        { category: 'RETAIL', pricePaise: t.cutoffPricePaise - 1 },
        { category: 'NII', pricePaise: t.cutoffPricePaise - 1 },
        { category: 'MF', pricePaise: 0 },
      );
      return faultyCopies(valid, t1Faults).chain((faulty) =>
        fc.tuple(
          fc.constant(offer),
          fc.constant(input),
          fc.constant(valid),
          fc.constant(faulty),
          fc.shuffledSubarray([...valid, ...faulty], { minLength: valid.length + faulty.length }),
        ),
      );
    });
    fc.assert(
      fc.property(withFaulty, ([offer, input, valid, faulty, bids]) => {
        const result = allocateT1Day(offer, input, bids);
        const without = allocateT1Day(offer, input, valid);
        const aside = result.allotments.filter((a) => isSetAside(a.reason));
        expect(aside).toHaveLength(faulty.length);
        for (const a of aside) expect(a.reason).not.toMatch(/appears more than once/);
        expect(takingPart(result.allotments)).toEqual(takingPart(without.allotments));
        expect({ ...result, allotments: [] }).toEqual({ ...without, allotments: [] });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('the same answer in any input order, with stored bids among the valid ones', () => {
  /** The valid bids, valid copies of their ids elsewhere in the book or at their own place, and stored bids under repeated ids. */
  const book = fc
    .tuple(terms, tBids, fc.array(storedBid, { maxLength: 8 }), fc.integer({ min: 1, max: 20_000 }))
    .chain(([offer, valid, stored, cutoff]) => {
      const ids = valid.length === 0 ? ['A'] : valid.map((b) => b.orderId);
      const copy = fc.record({
        of: fc.integer({ min: 0, max: Math.max(valid.length - 1, 0) }),
        quantity: fc.integer({ min: 1, max: 5_000 }),
        placedSeq: fc.integer({ min: 0, max: 10 }),
        id: fc.constantFrom(...ids),
      });
      return fc
        .tuple(
          fc.constant(offer),
          fc.constant(valid),
          fc.constant(stored),
          fc.array(copy, { maxLength: 6 }),
          fc.constant(cutoff),
        )
        .chain(([o, v, s, copies, c]) => {
          const bids = [
            ...v,
            ...copies.flatMap((cp) =>
              v.length === 0 ? [] : [{ ...v[cp.of]!, orderId: cp.id, quantity: cp.quantity, placedSeq: cp.placedSeq }],
            ),
            ...s.map((b, i) => (i % 2 === 0 ? { ...b, orderId: ids[i % ids.length]! } : b)),
          ];
          return fc.tuple(
            fc.constant(o),
            fc.constant(bids),
            fc.shuffledSubarray(bids, { minLength: bids.length }),
            fc.constant(c),
          );
        });
    });

  it('allocateTDay and allocateT1Day answer exactly the same, allotments in the same order', () => {
    fc.assert(
      fc.property(book, ([offer, bids, shuffledBids, cutoff]) => {
        const t = allocateTDay(offer, bids);
        expect(allocateTDay(offer, shuffledBids)).toEqual(t);
        const input = {
          cutoffPricePaise: cutoff,
          nonRetailUnallotted: t.unallotted,
          tAllottedByBidder: t.allottedByBidder,
        };
        expect(allocateT1Day(offer, input, shuffledBids)).toEqual(allocateT1Day(offer, input, bids));
      }),
      { numRuns: RUNS },
    );
  });
});
