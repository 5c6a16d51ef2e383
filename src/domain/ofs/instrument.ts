/**
 * The OFS instrument a bid belongs to, behind one interface: an issue of the one-listing model
 * (ofs/issue/instrument.ts) or a listing of an offer under SEBI's framework (ofs/offer/instrument.ts). It
 * is resolved once where a bid's instrument is read (order entry's batch snapshot, the OMS's reads), and
 * every rule that differs between the two models is one of its methods: its callers dispatch, they never
 * ask which model a bid is in. An instrument no longer registered is one too (its methods refuse, each as
 * its model words it).
 */
import type { Violation } from '../errors.js';
import type { ModifyCommand, OrderActionCommand, PlaceCommand } from '../orders/commands.js';
import type { Order, OrderChange } from '../orders/order.js';
import type { TradingCalendar } from './trading-calendar.js';
import type { IssueExposure, IssuePrices } from './rules.js';
import type { OfferBidder, OtherOfferBid } from './offer/rules.js';

/** What order entry's rules read of the batch beside the instrument (orders/entry.ts's BatchSnapshot). */
export interface EntryBook {
  readonly now: number;
  /**
   * The user's retail exposure in the issues of the symbol, without `except` (the order a modification
   * replaces), and that of the other accounts under its PAN (`otherAccount`: the limit is per PAN).
   */
  exposures(userId: string, symbol: string, except: Order | null): IssueExposure[];
  /**
   * The user's other live bids in the offer (without `except`), as its limits count them, and the live
   * retail bids of the other accounts under its PAN (`otherAccount`).
   */
  otherOfferBids(userId: string, offerId: string, except: Order | null): OtherOfferBid[];
  /** Who the user is in the offer (its category, margin type, whether an eligible employee); undefined: unknown. */
  bidder(offerId: string, userId: string): OfferBidder | undefined;
  /** The refusal, if any, of `after` by its client's 0 %-margin limit (`before`: what it was). */
  zeroMarginViolations(after: Order, before: Order | null): Violation[];
}

/** The OMS risk check's verdict on a placement, with the prices that value what it blocks. */
export interface RiskDecision {
  /** Why the order may not go to the exchange; null: it may. */
  violation: string | null;
  /** What values the bid for its funds; undefined: it blocks nothing. */
  prices: IssuePrices | undefined;
}

export interface OfsInstrument {
  /** A new bid on it, judged: the order as accepted (its category, its offer's fields). Throws the ApiError that refuses it. */
  place(command: PlaceCommand, book: EntryBook): Order;
  /** A live bid's new terms, judged: the change. Throws the ApiError that refuses it. */
  modify(command: ModifyCommand, order: Order, book: EntryBook): OrderChange;
  /** Whether the live bid may be cancelled now; throws the ApiError that refuses it. */
  checkCancellation(command: OrderActionCommand, order: Order, book: EntryBook): void;
  /** A carry-forward of the live bid to T+1, judged: the change. Throws the ApiError that refuses it. */
  carryForward(command: OrderActionCommand, order: Order, book: EntryBook): OrderChange;
  /** The OMS's check of a placement before it goes to the exchange: what changed since order entry judged it. */
  risk(order: Order, now: number): RiskDecision;
  /** What values a bid's funds (cut-off bids at the cut-off, the floor until one is known); undefined: not registered. */
  prices(): IssuePrices | undefined;
  /** When an allotment made at `allottedAt` settles (`day`: the offer's day the exchange said it belongs to). */
  settlesAt(allottedAt: number, day: 'T' | 'T+1' | null, calendar: TradingCalendar): number;
}
