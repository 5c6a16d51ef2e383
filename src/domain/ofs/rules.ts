/**
 * The OFS market rules (product.md "OFS market rules"), each written once: the bidder categories and
 * their windows, the order types, the floor, the tick, the cut-off bids and the retail limit. Everything
 * that judges a bid uses them:
 * - the API's pre-trade checks (services/order-entry.ts), in the transaction that writes the order;
 * - the OMS's risk step and the simulated exchange (src/oms), which catch what changed since the API
 *   judged the bid: a window that closed before the OMS got to it, an issue re-imported with other prices;
 * - allocation (domain/ofs/issue/allocation.ts), which refuses a bid that no rule would have let live.
 * Plain functions over plain data. A rule answers Violations: the error kind and field the API answers
 * with, and a message that the OMS and the exchange also write into the order's history.
 */
import { Errors, type Violation } from '../errors.js';
import { formatPrice, rupeesToPaise, type OfsIssue } from './issue/issue.js';
import { isLiveStatus } from '../orders/status.js';

/** Which window a bidder bids in, whether it may bid at cut-off, and whether the retail limit applies. */
export const BIDDER_CATEGORIES = ['RETAIL', 'NON_RETAIL'] as const;
export type BidderCategory = (typeof BIDDER_CATEGORIES)[number];

export function isBidderCategory(value: string): value is BidderCategory {
  return value === 'RETAIL' || value === 'NON_RETAIL';
}

/** A bid at a price. */
export const LIMIT_ORDER_TYPE = 'RL';
/** A retail bid at the cut-off price (price 0): valued and traded at the issue's retail cut-off price. */
export const CUTOFF_ORDER_TYPE = 'RL-MKT';

/** What the rules read of a bid: its order type, quantity and price in paise (0 for a cut-off bid). */
export interface BidTerms {
  orderType: string;
  quantity: number;
  pricePaise: number;
}

/** The prices of an issue that the price rules read. */
export type IssuePrices = Pick<OfsIssue, 'floorPricePaise' | 'retailCutoffPricePaise'>;

/** Rs 2,00,000 in paise: a retail bidder's live bids in one OFS may total at most this, inclusive. */
export const RETAIL_LIMIT_PAISE = 20_000_000n;

const categoryName = (category: BidderCategory) => (category === 'RETAIL' ? 'retail' : 'non-retail');

/** The bidding window of a category: bids are taken while `opensAt <= now < closesAt`. */
export function categoryWindow(issue: OfsIssue, category: BidderCategory): { opensAt: number; closesAt: number } {
  return category === 'RETAIL'
    ? { opensAt: issue.retailOpensAt, closesAt: issue.retailClosesAt }
    : { opensAt: issue.nonRetailOpensAt, closesAt: issue.nonRetailClosesAt };
}

/** Bids, modifications and cancellations are taken only while the bidder's category window is open. */
export function windowViolations(issue: OfsIssue, category: BidderCategory, now: number): Violation[] {
  const { opensAt, closesAt } = categoryWindow(issue, category);
  const window = `The ${categoryName(category)} bidding window of ${issue.symbol} (${issue.exchange})`;
  if (now < opensAt) {
    return [
      {
        kind: Errors.OFS_WINDOW_NOT_OPEN,
        field: '',
        message: `${window} opens at ${formatInstant(opensAt)}; bids, modifications and cancellations are taken only while it is open`,
      },
    ];
  }
  if (now >= closesAt) {
    return [
      {
        kind: Errors.OFS_WINDOW_CLOSED,
        field: '',
        message: `${window} closed at ${formatInstant(closesAt)}; no more bids, modifications or cancellations are taken`,
      },
    ];
  }
  return [];
}

/** A bid is for a whole number of shares, at least one (the API's schema has already made sure of it). */
export function quantityViolations(bid: Pick<BidTerms, 'quantity'>): Violation[] {
  if (Number.isSafeInteger(bid.quantity) && bid.quantity >= 1) return [];
  return [
    {
      kind: Errors.OFS_QUANTITY,
      field: 'quantity',
      message: `quantity ${bid.quantity} is not a whole number of shares of at least 1`,
    },
  ];
}

/** A price (rupees, as sent) is a whole number of the issue's ticks. */
export function tickViolations(price: number, issue: Pick<OfsIssue, 'tickSizePaise'>): Violation[] {
  const paise = rupeesToPaise(price);
  if (paise !== null && paise % issue.tickSizePaise === 0) return [];
  return [
    {
      kind: Errors.OFS_PRICE_TICK,
      field: 'price',
      message: `price ${price} is not a multiple of the tick size ${issue.tickSizePaise / 100}`,
    },
  ];
}

/**
 * A bid is for at most the shares on sale (issue 47 row 3): `offered` is an issue's offer quantity or an
 * offer's base, green shoe and employee portion together. A larger bid could never be allotted in full,
 * and a 0 %-margin one, which cannot be cancelled, would set the cut-off for everyone.
 */
export function offeredQuantityViolations(quantity: number, offered: number, what: string): Violation[] {
  if (quantity <= offered) return [];
  return [
    {
      kind: Errors.OFS_QUANTITY_OVER_OFFER,
      field: 'quantity',
      message: `quantity ${quantity} is more than the ${offered} shares ${what} sells`,
    },
  ];
}

/**
 * A cut-off bid: only from a retail bidder, only once the retail cut-off price is set, and only while
 * that price is not below the floor (it is what the bid is valued and traded at).
 */
export function cutoffBidViolations(bid: BidTerms, issue: IssuePrices, category: BidderCategory): Violation[] {
  if (bid.orderType !== CUTOFF_ORDER_TYPE) return [];
  if (category !== 'RETAIL') {
    return [
      {
        kind: Errors.OFS_CUTOFF_NOT_RETAIL,
        field: 'order_type',
        message: `Only retail users may bid at the cut-off price (order_type RL-MKT); bid a price of at least the floor, ${formatPrice(issue.floorPricePaise)}, with order_type RL`,
      },
    ];
  }
  const cutoff = issue.retailCutoffPricePaise;
  if (cutoff === null) {
    return [
      {
        kind: Errors.OFS_CUTOFF_PRICE_UNKNOWN,
        field: 'order_type',
        message:
          'The retail cut-off price is not set yet, so cut-off bids (order_type RL-MKT) are not taken; bid a price with order_type RL',
      },
    ];
  }
  if (cutoff < issue.floorPricePaise) {
    return [
      {
        kind: Errors.OFS_BELOW_FLOOR,
        field: 'order_type',
        message: `The retail cut-off price ${formatPrice(cutoff)} is below the floor price ${formatPrice(issue.floorPricePaise)}, so cut-off bids are not taken; bid a price with order_type RL`,
      },
    ];
  }
  return [];
}

/** A price bid is at or above the issue's floor price. */
export function floorViolations(bid: BidTerms, issue: IssuePrices): Violation[] {
  if (bid.orderType === CUTOFF_ORDER_TYPE || bid.pricePaise >= issue.floorPricePaise) return [];
  return [
    {
      kind: Errors.OFS_BELOW_FLOOR,
      field: 'price',
      message: `price ${formatPrice(bid.pricePaise)} is below the floor price ${formatPrice(issue.floorPricePaise)}`,
    },
  ];
}

/** A retail price bid is at or above the retail cut-off price, once that is set. */
export function retailCutoffViolations(bid: BidTerms, issue: IssuePrices, category: BidderCategory): Violation[] {
  const cutoff = issue.retailCutoffPricePaise;
  if (bid.orderType === CUTOFF_ORDER_TYPE || category !== 'RETAIL' || cutoff === null || bid.pricePaise >= cutoff)
    return [];
  return [
    {
      kind: Errors.OFS_BELOW_RETAIL_CUTOFF,
      field: 'price',
      message: `price ${formatPrice(bid.pricePaise)} is below the retail cut-off price ${formatPrice(cutoff)}; bid at least ${formatPrice(cutoff)}, or bid at the cut-off price with order_type RL-MKT and price 0`,
    },
  ];
}

/** The price rules of a bid: cut-off bids, the floor, the retail cut-off. */
export function priceViolations(bid: BidTerms, issue: IssuePrices, category: BidderCategory): Violation[] {
  return [
    ...cutoffBidViolations(bid, issue, category),
    ...floorViolations(bid, issue),
    ...retailCutoffViolations(bid, issue, category),
  ];
}

/**
 * What allocation needs of a bid: a whole quantity, a valid cut-off bid, no price below the floor. Checked
 * again at close, since an issue can be re-imported with other prices after its bids were placed.
 */
export function allocationViolations(bid: BidTerms, issue: IssuePrices, category: BidderCategory): Violation[] {
  return [...quantityViolations(bid), ...cutoffBidViolations(bid, issue, category), ...floorViolations(bid, issue)];
}

/** The terms of a bid against its issue: quantity, price and tick (what the exchange checks of new terms). */
export function termsViolations(
  bid: BidTerms,
  issue: IssuePrices & Pick<OfsIssue, 'tickSizePaise'>,
  category: BidderCategory,
): Violation[] {
  return [
    ...quantityViolations(bid),
    ...priceViolations(bid, issue, category),
    ...tickViolations(bid.pricePaise / 100, issue),
  ];
}

/** What a bidder's live retail bids in one OFS issue amount to: running totals, kept with every order change. */
export interface ExposureAmounts {
  /** quantity x price summed over the live price bids (RL), in paise. */
  priceValuePaise: number;
  /** quantity summed over the live cut-off bids (RL-MKT), valued at the issue's retail cut-off price. */
  cutoffQuantity: number;
}

/**
 * The amounts of one issue with the prices of that issue that value its cut-off bids: the bidder's own, or
 * (`otherAccount`) those of another account under the bidder's PAN, which shares its retail limit.
 */
export interface IssueExposure extends ExposureAmounts, IssuePrices {
  otherAccount?: boolean;
}

/** Which live bids count towards the retail limit: those placed as retail bids. */
export function countsTowardRetailLimit(order: { category: string; status: string }): boolean {
  return order.category === 'RETAIL' && isLiveStatus(order.status);
}

/** What one bid adds to its issue's amounts (its terms as they are now). */
export function exposureOfBid(bid: BidTerms): ExposureAmounts {
  return bid.orderType === CUTOFF_ORDER_TYPE
    ? { priceValuePaise: 0, cutoffQuantity: bid.quantity }
    : { priceValuePaise: bid.quantity * bid.pricePaise, cutoffQuantity: 0 };
}

/**
 * The price a bid is valued at for the retail limit: its own price, or for a cut-off bid the retail
 * cut-off price of its issue. Should that be unset again, the floor price: the least the bid can cost.
 */
export function unitValuePaise(bid: BidTerms, issue: IssuePrices): bigint {
  if (bid.orderType !== CUTOFF_ORDER_TYPE) return BigInt(bid.pricePaise);
  return BigInt(issue.retailCutoffPricePaise ?? issue.floorPricePaise);
}

/** The value of a retail bidder's live bids in the issues of one OFS (cut-off bids at each issue's cut-off). */
export function exposureValuePaise(exposures: readonly IssueExposure[]): bigint {
  return exposures.reduce(
    (total, e) =>
      total +
      BigInt(e.priceValuePaise) +
      BigInt(e.cutoffQuantity) * BigInt(e.retailCutoffPricePaise ?? e.floorPricePaise),
    0n,
  );
}

/**
 * Who a refusal by the retail limit says holds the live bids counted `where`: the caller alone, or, when
 * live bids of another account under the caller's PAN are counted (the limit is per PAN, across accounts:
 * docs/design/member-data.md), the PAN's accounts.
 */
export function retailBidsHolder(where: string, shared: boolean): string {
  return shared
    ? `The live retail bids under your PAN in ${where}, yours and your other accounts',`
    : `Your live retail bids in ${where}`;
}

/**
 * A retail bidder's live bids in every registered issue of the symbol, on either exchange, plus this bid,
 * total at most Rs 2,00,000. `exposures` are the amounts of the bidder's other live bids, one per issue
 * of the symbol (for a modification: without the order being modified), and those of the other accounts
 * under the bidder's PAN. Non-retail bidders have no value cap here.
 */
export function retailLimitViolations(
  bid: BidTerms,
  issue: OfsIssue,
  category: BidderCategory,
  exposures: readonly IssueExposure[],
): Violation[] {
  if (category !== 'RETAIL') return [];
  const unit = unitValuePaise(bid, issue);
  const shared = exposures.some((e) => e.otherAccount === true && (e.priceValuePaise !== 0 || e.cutoffQuantity !== 0));
  return valueLimitViolations(
    Errors.OFS_RETAIL_LIMIT,
    RETAIL_LIMIT_PAISE,
    exposureValuePaise(exposures),
    bid.quantity,
    unit,
    (current, total, limit, most) =>
      `${retailBidsHolder(issue.symbol, shared)} total ${current}; with this bid they would total ${total}, over the retail limit of ${limit}. ` +
      `At ${bid.orderType === CUTOFF_ORDER_TYPE ? `the cut-off price ${formatPrice(unit)}` : formatPrice(unit)} you may bid for at most ${most} shares`,
  );
}

/**
 * A bid's value at `unitPaise` a share, on top of `currentPaise` (the bidder's other bids), against a limit:
 * the retail limit of an issue or an offer, the employees' limit of an offer. `describe` words the refusal
 * from the amounts (formatted) and the most shares that still fit.
 */
export function valueLimitViolations(
  kind: Violation['kind'],
  limitPaise: bigint,
  currentPaise: bigint,
  quantity: number,
  unitPaise: bigint,
  describe: (current: string, total: string, limit: string, most: bigint) => string,
): Violation[] {
  const total = currentPaise + BigInt(quantity) * unitPaise;
  if (total <= limitPaise) return [];
  const room = limitPaise > currentPaise ? limitPaise - currentPaise : 0n;
  const most = unitPaise > 0n ? room / unitPaise : 0n;
  return [
    {
      kind,
      field: 'quantity',
      message: describe(formatRupees(currentPaise), formatRupees(total), formatRupees(limitPaise), most),
    },
  ];
}

/** India Standard Time, UTC+05:30 all year (no daylight saving time). */
export const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;

/**
 * "2026-11-24 09:15 IST": India time, as a trader reads it in a message (issue 51: no UTC instant beside
 * it; a program reads the instants of the answers' fields). Seconds are shown when the instant has any.
 */
export function formatInstant(epochMs: number): string {
  const ist = new Date(epochMs + IST_OFFSET_MS).toISOString();
  const seconds = ist.slice(16, 19) === ':00' && ist.slice(19, 23) === '.000' ? '' : ist.slice(16, 19);
  return `${ist.slice(0, 10)} ${ist.slice(11, 16)}${seconds} IST`;
}

/** Paise as an amount in Indian grouping, "Rs 2,00,000.00". */
export function formatRupees(amount: number | bigint): string {
  const paise = BigInt(amount);
  if (paise < 0n) return `-${formatRupees(-paise)}`;
  const rupees = (paise / 100n).toString();
  const lastThree = rupees.slice(-3);
  const rest = rupees.slice(0, -3).replace(/\B(?=(\d{2})+$)/g, ',');
  return `Rs ${rest === '' ? lastThree : `${rest},${lastThree}`}.${(paise % 100n).toString().padStart(2, '0')}`;
}

/**
 * A bid's value is within its series' order value upper limit, as the exchange sets it for the offer
 * or the issue (NSE's `orderValueUpperLimit`; issue 47 row 3): quantity times price, a cut-off bid at the
 * cut-off (an offer's T-day cut-off, an issue's retail cut-off). `limitPaise` null: the series has none.
 */
export function orderValueViolations(
  limitPaise: number | null | undefined,
  terms: BidTerms,
  tCutoffPricePaise: number | null,
): Violation[] {
  if (limitPaise == null) return [];
  const unit = terms.orderType === CUTOFF_ORDER_TYPE ? tCutoffPricePaise : terms.pricePaise;
  if (unit === null) return [];
  return valueLimitViolations(
    Errors.OFS_ORDER_VALUE_LIMIT,
    BigInt(limitPaise),
    0n,
    terms.quantity,
    BigInt(unit),
    (_current, total, limit, most) =>
      `The bid's value ${total} is over the series' order value upper limit of ${limit}, as the exchange sets it for the offer; at ${formatPrice(unit)} you may bid for at most ${most} shares`,
  );
}
