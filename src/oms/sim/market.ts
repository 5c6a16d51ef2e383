/**
 * One kind of market the simulated exchange runs: the issues of the one-listing model (issue-market.ts) or
 * the offers of SEBI's framework (offer-market.ts). The exchange (simulated-exchange.ts) finds the market
 * of a bid once and asks it; what the two share (the book, a bid's life, the events) is the exchange's.
 */
import type { BidTerms } from '../../domain/ofs/rules.js';
import type { SimBid } from '../../store/ofs/sim-exchange.js';
import type { StoreTx } from '../../store/sql/write-tx.js';
import type { ExchangeBid } from '../exchange.js';

/** What may be asked of a live bid of the book. */
export type SimChange =
  { action: 'modify'; terms: BidTerms } | { action: 'cancel' } | { action: 'carry'; terms: BidTerms };

export interface SimMarket {
  /** A reader of why new bids are refused (null: taken), its instruments read once for one transaction. */
  placements(tx: StoreTx): (bid: ExchangeBid, now: number) => Promise<string | null>;
  /** Why the market refuses the change of a bid of its book (null: it takes it); the bid is the book's, live or not. */
  changeRefusal(tx: StoreTx, bid: SimBid, change: SimChange, now: number): Promise<string | null>;
  /** Its own step at `now`: each instrument's due work (allocations, an offer's indicative price), each apart. */
  step(now: number): Promise<void>;
}

/** "the window closed" -> "The window closed": a reason as the first words of a history line. */
export const sentence = (reason: string) => reason.charAt(0).toUpperCase() + reason.slice(1);

/** The first rule a bid breaks, in words for its history; null when it breaks none. */
export const firstReason = (violations: readonly { message: string }[]): string | null =>
  violations.length === 0 ? null : sentence(violations[0]!.message);

const STATUS_WORDS: Record<string, string> = {
  CANCELLED: 'the bid was cancelled',
  ALLOTTED: 'the bid was already allotted at close',
  NOT_ALLOTTED: 'the bid was already closed without allotment',
};

/** Why a bid of the book is no longer live, or null. */
export function notLive(bid: SimBid): string | null {
  return bid.status === 'LIVE' ? null : (STATUS_WORDS[bid.status] ?? `the bid is ${bid.status}`);
}
