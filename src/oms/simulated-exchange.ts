/**
 * A simulated OFS exchange, so that the whole flow (bid, modify, cancel, carry-forward, allotment) runs on
 * one machine. It keeps its own book in the database (sim_exchange_bids), reads the instrument master from
 * ordergate's OFS registry and takes its time from its own clock. It runs two markets (sim/issue-market.ts,
 * sim/offer-market.ts), each asked for the bids of its kind; and, like an exchange, it works on its own:
 * its step (`step`, every `passMs` once started) allocates what is due and publishes an offer's indicative
 * price, leaving one event per bid (sim_exchange_events) for the OMS, which only reads them (`pollEvents`).
 *
 * Every change is one transaction, and placement, allocation and acknowledgement are conditional writes,
 * so several OMS workers (threads of one process or processes on one database), and several exchanges'
 * steps, may run at once.
 */
import type { Logger } from 'pino';
import type { BidTerms } from '../domain/ofs/rules.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { Store } from '../store/sql/database.js';
import type { NewSimBid, SimBid, SimExchangeRepository } from '../store/ofs/sim-exchange.js';
import type { StoreTx } from '../store/sql/write-tx.js';
import type { InstrumentGuard } from './instrument-guard.js';
import type {
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBidStatus,
  ExchangeBook,
  ExchangeOrder,
  ExchangeEvent,
  PlaceResult,
} from './exchange.js';
import { IssueMarket } from './sim/issue-market.js';
import { sentence, type SimChange, type SimMarket } from './sim/market.js';
import { OfferMarket } from './sim/offer-market.js';

/** Events answered by one poll; the rest come with the next. */
const EVENTS_PER_POLL = 500;

/** How often a started exchange takes its step: allotments run within this of a close. */
export const DEFAULT_EXCHANGE_PASS_MS = 250;
/** The longest pause after failed steps. */
const MAX_STEP_BACKOFF_MS = 5_000;

const refused = (reason: string): ChangeResult => ({ done: false, reason: sentence(reason) });

/**
 * The exchange's order id: derived from ours, so that it is the same whoever writes the bid first, and in
 * the same order as ours (time-ordered UUIDs), so that its unique index grows at one end instead of taking
 * a page write at a random place for every bid.
 */
function exchangeOrderIdOf(orderId: string): string {
  return `SIM${orderId.replace(/[^0-9A-Za-z]/g, '').toUpperCase()}`;
}

function toExchangeOrder(bid: SimBid): ExchangeOrder {
  return {
    exchangeOrderId: bid.exchangeOrderId,
    status: bid.status as ExchangeBidStatus,
    orderType: bid.orderType,
    pricePaise: bid.pricePaise,
    quantity: bid.quantity,
  };
}

export class SimulatedExchange implements ExchangeAdapter {
  private readonly issueMarket: IssueMarket;
  private readonly offerMarket: OfferMarket;
  private timer: NodeJS.Timeout | null = null;
  /** The step under way or queued, the last asked for; null: none. */
  private stepping: Promise<void> | null = null;
  /** Bumped by start() and stop(): a timer of an earlier start schedules nothing more. */
  private generation = 0;

  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly book: SimExchangeRepository,
    issues: OfsIssueRepository,
    offers: OfsOfferRepository,
    private readonly now: () => number,
    /** Keeps each instrument's work apart: one that fails is tried again later, then set aside (instrument-guard.ts). */
    private readonly guard: InstrumentGuard,
    private readonly options: { passMs?: number; logger?: Logger } = {},
  ) {
    this.issueMarket = new IssueMarket(store, book, issues, guard);
    this.offerMarket = new OfferMarket(store, book, offers, guard);
  }

  /** The market a bid is in: an offer's bids carry its id. */
  private marketOf(bid: Pick<SimBid, 'offerId'>): SimMarket {
    return bid.offerId === null ? this.issueMarket : this.offerMarket;
  }

  /**
   * The exchange's own step: each market's due work at the exchange's clock (allocations of the issues and
   * offers whose days have closed, the offers' indicative prices through T). Steps never overlap: one asked
   * for while another runs starts when it ends, and reads the clock then, so that a caller who moved the
   * clock is answered by a step that saw it.
   */
  step(): Promise<void> {
    const fresh = async () => {
      // The failures on record, read afresh for this step (the OMS worker's passes do the same).
      this.guard.newPass();
      const now = this.now();
      await this.issueMarket.step(now);
      await this.offerMarket.step(now);
    };
    const next = (this.stepping ?? Promise.resolve()).catch(() => undefined).then(fresh);
    this.stepping = next;
    const clear = () => {
      if (this.stepping === next) this.stepping = null;
    };
    void next.then(clear, clear);
    return next;
  }

  /**
   * Takes its step every `passMs` until stop(). A failed step is logged, and the next waits twice as long
   * each time (at most MAX_STEP_BACKOFF_MS): a database that is out is not asked four times a second.
   */
  start(): void {
    if (this.timer !== null) return;
    const passMs = this.options.passMs ?? DEFAULT_EXCHANGE_PASS_MS;
    const generation = ++this.generation;
    let failures = 0;
    const next = (delayMs: number) => {
      this.timer = setTimeout(() => {
        this.step().then(
          () => {
            failures = 0;
            if (this.generation === generation) next(passMs);
          },
          (error: unknown) => {
            failures += 1;
            this.options.logger?.error({ err: error, failures }, 'simulated exchange step failed; retrying');
            if (this.generation === generation)
              next(Math.min(passMs * 2 ** failures, Math.max(passMs, MAX_STEP_BACKOFF_MS)));
          },
        );
      }, delayMs);
    };
    next(passMs);
  }

  /** Stops the steps; resolves once the step under way has finished. */
  async stop(): Promise<void> {
    // A step that ends after this schedules no other: its generation is over.
    this.generation += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.stepping?.catch(() => undefined);
  }

  async runOnce(): Promise<void> {
    await this.step();
  }

  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    if (orderIds.length === 0) return new Map();
    const rows = await this.book.findBids(orderIds);
    return new Map(rows.map((bid) => [bid.orderId, toExchangeOrder(bid)]));
  }

  async placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    if (bids.length === 0) return [];
    return this.store.writeTransaction((tx) => this.placeBidsInTransaction(tx, bids));
  }

  /** The placements in the caller's transaction: the book is in the same database (exchange.ts). */
  async placeBidsInTransaction(tx: StoreTx, bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    if (bids.length === 0) return [];
    const now = this.now();
    const existing = new Map(
      (
        await this.book.findBids(
          bids.map((bid) => bid.orderId),
          tx,
        )
      ).map((known) => [known.orderId, known]),
    );
    const issueRefusal = this.issueMarket.placements(tx);
    const offerRefusal = this.offerMarket.placements(tx);
    const received: NewSimBid[] = [];
    const results: PlaceResult[] = [];
    for (const bid of bids) {
      const known = existing.get(bid.orderId);
      const book: Omit<NewSimBid, 'exchangeOrderId'> = {
        orderId: bid.orderId,
        exchange: bid.exchange,
        scripToken: bid.scripToken,
        category: bid.offer?.category ?? bid.category,
        orderType: bid.orderType,
        pricePaise: bid.pricePaise,
        quantity: bid.quantity,
        offerId: bid.offer?.offerId ?? null,
        userId: bid.offer?.userId ?? null,
        marginType: bid.offer?.marginType ?? null,
      };
      // A resent placement: the exchange already has it, and says so with the same id (counted below).
      if (known) {
        received.push({ ...book, exchangeOrderId: known.exchangeOrderId });
        results.push({ accepted: true, exchangeOrderId: known.exchangeOrderId });
        continue;
      }
      const refusal = await (bid.offer === null ? issueRefusal : offerRefusal)(bid, now);
      if (refusal !== null) {
        results.push({ accepted: false, reason: refusal });
        continue;
      }
      const exchangeOrderId = exchangeOrderIdOf(bid.orderId);
      received.push({ ...book, exchangeOrderId });
      results.push({ accepted: true, exchangeOrderId });
    }
    await this.book.receiveBids(tx, received, now);
    return results;
  }

  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.modifyBid(bid.orderId, terms);
  }

  cancel(bid: ExchangeBid): Promise<ChangeResult> {
    return this.cancelBid(bid.orderId);
  }

  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.carryBidForward(bid.orderId, terms);
  }

  /** A modification of the bid of our order id (the port's modify, and the exchange simulator's wire). */
  async modifyBid(orderId: string, terms: BidTerms): Promise<ChangeResult> {
    return this.change(orderId, { action: 'modify', terms }, (tx, now) =>
      this.book.changeLiveBid(tx, orderId, terms, now),
    );
  }

  async cancelBid(orderId: string): Promise<ChangeResult> {
    return this.change(orderId, { action: 'cancel' }, (tx, now) =>
      this.book.setStatus(tx, orderId, 'LIVE', 'CANCELLED', now),
    );
  }

  async carryBidForward(orderId: string, terms: BidTerms): Promise<ChangeResult> {
    return this.change(orderId, { action: 'carry', terms }, (tx, now) =>
      this.book.carryForward(tx, orderId, terms, now),
    );
  }

  /** A change of a bid of the book, in one transaction: done again is done (a retry after a crash); else as its market says. */
  private async change(
    orderId: string,
    change: SimChange,
    apply: (tx: StoreTx, now: number) => Promise<unknown>,
  ): Promise<ChangeResult> {
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<ChangeResult> => {
      const bid = await this.book.findBid(orderId, tx);
      // Cancelling a cancelled bid again, or carrying a carried-forward one, is what a retry after a crash does: it succeeds.
      if (change.action === 'cancel' && bid?.status === 'CANCELLED') return { done: true };
      if (bid === undefined) return refused('the exchange has no bid for this order');
      if (change.action === 'carry' && bid.carriedForward && bid.status === 'LIVE') return { done: true };
      const refusal = await this.marketOf(bid).changeRefusal(tx, bid, change, now);
      if (refusal !== null) return refused(refusal);
      await apply(tx, now);
      return { done: true };
    });
  }

  /** The whole book of one listing (the bids of `symbol` on `exchange`), for reconciliation; as of now. */
  async readBook(exchange: string, symbol: string): Promise<ExchangeBook> {
    const asOf = this.now();
    const bids = await this.book.bookOfSymbol(exchange, symbol);
    return {
      asOf,
      entries: bids.map((bid) => ({
        exchange,
        symbol,
        orderId: bid.orderId,
        reference: bid.orderId,
        exchangeOrderId: bid.exchangeOrderId,
        status: bid.status as ExchangeBidStatus,
        orderType: bid.orderType,
        pricePaise: bid.pricePaise,
        quantity: bid.quantity,
        ucc: bid.userId,
        carriedForward: bid.carriedForward,
      })),
    };
  }

  /** The events not yet acknowledged, oldest first: what the exchange's steps left (reading changes nothing). */
  async pollEvents(): Promise<ExchangeEvent[]> {
    const events = await this.book.undeliveredEvents(EVENTS_PER_POLL);
    return events.map((event) => ({
      eventId: String(event.id),
      orderId: event.orderId,
      kind: event.kind,
      quantity: event.quantity,
      pricePaise: event.pricePaise,
      reason: event.reason,
      day: event.day,
    }));
  }

  async acknowledge(eventIds: readonly string[]): Promise<void> {
    await this.book.markDelivered(
      eventIds.map((id) => Number(id)),
      this.now(),
    );
  }
}
