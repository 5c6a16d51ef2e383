/**
 * The rules the OMS and the simulated exchange apply to a bid on their side of the wire, as plain
 * functions. They answer a reason in words (the text goes into the order's history), or null when the bid
 * passes. The API's own pre-trade checks run earlier, before the 200; these catch what changed since:
 * a window that closed before the OMS got to the order, an issue whose floor was raised.
 */
import type { BidCategory } from '../domain/allocation.js';
import { categoryWindow, formatPrice, type OfsIssue } from '../domain/ofs-issue.js';

export function isBidCategory(value: string): value is BidCategory {
  return value === 'RETAIL' || value === 'NON_RETAIL';
}

const categoryLabel = (category: BidCategory) => (category === 'RETAIL' ? 'retail' : 'non-retail');

const instant = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Null while the category's window is open at `now`. */
export function windowViolation(issue: OfsIssue, category: BidCategory, now: number): string | null {
  const { opensAt, closesAt } = categoryWindow(issue, category);
  if (now < opensAt) return `the ${categoryLabel(category)} bidding window opens at ${instant(opensAt)}`;
  if (now >= closesAt) return `the ${categoryLabel(category)} bidding window closed at ${instant(closesAt)}`;
  return null;
}

/** The OMS risk check before transmission: the issue is registered and the order's window is open. */
export function omsRiskViolation(
  order: { exchange: string; scripToken: number; category: string },
  issue: OfsIssue | undefined,
  now: number,
): string | null {
  if (issue === undefined) return `${order.exchange} ${order.scripToken} is not a registered OFS issue`;
  if (!isBidCategory(order.category)) return `unknown bidder category ${order.category}`;
  const closed = windowViolation(issue, order.category, now);
  return closed && `${closed}, before the order reached the exchange`;
}

export interface BidTerms {
  category: BidCategory;
  pricePaise: number;
  quantity: number;
}

/**
 * What allocation itself needs of a bid (src/domain/allocation.ts refuses anything else): a positive
 * quantity, a cut-off bid only from retail and only once the cut-off price is known, no price below the
 * floor. Checked at placement, at modification and again at close, since an issue can be re-imported
 * with other prices in between.
 */
export function allocationViolation(bid: BidTerms, issue: OfsIssue): string | null {
  if (!Number.isSafeInteger(bid.quantity) || bid.quantity < 1) return `quantity ${bid.quantity} is not a whole number of shares`;
  if (bid.pricePaise === 0) {
    if (bid.category !== 'RETAIL') return 'only retail bids may bid at the cut-off price';
    if (issue.retailCutoffPricePaise === null) return 'the retail cut-off price is not set, so a cut-off bid cannot be valued';
    if (issue.retailCutoffPricePaise < issue.floorPricePaise) {
      return `the retail cut-off price ${formatPrice(issue.retailCutoffPricePaise)} is below the floor price ${formatPrice(issue.floorPricePaise)}`;
    }
    return null;
  }
  if (bid.pricePaise < issue.floorPricePaise) return `the price ${formatPrice(bid.pricePaise)} is below the floor price ${formatPrice(issue.floorPricePaise)}`;
  return null;
}

/** The exchange's checks of new terms: allocation's, and the tick. */
export function exchangeTermsViolation(bid: BidTerms, issue: OfsIssue): string | null {
  const violation = allocationViolation(bid, issue);
  if (violation) return violation;
  if (issue.tickSizePaise > 0 && bid.pricePaise % issue.tickSizePaise !== 0) {
    return `the price ${formatPrice(bid.pricePaise)} is not a multiple of the tick size ${formatPrice(issue.tickSizePaise)}`;
  }
  return null;
}

/** "the window closed" -> "The window closed": a reason as the first words of a history line. */
export function sentence(reason: string): string {
  return reason.charAt(0).toUpperCase() + reason.slice(1);
}
