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
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { allocateOfs, type AllocationBid } from '../domain/allocation.js';
import type { OfsIssue } from '../domain/ofs-issue.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { DueIssue, SimBidRow, SimExchangeRepository } from '../store/sim-exchange.js';
import type { Database } from '../store/tables.js';
import { allocationViolation, exchangeTermsViolation, isBidCategory, sentence, windowViolation } from './bid-rules.js';
import type {
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBidStatus,
  ExchangeBidTerms,
  ExchangeEvent,
  ExchangeOrder,
  PlaceResult,
} from './exchange.js';

/** Events answered by one poll; the rest come with the next. */
const EVENTS_PER_POLL = 500;

const refused = (reason: string): ChangeResult => ({ done: false, reason: sentence(reason) });

const STATUS_WORDS: Record<string, string> = {
  CANCELLED: 'the bid was cancelled',
  ALLOTTED: 'the bid was already allotted at close',
  NOT_ALLOTTED: 'the bid was already closed without allotment',
};

/** The exchange's order id: derived from ours, so that it is the same whoever writes the bid first. */
function exchangeOrderIdOf(orderId: string): string {
  return `SIM${createHash('sha256').update(orderId).digest('hex').slice(0, 16).toUpperCase()}`;
}

function toExchangeOrder(row: SimBidRow): ExchangeOrder {
  return {
    exchangeOrderId: row.exchange_order_id,
    status: row.status as ExchangeBidStatus,
    orderType: row.order_type,
    pricePaise: Number(row.price_paise),
    quantity: Number(row.quantity),
  };
}

export class SimulatedExchange implements ExchangeAdapter {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly book: SimExchangeRepository,
    private readonly issues: OfsIssueRepository,
    private readonly now: () => number,
  ) {}

  async find(orderId: string): Promise<ExchangeOrder | undefined> {
    const row = await this.book.findBid(orderId);
    return row && toExchangeOrder(row);
  }

  async place(bid: ExchangeBid): Promise<PlaceResult> {
    const now = this.now();
    return this.db.transaction().execute(async (trx): Promise<PlaceResult> => {
      const existing = await this.book.findBid(bid.orderId, trx);
      if (existing) {
        // A resent placement: the exchange already has it, and says so with the same id.
        await this.book.countRetransmission(trx, bid.orderId);
        return { accepted: true, exchangeOrderId: existing.exchange_order_id };
      }
      const issue = await this.issues.find(bid.exchange, bid.scripToken, trx);
      if (issue === undefined) return { accepted: false, reason: `The exchange does not list ${bid.exchange} ${bid.scripToken} as an OFS` };
      const violation = windowViolation(issue, bid.category, now) ?? exchangeTermsViolation(bid, issue);
      if (violation) return { accepted: false, reason: sentence(violation) };
      const exchangeOrderId = exchangeOrderIdOf(bid.orderId);
      await this.book.receiveBid(trx, { ...bid, exchangeOrderId }, now);
      return { accepted: true, exchangeOrderId };
    });
  }

  async modify(orderId: string, terms: ExchangeBidTerms): Promise<ChangeResult> {
    const now = this.now();
    return this.db.transaction().execute(async (trx): Promise<ChangeResult> => {
      const checked = await this.liveBid(trx, orderId, now);
      if ('reason' in checked) return refused(checked.reason);
      const violation = exchangeTermsViolation({ category: checked.category, ...terms }, checked.issue);
      if (violation) return refused(violation);
      await this.book.changeLiveBid(trx, orderId, terms, now);
      return { done: true };
    });
  }

  async cancel(orderId: string): Promise<ChangeResult> {
    const now = this.now();
    return this.db.transaction().execute(async (trx): Promise<ChangeResult> => {
      // Cancelling a cancelled bid again is what a retry after a crash does: it succeeds.
      if ((await this.book.findBid(orderId, trx))?.status === 'CANCELLED') return { done: true };
      const checked = await this.liveBid(trx, orderId, now);
      if ('reason' in checked) return refused(checked.reason);
      await this.book.setStatus(trx, orderId, 'LIVE', 'CANCELLED', now);
      return { done: true };
    });
  }

  async pollEvents(): Promise<ExchangeEvent[]> {
    const now = this.now();
    for (const issue of await this.book.issuesDueForAllocation(now)) await this.allocate(issue, now);
    const rows = await this.book.undeliveredEvents(EVENTS_PER_POLL);
    return rows.map((row) => ({
      eventId: String(row.id),
      orderId: row.order_id,
      kind: row.kind as ExchangeEvent['kind'],
      quantity: Number(row.quantity),
      pricePaise: row.price_paise === null ? null : Number(row.price_paise),
      reason: row.reason,
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
    trx: Kysely<Database>,
    orderId: string,
    now: number,
  ): Promise<{ issue: OfsIssue; category: AllocationBid['category'] } | { reason: string }> {
    const bid = await this.book.findBid(orderId, trx);
    if (bid === undefined) return { reason: 'the exchange has no bid for this order' };
    if (bid.status !== 'LIVE') return { reason: STATUS_WORDS[bid.status] ?? `the bid is ${bid.status}` };
    const issue = await this.issues.find(bid.exchange, Number(bid.scrip_token), trx);
    if (issue === undefined) return { reason: `the exchange no longer lists ${bid.exchange} ${bid.scrip_token} as an OFS` };
    if (!isBidCategory(bid.category)) return { reason: `unknown bidder category ${bid.category}` };
    const closed = windowViolation(issue, bid.category, now);
    return closed ? { reason: closed } : { issue, category: bid.category };
  }

  /**
   * Allocates one issue, if this caller is the one that claims it; the claim, the bids' outcomes and the
   * events are one transaction, so allocation happens exactly once and completely.
   */
  private async allocate(due: DueIssue, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (!(await this.book.claimAllocation(trx, due, now))) return;
      const issue = (await this.issues.find(due.exchange, due.scripToken, trx))!;
      const eligible: AllocationBid[] = [];
      for (const row of await this.book.liveBids(trx, due)) {
        const bid = {
          orderId: row.order_id,
          category: row.category as AllocationBid['category'],
          pricePaise: Number(row.price_paise),
          quantity: Number(row.quantity),
          placedSeq: Number(row.received_at),
        };
        const violation = isBidCategory(row.category) ? allocationViolation(bid, issue) : `unknown bidder category ${row.category}`;
        if (violation === null) {
          eligible.push(bid);
          continue;
        }
        // The issue was re-imported with other prices since the bid was accepted: it cannot take part.
        if (await this.book.setStatus(trx, row.order_id, 'LIVE', 'NOT_ALLOTTED', now)) {
          await this.book.insertEvent(trx, { orderId: row.order_id, kind: 'NOT_ALLOTTED', quantity: 0, pricePaise: null, reason: `Not allotted: at close ${violation}` }, now);
        }
      }
      const result = allocateOfs({ ...issue, bids: eligible });
      for (const allotment of result.allotments) {
        const kind = allotment.allottedQuantity > 0 ? 'ALLOTTED' : 'NOT_ALLOTTED';
        // One event per bid that this allocation settled, however many callers got this far.
        if (!(await this.book.setStatus(trx, allotment.orderId, 'LIVE', kind, now))) continue;
        await this.book.insertEvent(
          trx,
          { orderId: allotment.orderId, kind, quantity: allotment.allottedQuantity, pricePaise: allotment.pricePaise, reason: sentence(allotment.reason) },
          now,
        );
      }
    });
  }
}
