/**
 * The two allocations of an offer (shared/spec/ofs-framework.md, "At T close" and "At T+1 close";
 * docs/design/ofs.md for every decision). Pure functions like allocation.ts, whose portion sharing
 * (sharePortion) they use: no I/O, no clock, the same answer whatever the order of the bids.
 *
 * T close, the non-retail portion (total minus the retail reservation, as offerPortions gives them: the
 * notice's printed figures when they hold):
 * 1. The single-bidder cap: a bidder other than an MF or IC counts for at most floor(25 % of the total)
 *    shares, its highest-priced bids first (then the earliest); what is over the cap is not allotted.
 * 2. The MF/IC reservation first, from MF and IC bids at any valid price (at or above the floor), by the
 *    method among them (SEBI: "a minimum of 25 % ... reserved").
 * 3. The rest of the portion, with what MF and IC left of their reservation, to every bid for what it
 *    still wants (MF and IC included), by the method. This step finds the price: the reservation never
 *    moves it (Decision).
 * 4. The T-day cut-off price: the floor when the demand (after the cap) was at most the portion, under both
 *    methods (NSE circular 25/2026: retail may then bid at the floor); else PRICE_PRIORITY, the lowest price
 *    step 3 allotted, and PROPORTIONATE, its clearing price. PRICE_PRIORITY trades are at the bid's price;
 *    PROPORTIONATE ones at the cut-off, a reserved allotment below it at the reservation's clearing price.
 *
 * T+1 close:
 * - Retail: the retail reservation, plus what the non-retail portion left on T (SEBI's 2023 circular
 *   lets retail take it; Decision), to the retail bids by the method, a cut-off bid counting at the T-day
 *   cut-off. The retail cut-off is the clearing price when retail was oversubscribed, else the T-day
 *   cut-off. Trade price: UNIFORM, the T-day cut-off less the retail discount, whatever retail cleared at;
 *   BID, the bid's price (a cut-off bid: the T-day cut-off) less the discount. It may fall below the floor.
 * - Employees: at the T-day cut-off less the employee discount. Each employee first up to Rs 2,00,000
 *   (valued at the T-day cut-off, as the bids are placed and blocked; Decision), shared proportionately
 *   if even that is more than the portion; what is left proportionately to the employees who bid more,
 *   up to Rs 5,00,000 each. Shares left return to the seller (Decision).
 * - Unsubscribed retail shares go to the carried-forward non-retail bids (at or above the T-day cut-off)
 *   by price priority, each at its own price, within what the single-bidder cap still allows.
 * - Whatever nobody took returns to the seller.
 */
import { formatPrice } from '../issue/issue.js';
import {
  byPlacement,
  byPlacementThenTerms,
  compareStrings,
  sharePortion,
  shareProportionately,
  type PortionBid,
  type SharedPortion,
} from '../issue/allocation.js';
import {
  discountedPricePaise,
  isMfIc,
  isNonRetailCategory,
  OFFER_CATEGORIES,
  offerPortions,
  type OfferCategory,
  type OfferPortions,
  type OfferTerms,
} from './offer.js';
import { EMPLOYEE_FIRST_ROUND_PAISE, EMPLOYEE_LIMIT_PAISE } from './rules.js';

/** A live bid as the allocations read it. */
export interface OfferBid {
  orderId: string;
  /** The user: the single-bidder cap and the employee rounds count per bidder. */
  bidderId: string;
  category: OfferCategory;
  /** Integer paise; 0: a cut-off bid (retail or employee), valued at the T-day cut-off. */
  pricePaise: number;
  /** Shares bid; for a carried-forward bid, what it carried forward (its unallotted quantity). */
  quantity: number;
  placedSeq: number;
}

export interface OfferAllotment {
  orderId: string;
  allottedQuantity: number;
  /** The trade price in paise; null when nothing is allotted. */
  pricePaise: number | null;
  reason: string;
}

/** One step of an allocation: the shares it had, wanted, gave, and its clearing price. */
export interface StepSummary {
  portion: number;
  /** Exact: a sum of bids may pass 2^53. */
  demand: bigint;
  allotted: number;
  clearingPricePaise: number | null;
}

export interface TDayAllocation {
  portions: OfferPortions;
  /** The MF/IC reservation's step. */
  mfIc: StepSummary;
  /** The whole non-retail portion: demand after the cap, allotted over both steps. */
  nonRetail: StepSummary;
  cutoffPricePaise: number;
  /** Shares of the non-retail portion nobody was allotted on T. */
  unallotted: number;
  /** Shares allotted per bidder (the cap still counts them on T+1). */
  allottedByBidder: Map<string, number>;
  /** One per bid, in placement order. */
  allotments: OfferAllotment[];
}

export interface T1DayInput {
  /** The T-day cut-off price. */
  cutoffPricePaise: number;
  /** Shares of the non-retail portion left on T. */
  nonRetailUnallotted: number;
  /** Shares allotted on T per bidder. */
  tAllottedByBidder: ReadonlyMap<string, number>;
}

export interface T1DayAllocation {
  retail: StepSummary;
  /** The retail cut-off price (the UNIFORM retail price is it less the discount). */
  retailCutoffPricePaise: number;
  employee: StepSummary;
  /** The employees' trade price: the T-day cut-off less the employee discount. */
  employeePricePaise: number;
  /** Unsubscribed retail shares to carried-forward bids. */
  carriedForward: StepSummary;
  /** Shares nobody took: retail left after the carried-forward bids, and the employee portion's rest. */
  returnedToSeller: number;
  allotments: OfferAllotment[];
}

/** The T day's bids as the allocation takes them: the valid ones, each within the single-bidder cap. */
function tDayBook(offer: OfferTerms, bids: readonly OfferBid[]) {
  const portions = offerPortions(offer);
  const screened = screenBids(bids, (bid) => {
    if (!isNonRetailCategory(bid.category)) return `a ${bid.category} bid is not allotted on T`;
    if (bid.pricePaise < offer.floorPricePaise)
      return `price ${formatPrice(bid.pricePaise)} is below the floor price ${formatPrice(offer.floorPricePaise)}`;
    return null;
  });
  const { valid } = screened;
  return { portions, screened, valid, ...capToSingleBidder(valid, portions.singleBidderCap, new Map()) };
}

/**
 * The non-retail demand the T allocation would take: the valid bids, each bidder's within the single-bidder
 * cap, summed exactly. What the under-subscription wait judges (tAllocationWait): a bidder over the cap
 * does not make a short book look full.
 */
export function tDayDemand(offer: OfferTerms, bids: readonly OfferBid[]): bigint {
  const { eligible } = tDayBook(offer, bids);
  let demand = 0n;
  for (const quantity of eligible.values()) demand += quantity;
  return demand;
}

/** The T allocation of an offer's non-retail bids. */
export function allocateTDay(offer: OfferTerms, bids: readonly OfferBid[]): TDayAllocation {
  const { portions, screened, valid, eligible, trimmed } = tDayBook(offer, bids);
  const asPortionBid = (bid: OfferBid, quantity: bigint): PortionBid => ({
    orderId: bid.orderId,
    placedSeq: bid.placedSeq,
    quantity,
    pricePaise: bid.pricePaise,
    cutoff: false,
  });
  const book = valid.filter((bid) => eligible.get(bid.orderId)! > 0n);
  const portion = BigInt(portions.nonRetail);
  const demand = book.reduce((sum, bid) => sum + eligible.get(bid.orderId)!, 0n);

  // 1. The MF/IC reservation, first, from their bids at any valid price, by the method among them.
  const reserved = sharePortion(
    'MF/IC reserved',
    book.filter((bid) => isMfIc(bid.category)).map((bid) => asPortionBid(bid, eligible.get(bid.orderId)!)),
    min(BigInt(portions.mfIcReserved), portion),
    offer.allocation,
  );
  // 2. The rest of the portion to every bid for what it still wants, by the method: this step sets the price.
  const rest = sharePortion(
    'non-retail',
    book
      .map((bid) => asPortionBid(bid, eligible.get(bid.orderId)! - shareOf(reserved, bid.orderId)))
      .filter((b) => b.quantity > 0n),
    portion - reserved.allotted,
    offer.allocation,
  );

  // The T-day cut-off: the floor when non-retail was not oversubscribed (retail may then bid at the floor);
  // else the rest step's price (the lowest allotted, or the clearing price), which the reservation never lowers.
  const cutoffPricePaise =
    demand <= portion
      ? offer.floorPricePaise
      : (rest.clearingPricePaise ?? reserved.clearingPricePaise ?? offer.floorPricePaise);
  /** PROPORTIONATE: one price, the cut-off; a reserved allotment below it trades at the reservation's clearing price. */
  const priceOf = (bid: OfferBid): number => {
    if (offer.allocation === 'PRICE_PRIORITY') return bid.pricePaise;
    if (bid.pricePaise >= cutoffPricePaise) return cutoffPricePaise;
    return Math.min(reserved.clearingPricePaise ?? bid.pricePaise, bid.pricePaise);
  };

  const allottedByBidder = new Map<string, number>();
  let totalAllotted = 0n;
  const outcomeOf = (bid: OfferBid): OfferAllotment => {
    const quantity = shareOf(reserved, bid.orderId) + shareOf(rest, bid.orderId);
    totalAllotted += quantity;
    allottedByBidder.set(bid.bidderId, (allottedByBidder.get(bid.bidderId) ?? 0) + Number(quantity));
    const capNote = trimmedNote(trimmed.get(bid.orderId), portions.singleBidderCap);
    if (quantity === 0n) {
      return {
        orderId: bid.orderId,
        allottedQuantity: 0,
        pricePaise: null,
        reason: `not allotted on T: ${whyNot(reserved, rest, bid.orderId, capNote)}${capNote}`,
      };
    }
    const price = priceOf(bid);
    const how = [howOf(reserved, bid.orderId, 'MF/IC reservation'), howOf(rest, bid.orderId, 'non-retail portion')]
      .filter((h) => h !== '')
      .join('; ');
    return {
      orderId: bid.orderId,
      allottedQuantity: Number(quantity),
      pricePaise: price,
      reason: `allotted ${quantity} of ${bid.quantity} on T at ${formatPrice(price)} (${how})${capNote}`,
    };
  };
  const allotments = inPlacementOrder(screened, 'T', outcomeOf);
  return {
    portions,
    mfIc: summary(reserved, BigInt(portions.mfIcReserved)),
    nonRetail: {
      portion: portions.nonRetail,
      demand,
      allotted: Number(totalAllotted),
      clearingPricePaise: cutoffPricePaise,
    },
    cutoffPricePaise,
    unallotted: portions.nonRetail - Number(totalAllotted),
    allottedByBidder,
    allotments,
  };
}

/** The T+1 allocation: retail, employees and the carried-forward bids. */
export function allocateT1Day(offer: OfferTerms, input: T1DayInput, bids: readonly OfferBid[]): T1DayAllocation {
  const portions = offerPortions(offer);
  const cutoff = input.cutoffPricePaise;
  // The offer's own figure, not a bid's: an offer without one cannot be allotted (the OMS sets it aside).
  if (!Number.isSafeInteger(cutoff) || cutoff < 1)
    throw new RangeError(`the T-day cut-off price ${cutoff} is not a whole number of paise above 0`);
  const screened = screenBids(bids, (bid) => {
    if (bid.category === 'EMPLOYEE' && bid.pricePaise !== 0) return 'an employee bid is a cut-off bid';
    if (isNonRetailCategory(bid.category) && bid.pricePaise < cutoff) {
      return `a carried-forward bid at ${formatPrice(bid.pricePaise)} is below the T-day cut-off ${formatPrice(cutoff)}`;
    }
    if (bid.category === 'RETAIL' && bid.pricePaise !== 0 && bid.pricePaise < cutoff) {
      return `a retail bid at ${formatPrice(bid.pricePaise)} is below the T-day cut-off ${formatPrice(cutoff)}`;
    }
    return null;
  });
  const sorted = screened.valid;
  const allotments = new Map<string, OfferAllotment>();

  // Retail.
  const retailBids = sorted.filter((bid) => bid.category === 'RETAIL');
  const retailPortion = BigInt(portions.retailReserved + input.nonRetailUnallotted);
  const valued = (bid: OfferBid) => (bid.pricePaise === 0 ? cutoff : bid.pricePaise);
  const retail = sharePortion(
    'retail',
    retailBids.map((bid) => ({
      orderId: bid.orderId,
      placedSeq: bid.placedSeq,
      quantity: BigInt(bid.quantity),
      pricePaise: valued(bid),
      cutoff: bid.pricePaise === 0,
    })),
    retailPortion,
    offer.allocation,
  );
  const retailCutoffPricePaise = retail.demand > retailPortion ? (retail.clearingPricePaise ?? cutoff) : cutoff;
  for (const bid of retailBids) {
    const share = retail.shares.get(bid.orderId)!;
    // UNIFORM: the T-day cut-off, whatever retail cleared at (the published offers charged exactly that).
    const before = offer.retailAllocationPrice === 'UNIFORM' ? cutoff : valued(bid);
    const price = discountedPricePaise(before, offer.retailDiscount);
    allotments.set(
      bid.orderId,
      outcome(
        bid,
        share.quantity,
        price,
        `retail; ${share.how}; ${offer.retailAllocationPrice} price ${formatPrice(before)} less the discount`,
        share.how,
      ),
    );
  }

  // Employees.
  const employeeBids = sorted.filter((bid) => bid.category === 'EMPLOYEE');
  const employeePricePaise = discountedPricePaise(cutoff, offer.employeeDiscount);
  const employee = allocateEmployees(employeeBids, BigInt(portions.employee), cutoff);
  for (const bid of employeeBids) {
    const quantity = employee.byOrder.get(bid.orderId)!;
    allotments.set(
      bid.orderId,
      outcome(
        bid,
        quantity,
        employeePricePaise,
        `employee; ${employee.how}; the T-day cut-off ${formatPrice(cutoff)} less the employee discount`,
        employee.how,
      ),
    );
  }

  // Unsubscribed retail shares to the carried-forward bids, within the single-bidder cap.
  const carried = sorted.filter((bid) => isNonRetailCategory(bid.category));
  const unsubscribedRetail = retailPortion - retail.allotted;
  const { eligible, trimmed } = capToSingleBidder(carried, portions.singleBidderCap, input.tAllottedByBidder);
  const spill = sharePortion(
    'unsubscribed retail',
    carried
      .map((bid) => ({
        orderId: bid.orderId,
        placedSeq: bid.placedSeq,
        quantity: eligible.get(bid.orderId)!,
        pricePaise: bid.pricePaise,
        cutoff: false,
      }))
      .filter((b) => b.quantity > 0n),
    unsubscribedRetail,
    'PRICE_PRIORITY',
  );
  for (const bid of carried) {
    const share = spill.shares.get(bid.orderId) ?? { quantity: 0n, how: 'over the single-bidder cap' };
    const capNote = trimmedNote(trimmed.get(bid.orderId), portions.singleBidderCap);
    allotments.set(
      bid.orderId,
      outcome(
        bid,
        share.quantity,
        bid.pricePaise,
        `carried forward; unsubscribed retail shares by price priority, ${share.how}${capNote}`,
        `${share.how}${capNote}`,
      ),
    );
  }

  const returnedToSeller = Number(unsubscribedRetail - spill.allotted) + portions.employee - Number(employee.allotted);
  return {
    retail: summary(retail, retailPortion),
    retailCutoffPricePaise,
    employee: {
      portion: portions.employee,
      demand: employee.demand,
      allotted: Number(employee.allotted),
      clearingPricePaise: employeeBids.length > 0 ? employeePricePaise : null,
    },
    employeePricePaise,
    carriedForward: summary(spill, unsubscribedRetail),
    returnedToSeller,
    allotments: inPlacementOrder(screened, 'T+1', (bid) => allotments.get(bid.orderId)!),
  };
}

interface EmployeeShares {
  demand: bigint;
  allotted: bigint;
  byOrder: Map<string, bigint>;
  how: string;
}

/**
 * The employee portion: every employee first up to Rs 2,00,000 at the T-day cut-off (proportionately
 * if even that is more than the portion), then what is left proportionately to those who bid more, up
 * to Rs 5,00,000 each. An employee's shares fill its bids in placement order.
 */
function allocateEmployees(bids: readonly OfferBid[], portion: bigint, cutoffPricePaise: number): EmployeeShares {
  const firstRoundShares = EMPLOYEE_FIRST_ROUND_PAISE / BigInt(cutoffPricePaise);
  const mostShares = EMPLOYEE_LIMIT_PAISE / BigInt(cutoffPricePaise);
  const employees = new Map<string, { orderId: string; placedSeq: number; quantity: bigint; bids: OfferBid[] }>();
  for (const bid of bids) {
    const e = employees.get(bid.bidderId) ?? {
      orderId: bid.bidderId,
      placedSeq: bid.placedSeq,
      quantity: 0n,
      bids: [],
    };
    e.quantity += BigInt(bid.quantity);
    e.bids.push(bid);
    employees.set(bid.bidderId, e);
  }
  const list = [...employees.values()];
  const wants = (e: (typeof list)[number]) => min(e.quantity, mostShares);
  const first = list.map((e) => ({
    orderId: e.orderId,
    placedSeq: e.placedSeq,
    quantity: min(wants(e), firstRoundShares),
    e,
  }));
  const firstDemand = first.reduce((sum, f) => sum + f.quantity, 0n);
  const demand = list.reduce((sum, e) => sum + e.quantity, 0n);
  const total = new Map<string, bigint>();
  let how: string;
  if (firstDemand >= portion) {
    const shares = firstDemand === 0n ? new Map() : shareProportionately(first, portion, firstDemand);
    for (const f of first) total.set(f.orderId, shares.get(f) ?? 0n);
    how = firstDemand === portion ? 'up to Rs 2,00,000 each' : 'the Rs 2,00,000 round shared proportionately';
  } else {
    const left = portion - firstDemand;
    const second = first
      .map((f) => ({ orderId: f.orderId, placedSeq: f.placedSeq, quantity: wants(f.e) - f.quantity }))
      .filter((s) => s.quantity > 0n);
    const secondDemand = second.reduce((sum, s) => sum + s.quantity, 0n);
    const shares =
      secondDemand <= left
        ? new Map(second.map((s) => [s, s.quantity]))
        : shareProportionately(second, left, secondDemand);
    for (const f of first) total.set(f.orderId, f.quantity);
    for (const [s, quantity] of shares) total.set(s.orderId, total.get(s.orderId)! + quantity);
    how =
      secondDemand <= left
        ? 'in full, the employee portion was not oversubscribed'
        : 'up to Rs 2,00,000 each, the rest proportionately up to Rs 5,00,000';
  }
  const byOrder = new Map<string, bigint>();
  let allotted = 0n;
  for (const e of list) {
    let left = total.get(e.orderId)!;
    allotted += left;
    for (const bid of e.bids) {
      const quantity = min(left, BigInt(bid.quantity));
      byOrder.set(bid.orderId, quantity);
      left -= quantity;
    }
  }
  return { demand, allotted, byOrder, how };
}

/**
 * The single-bidder cap: each bidder other than an MF or IC may be allotted at most `cap` shares over the
 * offer (`already`: what it was allotted before). Its bids count highest price first, then earliest;
 * the quantity over the cap is trimmed.
 */
function capToSingleBidder(
  bids: readonly OfferBid[],
  cap: number,
  already: ReadonlyMap<string, number>,
): { eligible: Map<string, bigint>; trimmed: Map<string, bigint> } {
  const eligible = new Map<string, bigint>();
  const trimmed = new Map<string, bigint>();
  const room = new Map<string, bigint>();
  const byPrice = [...bids].sort((a, b) =>
    a.pricePaise !== b.pricePaise ? b.pricePaise - a.pricePaise : byPlacement(a, b),
  );
  for (const bid of byPrice) {
    const quantity = BigInt(bid.quantity);
    if (isMfIc(bid.category)) {
      eligible.set(bid.orderId, quantity);
      continue;
    }
    const left = room.get(bid.bidderId) ?? positive(BigInt(cap) - BigInt(already.get(bid.bidderId) ?? 0));
    const take = min(left, quantity);
    room.set(bid.bidderId, left - take);
    eligible.set(bid.orderId, take);
    if (take < quantity) trimmed.set(bid.orderId, quantity - take);
  }
  return { eligible, trimmed };
}

function trimmedNote(trimmed: bigint | undefined, cap: number): string {
  return trimmed === undefined
    ? ''
    : `; ${trimmed} shares over the single-bidder cap of ${cap} shares were not considered`;
}

function whyNot(reserved: SharedPortion, rest: SharedPortion, orderId: string, capNote: string): string {
  const share = rest.shares.get(orderId) ?? reserved.shares.get(orderId);
  if (share !== undefined) return share.how;
  return capNote === '' ? 'nothing is left of the non-retail portion' : 'the whole bid is over the single-bidder cap';
}

function howOf(step: SharedPortion, orderId: string, name: string): string {
  const share = step.shares.get(orderId);
  return share !== undefined && share.quantity > 0n ? `${share.quantity} from the ${name}, ${share.how}` : '';
}

function shareOf(step: SharedPortion, orderId: string): bigint {
  return step.shares.get(orderId)?.quantity ?? 0n;
}

function outcome(bid: OfferBid, quantity: bigint, pricePaise: number, how: string, why: string): OfferAllotment {
  if (quantity === 0n)
    return { orderId: bid.orderId, allottedQuantity: 0, pricePaise: null, reason: `not allotted on T+1: ${why}` };
  return {
    orderId: bid.orderId,
    allottedQuantity: Number(quantity),
    pricePaise,
    reason: `allotted ${quantity} of ${bid.quantity} on T+1 at ${formatPrice(pricePaise)} (${how})`,
  };
}

function summary(step: SharedPortion, portion: bigint): StepSummary {
  return {
    portion: Number(portion),
    demand: step.demand,
    allotted: Number(step.allotted),
    clearingPricePaise: step.clearingPricePaise,
  };
}

/** The bids of an allocation in placement order, each with why it is set aside (null: it takes part). */
interface Screened {
  /** Every bid, sorted by byPlacementThenBidder: the order the allotments are answered in. */
  entries: { bid: OfferBid; why: string | null }[];
  /** The bids the allocation takes, in placement order, one per orderId. */
  valid: OfferBid[];
}

/**
 * The bids an allocation can take, in placement order, and the ones it sets aside with the reason (no
 * stored bid may stop an allocation: a bid no rule would have let live, such as one carried forward below
 * the T-day cut-off before that was refused, or a row made by hand, is left unallotted and says why).
 *
 * A bid set aside takes no part at all, not even its id: its own faults (bidProblem, then the day's
 * `refusal`) are judged first, and of the bids that could take part the first in placement order takes an
 * id and any later one is the repeat. A bad stored copy of a valid bid's id, wherever it is placed or
 * stands in the input, is set aside alone and the valid bid is allotted as without it. The bids are
 * sorted first, by a total order, so the answer does not depend on the order of the input.
 */
function screenBids(bids: readonly OfferBid[], refusal: (bid: OfferBid) => string | null): Screened {
  const taken = new Set<string>();
  const entries = [...bids].sort(byPlacementThenBidder).map((bid) => {
    const why =
      bidProblem(bid) ?? refusal(bid) ?? (taken.has(bid.orderId) ? `bid ${bid.orderId} appears more than once` : null);
    if (why === null) taken.add(bid.orderId);
    return { bid, why };
  });
  return { entries, valid: entries.filter((e) => e.why === null).map((e) => e.bid) };
}

/** byPlacementThenTerms (the allocation's: placedSeq, NaN last, orderId, then the terms), then the bidder. */
function byPlacementThenBidder(a: OfferBid, b: OfferBid): number {
  return byPlacementThenTerms(a, b) || compareStrings(a.bidderId, b.bidderId);
}

/** What makes a stored bid unreadable to any allocation, whatever the other bids: a quantity, price or place that is not a whole number, a category that is not one. */
function bidProblem(bid: OfferBid): string | null {
  if (!Number.isSafeInteger(bid.quantity) || bid.quantity < 1)
    return `quantity ${bid.quantity} is not a whole number of at least 1`;
  if (!Number.isSafeInteger(bid.pricePaise) || bid.pricePaise < 0)
    return `price ${bid.pricePaise} is not a whole number of paise`;
  if (!Number.isSafeInteger(bid.placedSeq)) return `its place in the book (${bid.placedSeq}) is not a whole number`;
  if (!(OFFER_CATEGORIES as readonly string[]).includes(bid.category))
    return `category ${JSON.stringify(bid.category)} is not a bid category`;
  return null;
}

/** The outcome of a bid an allocation set aside. */
function setAsideOutcome(bid: OfferBid, day: 'T' | 'T+1', why: string): OfferAllotment {
  return {
    orderId: bid.orderId,
    allottedQuantity: 0,
    pricePaise: null,
    reason: `not allotted on ${day}: set aside, ${why}`,
  };
}

/** Every bid's outcome in placement order (as screenBids sorted them), the set-aside ones with theirs. */
function inPlacementOrder(
  screened: Screened,
  day: 'T' | 'T+1',
  outcomeOf: (bid: OfferBid) => OfferAllotment,
): OfferAllotment[] {
  return screened.entries.map(({ bid, why }) => (why === null ? outcomeOf(bid) : setAsideOutcome(bid, day, why)));
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function positive(n: bigint): bigint {
  return n > 0n ? n : 0n;
}
