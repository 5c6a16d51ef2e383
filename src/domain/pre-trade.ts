/**
 * Pre-trade checks: the OFS market rules a bid must keep against its issue, the bidder's category and the
 * bidder's other live bids (product.md "OFS market rules"). Plain functions over plain data; the
 * order-entry service runs them inside the transaction that writes the order, so that what they read is
 * what the write is judged on.
 */
import type { BidCategory } from './allocation.js';
import { Errors, type Violation } from './errors.js';
import { CUTOFF_ORDER_TYPE } from './ofs-bid.js';
import { isLiveStatus } from './order-status.js';
import { categoryWindow, formatPrice, type OfsIssue } from './ofs-issue.js';

/** Rs 2,00,000 in paise: a retail bidder's live bids in one OFS may total at most this, inclusive. */
export const RETAIL_LIMIT_PAISE = 20_000_000n;

/** What the market rules read of a bid: its order type, quantity and price in paise (0 for cut-off). */
export interface BidTerms {
  orderType: string;
  quantity: number;
  pricePaise: number;
}

/** What a bidder's live retail bids in one OFS issue amount to: running totals, kept with every order change. */
export interface ExposureAmounts {
  /** quantity x price summed over the live price bids (RL), in paise. */
  priceValuePaise: number;
  /** quantity summed over the live cut-off bids (RL-MKT), valued at the issue's retail cut-off price. */
  cutoffQuantity: number;
}

/** The amounts of one issue with the prices of that issue that value its cut-off bids. */
export interface IssueExposure extends ExposureAmounts {
  retailCutoffPricePaise: number | null;
  floorPricePaise: number;
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

const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;

/** "2026-11-24 09:15 IST (2026-11-24T03:45:00.000Z)": Indian time for the trader, ISO for the program. */
export function formatInstant(epochMs: number): string {
  const ist = new Date(epochMs + IST_OFFSET_MS).toISOString();
  const seconds = ist.slice(16, 19) === ':00' && ist.slice(19, 23) === '.000' ? '' : ist.slice(16, 19);
  return `${ist.slice(0, 10)} ${ist.slice(11, 16)}${seconds} IST (${new Date(epochMs).toISOString()})`;
}

/** Paise as an amount in Indian grouping, "Rs 2,00,000.00". */
export function formatRupees(paise: bigint): string {
  const rupees = (paise / 100n).toString();
  const lastThree = rupees.slice(-3);
  const rest = rupees.slice(0, -3).replace(/\B(?=(\d{2})+$)/g, ',');
  return `Rs ${rest === '' ? lastThree : `${rest},${lastThree}`}.${(paise % 100n).toString().padStart(2, '0')}`;
}

const categoryName = (category: BidCategory) => (category === 'RETAIL' ? 'retail' : 'non-retail');

/** Bids, modifications and cancellations are taken only while the bidder's category window is open. */
export function windowViolations(issue: OfsIssue, category: BidCategory, now: number): Violation[] {
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

/**
 * The price rules: only retail bidders may bid at cut-off, and only once the retail cut-off price is set;
 * a price bid is at or above the floor, and a retail one at or above the retail cut-off when it is set.
 */
export function priceViolations(bid: BidTerms, issue: OfsIssue, category: BidCategory): Violation[] {
  const instrument = `${issue.symbol} (${issue.exchange})`;
  if (bid.orderType === CUTOFF_ORDER_TYPE) {
    if (category !== 'RETAIL') {
      return [
        {
          kind: Errors.OFS_CUTOFF_NOT_RETAIL,
          field: 'order_type',
          message: `Only retail users may bid at the cut-off price (order_type RL-MKT); bid a price of at least the floor, ${formatPrice(issue.floorPricePaise)}, with order_type RL`,
        },
      ];
    }
    if (issue.retailCutoffPricePaise === null) {
      return [
        {
          kind: Errors.OFS_CUTOFF_PRICE_UNKNOWN,
          field: 'order_type',
          message: `The retail cut-off price of ${instrument} is not set yet, so cut-off bids (order_type RL-MKT) are not taken; bid a price with order_type RL`,
        },
      ];
    }
    return [];
  }
  const violations: Violation[] = [];
  if (bid.pricePaise < issue.floorPricePaise) {
    violations.push({
      kind: Errors.OFS_BELOW_FLOOR,
      field: 'price',
      message: `price ${formatPrice(bid.pricePaise)} is below the floor price ${formatPrice(issue.floorPricePaise)} of ${instrument}`,
    });
  }
  const cutoff = issue.retailCutoffPricePaise;
  if (category === 'RETAIL' && cutoff !== null && bid.pricePaise < cutoff) {
    violations.push({
      kind: Errors.OFS_BELOW_RETAIL_CUTOFF,
      field: 'price',
      message: `price ${formatPrice(bid.pricePaise)} is below the retail cut-off price ${formatPrice(cutoff)} of ${instrument}; bid at least ${formatPrice(cutoff)}, or bid at the cut-off price with order_type RL-MKT and price 0`,
    });
  }
  return violations;
}

/**
 * The price a bid is valued at for the retail limit: its own price, or for a cut-off bid the retail
 * cut-off price of its issue. Should that be unset again, the floor price: the least the bid can cost.
 */
export function unitValuePaise(bid: BidTerms, retailCutoffPricePaise: number | null, floorPricePaise: number): bigint {
  if (bid.orderType !== CUTOFF_ORDER_TYPE) return BigInt(bid.pricePaise);
  return BigInt(retailCutoffPricePaise ?? floorPricePaise);
}

/** quantity x unit value, exact at any size. */
export function bidValuePaise(bid: BidTerms, retailCutoffPricePaise: number | null, floorPricePaise: number): bigint {
  return BigInt(bid.quantity) * unitValuePaise(bid, retailCutoffPricePaise, floorPricePaise);
}

/** The value of a retail bidder's live bids in the issues of one OFS (cut-off bids at each issue's cut-off). */
export function exposureValuePaise(exposures: readonly IssueExposure[]): bigint {
  return exposures.reduce(
    (total, e) => total + BigInt(e.priceValuePaise) + BigInt(e.cutoffQuantity) * BigInt(e.retailCutoffPricePaise ?? e.floorPricePaise),
    0n,
  );
}

/**
 * A retail bidder's live bids in every registered issue of the symbol, on either exchange, plus this bid,
 * total at most Rs 2,00,000. `exposures` are the amounts of the bidder's other live bids, one per issue
 * of the symbol (for a modification: without the order being modified). Non-retail bidders have no value
 * cap here.
 */
export function retailLimitViolations(bid: BidTerms, issue: OfsIssue, category: BidCategory, exposures: readonly IssueExposure[]): Violation[] {
  if (category !== 'RETAIL') return [];
  const current = exposureValuePaise(exposures);
  const unit = unitValuePaise(bid, issue.retailCutoffPricePaise, issue.floorPricePaise);
  const total = current + BigInt(bid.quantity) * unit;
  if (total <= RETAIL_LIMIT_PAISE) return [];
  const room = RETAIL_LIMIT_PAISE > current ? RETAIL_LIMIT_PAISE - current : 0n;
  const maxQuantity = unit > 0n ? room / unit : 0n;
  const at = bid.orderType === CUTOFF_ORDER_TYPE ? `the cut-off price ${formatPrice(unit)}` : formatPrice(unit);
  return [
    {
      kind: Errors.OFS_RETAIL_LIMIT,
      field: 'quantity',
      message:
        `Your live retail bids in ${issue.symbol} total ${formatRupees(current)}; with this bid they would total ` +
        `${formatRupees(total)}, over the retail limit of ${formatRupees(RETAIL_LIMIT_PAISE)}. ` +
        `At ${at} you may bid for at most ${maxQuantity} shares`,
    },
  ];
}
