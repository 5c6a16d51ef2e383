/**
 * What the OMS needs from an exchange. The simulated OFS exchange (simulated-exchange.ts) implements it; a
 * gateway to a real exchange would implement the same calls over its wire protocol.
 *
 * Placements travel in batches (an exchange gateway sends them down one session in a burst; the OMS commits
 * a batch's status changes together).
 *
 * Every call is keyed by our order id, which the exchange keeps beside its own exchange order id (a real
 * gateway sends ours as the client order reference). That is what makes `findBids` possible, and `findBids` is
 * what lets the OMS resume after a crash without transmitting an order twice.
 */
import type { BidderCategory, BidTerms } from '../domain/ofs/rules.js';
import type { MarginType, OfferCategory } from '../domain/ofs/offer/offer.js';
import type { StoreTx } from '../store/sql/write-tx.js';

/** What the exchange knows of a bid. */
export type ExchangeBidStatus = 'LIVE' | 'CANCELLED' | 'ALLOTTED' | 'NOT_ALLOTTED';

/** A bid the exchange holds. */
export interface HeldBid extends BidTerms {
  exchangeOrderId: string;
  status: ExchangeBidStatus;
}

/**
 * A bid the exchange refused, as its book says later: a link whose answers come after the call (BSE's
 * rejection files) answers the placement unanswered, then the book by reference with the refusal.
 */
export interface RefusedBid {
  status: 'REFUSED';
  /** The exchange's words. */
  reason: string;
}

/**
 * A bid sent and not yet answered, as a link whose answers come after the call knows it (BSE's upload file
 * written, its answer file not yet read): neither held nor absent. The OMS sends nothing for it and asks
 * again after `unanswered.retryAfterMs`.
 */
export interface AwaitedBid {
  status: 'AWAITED';
  unanswered: Unanswered;
}

/** What the exchange's book says of one of our bids. */
export type ExchangeOrder = HeldBid | RefusedBid | AwaitedBid;

/** The bid's terms at the exchange, when it holds it. */
export function heldTerms(bid: ExchangeOrder | undefined): HeldBid | undefined {
  return bid === undefined || bid.status === 'REFUSED' || bid.status === 'AWAITED' ? undefined : bid;
}

/**
 * One bid of the exchange's book of our member, as reconciliation reads it (src/domain/ofs/reconciliation.ts):
 * what the exchange says it holds, whether or not ordergate sent it.
 */
export interface ExchangeBookEntry extends BidTerms {
  exchange: string;
  symbol: string;
  /** Our order, when the entry carries a reference of ours that names one; null: a bid unknown to us. */
  orderId: string | null;
  /** The reference the entry carries (NSE's apiEchoBack, iBBS's CP code); null: none. */
  reference: string | null;
  exchangeOrderId: string;
  status: ExchangeBidStatus;
  /** The client as the exchange has it; null when the book does not say. */
  ucc: string | null;
  /**
   * Whether the exchange holds the bid carried forward to T+1; absent: the book does not say (the port's
   * HeldBid has no such flag; NSE's book query carries it as a Decision of its mapping, BSE's bid-book file
   * is not known to), and no carry-forward is checked.
   */
  carriedForward?: boolean;
}

/** The exchange's book of one listing, and when the exchange wrote it (epoch ms; a download's time, or now). */
export interface ExchangeBook {
  asOf: number;
  entries: ExchangeBookEntry[];
}

/** What an exchange needs to know of the client behind a bid (stored on the order at entry). */
export interface BidMember {
  ucc: string;
  clientType: 'CLI' | 'PRO';
  /** The custodian's participant id (institutions, 0 %-margin bids); null: none. */
  custodianCode: string | null;
}

/** A bid as the OMS transmits it. */
export interface ExchangeBid extends BidTerms {
  orderId: string;
  exchange: string;
  scripToken: number;
  /** The listing's symbol, as the exchange names the security. */
  symbol: string;
  /** The exchange's number for the bid once it has taken it; null for a new bid. */
  exchangeOrderId: string | null;
  /** The client as the exchange knows it; null when the order has none (a bid placed before member data). */
  member: BidMember | null;
  category: BidderCategory;
  /** A bid on a listing of an offer: the bidder (the single-bidder cap counts per bidder), its category and margin. */
  offer: { offerId: string; userId: string; category: OfferCategory; marginType: MarginType } | null;
}

/**
 * No answer to go by: `unknown`, the answer was lost after the request may have reached the exchange (a
 * timeout, a reset, a 5xx), so the bid may stand there, and its book is read before anything is sent again;
 * `not-sent`, the exchange did not take the request (refused connection, 429, no session). Either way the
 * OMS tries again after `retryAfterMs` (the link's back-off), and never takes it for a refusal.
 */
export interface Unanswered {
  outcome: 'unknown' | 'not-sent';
  why: string;
  retryAfterMs: number;
}

/**
 * Thrown by a read of the exchange (`findBids`) the exchange did not answer: the OMS sends nothing it
 * would have read first, and tries again after `retryAfterMs`.
 */
export class ExchangeUnavailableError extends Error {
  constructor(readonly unanswered: Unanswered) {
    super(`the exchange did not answer (${unanswered.why})`);
  }
}

export type PlaceResult =
  { accepted: true; exchangeOrderId: string } | { accepted: false; reason: string } | ({ accepted: null } & Unanswered);

export type ChangeResult = { done: true } | { done: false; reason: string } | ({ done: null } & Unanswered);

/** An answer the exchange gave: what the OMS applies to an order. */
export type PlaceAnswer = Exclude<PlaceResult, { accepted: null }>;
export type ChangeAnswer = Exclude<ChangeResult, { done: null }>;

/** Link health, for the readiness endpoint and the metrics. */
export interface LinkHealth {
  exchange: string;
  /** The link has a session and, where it has one, its message stream is open. */
  connected: boolean;
  /** When the exchange last answered anything (epoch ms); null: never since start. */
  lastAnswerAt: number | null;
  /** Why it is not connected, in words; null when connected. */
  problem: string | null;
}

/** The outcome of a bid at allocation, delivered at least once until acknowledged. */
export interface ExchangeEvent {
  eventId: string;
  orderId: string;
  /**
   * ALLOTTED and NOT_ALLOTTED finish the bid. An offer's T allocation leaves a non-retail bid it did not
   * allot in full live for T+1: PART_ALLOTTED (some shares, the bid stays live) or NOTE (none).
   */
  kind: 'ALLOTTED' | 'NOT_ALLOTTED' | 'PART_ALLOTTED' | 'NOTE';
  /** The allotted quantity; 0 when not allotted. */
  quantity: number;
  /** The trade price in paise; null when not allotted. */
  pricePaise: number | null;
  /** Why, in words a trader understands. */
  reason: string;
  /** An offer's allotment: the day it belongs to, T or T+1, which tells when it settles; null for an issue's. */
  day: 'T' | 'T+1' | null;
}

export interface ExchangeAdapter {
  /** The bids the exchange holds for these order ids, by order id; an id it never received is left out. */
  findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>>;
  /** Transmits new bids, all at once; answers one result per bid, in their order. */
  placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]>;
  /**
   * Only an exchange that keeps its book in ordergate's own database and answers at once (the simulated
   * exchange): `placeBids` inside the OMS's transaction, so that the placement commits with the orders'
   * admission and settlement, or not at all. An adapter to a real exchange leaves it out, and the OMS
   * commits EXXMITTED before it sends (worker.ts).
   */
  placeBidsInTransaction?(tx: StoreTx, bids: readonly ExchangeBid[]): Promise<PlaceResult[]>;
  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult>;
  cancel(bid: ExchangeBid): Promise<ChangeResult>;
  /**
   * Carries a bid in an offer forward to T+1 (its unallotted quantity) at `terms` (its own, or a revision's:
   * a carried-forward bid stands at or above the T-day cut-off); again: done, no change.
   */
  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult>;
  /**
   * The events not yet acknowledged, oldest first; reading changes nothing. Until acknowledged, an event is
   * answered again; those of an instrument the OMS set aside wait with it. `skip`: events already handed
   * over in this pass (left out, so that a head of events the OMS could not apply holds up none behind it).
   */
  pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>): Promise<ExchangeEvent[]>;
  acknowledge(eventIds: readonly string[]): Promise<void>;
  /**
   * An exchange that works on its own (the simulated exchange allots at a close; a link polls its
   * exchange) runs its own passes between start() and stop(), on its own clock; the OMS worker starts and
   * stops them with its own. runOnce() is one such pass, now: the worker's runOnce() takes it between
   * sending and reading (the tests).
   */
  start?(): void;
  stop?(): Promise<void>;
  runOnce?(): Promise<void>;
  /** The health of each link behind this adapter (none: an exchange in process, always there). */
  health?(): LinkHealth[];
  /**
   * The exchange's book of our member's bids in one listing (`symbol` on `exchange`), for reconciliation;
   * null: this link has none to give yet (BSE: no bid-book download read). Throws ExchangeUnavailableError
   * when the exchange does not answer. Absent: a link that cannot read the exchange's book.
   */
  readBook?(exchange: string, symbol: string): Promise<ExchangeBook | null>;
  /**
   * Whether the OMS may send through it now: false while another node holds the exchange session
   * (links/session-lease.ts); the worker then claims no outbox entries. Absent: always.
   */
  ready?(): Promise<boolean>;
}
