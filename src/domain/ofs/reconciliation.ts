/**
 * Reconciliation (issue 50, item 4; docs/reconciliation.md): the exchange's book of our member's bids in one
 * listing against ordergate's orders of that listing, by our reference (the order id the entry's reference
 * names) and, failing that, by the exchange's bid id. A pure function: it reads two lists and says how they
 * differ, in a stable kind and in words an operator understands. It changes nothing: what to do about a
 * difference is the operator's call.
 *
 * What each of our statuses says we believe of the exchange's book:
 *
 * - PENDING (and EXXMITTED, once nothing waits for the OMS): the bid is there and live, at our terms.
 * - EXECUTED: the bid is there, allotted.
 * - CANCELLED: not live there (cancelled or not allotted); the book may also have dropped it.
 * - ORDERERROR, OMSREJECT, OMSXMITTED: never there.
 *
 * An order with work still waiting for the OMS (its outbox entry open: a placement, modification,
 * cancellation or carry-forward not yet answered) is not compared: the book may rightly not show it yet. It
 * is counted (`inFlight`), and its book entry, if any, is not taken for a bid unknown to us.
 *
 * The carried-forward flag: the port's HeldBid has none; a link whose book says whether a bid was carried
 * forward sets `carriedForward` on the entry (the e-OFS book query, a Decision of its mapping, and the
 * simulators do), and only then is CARRY_FORWARD_NOT_SHOWN reported. A book that does not say (BSE's
 * bid-book file, as far as is public) leaves it out, and no carry-forward is checked.
 *
 * The book's age: a book is as of when the exchange wrote it (BSE's bid-book download may be minutes old; NSE's
 * is read live). An order changed after that instant may rightly differ from it: the run marks it in flight
 * (src/oms/reconciler.ts), and a report on a book older than STALE_BOOK_MS says so (`bookAgeNote`).
 */
import { formatPrice } from './issue/issue.js';
import { CUTOFF_ORDER_TYPE, type BidTerms } from './rules.js';

/** The kinds of difference, stable: the API, the CLI, the metric's label and the docs name them so. */
export const DIFFERENCE_KINDS = [
  'MISSING_AT_EXCHANGE',
  'UNKNOWN_TO_US',
  'STATUS_DIFFERS',
  'QUANTITY_DIFFERS',
  'PRICE_DIFFERS',
  'BID_ID_DIFFERS',
  'CARRY_FORWARD_NOT_SHOWN',
] as const;
export type DifferenceKind = (typeof DIFFERENCE_KINDS)[number];

/** What the exchange says of a bid (the port's ExchangeBidStatus). */
export type BookStatus = 'LIVE' | 'CANCELLED' | 'ALLOTTED' | 'NOT_ALLOTTED';

/** One of our orders of the listing, as reconciliation reads it. */
export interface OurBid extends BidTerms {
  orderId: string;
  /** The order's status (src/domain/orders/status.ts). */
  status: string;
  /** The exchange's number for it, once the exchange gave one; null: none. */
  exchangeOrderId: string | null;
  /** The bidder carried it forward to T+1 (and the exchange took it: a refused carry-forward clears it). */
  carriedForward: boolean;
  /** Work for the OMS not yet done on it (an outbox entry open): not compared. */
  inFlight: boolean;
  /** When the order last changed (epoch ms); absent: not known. Changed after the book was written: not compared. */
  updatedAt?: number;
}

/** One entry of the exchange's book (the port's ExchangeBookEntry has these fields). */
export interface BookBid extends BidTerms {
  /** The order its reference names; null: none (no reference, or one that is not ours). */
  orderId: string | null;
  reference: string | null;
  exchangeOrderId: string;
  status: BookStatus;
  /** Whether the exchange holds it carried forward; absent: the book does not say. */
  carriedForward?: boolean;
}

/** A bid's side as a difference shows it. */
export interface BidSide extends BidTerms {
  status: string;
  exchangeOrderId: string | null;
}

export interface Difference {
  kind: DifferenceKind;
  /** Our order, when the difference is about one; null: a bid unknown to us. */
  orderId: string | null;
  /** The exchange's bid id: the book's, else ours. */
  exchangeOrderId: string | null;
  /** The reference the book's entry carries; null: none, or no entry. */
  reference: string | null;
  ours: BidSide | null;
  theirs: BidSide | null;
  /** In words, for the operator. */
  message: string;
}

export interface Reconciliation {
  /** Our orders of the listing, and the book's entries. */
  ours: number;
  book: number;
  /** Our orders found in the book. */
  matched: number;
  /** Our orders not compared: work for the OMS still waits on them. */
  inFlight: number;
  differences: Difference[];
  /** The differences per kind (every kind, 0 included). */
  counts: Record<DifferenceKind, number>;
}

/** A book at least this much older than its run is told in the report (`bookAgeNote`). */
export const STALE_BOOK_MS = 5_000;

/**
 * What a report says of an old book: null when the book was written less than STALE_BOOK_MS before the run
 * (a book read live).
 */
export function bookAgeNote(bookAsOf: number, runAt: number): string | null {
  const ageMs = runAt - bookAsOf;
  if (ageMs < STALE_BOOK_MS) return null;
  return (
    `the exchange's book is as of ${new Date(bookAsOf).toISOString()}, ${Math.floor(ageMs / 1000)} s before this run; ` +
    'orders changed since are left out'
  );
}

/** Whether our order changed after the book was written (so the book may rightly not show the change). */
export function changedSince(bid: OurBid, bookAsOf: number): boolean {
  return bid.updatedAt !== undefined && bid.updatedAt > bookAsOf;
}

/** Our statuses whose bid is live at the exchange. */
const LIVE_HERE = new Set(['PENDING', 'EXXMITTED']);
/** Our statuses whose bid must be in the book (an allotted one too: every allotted share is the exchange's). */
const MUST_BE_THERE = new Set([...LIVE_HERE, 'EXECUTED']);
/** Our statuses whose bid never reached the exchange. */
const NEVER_THERE = new Set(['ORDERERROR', 'OMSREJECT', 'OMSXMITTED']);

/** The book's statuses our status agrees with, where it is in the book. */
function statusAgrees(ours: string, theirs: BookStatus): boolean {
  if (LIVE_HERE.has(ours)) return theirs === 'LIVE';
  if (ours === 'EXECUTED') return theirs === 'ALLOTTED';
  if (ours === 'CANCELLED') return theirs === 'CANCELLED' || theirs === 'NOT_ALLOTTED';
  // Never sent, or refused: any entry is a difference.
  return !NEVER_THERE.has(ours);
}

const isCutoff = (terms: BidTerms) => terms.orderType === CUTOFF_ORDER_TYPE;

/** Terms in words: "100 at 101.50" or "100 at the cut-off". */
export function termsInWords(terms: BidTerms): string {
  return `${terms.quantity} at ${isCutoff(terms) ? 'the cut-off' : formatPrice(terms.pricePaise)}`;
}

const sideOf = (bid: OurBid | BookBid): BidSide => ({
  status: bid.status,
  exchangeOrderId: bid.exchangeOrderId,
  orderType: bid.orderType,
  pricePaise: bid.pricePaise,
  quantity: bid.quantity,
});

const STATUS_WORDS: Record<BookStatus, string> = {
  LIVE: 'live',
  CANCELLED: 'cancelled',
  ALLOTTED: 'allotted',
  NOT_ALLOTTED: 'not allotted',
};

/** The differences between our orders of a listing and the exchange's book of it. */
export function reconcile(ours: readonly OurBid[], book: readonly BookBid[]): Reconciliation {
  const byOrderId = new Map(ours.map((bid) => [bid.orderId, bid]));
  const byBidId = new Map<string, OurBid>();
  for (const bid of ours) if (bid.exchangeOrderId !== null) byBidId.set(bid.exchangeOrderId, bid);
  const matchedIds = new Set<string>();
  const differences: Difference[] = [];
  let inFlight = 0;

  const differ = (kind: DifferenceKind, our: OurBid | null, entry: BookBid | null, message: string) =>
    differences.push({
      kind,
      orderId: our?.orderId ?? null,
      exchangeOrderId: entry?.exchangeOrderId ?? our?.exchangeOrderId ?? null,
      reference: entry?.reference ?? null,
      ours: our === null ? null : sideOf(our),
      theirs: entry === null ? null : sideOf(entry),
      message,
    });

  for (const entry of book) {
    let our = entry.orderId === null ? undefined : byOrderId.get(entry.orderId);
    if (our === undefined) {
      const byId = byBidId.get(entry.exchangeOrderId);
      // By bid id only a bid whose reference names none of our orders (a reference lost or rewritten).
      if (byId !== undefined && (entry.orderId === null || !byOrderId.has(entry.orderId))) our = byId;
    }
    if (our === undefined || matchedIds.has(our.orderId)) {
      const second = our !== undefined;
      differ(
        'UNKNOWN_TO_US',
        null,
        entry,
        `The exchange holds bid ${entry.exchangeOrderId} (${termsInWords(entry)}, ${STATUS_WORDS[entry.status]}) ` +
          (second
            ? `that names order ${our!.orderId}, already matched to another bid of the book`
            : entry.reference === null
              ? 'with no reference: ordergate has no order for it'
              : `with reference ${entry.reference}, which names no order of ordergate's in this listing`),
      );
      continue;
    }
    matchedIds.add(our.orderId);
    if (our.inFlight) continue;
    const id = `Order ${our.orderId}`;
    if (our.exchangeOrderId !== null && our.exchangeOrderId !== entry.exchangeOrderId)
      differ(
        'BID_ID_DIFFERS',
        our,
        entry,
        `${id} has the exchange's bid id ${our.exchangeOrderId}; the exchange's book has it as ${entry.exchangeOrderId}`,
      );
    if (!statusAgrees(our.status, entry.status))
      differ(
        'STATUS_DIFFERS',
        our,
        entry,
        `${id} is ${our.status} in ordergate; the exchange has its bid ${entry.exchangeOrderId} ${STATUS_WORDS[entry.status]}`,
      );
    if (our.quantity !== entry.quantity)
      differ(
        'QUANTITY_DIFFERS',
        our,
        entry,
        `${id} is for ${our.quantity} shares; the exchange's bid ${entry.exchangeOrderId} is for ${entry.quantity}`,
      );
    if (isCutoff(our) !== isCutoff(entry) || (!isCutoff(our) && our.pricePaise !== entry.pricePaise))
      differ(
        'PRICE_DIFFERS',
        our,
        entry,
        `${id} bids ${isCutoff(our) ? 'at the cut-off' : `at ${formatPrice(our.pricePaise)}`}; the exchange's bid ${entry.exchangeOrderId} ` +
          (isCutoff(entry) ? 'is at the cut-off' : `is at ${formatPrice(entry.pricePaise)}`),
      );
    if (our.carriedForward && entry.carriedForward === false && entry.status === 'LIVE')
      differ(
        'CARRY_FORWARD_NOT_SHOWN',
        our,
        entry,
        `${id} was carried forward to T+1 in ordergate; the exchange's book does not show its bid ${entry.exchangeOrderId} carried forward`,
      );
  }

  for (const our of ours) {
    if (matchedIds.has(our.orderId)) {
      if (our.inFlight) inFlight += 1;
      continue;
    }
    if (our.inFlight) {
      inFlight += 1;
      continue;
    }
    if (MUST_BE_THERE.has(our.status))
      differ(
        'MISSING_AT_EXCHANGE',
        our,
        null,
        `Order ${our.orderId} (${our.status}, ${termsInWords(our)}` +
          `${our.exchangeOrderId === null ? '' : `, the exchange's bid id ${our.exchangeOrderId}`}) is not in the exchange's book`,
      );
  }

  const counts = Object.fromEntries(DIFFERENCE_KINDS.map((kind) => [kind, 0])) as Record<DifferenceKind, number>;
  for (const difference of differences) counts[difference.kind] += 1;
  return {
    ours: ours.length,
    book: book.length,
    matched: matchedIds.size,
    inFlight,
    differences,
    counts,
  };
}
