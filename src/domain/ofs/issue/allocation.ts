/**
 * The OFS allocation at close: which live bid gets how many shares, at what price. A pure function of the
 * issue's allocation settings and its live bids: no I/O, no clock, no randomness, and the same answer
 * whatever the order of the bids (they are first sorted by placedSeq, then orderId, then the rest of the
 * bid).
 *
 * Portions. The retail portion is floor(offerQuantity * retailReservePct / 100); the non-retail portion
 * is the rest. Shares one category leaves unsubscribed go to the other category, as far as that category
 * bids for more than its own portion:
 * - unsubscribed retail shares go to non-retail (the SEBI rule; in the market they go to the non-retail
 *   bids carried forward to T+1, and here every live non-retail bid at close is such a bid);
 * - unsubscribed non-retail shares go to retail (SEBI has allowed this since January 2023). Retail then
 *   gets min(retail demand, retail portion + unsubscribed non-retail), never less than
 *   min(retail demand, retail portion): non-retail bids can only leave shares to retail, never take any.
 * At most one of the two applies (a category cannot leave shares over and want more at once), the two
 * final portions always add up to offerQuantity, and when the whole demand fits the offer every bid is
 * allotted in full. Shares nobody bid for stay with the seller.
 *
 * Each category is then allotted from its final portion by the issue's method. A retail cut-off bid
 * (price 0) counts at the retail cut-off price, and trades at it.
 * - PRICE_PRIORITY: price levels, highest first, are allotted in full while the portion lasts; the
 *   marginal level (more demand than what is left) shares what is left proportionately; lower levels get
 *   nothing. Each bid trades at its own price. The reported clearing price is the lowest allotted price.
 * - PROPORTIONATE: the clearing price P is the highest price at which the demand at or above it covers
 *   the portion (the lowest bid price when no price does). Every bid at or above P shares the portion in
 *   proportion to its quantity and trades at P (a cut-off bid at the cut-off price); bids below P get
 *   nothing.
 * A proportionate share is floor(quantity * shares / demand); the whole shares left over by the flooring
 * go one each, largest fractional remainder first, then earliest placedSeq, then orderId.
 *
 * Quantities are whole shares and prices integer paise. quantity * portion can pass 2^53, so the
 * arithmetic runs in BigInt; allotments and portions never exceed offerQuantity and come back exact. A
 * category's reported demand is the only figure that could pass 2^53 (many bids near the 15-digit
 * quantity limit): it is reported as a bigint (issue 47 row 3).
 */
import { formatPrice, type AllocationMethod, type OfsIssue } from './issue.js';
import { allocationViolations, CUTOFF_ORDER_TYPE, LIMIT_ORDER_TYPE, type BidderCategory } from '../rules.js';

/** A live bid, as the allocation reads it. */
export interface AllocationBid {
  orderId: string;
  category: BidderCategory;
  /** Integer paise; 0 is a retail cut-off bid. */
  pricePaise: number;
  quantity: number;
  /** The order in which bids were placed; ties are broken by orderId. */
  placedSeq: number;
}

export type AllocationInput = Pick<
  OfsIssue,
  'offerQuantity' | 'retailReservePct' | 'allocation' | 'floorPricePaise' | 'retailCutoffPricePaise'
> & {
  bids: readonly AllocationBid[];
};

export interface CategoryAllocation {
  /** The shares this category could be allotted: its reserved portion, after what spilled in or out. */
  portion: number;
  /** The sum of this category's bid quantities, exact (it may pass 2^53). */
  demand: bigint;
  allotted: number;
  /** PROPORTIONATE: the single clearing price; PRICE_PRIORITY: the lowest allotted price; null: none. */
  clearingPricePaise: number | null;
}

export interface Allotment {
  orderId: string;
  allottedQuantity: number;
  /** The trade price in paise; null when nothing is allotted. */
  pricePaise: number | null;
  reason: string;
}

export interface AllocationResult {
  retail: CategoryAllocation;
  nonRetail: CategoryAllocation;
  /** One per input bid, sorted by placedSeq, then orderId. */
  allotments: Allotment[];
}

/** A bid with the price it counts at for ordering (a cut-off bid at the retail cut-off price). */
interface RankedBid {
  bid: AllocationBid;
  effectivePricePaise: number;
  quantity: bigint;
}

type Outcome = Omit<Allotment, 'orderId'>;

export function allocateOfs(input: AllocationInput): AllocationResult {
  const bids = [...input.bids].sort(byPlacementThenTerms);
  const outcomes = new Map<AllocationBid, Outcome>();
  const ranked = screen(bids, input, outcomes);

  const retailBids = ranked.filter((r) => r.bid.category === 'RETAIL');
  const nonRetailBids = ranked.filter((r) => r.bid.category === 'NON_RETAIL');
  const offer = BigInt(input.offerQuantity);
  const retailReserve = (offer * BigInt(input.retailReservePct)) / 100n;
  const nonRetailReserve = offer - retailReserve;
  const retailDemand = sumQuantities(retailBids);
  const nonRetailDemand = sumQuantities(nonRetailBids);
  const toNonRetail = min(positive(retailReserve - retailDemand), positive(nonRetailDemand - nonRetailReserve));
  const toRetail = min(positive(nonRetailReserve - nonRetailDemand), positive(retailDemand - retailReserve));

  const retailPortion = retailReserve - toNonRetail + toRetail;
  const nonRetailPortion = nonRetailReserve + toNonRetail - toRetail;
  const retail = allocateCategory('retail', retailBids, retailPortion, input.allocation, outcomes);
  const nonRetail = allocateCategory('non-retail', nonRetailBids, nonRetailPortion, input.allocation, outcomes);
  return {
    retail,
    nonRetail,
    allotments: bids.map((bid) => ({ orderId: bid.orderId, ...outcomes.get(bid)! })),
  };
}

/**
 * placedSeq, then orderId. A total order even over places no bid may have (NaN sorts last, after
 * Infinity): `a - b` would answer NaN for them, which sort() takes as "equal" to everything, and the
 * valid bids around such a bid could come back out of order, in an order that depends on the input's.
 */
export function byPlacement(
  a: { placedSeq: number; orderId: string },
  b: { placedSeq: number; orderId: string },
): number {
  return compareNumbers(a.placedSeq, b.placedSeq) || compareStrings(a.orderId, b.orderId);
}

/**
 * byPlacement, then the rest of the bid: copies of one orderId at one place come out in the same order
 * whatever the input's, so which of them the allocation takes (the first) does not depend on it. The
 * offer's allocation orders by it too, then by bidder.
 */
export function byPlacementThenTerms(
  a: { placedSeq: number; orderId: string; category: string; pricePaise: number; quantity: number },
  b: { placedSeq: number; orderId: string; category: string; pricePaise: number; quantity: number },
): number {
  return (
    byPlacement(a, b) ||
    compareStrings(a.category, b.category) ||
    compareNumbers(a.pricePaise, b.pricePaise) ||
    compareNumbers(a.quantity, b.quantity)
  );
}

/** Numeric order, NaN last (and equal to itself). */
export function compareNumbers(a: number, b: number): number {
  if (a === b) return 0;
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a < b ? -1 : 1;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The bids the allocation takes, ranked; the others are set aside, unallotted with the reason (no stored
 * bid may stop an allocation): a price or quantity no rule would have let live, what allocationViolations
 * (domain/ofs/rules.ts) refuses, such as a bid below a floor re-imported since, or a repeated id.
 * Allotting them would sell shares nobody validly bid for.
 *
 * A bid set aside takes no part at all, not even its id: of the bids that could take part, the first in
 * placement order (`bids` is sorted) takes an id and any later one is the repeat. A bad stored copy of a
 * valid bid's id, placed before it, is set aside alone, and the valid bid is allotted as without it.
 */
function screen(
  bids: readonly AllocationBid[],
  input: AllocationInput,
  outcomes: Map<AllocationBid, Outcome>,
): RankedBid[] {
  const taken = new Set<string>();
  const ranked: RankedBid[] = [];
  for (const bid of bids) {
    const why = problemOf(bid, input) ?? (taken.has(bid.orderId) ? `bid ${bid.orderId} appears more than once` : null);
    if (why !== null) {
      outcomes.set(bid, notAllotted(`set aside, ${why}`));
      continue;
    }
    taken.add(bid.orderId);
    ranked.push({
      bid,
      effectivePricePaise: bid.pricePaise === 0 ? input.retailCutoffPricePaise! : bid.pricePaise,
      quantity: BigInt(bid.quantity),
    });
  }
  return ranked;
}

/** What keeps a bid out of the allocation on its own, whatever the other bids. */
function problemOf(bid: AllocationBid, input: AllocationInput): string | null {
  if (!Number.isSafeInteger(bid.pricePaise) || bid.pricePaise < 0)
    return `price ${bid.pricePaise} is not a whole number of paise`;
  if (!Number.isSafeInteger(bid.placedSeq)) return `its place in the book (${bid.placedSeq}) is not a whole number`;
  if (bid.category !== 'RETAIL' && bid.category !== 'NON_RETAIL')
    return `category ${JSON.stringify(bid.category)} is not a bidder category`;
  const terms = {
    orderType: bid.pricePaise === 0 ? CUTOFF_ORDER_TYPE : LIMIT_ORDER_TYPE,
    quantity: bid.quantity,
    pricePaise: bid.pricePaise,
  };
  const [violation] = allocationViolations(terms, input, bid.category);
  return violation === undefined ? null : violation.message;
}

function allocateCategory(
  label: string,
  bids: readonly RankedBid[],
  portion: bigint,
  method: AllocationInput['allocation'],
  outcomes: Map<AllocationBid, Outcome>,
): CategoryAllocation {
  const byId = new Map(bids.map((r) => [r.bid.orderId, r]));
  const shared = sharePortion(
    label,
    bids.map((r) => ({
      orderId: r.bid.orderId,
      placedSeq: r.bid.placedSeq,
      quantity: r.quantity,
      pricePaise: r.effectivePricePaise,
      cutoff: r.bid.pricePaise === 0,
    })),
    portion,
    method,
  );
  for (const [orderId, share] of shared.shares) {
    const r = byId.get(orderId)!;
    // PROPORTIONATE: every allotted bid trades at the clearing price, except that a cut-off bid trades at the cut-off price.
    const price =
      method === 'PROPORTIONATE' && r.bid.pricePaise !== 0 ? shared.clearingPricePaise! : r.effectivePricePaise;
    outcomes.set(
      r.bid,
      share.quantity > 0n ? allottedOutcome(share, r.quantity, price, r.bid.pricePaise === 0) : notAllotted(share.how),
    );
  }
  return {
    portion: Number(portion),
    demand: shared.demand,
    allotted: Number(shared.allotted),
    clearingPricePaise: shared.clearingPricePaise,
  };
}

/** A bid as a portion is shared out: what it may be allotted and the price it counts at. */
export interface PortionBid {
  orderId: string;
  placedSeq: number;
  /** The shares it may be allotted from this portion. */
  quantity: bigint;
  /** The price it counts at in paise (a cut-off bid: the cut-off price it is valued at). */
  pricePaise: number;
  /** A cut-off bid: the reasons name it so. */
  cutoff: boolean;
}

/** What one bid got of a portion: shares, and how (allotted) or why not (quantity 0). */
export interface PortionShare {
  quantity: bigint;
  how: string;
}

export interface SharedPortion {
  demand: bigint;
  allotted: bigint;
  /**
   * PROPORTIONATE: the one clearing price; PRICE_PRIORITY: the lowest allotted price. When the demand fits
   * the portion, the lowest bid price (every bid is allotted in full). Null: nobody was allotted.
   */
  clearingPricePaise: number | null;
  /** One per bid, by orderId. */
  shares: Map<string, PortionShare>;
}

/**
 * A portion of `portion` shares shared among `bids` by `method` (the rules in this file's head comment):
 * in full when the demand fits, else proportionately at one clearing price, or price levels highest
 * first with the marginal level shared proportionately. Pure; the same answer whatever the bids' order.
 * Every allocation of an OFS uses it: the categories of an issue here, the steps of an offer's two days
 * in domain/ofs/offer/allocation.ts.
 */
export function sharePortion(
  label: string,
  bids: readonly PortionBid[],
  portion: bigint,
  method: AllocationMethod,
): SharedPortion {
  const sorted = [...bids].sort(byPlacement);
  const demand = sumQuantities(sorted);
  const shares = new Map<string, PortionShare>();
  if (sorted.length === 0) return { demand, allotted: 0n, clearingPricePaise: null, shares };
  if (demand <= portion) {
    const lowestPricePaise = sorted.reduce((lowest, r) => Math.min(lowest, r.pricePaise), Infinity);
    for (const r of sorted)
      shares.set(r.orderId, { quantity: r.quantity, how: `in full, the ${label} portion was not oversubscribed` });
    return { demand, allotted: demand, clearingPricePaise: lowestPricePaise, shares };
  }
  if (portion === 0n) {
    for (const r of sorted) shares.set(r.orderId, { quantity: 0n, how: `nothing is left of the ${label} portion` });
    return { demand, allotted: 0n, clearingPricePaise: null, shares };
  }
  const clearingPricePaise =
    method === 'PROPORTIONATE'
      ? allotProportionately(sorted, portion, shares)
      : allotByPricePriority(sorted, portion, shares);
  return { demand, allotted: portion, clearingPricePaise, shares };
}

/** An oversubscribed portion at one clearing price; returns that price. */
function allotProportionately(bids: readonly PortionBid[], portion: bigint, out: Map<string, PortionShare>): number {
  let clearingPricePaise = 0;
  let atOrAbove = 0n;
  for (const level of priceLevels(bids)) {
    clearingPricePaise = level.pricePaise;
    atOrAbove += level.demand;
    if (atOrAbove >= portion) break;
  }
  const shares = shareProportionately(
    bids.filter((r) => r.pricePaise >= clearingPricePaise),
    portion,
    atOrAbove,
  );
  const ratio = formatRatio(atOrAbove, portion);
  for (const r of bids) {
    const quantity = shares.get(r);
    if (quantity === undefined) {
      out.set(r.orderId, {
        quantity: 0n,
        how: `${describePrice(r)} below the clearing price ${formatPrice(clearingPricePaise)}`,
      });
    } else if (quantity === 0n) {
      out.set(r.orderId, {
        quantity: 0n,
        how: `the proportionate share of ${r.quantity} is less than one share (oversubscribed ${ratio}x)`,
      });
    } else {
      out.set(r.orderId, { quantity, how: `proportionate, oversubscribed ${ratio}x` });
    }
  }
  return clearingPricePaise;
}

/** An oversubscribed portion, highest price levels first; returns the lowest allotted price. */
function allotByPricePriority(bids: readonly PortionBid[], portion: bigint, out: Map<string, PortionShare>): number {
  let lowestAllottedPaise = 0;
  let left = portion;
  for (const level of priceLevels(bids)) {
    if (left === 0n) {
      for (const r of level.bids) {
        out.set(r.orderId, {
          quantity: 0n,
          how: `${describePrice(r)} below the lowest allotted price ${formatPrice(lowestAllottedPaise)} (price priority)`,
        });
      }
    } else if (level.demand <= left) {
      lowestAllottedPaise = level.pricePaise;
      left -= level.demand;
      for (const r of level.bids)
        out.set(r.orderId, { quantity: r.quantity, how: 'price priority, price level allotted in full' });
    } else {
      lowestAllottedPaise = level.pricePaise;
      const shares = shareProportionately(level.bids, left, level.demand);
      const ratio = formatRatio(level.demand, left);
      left = 0n;
      for (const r of level.bids) {
        const quantity = shares.get(r)!;
        out.set(
          r.orderId,
          quantity === 0n
            ? {
                quantity,
                how: `the proportionate share of ${r.quantity} at the marginal price level is less than one share (oversubscribed ${ratio}x)`,
              }
            : {
                quantity,
                how: `price priority, marginal price level shared proportionately, oversubscribed ${ratio}x`,
              },
        );
      }
    }
  }
  return lowestAllottedPaise;
}

function allottedOutcome(share: PortionShare, bidQuantity: bigint, pricePaise: number, cutoffBid: boolean): Outcome {
  return {
    allottedQuantity: Number(share.quantity),
    pricePaise,
    reason: `allotted ${share.quantity} of ${bidQuantity} at ${formatPrice(pricePaise)} (${cutoffBid ? 'cut-off bid; ' : ''}${share.how})`,
  };
}

function notAllotted(why: string): Outcome {
  return { allottedQuantity: 0, pricePaise: null, reason: `not allotted: ${why}` };
}

interface PriceLevel {
  pricePaise: number;
  demand: bigint;
  bids: PortionBid[];
}

/** Bids grouped by the price they count at, highest first; within a level, in placement order. */
function priceLevels(bids: readonly PortionBid[]): PriceLevel[] {
  const byPrice = new Map<number, PriceLevel>();
  for (const r of bids) {
    const level = byPrice.get(r.pricePaise) ?? { pricePaise: r.pricePaise, demand: 0n, bids: [] };
    level.demand += r.quantity;
    level.bids.push(r);
    byPrice.set(r.pricePaise, level);
  }
  return [...byPrice.values()].sort((a, b) => b.pricePaise - a.pricePaise);
}

/**
 * `shares` (at most `demand`, the sum of the bids' quantities) shared in proportion to quantity. The
 * floored shares add up to `shares` minus the sum of the fractional parts, and that sum is a whole number
 * below the count of bids with a fraction, so each leftover share goes to a different bid whose exact
 * share was not whole; its floor is below its quantity, so no bid gets more than it asked for.
 */
export function shareProportionately<B extends { quantity: bigint; placedSeq: number; orderId: string }>(
  bids: readonly B[],
  shares: bigint,
  demand: bigint,
): Map<B, bigint> {
  const exact = bids.map((r) => ({
    r,
    floor: (r.quantity * shares) / demand,
    remainder: (r.quantity * shares) % demand,
  }));
  let leftover = shares - exact.reduce((sum, e) => sum + e.floor, 0n);
  exact.sort((a, b) => (a.remainder !== b.remainder ? (a.remainder > b.remainder ? -1 : 1) : byPlacement(a.r, b.r)));
  const result = new Map<B, bigint>();
  for (const e of exact) {
    result.set(e.r, e.floor + (leftover > 0n ? 1n : 0n));
    if (leftover > 0n) leftover -= 1n;
  }
  return result;
}

function sumQuantities(bids: readonly { quantity: bigint }[]): bigint {
  return bids.reduce((sum, r) => sum + r.quantity, 0n);
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function positive(n: bigint): bigint {
  return n > 0n ? n : 0n;
}

function describePrice(r: PortionBid): string {
  return r.cutoff ? `cut-off bid (${formatPrice(r.pricePaise)})` : `bid ${formatPrice(r.pricePaise)}`;
}

/**
 * An oversubscription (demand above supply) to hundredths, trailing zeros dropped: 2.5, 1.17, 3. Never
 * shown as 1, which would read as "not oversubscribed".
 */
export function formatRatio(demand: bigint, supply: bigint): string {
  const rounded = (demand * 200n + supply) / (2n * supply);
  const hundredths = rounded > 100n ? rounded : 101n;
  const fraction = String(hundredths % 100n)
    .padStart(2, '0')
    .replace(/0+$/, '');
  return fraction === '' ? `${hundredths / 100n}` : `${hundredths / 100n}.${fraction}`;
}
