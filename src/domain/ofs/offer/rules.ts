/**
 * The rules of a bid in an offer under the SEBI framework (shared/spec/ofs-framework.md, "Bidder
 * categories" and "The two days"; docs/design/ofs.md gives each rule's source): which category a bid is
 * in, on which day it is taken, what price it may carry, how far it may be revised, who may carry it
 * forward, and the employees' limit. Plain functions over plain data answering Violations, like
 * ofs-rules.ts (whose tick, floor and retail-limit arithmetic they share): order entry judges them in
 * its transaction, the OMS's risk step and the simulated exchange again when the bid reaches them.
 */
import { Errors, type Violation } from '../../errors.js';
import { formatPrice } from '../issue/issue.js';
import {
  biddingDay,
  isNonRetailCategory,
  offeredQuantity,
  seriesKeyOf,
  type MarginType,
  type Offer,
  type OfferCategory,
  type OfferListing,
  type OfferState,
  type UserCategory,
  ZERO_MARGIN_CATEGORIES,
} from './offer.js';
import {
  CUTOFF_ORDER_TYPE,
  formatInstant,
  formatRupees,
  offeredQuantityViolations,
  orderValueViolations,
  RETAIL_LIMIT_PAISE,
  retailBidsHolder,
  tickViolations,
  valueLimitViolations,
  type BidTerms,
} from '../rules.js';

/** Rs 5,00,000 in paise: an employee's bids in one offer, valued at the T-day cut-off, total at most this. */
export const EMPLOYEE_LIMIT_PAISE = 50_000_000n;
/** Rs 2,00,000 in paise: what every employee is allotted up to first, before the rest is shared. */
export const EMPLOYEE_FIRST_ROUND_PAISE = 20_000_000n;

/** What the rules read of the bidder: the operator's settings. */
export interface OfferBidder {
  category: UserCategory;
  /** For MF, IC and OTHS users: the margin their bids take (the operator sets it with the custodian arrangement). */
  marginType: MarginType;
  /** Registered by the operator as an eligible employee of this offer. */
  employeeOfOffer: boolean;
}

const categoryNames: Record<OfferCategory, string> = {
  RETAIL: 'retail',
  EMPLOYEE: 'employee',
  NII: 'non-institutional (NII)',
  MF: 'mutual fund (MF)',
  IC: 'insurance company (IC)',
  OTHS: 'other institutional (OTHS)',
};

export function describeCategory(category: OfferCategory): string {
  return categoryNames[category];
}

/** The listing's series as one phrase: `RS (retail), IS (non-retail), ES (employees)`. */
function describeSeries(listing: OfferListing): string {
  const parts = [`${listing.series.RETAIL} (retail)`, `${listing.series.NON_RETAIL} (non-retail)`];
  if (listing.series.EMPLOYEE !== null) parts.push(`${listing.series.EMPLOYEE} (employees)`);
  return parts.join(', ');
}

/**
 * The category of a bid: from the series it is sent in and the bidder's category. A series that is both
 * the retail and the non-retail series of a listing (one series for both) follows the bidder. An
 * employee bid needs the bidder registered for the offer; a registered employee may also bid as retail.
 */
export function bidCategory(
  listing: OfferListing,
  series: string,
  bidder: OfferBidder,
): { category: OfferCategory; violations: [] } | { category: null; violations: Violation[] } {
  const where = `on ${listing.exchange} (scrip_token ${listing.scripToken})`;
  const refuse = (kind: Violation['kind'], message: string) => ({
    category: null,
    violations: [{ kind, field: 'scrip_info.series', message }],
  });
  if (listing.series.EMPLOYEE !== null && series === listing.series.EMPLOYEE) {
    if (bidder.employeeOfOffer) return { category: 'EMPLOYEE', violations: [] };
    return refuse(
      Errors.OFS_EMPLOYEE_NOT_ELIGIBLE,
      `series "${series}" is the employee series of this offer ${where}, and you are not registered as an eligible employee of the offer; bid in series ${listing.series.RETAIL} as a retail bidder`,
    );
  }
  const retailSeries = series === listing.series.RETAIL;
  const nonRetailSeries = series === listing.series.NON_RETAIL;
  const isRetailBidder = bidder.category === 'RETAIL';
  if (retailSeries && isRetailBidder) return { category: 'RETAIL', violations: [] };
  if (nonRetailSeries && !isRetailBidder) return { category: bidder.category, violations: [] };
  // An individual may also bid on T in the non-retail series: a non-retail (NII) bid under the T-day
  // rules, outside its Rs 2 lakh retail limit (shared/spec/ofs-framework.md, "Bidder categories").
  if (nonRetailSeries && isRetailBidder) return { category: 'NII', violations: [] };
  if (retailSeries) {
    return refuse(
      Errors.OFS_SERIES_CATEGORY,
      `series "${series}" is the retail series ${where}; you are registered in the ${describeCategory(bidder.category)} category, whose series is ${listing.series.NON_RETAIL}`,
    );
  }
  return refuse(
    Errors.OFS_SERIES_CATEGORY,
    `series "${series}" is not a series of this offer ${where}; its series are ${describeSeries(listing)}`,
  );
}

/** The margin a bid takes: cash categories always H; institutions their own setting. */
export function bidMarginType(category: OfferCategory, bidder: Pick<OfferBidder, 'marginType'>): MarginType {
  return (ZERO_MARGIN_CATEGORIES as readonly string[]).includes(category) ? bidder.marginType : 'H';
}

/** What a bid asks to do, for the day rules. */
export type BidAction = 'place' | 'modify' | 'cancel';

const actionNames: Record<BidAction, string> = { place: 'bids', modify: 'modifications', cancel: 'cancellations' };

/**
 * Whether the offer takes this action from this category now. Non-retail bids are placed, modified and
 * cancelled during T; on T+1 only a carried-forward bid may be modified or cancelled, and fresh
 * non-retail bids are refused. Retail and employee bids are taken during T+1, once the T allocation has
 * fixed the cut-off. A cancelled offer takes nothing.
 */
export function offerDayViolations(
  offer: Pick<Offer, 'symbol' | 'tDay' | 't1Day'>,
  state: OfferState,
  category: OfferCategory,
  action: BidAction,
  carriedForward: boolean,
  now: number,
): Violation[] {
  const refuse = (kind: Violation['kind'], message: string): Violation[] => [{ kind, field: '', message }];
  if (state === 'CANCELLED') {
    return refuse(
      Errors.OFS_OFFER_CANCELLED,
      `The offer of ${offer.symbol} was cancelled; it takes no bids, modifications or cancellations`,
    );
  }
  const what = actionNames[action];
  const name = describeCategory(category);
  const inT1 = offer.t1Day.opensAt <= now && now < offer.t1Day.closesAt;
  if (biddingDay(category) === 'T') {
    if (now < offer.tDay.opensAt) {
      return refuse(
        Errors.OFS_WINDOW_NOT_OPEN,
        `The T-day session of ${offer.symbol} opens at ${formatInstant(offer.tDay.opensAt)}; ${name} ${what} are taken from then`,
      );
    }
    if (now < offer.tDay.closesAt && state === 'T_OPEN') return [];
    if (inT1 && state === 'T1_OPEN') {
      if (action === 'place') {
        return refuse(
          Errors.OFS_NON_RETAIL_ON_T1,
          `Fresh non-retail bids in ${offer.symbol} were taken on T, until ${formatInstant(offer.tDay.closesAt)}; on T+1 carry forward an unallotted bid and revise it`,
        );
      }
      if (!carriedForward) {
        return refuse(
          Errors.OFS_NOT_CARRIED_FORWARD,
          `On T+1 a non-retail bid may be modified or cancelled only once it is carried forward; carry it forward first`,
        );
      }
      return [];
    }
    if (now >= offer.t1Day.closesAt || state === 'ALLOCATED') {
      return refuse(
        Errors.OFS_WINDOW_CLOSED,
        `The T+1 session of ${offer.symbol} closed at ${formatInstant(offer.t1Day.closesAt)}; no more ${name} ${what} are taken`,
      );
    }
    return refuse(
      Errors.OFS_WINDOW_CLOSED,
      `The T-day session of ${offer.symbol} closed at ${formatInstant(offer.tDay.closesAt)}; no more ${name} ${what} are taken. ` +
        `An unallotted bid may be carried forward during T+1, from ${formatInstant(offer.t1Day.opensAt)}, once the T allocation has run`,
    );
  }
  if (now >= offer.t1Day.closesAt || state === 'ALLOCATED') {
    return refuse(
      Errors.OFS_WINDOW_CLOSED,
      `The T+1 session of ${offer.symbol} closed at ${formatInstant(offer.t1Day.closesAt)}; no more ${name} ${what} are taken`,
    );
  }
  if (!inT1 || state !== 'T1_OPEN') {
    const after =
      state === 'T_OPEN' && now >= offer.tDay.closesAt
        ? ', after the T allocation has fixed the cut-off price (it has not run yet)'
        : '';
    return refuse(
      Errors.OFS_WINDOW_NOT_OPEN,
      `${capitalise(name)} bids in ${offer.symbol} are taken on T+1, from ${formatInstant(offer.t1Day.opensAt)}${after}`,
    );
  }
  return [];
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The price of a bid by category. Non-retail: a price at or above the floor, never a cut-off bid; once
 * carried forward, at or above the T-day cut-off. Retail: a price at or above the T-day cut-off, or a
 * cut-off bid. Employees: a cut-off bid only. (The tick is ofs-rules.ts's tickViolations.)
 */
export function offerPriceViolations(
  bid: BidTerms,
  offer: Pick<Offer, 'floorPricePaise'>,
  category: OfferCategory,
  tCutoffPricePaise: number | null,
  carriedForward: boolean,
): Violation[] {
  const cutoffBid = bid.orderType === CUTOFF_ORDER_TYPE;
  if (category === 'EMPLOYEE') {
    if (cutoffBid) return [];
    return [
      {
        kind: Errors.OFS_EMPLOYEE_CUTOFF_ONLY,
        field: 'order_type',
        message: 'Employee bids are cut-off bids only: send order_type RL-MKT with price 0',
      },
    ];
  }
  if (category === 'RETAIL') {
    if (cutoffBid || tCutoffPricePaise === null || bid.pricePaise >= tCutoffPricePaise) return [];
    return [
      {
        kind: Errors.OFS_BELOW_RETAIL_CUTOFF,
        field: 'price',
        message: `price ${formatPrice(bid.pricePaise)} is below the T-day cut-off price ${formatPrice(tCutoffPricePaise)}; bid at least ${formatPrice(tCutoffPricePaise)}, or bid at the cut-off price with order_type RL-MKT and price 0`,
      },
    ];
  }
  if (cutoffBid) {
    return [
      {
        kind: Errors.OFS_CUTOFF_NOT_RETAIL,
        field: 'order_type',
        message: `Only retail and employee bids may be cut-off bids (order_type RL-MKT); bid a price of at least ${formatPrice(tCutoffPricePaise !== null && carriedForward ? tCutoffPricePaise : offer.floorPricePaise)} with order_type RL`,
      },
    ];
  }
  if (bid.pricePaise < offer.floorPricePaise) {
    return [
      {
        kind: Errors.OFS_BELOW_FLOOR,
        field: 'price',
        message: `price ${formatPrice(bid.pricePaise)} is below the floor price ${formatPrice(offer.floorPricePaise)}`,
      },
    ];
  }
  if (carriedForward && tCutoffPricePaise !== null && bid.pricePaise < tCutoffPricePaise) {
    return [
      {
        kind: Errors.OFS_BELOW_T_CUTOFF,
        field: 'price',
        message: `price ${formatPrice(bid.pricePaise)} is below the T-day cut-off price ${formatPrice(tCutoffPricePaise)}; a carried-forward bid may be revised to ${formatPrice(tCutoffPricePaise)} or more`,
      },
    ];
  }
  return [];
}

/** A 0 %-margin bid may be revised upward only: neither its price nor its quantity may fall. */
export function marginRevisionViolations(
  marginType: MarginType,
  previous: Pick<BidTerms, 'quantity' | 'pricePaise'>,
  next: Pick<BidTerms, 'quantity' | 'pricePaise'>,
): Violation[] {
  if (marginType !== 'T') return [];
  const violations: Violation[] = [];
  if (next.pricePaise < previous.pricePaise) {
    violations.push({
      kind: Errors.OFS_MARGIN_T_UPWARD_ONLY,
      field: 'price',
      message: `A 0 %-margin (T) bid may only be revised upward: price ${formatPrice(next.pricePaise)} is below its current ${formatPrice(previous.pricePaise)}`,
    });
  }
  if (next.quantity < previous.quantity) {
    violations.push({
      kind: Errors.OFS_MARGIN_T_UPWARD_ONLY,
      field: 'quantity',
      message: `A 0 %-margin (T) bid may only be revised upward: quantity ${next.quantity} is below its current ${previous.quantity}`,
    });
  }
  return violations;
}

/** A 0 %-margin bid may not be cancelled. */
export function marginCancelViolations(marginType: MarginType): Violation[] {
  if (marginType !== 'T') return [];
  return [
    {
      kind: Errors.OFS_MARGIN_T_NO_CANCEL,
      field: '',
      message: 'A 0 %-margin (T) bid may not be cancelled; it may only be revised upward',
    },
  ];
}

/** What carry-forward reads of a bid. */
export interface CarriedBid {
  category: OfferCategory;
  /** Live: not executed, cancelled or rejected. */
  live: boolean;
  /** Shares bid and not allotted on T. */
  unallottedQuantity: number;
  /**
   * The price it would stand at on T+1: its own, or the one a revision sent with the carry-forward gives it;
   * null when the revision's is no whole number of paise (the tick refuses it, revisionViolations).
   */
  pricePaise: number | null;
}

/**
 * A non-retail bid is carried forward by an explicit act during T+1, once the T allocation has run, for
 * its unallotted quantity, at a price at or above the T-day cut-off: a bid priced below it is carried
 * forward only with a revision to at least the cut-off (NSE takes a carry-forward with the bid's new
 * terms). Carrying forward a bid already carried forward is not a violation (the call is idempotent).
 */
export function carryForwardViolations(
  offer: Pick<Offer, 'symbol' | 't1Day'>,
  state: OfferState,
  bid: CarriedBid,
  tCutoffPricePaise: number | null,
  now: number,
): Violation[] {
  const refuse = (message: string): Violation[] => [{ kind: Errors.OFS_CARRY_FORWARD_NOT_ALLOWED, field: '', message }];
  if (state === 'CANCELLED')
    return [{ kind: Errors.OFS_OFFER_CANCELLED, field: '', message: `The offer of ${offer.symbol} was cancelled` }];
  if (!isNonRetailCategory(bid.category))
    return refuse(`Only non-retail bids are carried forward; this is a ${describeCategory(bid.category)} bid`);
  if (!bid.live || bid.unallottedQuantity <= 0)
    return refuse('The bid has nothing left to carry forward: it was allotted in full, or it is cancelled or rejected');
  if (state !== 'T1_OPEN' || now < offer.t1Day.opensAt || now >= offer.t1Day.closesAt) {
    return refuse(
      `Bids are carried forward during T+1, from ${formatInstant(offer.t1Day.opensAt)} until ${formatInstant(offer.t1Day.closesAt)}, once the T allocation has run`,
    );
  }
  if (tCutoffPricePaise !== null && bid.pricePaise !== null && bid.pricePaise < tCutoffPricePaise) {
    const cutoff = formatPrice(tCutoffPricePaise);
    return [
      {
        kind: Errors.OFS_BELOW_T_CUTOFF,
        field: 'price',
        message: `The bid's price ${formatPrice(bid.pricePaise)} is below the T-day cut-off price ${cutoff}: a carried-forward bid must stand at or above it. Carry it forward with a revised price of at least ${cutoff} (body {"price": ${cutoff}})`,
      },
    ];
  }
  return [];
}

/**
 * A retail bidder's bids in the offer, on every listing, total at most Rs 2,00,000: price bids at their
 * price, cut-off bids at the T-day cut-off. `currentPaise` values the bidder's other live retail bids and
 * those of the other accounts under its PAN (`shared`: some of theirs are counted).
 */
export function offerRetailLimitViolations(
  symbol: string,
  bid: BidTerms,
  tCutoffPricePaise: number,
  currentPaise: bigint,
  shared = false,
): Violation[] {
  const cutoffBid = bid.orderType === CUTOFF_ORDER_TYPE;
  const unit = BigInt(cutoffBid ? tCutoffPricePaise : bid.pricePaise);
  return valueLimitViolations(
    Errors.OFS_RETAIL_LIMIT,
    RETAIL_LIMIT_PAISE,
    currentPaise,
    bid.quantity,
    unit,
    (current, total, limit, most) =>
      `${retailBidsHolder(`the offer of ${symbol}`, shared)} total ${current}; with this bid they would total ${total}, over the retail limit of ${limit}. ` +
      `At ${cutoffBid ? `the cut-off price ${formatPrice(unit)}` : formatPrice(unit)} you may bid for at most ${most} shares`,
  );
}

/** An employee's bids in the offer, valued at the T-day cut-off, total at most Rs 5,00,000. */
export function employeeLimitViolations(
  symbol: string,
  quantity: number,
  tCutoffPricePaise: number,
  otherQuantity: number,
): Violation[] {
  const unit = BigInt(tCutoffPricePaise);
  return valueLimitViolations(
    Errors.OFS_EMPLOYEE_LIMIT,
    EMPLOYEE_LIMIT_PAISE,
    BigInt(otherQuantity) * unit,
    quantity,
    unit,
    (current, total, limit, most) =>
      `Your live employee bids in the offer of ${symbol} total ${current} at the T-day cut-off price ${formatPrice(unit)}; with this bid they would total ${total}, ` +
      `over the employee limit of ${limit}. You may bid for at most ${most} more shares`,
  );
}

/** Where an offer stands when a bid is judged: its terms, its state, and the T-day cut-off once found. */
export interface OfferContext {
  offer: Offer;
  state: OfferState;
  tCutoffPricePaise: number | null;
}

/**
 * One of the bidder's other live bids in the offer, for its limits, or (`otherAccount`) a live retail bid
 * of another account under the bidder's PAN, which shares its retail limit.
 */
export interface OtherOfferBid extends BidTerms {
  category: OfferCategory;
  otherAccount?: boolean;
}

/**
 * The bidder's retail limit and employee limit over its other live bids in the offer (on every listing):
 * a retail bid counts the other retail bids (the other accounts' under its PAN too), an employee bid the
 * bidder's own other employee bids.
 */
function offerLimitViolations(
  context: OfferContext,
  category: OfferCategory,
  bid: BidTerms,
  others: readonly OtherOfferBid[],
): Violation[] {
  const cutoff = context.tCutoffPricePaise;
  // Both categories bid on T+1 only, when the cut-off is known: the day rules refused them before.
  if (cutoff === null) return [];
  const same = others.filter((other) => other.category === category);
  if (category === 'RETAIL') {
    const current = same.reduce(
      (sum, other) =>
        sum + BigInt(other.quantity) * BigInt(other.orderType === CUTOFF_ORDER_TYPE ? cutoff : other.pricePaise),
      0n,
    );
    const shared = same.some((other) => other.otherAccount === true);
    return offerRetailLimitViolations(context.offer.symbol, bid, cutoff, current, shared);
  }
  if (category === 'EMPLOYEE') {
    return employeeLimitViolations(
      context.offer.symbol,
      bid.quantity,
      cutoff,
      same.reduce((sum, other) => sum + (other.otherAccount === true ? 0 : other.quantity), 0),
    );
  }
  return [];
}

/** The order value upper limit of the series a bid of `category` on `listing` is sent in; null: none. */
export function seriesValueLimit(listing: OfferListing | undefined, category: OfferCategory): number | null {
  return listing?.valueLimitsPaise?.[seriesKeyOf(category)] ?? null;
}

/**
 * A client's 0 %-margin standing (issue 47 row 3): the limit the operator set with the custodian
 * arrangement (null: none set, and no 0 %-margin bid is taken), and the client's live 0 %-margin bids in
 * every offer, valued at their prices.
 */
export interface ZeroMarginExposure {
  limitPaise: bigint | null;
  openPaise: bigint;
}

/** What a live 0 %-margin bid counts against its client's limit: its open quantity at its price. */
export function zeroMarginValuePaise(bid: { quantity: number; tradedQuantity: number; pricePaise: number }): bigint {
  return BigInt(Math.max(0, bid.quantity - bid.tradedQuantity)) * BigInt(bid.pricePaise);
}

/**
 * A 0 %-margin bid, new or raised, keeps its client's 0 %-margin bids within the limit the operator set:
 * `otherPaise` values the client's other such bids, live or allotted and not settled (the custodian pays
 * at settlement), `bidPaise` this one as it would stand. Such bids
 * block no funds and cannot be cancelled or lowered: the limit is what the custodian stands behind.
 */
export function zeroMarginLimitViolations(
  exposure: ZeroMarginExposure | undefined,
  otherPaise: bigint,
  bidPaise: bigint,
): Violation[] {
  const limit = exposure?.limitPaise ?? null;
  if (limit === null) {
    return [
      {
        kind: Errors.OFS_ZERO_MARGIN_LIMIT,
        field: 'price',
        message:
          'No 0 % margin limit is set for you: the operator sets it with your custodian arrangement (ordergate users zero-margin-limit); until then no 0 %-margin bid is taken',
      },
    ];
  }
  const total = otherPaise + bidPaise;
  if (total <= limit) return [];
  const left = limit > otherPaise ? limit - otherPaise : 0n;
  return [
    {
      kind: Errors.OFS_ZERO_MARGIN_LIMIT,
      field: 'quantity',
      message: `Your 0 %-margin bids, live or allotted and not settled, total ${formatRupees(otherPaise)}; with this bid they would total ${formatRupees(total)}, over your 0 % margin limit of ${formatRupees(limit)} (${formatRupees(left)} left)`,
    },
  ];
}

/** What a new bid in an offer names: the instrument's symbol and series, its price as sent, its terms. */
export interface OfferBidRequest {
  symbol: string;
  series: string;
  /** The price as sent, in rupees (the tick is checked on it). */
  price: number;
  terms: BidTerms;
}

/**
 * A new bid on a listing of an offer: its category (from the series and the bidder), its margin type, or
 * the rules it breaks, in the order a bidder fixes them: the instrument, the category, the day, the tick,
 * the price, the limits.
 */
export function offerPlacementViolations(
  context: OfferContext,
  listing: OfferListing,
  bidder: OfferBidder,
  request: OfferBidRequest,
  others: readonly OtherOfferBid[],
  now: number,
):
  | { category: OfferCategory; marginType: MarginType; violations: Violation[] }
  | { category: null; violations: Violation[] } {
  const { offer } = context;
  if (request.symbol !== offer.symbol) {
    return {
      category: null,
      violations: [
        {
          kind: Errors.OFS_SCRIP_MISMATCH,
          field: 'scrip_info.symbol',
          message: `symbol "${request.symbol}" does not match the offer's symbol "${offer.symbol}"`,
        },
      ],
    };
  }
  const judged = bidCategory(listing, request.series, bidder);
  if (judged.category === null) return judged;
  const { category } = judged;
  const violations = [
    ...offerDayViolations(offer, context.state, category, 'place', false, now),
    ...tickViolations(request.price, offer),
    ...offeredQuantityViolations(request.terms.quantity, offeredQuantity(offer), `the offer of ${offer.symbol}`),
  ];
  if (violations.length === 0)
    violations.push(...offerPriceViolations(request.terms, offer, category, context.tCutoffPricePaise, false));
  if (violations.length === 0) {
    violations.push(
      ...orderValueViolations(seriesValueLimit(listing, category), request.terms, context.tCutoffPricePaise),
    );
    violations.push(...offerLimitViolations(context, category, request.terms, others));
  }
  return { category, marginType: bidMarginType(category, bidder), violations };
}

/** What a change of a live bid in an offer reads of it. */
export interface LiveOfferBid extends BidTerms {
  category: OfferCategory;
  marginType: MarginType;
  carriedForward: boolean;
  /** Shares allotted on T (a partly allotted non-retail bid stays live). */
  tradedQuantity: number;
  /** Its series' order value upper limit (seriesValueLimit); null or absent: none. */
  valueLimitPaise?: number | null;
}

/**
 * New terms for a live bid in an offer: the day (a non-retail bid on T, or once carried forward on T+1;
 * retail and employees on T+1), the tick, the price (a carried-forward bid at or above the T-day
 * cut-off), 0 %-margin bids upward only, a partly allotted bid above what it was allotted, the limits.
 */
export function offerModificationViolations(
  context: OfferContext,
  bid: LiveOfferBid,
  price: number,
  terms: BidTerms,
  others: readonly OtherOfferBid[],
  now: number,
): Violation[] {
  const day = offerDayViolations(context.offer, context.state, bid.category, 'modify', bid.carriedForward, now);
  if (day.length > 0) return [...day, ...tickViolations(price, context.offer)];
  const violations = revisionViolations(context, bid, price, terms);
  if (violations.length === 0) violations.push(...offerLimitViolations(context, bid.category, terms, others));
  return violations;
}

/**
 * New terms for a live bid, whatever the day lets: the tick, the price (once carried forward at or above
 * the T-day cut-off), 0 %-margin bids upward only, a partly allotted bid above what it was allotted. A
 * modification and a carry-forward with a revision both keep them.
 */
export function revisionViolations(
  context: OfferContext,
  bid: LiveOfferBid,
  price: number,
  terms: BidTerms,
): Violation[] {
  const { offer } = context;
  const violations = [
    ...tickViolations(price, offer),
    ...offeredQuantityViolations(terms.quantity, offeredQuantity(offer), `the offer of ${offer.symbol}`),
  ];
  if (violations.length > 0) return violations;
  violations.push(...offerPriceViolations(terms, offer, bid.category, context.tCutoffPricePaise, bid.carriedForward));
  violations.push(...marginRevisionViolations(bid.marginType, bid, terms));
  violations.push(...orderValueViolations(bid.valueLimitPaise, terms, context.tCutoffPricePaise));
  if (terms.quantity <= bid.tradedQuantity) {
    violations.push({
      kind: Errors.OFS_QUANTITY_BELOW_ALLOTTED,
      field: 'quantity',
      message: `quantity ${terms.quantity} is not above the ${bid.tradedQuantity} shares the bid was allotted on T; send the allotted quantity plus what you carry forward`,
    });
  }
  return violations;
}

/** Cancelling a live bid in an offer: the day rules, and never a 0 %-margin bid. */
export function offerCancellationViolations(
  context: OfferContext,
  bid: Pick<LiveOfferBid, 'category' | 'marginType' | 'carriedForward'>,
  now: number,
): Violation[] {
  const day = offerDayViolations(context.offer, context.state, bid.category, 'cancel', bid.carriedForward, now);
  return day.length > 0 ? day : marginCancelViolations(bid.marginType);
}
