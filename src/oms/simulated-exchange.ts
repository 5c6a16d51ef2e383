/**
 * A simulated OFS exchange, so that the whole flow (bid, modify, cancel, allocation) runs on one machine.
 * It keeps its own book in the database (sim_exchange_bids), reads the instrument master from ordergate's
 * OFS registry, takes its time from the injected clock, and at the later close of an issue's two windows
 * runs the allocation rule (src/domain/ofs/issue/allocation.ts) over the bids still live, once, leaving one event per
 * bid for the OMS (sim_exchange_events).
 *
 * Every change is one transaction, and placement, allocation and acknowledgement are conditional writes,
 * so several OMS workers (threads of one process or processes on one database) may call it at once.
 */
import { allocateOfs, type AllocationBid } from '../domain/ofs/issue/allocation.js';
import type { OfsIssue } from '../domain/ofs/issue/issue.js';
import {
  allocationViolations,
  isBidderCategory,
  termsViolations,
  windowViolations,
  type BidderCategory,
  type BidTerms,
} from '../domain/ofs/rules.js';
import type { Violation } from '../domain/errors.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfferRegistration, OfsOfferRepository } from '../store/ofs/offers.js';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import {
  indicativePrice,
  isNonRetailCategory,
  offerState,
  tAllocationWait,
  type OfferCategory,
} from '../domain/ofs/offer/offer.js';
import { issueInstrument, offerInstrument } from '../domain/ofs/instruments.js';
import {
  carryForwardViolations,
  marginCancelViolations,
  marginRevisionViolations,
  offerDayViolations,
  offerPriceViolations,
  type BidAction,
} from '../domain/ofs/offer/rules.js';
import {
  allocateT1Day,
  allocateTDay,
  tDayDemand,
  type OfferAllotment,
  type OfferBid,
} from '../domain/ofs/offer/allocation.js';
import { tickViolations } from '../domain/ofs/rules.js';
import type { Store } from '../store/sql/database.js';
import type {
  DueIssue,
  NewSimBid,
  NewSimEvent,
  OfferBidOutcome,
  SimBid,
  SimExchangeRepository,
} from '../store/ofs/sim-exchange.js';
import type { StoreTx } from '../store/sql/write-tx.js';
import type { InstrumentGuard } from './instrument-guard.js';
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
const firstReason = (violations: readonly Violation[]): string | null =>
  violations.length === 0 ? null : sentence(violations[0]!.message);

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

/** A live bid of the book as the offer allocations read it (a cut-off bid's price is 0). */
function offerBidOf(bid: SimBid): OfferBid {
  return {
    orderId: bid.orderId,
    bidderId: bid.userId ?? bid.orderId,
    category: bid.category as OfferCategory,
    pricePaise: bid.pricePaise,
    quantity: bid.quantity,
    placedSeq: bid.receivedAt,
  };
}

/** The event of a non-retail bid's T allocation: allotted in full (final), in part or not at all (it stays live). */
function tDayEvent(allotment: OfferAllotment, full: boolean, cutoffPricePaise: number): NewSimEvent {
  const reason = sentence(allotment.reason);
  if (full)
    return {
      orderId: allotment.orderId,
      kind: 'ALLOTTED',
      quantity: allotment.allottedQuantity,
      pricePaise: allotment.pricePaise,
      reason,
      day: 'T',
    };
  const rest =
    `; the T-day cut-off price is ${formatPrice(cutoffPricePaise)}. The unallotted quantity may be carried forward to T+1 ` +
    '(POST .../carry_forward during T+1, at a price at or above the cut-off; its funds are blocked again then); a bid not carried forward ' +
    'is cancelled at the close of T+1. Its block is released until then';
  if (allotment.allottedQuantity > 0) {
    return {
      orderId: allotment.orderId,
      kind: 'PART_ALLOTTED',
      quantity: allotment.allottedQuantity,
      pricePaise: allotment.pricePaise,
      reason: `${reason}${rest}`,
      day: 'T',
    };
  }
  return {
    orderId: allotment.orderId,
    kind: 'NOTE',
    quantity: 0,
    pricePaise: null,
    reason: `${reason}${rest}`,
    day: 'T',
  };
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
  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly book: SimExchangeRepository,
    private readonly issues: OfsIssueRepository,
    private readonly offers: OfsOfferRepository,
    private readonly now: () => number,
    /** Keeps each instrument's work apart: one that fails is tried again later, then set aside (instrument-guard.ts). */
    private readonly guard: InstrumentGuard,
  ) {}

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
    const issueOf = this.issues.reader(tx);
    // An offer is read once per batch, however many of its bids the batch holds.
    const offers = new Map<string, Promise<OfferRegistration | undefined>>();
    const offerOf = (offerId: string) => {
      let offer = offers.get(offerId);
      if (offer === undefined) offers.set(offerId, (offer = this.offers.find(offerId, tx)));
      return offer;
    };
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
      const refusal =
        bid.offer === null
          ? await this.issueRefusal(bid, issueOf, now)
          : this.offerRefusal(await offerOf(bid.offer.offerId), bid, bid.offer, now);
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

  /** Why the exchange refuses a new bid in an issue (null: it takes it): the issue listed, its window open, the terms. */
  private async issueRefusal(
    bid: ExchangeBid,
    issueOf: (exchange: string, scripToken: number) => Promise<OfsIssue | undefined>,
    now: number,
  ): Promise<string | null> {
    const issue = await issueOf(bid.exchange, bid.scripToken);
    if (issue === undefined) return `The exchange does not list ${bid.exchange} ${bid.scripToken} as an OFS`;
    return firstReason([...windowViolations(issue, bid.category, now), ...termsViolations(bid, issue, bid.category)]);
  }

  /** Why the exchange refuses a new bid in an offer (null: it takes it): the listing, the offer's day, the price and the tick. */
  private offerRefusal(
    registration: OfferRegistration | undefined,
    bid: ExchangeBid,
    inOffer: NonNullable<ExchangeBid['offer']>,
    now: number,
  ): string | null {
    if (
      registration?.offer.listings.some((l) => l.exchange === bid.exchange && l.scripToken === bid.scripToken) !== true
    ) {
      return `The exchange does not list ${bid.exchange} ${bid.scripToken} as a listing of offer ${inOffer.offerId}`;
    }
    const { offer, progress, tCutoffPricePaise } = registration;
    return firstReason([
      ...offerDayViolations(offer, offerState(offer, progress, now), inOffer.category, 'place', false, now),
      ...offerPriceViolations(bid, offer, inOffer.category, tCutoffPricePaise, false),
      ...tickViolations(bid.pricePaise / 100, offer),
    ]);
  }

  async modify(orderId: string, terms: BidTerms): Promise<ChangeResult> {
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<ChangeResult> => {
      const offerBid = await this.liveOfferBid(tx, orderId, 'modify', now);
      if (offerBid !== undefined) {
        if ('reason' in offerBid) return refused(offerBid.reason);
        const { bid, offer } = offerBid;
        const category = bid.category as OfferCategory;
        const violation = firstReason([
          ...offerPriceViolations(terms, offer.offer, category, offer.tCutoffPricePaise, bid.carriedForward),
          ...tickViolations(terms.pricePaise / 100, offer.offer),
          ...(bid.marginType === 'T' ? marginRevisionViolations('T', bid, terms) : []),
        ]);
        if (violation) return refused(violation);
        await this.book.changeLiveBid(tx, orderId, terms, now);
        return { done: true };
      }
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
      const offerBid = await this.liveOfferBid(tx, orderId, 'cancel', now);
      if (offerBid !== undefined) {
        if ('reason' in offerBid) return refused(offerBid.reason);
        const violation = firstReason(marginCancelViolations(offerBid.bid.marginType === 'T' ? 'T' : 'H'));
        if (violation) return refused(violation);
        await this.book.setStatus(tx, orderId, 'LIVE', 'CANCELLED', now);
        return { done: true };
      }
      const checked = await this.liveBid(tx, orderId, now);
      if ('reason' in checked) return refused(checked.reason);
      await this.book.setStatus(tx, orderId, 'LIVE', 'CANCELLED', now);
      return { done: true };
    });
  }

  async carryForward(orderId: string, terms: BidTerms): Promise<ChangeResult> {
    const now = this.now();
    return this.store.writeTransaction(async (tx): Promise<ChangeResult> => {
      const bid = await this.book.findBid(orderId, tx);
      if (bid === undefined) return refused('the exchange has no bid for this order');
      if (bid.carriedForward && bid.status === 'LIVE') return { done: true };
      const offer = bid.offerId === null ? undefined : await this.offers.find(bid.offerId, tx);
      if (offer === undefined) return refused('the bid is not a bid in an offer');
      const category = bid.category as OfferCategory;
      const violation = firstReason([
        ...carryForwardViolations(
          offer.offer,
          offerState(offer.offer, offer.progress, now),
          {
            category,
            live: bid.status === 'LIVE',
            unallottedQuantity: bid.quantity - bid.tAllotted,
            pricePaise: terms.pricePaise,
          },
          offer.tCutoffPricePaise,
          now,
        ),
        ...offerPriceViolations(terms, offer.offer, category, offer.tCutoffPricePaise, true),
        ...tickViolations(terms.pricePaise / 100, offer.offer),
        ...(bid.marginType === 'T' ? marginRevisionViolations('T', bid, terms) : []),
      ]);
      if (violation) return refused(violation);
      await this.book.carryForward(tx, orderId, terms, now);
      return { done: true };
    });
  }

  async pollEvents(): Promise<ExchangeEvent[]> {
    const now = this.now();
    // Each instrument's work apart: one that fails stops none of the others (instrument-guard.ts).
    for (const issue of await this.book.issuesDueForAllocation(now)) {
      await this.guard.run(issueInstrument(issue.exchange, issue.scripToken), 'allocation', () =>
        this.allocate(issue, now),
      );
    }
    for (const offerId of await this.book.offersBiddingOnT(now)) {
      await this.guard.run(offerInstrument(offerId), 'indicative', () => this.publishIndicative(offerId, now));
    }
    for (const offerId of await this.book.offersDue(now)) {
      await this.guard.run(offerInstrument(offerId), 'allocation', () => this.allocateOffer(offerId, now));
    }
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

  /**
   * A live bid in an offer that the offer's day lets change (undefined: the bid is not in an offer, or
   * not in the book).
   */
  private async liveOfferBid(
    tx: StoreTx,
    orderId: string,
    action: BidAction,
    now: number,
  ): Promise<{ bid: SimBid; offer: OfferRegistration } | { reason: string } | undefined> {
    const bid = await this.book.findBid(orderId, tx);
    if (bid?.offerId == null) return undefined;
    if (bid.status !== 'LIVE') return { reason: STATUS_WORDS[bid.status] ?? `the bid is ${bid.status}` };
    const offer = await this.offers.find(bid.offerId, tx);
    if (offer === undefined) return { reason: `the exchange no longer lists the offer ${bid.offerId}` };
    const closed = firstReason(
      offerDayViolations(
        offer.offer,
        offerState(offer.offer, offer.progress, now),
        bid.category as OfferCategory,
        action,
        bid.carriedForward,
        now,
      ),
    );
    return closed ? { reason: closed } : { bid, offer };
  }

  /**
   * An offer's due work, as the designated exchange does it, in one transaction with its claim: the T
   * allocation once T has closed (held for the operator when non-retail demand is short of the
   * non-retail portion, until it says go on or cancels), the T+1 allocation once T+1 has closed, and the
   * cancellation of every live bid of a cancelled offer.
   */
  private async allocateOffer(offerId: string, now: number): Promise<void> {
    await this.store.writeTransaction(async (tx) => {
      const registration = await this.offers.find(offerId, tx);
      if (registration === undefined) return;
      const { offer, progress } = registration;
      const live = await this.book.liveOfferBids(tx, offerId);
      if (progress.cancelledAt !== null) {
        const reason = `Not allotted: the offer of ${offer.symbol} was cancelled by the operator; the bid's block is released`;
        await this.book.settleOffer(
          tx,
          live.map((bid) => ({ orderId: bid.orderId, status: 'NOT_ALLOTTED', tAllotted: bid.tAllotted })),
          live.map((bid) => ({
            orderId: bid.orderId,
            kind: 'NOT_ALLOTTED',
            quantity: 0,
            pricePaise: null,
            reason,
            day: null,
          })),
          now,
        );
        return;
      }
      if (progress.tAllocatedAt === null) {
        const bids = live.filter((bid) => isNonRetailCategory(bid.category)).map(offerBidOf);
        // The seller's green-shoe decision (until its deadline), then the operator on a short T day: the
        // demand the allocation would take, after the single-bidder cap, short of the portion.
        const wait = tAllocationWait(offer, registration.tProceedAt, tDayDemand(offer, bids), now);
        if (wait?.for === 'operator') await this.offers.holdTAllocation(offerId, now, tx);
        if (wait !== null) return;
        const result = allocateTDay(offer, bids);
        const found = { cutoffPricePaise: result.cutoffPricePaise, unallotted: result.unallotted };
        if (!(await this.book.claimTAllocation(tx, offerId, found, offer, now))) return;
        const quantityOf = new Map(bids.map((bid) => [bid.orderId, bid.quantity]));
        const outcomes: OfferBidOutcome[] = [];
        const events: NewSimEvent[] = [];
        for (const allotment of result.allotments) {
          const quantity = quantityOf.get(allotment.orderId)!;
          const full = allotment.allottedQuantity === quantity;
          outcomes.push({
            orderId: allotment.orderId,
            status: full ? 'ALLOTTED' : 'LIVE',
            tAllotted: allotment.allottedQuantity,
          });
          events.push(tDayEvent(allotment, full, result.cutoffPricePaise));
        }
        await this.book.settleOffer(tx, outcomes, events, now);
        return;
      }
      const outcomes: OfferBidOutcome[] = [];
      const events: NewSimEvent[] = [];
      const bids: OfferBid[] = [];
      for (const bid of live) {
        if (!isNonRetailCategory(bid.category) || bid.carriedForward) {
          bids.push({ ...offerBidOf(bid), quantity: bid.quantity - bid.tAllotted });
          continue;
        }
        const reason =
          bid.tAllotted > 0
            ? `The rest of the bid was not carried forward by the close of T+1; the ${bid.tAllotted} shares allotted on T stand`
            : 'Not allotted: the bid was not carried forward by the close of T+1';
        outcomes.push({ orderId: bid.orderId, status: 'NOT_ALLOTTED', tAllotted: bid.tAllotted });
        events.push({ orderId: bid.orderId, kind: 'NOT_ALLOTTED', quantity: 0, pricePaise: null, reason, day: 'T+1' });
      }
      const result = allocateT1Day(
        offer,
        {
          cutoffPricePaise: registration.tCutoffPricePaise ?? offer.floorPricePaise,
          nonRetailUnallotted: registration.tUnallotted ?? 0,
          tAllottedByBidder: await this.book.tAllottedByBidder(tx, offerId),
        },
        bids,
      );
      if (!(await this.book.claimT1Allocation(tx, offerId, result.retailCutoffPricePaise, now))) return;
      const tAllottedOf = new Map(live.map((bid) => [bid.orderId, bid.tAllotted]));
      for (const allotment of result.allotments) {
        const allotted = allotment.allottedQuantity > 0;
        outcomes.push({
          orderId: allotment.orderId,
          status: allotted ? 'ALLOTTED' : 'NOT_ALLOTTED',
          tAllotted: tAllottedOf.get(allotment.orderId) ?? 0,
        });
        events.push({
          orderId: allotment.orderId,
          kind: allotted ? 'ALLOTTED' : 'NOT_ALLOTTED',
          quantity: allotment.allottedQuantity,
          pricePaise: allotted ? allotment.pricePaise : null,
          reason: sentence(allotment.reason),
          day: 'T+1',
        });
      }
      await this.book.settleOffer(tx, outcomes, events, now);
    });
  }

  /** The offer's indicative price, as the exchange publishes it through T (a row when it changes). */
  private async publishIndicative(offerId: string, now: number): Promise<void> {
    const offer = await this.offers.find(offerId);
    if (offer === undefined) return;
    const book = await this.book.offerBook(offerId);
    const bids = book.map((bid) => ({
      category: bid.category as OfferCategory,
      marginType: bid.marginType === 'T' ? ('T' as const) : ('H' as const),
      pricePaise: bid.pricePaise,
      quantity: bid.quantity,
    }));
    await this.book.publishIndicative(offerId, indicativePrice(bids, offer.offer.floorPricePaise), now);
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
    if (issue === undefined)
      return { reason: `the exchange no longer lists ${bid.exchange} ${bid.scripToken} as an OFS` };
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
          settled.push({
            orderId: live.orderId,
            kind: 'NOT_ALLOTTED',
            quantity: 0,
            pricePaise: null,
            reason: `Not allotted: unknown bidder category ${live.category}`,
            day: null,
          });
          continue;
        }
        const bid = {
          orderId: live.orderId,
          category: live.category,
          pricePaise: live.pricePaise,
          quantity: live.quantity,
          placedSeq: live.receivedAt,
        };
        const [violation] = allocationViolations(live, issue, bid.category);
        if (violation === undefined) {
          eligible.push(bid);
          continue;
        }
        // The issue was re-imported with other prices since the bid was accepted: it cannot take part.
        settled.push({
          orderId: live.orderId,
          kind: 'NOT_ALLOTTED',
          quantity: 0,
          pricePaise: null,
          reason: `Not allotted: at close ${violation.message}`,
          day: null,
        });
      }
      const result = allocateOfs({ ...issue, bids: eligible });
      for (const allotment of result.allotments) {
        const kind = allotment.allottedQuantity > 0 ? 'ALLOTTED' : 'NOT_ALLOTTED';
        settled.push({
          orderId: allotment.orderId,
          kind,
          quantity: allotment.allottedQuantity,
          pricePaise: allotment.pricePaise,
          reason: sentence(allotment.reason),
          day: null,
        });
      }
      // The claim makes this the one allocation of the issue, and the live bids are locked since they were
      // read: each is settled once, with one event.
      await this.book.settleAll(tx, settled, now);
    });
  }
}
