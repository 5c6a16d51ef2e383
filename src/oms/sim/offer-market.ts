/**
 * The simulated exchange's market for the offers of SEBI's framework: it takes a bid on a listing while
 * the offer's day takes its category at its price and tick, changes or cancels it as the day allows (a
 * 0 %-margin bid only upward, never cancelled), carries an unallotted non-retail bid to T+1, publishes the
 * indicative price through T, and runs the T and T+1 allocations (src/domain/ofs/offer/allocation.ts), or
 * the cancellation of a cancelled offer's bids, once each, leaving an event per bid for the OMS.
 */
import type { Store } from '../../store/sql/database.js';
import type { StoreTx } from '../../store/sql/write-tx.js';
import type { OfferRegistration, OfsOfferRepository } from '../../store/ofs/offers.js';
import type { NewSimEvent, OfferBidOutcome, SimBid, SimExchangeRepository } from '../../store/ofs/sim-exchange.js';
import { formatPrice } from '../../domain/ofs/issue/issue.js';
import { offerInstrument } from '../../domain/ofs/instrument-keys.js';
import {
  indicativePrice,
  isNonRetailCategory,
  offerState,
  tAllocationWait,
  type OfferCategory,
} from '../../domain/ofs/offer/offer.js';
import {
  allocateT1Day,
  allocateTDay,
  tDayDemand,
  type OfferAllotment,
  type OfferBid,
} from '../../domain/ofs/offer/allocation.js';
import {
  carryForwardViolations,
  marginCancelViolations,
  marginRevisionViolations,
  offerDayViolations,
  offerPriceViolations,
} from '../../domain/ofs/offer/rules.js';
import { tickViolations } from '../../domain/ofs/rules.js';
import type { ExchangeBid } from '../exchange.js';
import type { InstrumentGuard } from '../instrument-guard.js';
import { firstReason, notLive, sentence, type SimChange, type SimMarket } from './market.js';

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

export class OfferMarket implements SimMarket {
  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly book: SimExchangeRepository,
    private readonly offers: OfsOfferRepository,
    private readonly guard: InstrumentGuard,
  ) {}

  /** Why the exchange refuses a new bid in an offer (null: it takes it): the listing, the offer's day, the price and the tick. */
  placements(tx: StoreTx): (bid: ExchangeBid, now: number) => Promise<string | null> {
    // An offer is read once per batch, however many of its bids the batch holds.
    const offers = new Map<string, Promise<OfferRegistration | undefined>>();
    const offerOf = (offerId: string) => {
      let offer = offers.get(offerId);
      if (offer === undefined) offers.set(offerId, (offer = this.offers.find(offerId, tx)));
      return offer;
    };
    return async (bid, now) => {
      const inOffer = bid.offer!;
      const registration = await offerOf(inOffer.offerId);
      if (
        registration?.offer.listings.some((l) => l.exchange === bid.exchange && l.scripToken === bid.scripToken) !==
        true
      ) {
        return `The exchange does not list ${bid.exchange} ${bid.scripToken} as a listing of offer ${inOffer.offerId}`;
      }
      const { offer, progress, tCutoffPricePaise } = registration;
      return firstReason([
        ...offerDayViolations(offer, offerState(offer, progress, now), inOffer.category, 'place', false, now),
        ...offerPriceViolations(bid, offer, inOffer.category, tCutoffPricePaise, false),
        ...tickViolations(bid.pricePaise / 100, offer),
      ]);
    };
  }

  /**
   * A bid may be revised or cancelled while live and while the offer's day lets its category (a 0 %-margin
   * bid only upward, never cancelled); carried forward once, its unallotted quantity, on T+1.
   */
  async changeRefusal(tx: StoreTx, bid: SimBid, change: SimChange, now: number): Promise<string | null> {
    const offer = await this.offers.find(bid.offerId!, tx);
    const category = bid.category as OfferCategory;
    if (change.action === 'carry') {
      if (offer === undefined) return 'the bid is not a bid in an offer';
      const { terms } = change;
      return firstReason([
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
    }
    const gone = notLive(bid);
    if (gone !== null) return gone;
    if (offer === undefined) return `the exchange no longer lists the offer ${bid.offerId}`;
    const closed = firstReason(
      offerDayViolations(
        offer.offer,
        offerState(offer.offer, offer.progress, now),
        category,
        change.action,
        bid.carriedForward,
        now,
      ),
    );
    if (closed !== null) return closed;
    if (change.action === 'cancel') return firstReason(marginCancelViolations(bid.marginType === 'T' ? 'T' : 'H'));
    const { terms } = change;
    return firstReason([
      ...offerPriceViolations(terms, offer.offer, category, offer.tCutoffPricePaise, bid.carriedForward),
      ...tickViolations(terms.pricePaise / 100, offer.offer),
      ...(bid.marginType === 'T' ? marginRevisionViolations('T', bid, terms) : []),
    ]);
  }

  async step(now: number): Promise<void> {
    // Each offer's work apart: one that fails stops none of the others (instrument-guard.ts).
    for (const offerId of await this.book.offersBiddingOnT(now)) {
      await this.guard.run(offerInstrument(offerId), 'indicative', () => this.publishIndicative(offerId, now));
    }
    for (const offerId of await this.book.offersDue(now)) {
      await this.guard.run(offerInstrument(offerId), 'allocation', () => this.allocate(offerId, now));
    }
  }

  /**
   * An offer's due work, as the designated exchange does it, in one transaction with its claim: the T
   * allocation once T has closed (held for the operator when non-retail demand is short of the
   * non-retail portion, until it says go on or cancels), the T+1 allocation once T+1 has closed, and the
   * cancellation of every live bid of a cancelled offer.
   */
  private async allocate(offerId: string, now: number): Promise<void> {
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
}
