/**
 * A simulated OFS exchange, so that the whole flow (bid, modify, cancel, allocation) runs on one machine.
 * It keeps its own book in the database (sim_exchange_bids), reads the instrument master from ordergate's
 * OFS registry, takes its time from the injected clock, and at the later close of an issue's two windows
 * runs the allocation rule (src/domain/allocation.ts) over the bids still live, once, leaving one event per
 * bid for the OMS (sim_exchange_events).
 *
 * Every change is one transaction, and placement, allocation and acknowledgement are conditional writes,
 * so several OMS workers (threads of one process or processes on one database) may call it at once.
 */
import { allocateOfs, type AllocationBid } from '../domain/allocation.js';
import type { OfsIssue } from '../domain/ofs-issue.js';
import { allocationViolations, isBidderCategory, termsViolations, windowViolations, type BidderCategory, type BidTerms } from '../domain/ofs-rules.js';
import type { Violation } from '../domain/errors.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { Store } from '../store/database.js';
import type { DueIssue, NewSimBid, NewSimEvent, SimBid, SimExchangeRepository } from '../store/sim-exchange.js';
import type { StoreTx } from '../store/write-tx.js';
import type {
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBidStatus,
  ExchangeEvent,
  ExchangeOrder,
  PlaceResult,
} from './exchange.js';

/** Events answered by one poll; the rest come with the next. */
const EVENTS_PER_POLL = 500;

/** "the window closed" -> "The window closed": a reason as the first words of a history line. */
const sentence = (reason: string) => reason.charAt(0).toUpperCase() + reason.slice(1);

/** The first rule a bid breaks, in words for its history; null when it breaks none. */
const firstReason = (violations: readonly Violation[]): string | null => (violations.length === 0 ? null : sentence(violations[0]!.message));

const refused = (reason: string): ChangeResult => ({ done: false, reason: sentence(reason) });

const STATUS_WORDS: Record<string, string> = {
  CANCELLED: 'the bid was cancelled',
  ALLOTTED: 'the bid was already allotted at close',
  NOT_ALLOTTED: 'the bid was already closed without allotment',
};

/**
 * The exchange's order id: derived from ours, so that it is the same whoever writes the bid first, and in
 * the same order as ours (time-ordered UUIDs), so that its unique index grows at one end instead of taking
 * a page write at a random place for every bid.
 */
function exchangeOrderIdOf(orderId: string): string {
  return `SIM${orderId.replace(/[^0-9A-Za-z]/g, '').toUpperCase()}`;
}

function toExchangeOrder(bid: SimBid): ExchangeOrder {
  return { exchangeOrderId: bid.exchangeOrderId, status: bid.status as ExchangeBidStatus, orderType: bid.orderType, pricePaise: bid.pricePaise, quantity: bid.quantity };
}

export class SimulatedExchange implements ExchangeAdapter {
  constructor(
    private readonly store: Pick<Store, 'dialect' | 'writeTransaction'>,
    private readonly book: SimExchangeRepository,
    private readonly issues: OfsIssueRepository,
    private readonly now: () => number,
  ) {}

  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    if (orderIds.length === 0) return new Map();
    const rows = await this.book.findBids(orderIds);
    return new Map(rows.map((bid) => [bid.orderId, toExchangeOrder(bid)]));
  }

  async placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    if (bids.length === 0) return [];
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<PlaceResult[]> => {
      const existing = new Map((await this.book.findBids(bids.map((bid) => bid.orderId), tx)).map((known) => [known.orderId, known]));
      const issueOf = this.issues.reader(tx);
      const received: NewSimBid[] = [];
      const results: PlaceResult[] = [];
      for (const bid of bids) {
        const known = existing.get(bid.orderId);
        // A resent placement: the exchange already has it, and says so with the same id (counted below).
        if (known) {
          received.push({ ...bid, exchangeOrderId: known.exchangeOrderId });
          results.push({ accepted: true, exchangeOrderId: known.exchangeOrderId });
          continue;
        }
        const issue = await issueOf(bid.exchange, bid.scripToken);
        if (issue === undefined) {
          results.push({ accepted: false, reason: `The exchange does not list ${bid.exchange} ${bid.scripToken} as an OFS` });
          continue;
        }
        const violation = firstReason([...windowViolations(issue, bid.category, now), ...termsViolations(bid, issue, bid.category)]);
        if (violation) {
          results.push({ accepted: false, reason: violation });
          continue;
        }
        const exchangeOrderId = exchangeOrderIdOf(bid.orderId);
        received.push({ ...bid, exchangeOrderId });
        results.push({ accepted: true, exchangeOrderId });
      }
      await this.book.receiveBids(tx, received, now);
      return results;
    });
  }

  async modify(orderId: string, terms: BidTerms): Promise<ChangeResult> {
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<ChangeResult> => {
      const checked = await this.liveBid(tx, orderId, now);
      if ('reason' in checked) return refused(checked.reason);
      const violation = firstReason(termsViolations(terms, checked.issue, checked.category));
      if (violation) return refused(violation);
      await this.book.changeLiveBid(tx, orderId, terms, now);
      return { done: true };
    });
  }

  async cancel(orderId: string): Promise<ChangeResult> {
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<ChangeResult> => {
      // Cancelling a cancelled bid again is what a retry after a crash does: it succeeds.
      if ((await this.book.findBid(orderId, tx))?.status === 'CANCELLED') return { done: true };
      const checked = await this.liveBid(tx, orderId, now);
      if ('reason' in checked) return refused(checked.reason);
      await this.book.setStatus(tx, orderId, 'LIVE', 'CANCELLED', now);
      return { done: true };
    });
  }

  async pollEvents(): Promise<ExchangeEvent[]> {
    const now = this.now();
    for (const issue of await this.book.issuesDueForAllocation(now)) await this.allocate(issue, now);
    const events = await this.book.undeliveredEvents(EVENTS_PER_POLL);
    return events.map((event) => ({
      eventId: String(event.id),
      orderId: event.orderId,
      kind: event.kind,
      quantity: event.quantity,
      pricePaise: event.pricePaise,
      reason: event.reason,
    }));
  }

  async acknowledge(eventIds: readonly string[]): Promise<void> {
    await this.book.markDelivered(
      eventIds.map((id) => Number(id)),
      this.now(),
    );
  }

  /** A bid that may still change: live, its issue listed, its window open. */
  private async liveBid(
    tx: StoreTx,
    orderId: string,
    now: number,
  ): Promise<{ issue: OfsIssue; category: BidderCategory } | { reason: string }> {
    const bid = await this.book.findBid(orderId, tx);
    if (bid === undefined) return { reason: 'the exchange has no bid for this order' };
    if (bid.status !== 'LIVE') return { reason: STATUS_WORDS[bid.status] ?? `the bid is ${bid.status}` };
    const issue = await this.issues.find(bid.exchange, bid.scripToken, tx);
    if (issue === undefined) return { reason: `the exchange no longer lists ${bid.exchange} ${bid.scripToken} as an OFS` };
    if (!isBidderCategory(bid.category)) return { reason: `unknown bidder category ${bid.category}` };
    const closed = firstReason(windowViolations(issue, bid.category, now));
    return closed ? { reason: closed } : { issue, category: bid.category };
  }

  /**
   * Allocates one issue, if this caller is the one that claims it; the claim, the bids' outcomes and the
   * events are one transaction, so allocation happens exactly once and completely.
   */
  private async allocate(due: DueIssue, now: number): Promise<void> {
    await this.store.writeTransaction(async (tx) => {
      if (!(await this.book.claimAllocation(tx, due, now))) return;
      const issue = (await this.issues.find(due.exchange, due.scripToken, tx))!;
      const eligible: AllocationBid[] = [];
      const settled: NewSimEvent[] = [];
      for (const live of await this.book.liveBids(tx, due)) {
        if (!isBidderCategory(live.category)) {
          settled.push({ orderId: live.orderId, kind: 'NOT_ALLOTTED', quantity: 0, pricePaise: null, reason: `Not allotted: unknown bidder category ${live.category}` });
          continue;
        }
        const bid = { orderId: live.orderId, category: live.category, pricePaise: live.pricePaise, quantity: live.quantity, placedSeq: live.receivedAt };
        const [violation] = allocationViolations(live, issue, bid.category);
        if (violation === undefined) {
          eligible.push(bid);
          continue;
        }
        // The issue was re-imported with other prices since the bid was accepted: it cannot take part.
        settled.push({ orderId: live.orderId, kind: 'NOT_ALLOTTED', quantity: 0, pricePaise: null, reason: `Not allotted: at close ${violation.message}` });
      }
      const result = allocateOfs({ ...issue, bids: eligible });
      for (const allotment of result.allotments) {
        const kind = allotment.allottedQuantity > 0 ? 'ALLOTTED' : 'NOT_ALLOTTED';
        settled.push({ orderId: allotment.orderId, kind, quantity: allotment.allottedQuantity, pricePaise: allotment.pricePaise, reason: sentence(allotment.reason) });
      }
      // The claim makes this the one allocation of the issue, and the live bids are locked since they were
      // read: each is settled once, with one event.
      await this.book.settleAll(tx, settled, now);
    });
  }
}
