/**
 * What a bid does to its bidder's funds (docs/design/funds.md): a live bid blocks `quantity x price` (a
 * cut-off bid at its issue's retail cut-off price), a modification blocks for its new terms, a finished bid
 * releases its block, an allotment debits `allotted x price` and releases the rest, and an offer's bid left
 * live by the T allocation blocks nothing until it is carried forward. Pure functions:
 * the OMS decides with them and OrderRepository.apply writes what they decide.
 *
 * Every rule of a bid's block lives here: what it needs at admission, the shortfall, and what it becomes
 * after a modification, a part allotment or the bid's end.
 */
import { isLiveStatus } from '../orders/status.js';
import { formatRupees, unitValuePaise, type BidTerms, type IssuePrices } from '../ofs/rules.js';

/**
 * A bid as its block sees it (an Order has these fields): its terms, its status, how much of it is allotted,
 * and its block, null when its bidder has no funds account (the bid is not funds-checked).
 */
export interface BlockedBid extends BidTerms {
  status: string;
  tradedQuantity: number;
  fundsBlockedPaise: number | null;
}

/** The funds a live bid needs blocked, in paise (BigInt: a 15-digit quantity times a price passes 2^53). */
export function fundsRequiredPaise(terms: BidTerms, issue: IssuePrices): bigint {
  return BigInt(terms.quantity) * unitValuePaise(terms, issue);
}

/** The terms of what is still bid for: a partly allotted bid blocks only for the rest. */
export function openTerms(terms: BidTerms, tradedQuantity: number): BidTerms {
  return { orderType: terms.orderType, pricePaise: terms.pricePaise, quantity: terms.quantity - tradedQuantity };
}

/** What a bid holding `terms`, `tradedQuantity` of it allotted, must block: the rest, at its unit value. */
export function blockRequiredPaise(terms: BidTerms, tradedQuantity: number, prices: IssuePrices): bigint {
  return fundsRequiredPaise(openTerms(terms, tradedQuantity), prices);
}

/**
 * Why the bidder cannot block `requiredPaise` more (null when they can): the reason an OMS rejection names,
 * with the amounts. `heldPaise` is what the bid already blocks (a modification needs only the difference).
 */
export function fundsShortfall(requiredPaise: bigint, heldPaise: number, availablePaise: number): string | null {
  const more = requiredPaise - BigInt(heldPaise);
  if (more <= BigInt(availablePaise)) return null;
  const needs =
    heldPaise === 0
      ? `the bid needs ${formatRupees(requiredPaise)} of funds`
      : `the new terms need ${formatRupees(more)} more funds (${formatRupees(requiredPaise)} in all)`;
  return `${needs}; ${formatRupees(availablePaise)} available`;
}

/**
 * The block a new bid needs at admission, and why it cannot be blocked out of `availablePaise` (null: it
 * can). Null instead when the bid blocks nothing: its bidder has no funds account (`availablePaise`
 * undefined), or nothing values it (`prices` undefined: a 0 %-margin bid, or a listing no longer registered).
 */
export function admissionBlock(
  bid: BidTerms & Pick<BlockedBid, 'tradedQuantity'>,
  prices: IssuePrices | undefined,
  availablePaise: number | undefined,
): { requiredPaise: bigint; shortfall: string | null } | null {
  if (availablePaise === undefined || prices === undefined) return null;
  const requiredPaise = blockRequiredPaise(bid, bid.tradedQuantity, prices);
  return { requiredPaise, shortfall: fundsShortfall(requiredPaise, 0, availablePaise) };
}

/** Whether the bid's block follows its terms: it is funds-checked and still live (a finished bid blocks nothing). */
export function blockFollowsTerms<T extends Pick<BlockedBid, 'status' | 'fundsBlockedPaise'>>(
  bid: T,
): bid is T & { fundsBlockedPaise: number } {
  return bid.fundsBlockedPaise !== null && isLiveStatus(bid.status);
}

/**
 * The block new terms need before they go to the exchange, when it is more than the bid holds (null: its
 * block covers them, or does not follow its terms). Less is released only once the exchange holds them.
 */
export function blockToRaisePaise(bid: BlockedBid, terms: BidTerms, prices: IssuePrices): bigint | null {
  if (!blockFollowsTerms(bid)) return null;
  const required = blockRequiredPaise(terms, bid.tradedQuantity, prices);
  return required <= BigInt(bid.fundsBlockedPaise) ? null : required;
}

/**
 * The block of a bid holding `terms` at the exchange (after a modification, or with the exchange's terms
 * restored), when it differs from its own; undefined when it does not, when the block does not follow its
 * terms, or when nothing values them (`prices` undefined: the listing is no longer registered).
 */
export function blockAfterModification(
  bid: BlockedBid,
  terms: BidTerms,
  prices: IssuePrices | undefined,
): number | undefined {
  if (!blockFollowsTerms(bid) || prices === undefined) return undefined;
  const required = Number(blockRequiredPaise(terms, bid.tradedQuantity, prices));
  return required === bid.fundsBlockedPaise ? undefined : required;
}

/**
 * The block of a bid an offer's T allocation leaves live (not allotted in full, `tradedQuantity` of it
 * allotted), for the carry-forward decision: none. A bid that may be carried forward keeps no block
 * overnight; carrying it forward blocks its funds again, and a carry-forward the bidder cannot fund is
 * refused (ofs-framework.md, "Funds"). A bid carried forward already (the T outcome came late: the OMS
 * held it while the offer's events failed) keeps what its open shares need at its price. Null when the
 * bid is not funds-checked.
 */
export function blockAfterTAllocation(
  bid: Pick<BlockedBid, 'fundsBlockedPaise' | 'quantity' | 'pricePaise'> & { carriedForward: boolean },
  tradedQuantity: number,
): number | null {
  if (bid.fundsBlockedPaise === null) return null;
  return bid.carriedForward ? Number(BigInt(Math.max(0, bid.quantity - tradedQuantity)) * BigInt(bid.pricePaise)) : 0;
}

/**
 * Whether a bid moved to `status` releases its whole block: it is funds-checked and finished (an
 * allotment's cost is debited, out of the block, by OrderRepository.apply).
 */
export function releasesBlock(bid: Pick<BlockedBid, 'fundsBlockedPaise'>, status: string): boolean {
  return bid.fundsBlockedPaise !== null && !isLiveStatus(status);
}

/** What an allotment costs: the allotted quantity at the allotment price. */
export function allotmentCostPaise(tradedQuantity: number, tradedPricePaise: number): number {
  return Number(BigInt(tradedQuantity) * BigInt(tradedPricePaise));
}
