/**
 * A listing of an offer under SEBI's framework as an OFS instrument (ofs/instrument.ts): a bid's category
 * and margin follow from the series and the bidder, the offer's day decides what may be placed, revised,
 * cancelled or carried forward (ofs/offer/rules.ts), 0 %-margin bids count against their client's limit,
 * and allotments settle on trading days (or after a drill offer's delay).
 */
import { ApiError, Errors } from '../../errors.js';
import { offerSettlementTime, settlementTime } from '../../funds/trades.js';
import {
  modificationOf,
  type ModifyCommand,
  type OrderActionCommand,
  type PlaceCommand,
} from '../../orders/commands.js';
import type { Order, OrderChange } from '../../orders/order.js';
import type { EntryBook, OfsInstrument, RiskDecision } from '../instrument.js';
import type { TradingCalendar } from '../trading-calendar.js';
import { formatPrice, rupeesToPaise } from '../issue/issue.js';
import type { BidTerms, IssuePrices } from '../rules.js';
import { listingOf, offerState, type OfferRegistration } from './offer.js';
import {
  carryForwardViolations,
  offerCancellationViolations,
  offerDayViolations,
  offerModificationViolations,
  offerPlacementViolations,
  revisionViolations,
  seriesValueLimit,
  type LiveOfferBid,
  type OfferContext,
} from './rules.js';

/** An offer as the risk check and the funds read it. */
export type RegisteredOffer = Pick<OfferRegistration, 'offer' | 'progress' | 'tCutoffPricePaise'>;

/**
 * The OMS risk check of a bid in an offer: the offer still registered, and its day still taking the bid
 * (the offer may have been cancelled, or its session closed, since order entry judged it).
 */
export function offerRisk(order: Order, offer: RegisteredOffer | undefined, now: number): RiskDecision {
  if (offer === undefined)
    return { violation: `the offer ${order.offerId} is no longer registered`, prices: undefined };
  const state = offerState(offer.offer, offer.progress, now);
  const [closed] = offerDayViolations(offer.offer, state, order.offerCategory!, 'place', false, now);
  return {
    violation: closed === undefined ? null : `${closed.message}; the order did not reach the exchange`,
    // A 0 %-margin bid blocks nothing: its custodian confirms and pays (docs/design/ofs.md).
    prices: order.marginType === 'T' ? undefined : offerPrices(offer),
  };
}

/** What values an offer's bids: cut-off bids at the T-day cut-off (the floor until it is found). */
export function offerPrices(offer: RegisteredOffer): IssuePrices {
  return { retailCutoffPricePaise: offer.tCutoffPricePaise, floorPricePaise: offer.offer.floorPricePaise };
}

function contextOf(registration: OfferRegistration, now: number): OfferContext {
  return {
    offer: registration.offer,
    state: offerState(registration.offer, registration.progress, now),
    tCutoffPricePaise: registration.tCutoffPricePaise,
  };
}

function liveOfferBidOf(order: Order, context?: OfferContext): LiveOfferBid {
  return {
    valueLimitPaise:
      context === undefined
        ? null
        : seriesValueLimit(listingOf(context.offer, order.exchange, order.scripToken), order.offerCategory!),
    category: order.offerCategory!,
    marginType: order.marginType ?? 'H',
    carriedForward: order.carriedForwardAt !== null,
    tradedQuantity: order.tradedQuantity,
    orderType: order.orderType,
    pricePaise: order.pricePaise,
    quantity: order.quantity,
  };
}

/**
 * The offer a listing belongs to, or undefined (`offerId`: the offer an existing bid names, whose offer is
 * no longer registered there).
 */
export function offerInstrument(registration: OfferRegistration | undefined, offerId: string | null): OfsInstrument {
  return new OfferInstrument(registration, offerId);
}

class OfferInstrument implements OfsInstrument {
  constructor(
    private readonly registration: OfferRegistration | undefined,
    private readonly offerId: string | null,
  ) {}

  /** The offer of an order's listing, where it stands now (an order in an offer keeps its listing). */
  private contextFor(order: Order, now: number): OfferContext {
    if (this.registration === undefined) {
      throw new ApiError(
        Errors.OFS_OFFER_NOT_FOUND,
        `The offer ${order.offerId ?? this.offerId} of order ${order.orderId} is no longer registered`,
        [{ field: 'order_id', message: "the order's offer is not registered" }],
      );
    }
    return contextOf(this.registration, now);
  }

  /** A new bid on a listing of the offer: its category and margin from the series and the bidder, then the offer's rules. */
  place(command: PlaceCommand, book: EntryBook): Order {
    const { caller, bid } = command;
    const { offer } = this.registration!;
    const listing = listingOf(offer, command.order.exchange, command.order.scripToken)!;
    // A user the registry no longer knows bids as its session says (the login found it).
    const bidder = book.bidder(offer.offerId, caller.userId) ?? {
      category: caller.category === 'RETAIL' ? 'RETAIL' : 'NII',
      marginType: 'H',
      employeeOfOffer: false,
    };
    const terms = {
      orderType: command.order.orderType,
      pricePaise: command.order.pricePaise,
      quantity: command.order.quantity,
    };
    const judged = offerPlacementViolations(
      contextOf(this.registration!, book.now),
      listing,
      bidder,
      { symbol: bid.scrip_info.symbol, series: bid.scrip_info.series, price: bid.price, terms },
      book.otherOfferBids(caller.userId, offer.offerId, null),
      book.now,
    );
    ApiError.throwIfAny(judged.violations);
    const order: Order = {
      ...command.order,
      // The issue model's category: only retail bids are retail there (an employee's bid has its own limit).
      category: judged.category === 'RETAIL' ? 'RETAIL' : 'NON_RETAIL',
      offerId: offer.offerId,
      offerCategory: judged.category,
      marginType: judged.category === null ? null : judged.marginType,
      createdAt: book.now,
      updatedAt: book.now,
    };
    ApiError.throwIfAny(book.zeroMarginViolations(order, null));
    return order;
  }

  modify(command: ModifyCommand, order: Order, book: EntryBook): OrderChange {
    const { caller, request } = command;
    const change = {
      orderType: request.order_type,
      quantity: Number(request.quantity),
      pricePaise: rupeesToPaise(request.price) ?? 0,
      disclosedQuantity: request.disclosed_quantity ?? 0,
    };
    // Only retail and employee bids have limits, and they are never allotted in part while live.
    const others = book.otherOfferBids(caller.userId, order.offerId!, order);
    const context = this.contextFor(order, book.now);
    ApiError.throwIfAny(
      offerModificationViolations(context, liveOfferBidOf(order, context), request.price, change, others, book.now),
    );
    const modified = modificationOf(command, book.now, order, change);
    ApiError.throwIfAny(book.zeroMarginViolations(modified.after, order));
    return modified;
  }

  checkCancellation(_command: OrderActionCommand, order: Order, book: EntryBook): void {
    ApiError.throwIfAny(offerCancellationViolations(this.contextFor(order, book.now), liveOfferBidOf(order), book.now));
  }

  /**
   * Carry-forward of an unallotted non-retail bid to T+1, at or above the T-day cut-off, with new terms
   * when the request sends them (a bid below the cut-off needs them); a second request changes nothing,
   * and a second one with other terms is a modification's job.
   */
  carryForward(command: OrderActionCommand, order: Order, book: EntryBook): OrderChange {
    const { caller } = command;
    const unallotted = order.quantity - order.tradedQuantity;
    const context = this.contextFor(order, book.now);
    const revision = command.revision ?? {};
    const price = revision.price ?? order.pricePaise / 100;
    // A revised price that is no whole number of paise: the tick refuses it below, not the cut-off.
    const revisedPaise = revision.price === undefined ? order.pricePaise : rupeesToPaise(revision.price);
    const terms: BidTerms = {
      orderType: order.orderType,
      pricePaise: revisedPaise ?? 0,
      quantity: revision.quantity ?? order.quantity,
    };
    const revised = terms.pricePaise !== order.pricePaise || terms.quantity !== order.quantity;
    const origin = { actor: caller.userId, requestId: command.requestId };
    if (order.carriedForwardAt !== null) {
      if (revised) {
        throw new ApiError(
          Errors.OFS_CARRY_FORWARD_NOT_ALLOWED,
          `Order ${order.orderId} is already carried forward: revise it with a modification (PUT /transactional/v1/orders/regular/${order.exchange}/${order.orderId})`,
          [{ field: '', message: 'the bid is already carried forward' }],
        );
      }
      return {
        before: order,
        after: order,
        reason: 'Carry-forward requested again: the bid is already carried forward',
        origin,
        unchanged: true,
      };
    }
    ApiError.throwIfAny(
      carryForwardViolations(
        context.offer,
        context.state,
        { category: order.offerCategory!, live: true, unallottedQuantity: unallotted, pricePaise: revisedPaise },
        context.tCutoffPricePaise,
        book.now,
      ),
    );
    if (revised)
      ApiError.throwIfAny(
        revisionViolations(context, { ...liveOfferBidOf(order, context), carriedForward: true }, price, terms),
      );
    const revisedFrom = revised ? ` (revised from ${order.quantity} at ${formatPrice(order.pricePaise)})` : '';
    const after: Order = {
      ...order,
      pricePaise: terms.pricePaise,
      quantity: terms.quantity,
      carriedForwardAt: book.now,
      updatedAt: book.now,
    };
    if (revised) ApiError.throwIfAny(book.zeroMarginViolations(after, order));
    return {
      before: order,
      after,
      reason: `Carried forward to T+1: ${terms.quantity - order.tradedQuantity} unallotted shares at ${formatPrice(terms.pricePaise)}${revisedFrom}`,
      origin,
      outbox: 'CARRY_FORWARD',
    };
  }

  risk(order: Order, now: number): RiskDecision {
    return offerRisk(order, this.registration, now);
  }

  prices() {
    return this.registration && offerPrices(this.registration);
  }

  settlesAt(allottedAt: number, day: 'T' | 'T+1' | null, calendar: TradingCalendar): number {
    return this.registration === undefined
      ? settlementTime(allottedAt, null)
      : offerSettlementTime(this.registration.offer, day, allottedAt, calendar);
  }
}
