/**
 * What a bid does to its bidder's funds (docs/design/funds.md): a live bid blocks `quantity x price` (a
 * cut-off bid at its issue's retail cut-off price), a modification blocks for its new terms, a finished bid
 * releases its block, and an allotment debits `allotted x price` and releases the rest. Pure functions:
 * the OMS decides with them and OrderRepository.apply writes what they decide.
 */
import { formatRupees, unitValuePaise, type BidTerms, type IssuePrices } from './ofs-rules.js';

/** The funds a live bid needs blocked, in paise (BigInt: a 15-digit quantity times a price passes 2^53). */
export function fundsRequiredPaise(terms: BidTerms, issue: IssuePrices): bigint {
  return BigInt(terms.quantity) * unitValuePaise(terms, issue);
}

/**
 * Why the bidder cannot block `requiredPaise` more (null when they can): the reason an OMS rejection names,
 * with the amounts. `heldPaise` is what the bid already blocks (a modification needs only the difference).
 */
export function fundsShortfall(requiredPaise: bigint, heldPaise: number, availablePaise: number): string | null {
  const more = requiredPaise - BigInt(heldPaise);
  if (more <= BigInt(availablePaise)) return null;
  const needs = heldPaise === 0 ? `the bid needs ${formatRupees(requiredPaise)} of funds` : `the new terms need ${formatRupees(more)} more funds (${formatRupees(requiredPaise)} in all)`;
  return `${needs}; ${formatRupees(availablePaise)} available`;
}

/** What an allotment costs: the allotted quantity at the allotment price. */
export function allotmentCostPaise(tradedQuantity: number, tradedPricePaise: number): number {
  return Number(BigInt(tradedQuantity) * BigInt(tradedPricePaise));
}
