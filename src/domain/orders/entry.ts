/**
 * Order entry's rules for a batch of commands (a new bid, a modification, a cancellation, a carry-forward),
 * judged one after another against a snapshot of what the batch read: the order (404, 409), the issue or
 * the offer and its rules, and the pre-trade checks (422). Plain functions over plain data: the loading,
 * the locks and the writing are OrderEntryService's (services/order-entry.ts), the batching the group
 * commit's (services/group-commit.ts).
 */
import { killSwitchViolations, type AlgoRegistration } from './algo-rules.js';
import { ApiError, Errors, type Violation } from '../errors.js';
import { issueViolations, type ModifiedTerms, type OfsBid } from '../ofs/bid.js';
import { formatPrice, rupeesToPaise, type OfsIssue } from '../ofs/issue/issue.js';
import { listingOf, offerState, type OfferRegistration } from '../ofs/offer/offer.js';
import {
  carryForwardViolations,
  offerCancellationViolations,
  offerModificationViolations,
  offerPlacementViolations,
  revisionViolations,
  seriesValueLimit,
  zeroMarginLimitViolations,
  orderValueViolations,
  zeroMarginValuePaise,
  type LiveOfferBid,
  type OfferBidder,
  type OfferContext,
  type OtherOfferBid,
  type ZeroMarginExposure,
} from '../ofs/offer/rules.js';
import {
  priceViolations,
  retailLimitViolations,
  windowViolations,
  type BidderCategory,
  type BidTerms,
  type IssueExposure,
} from '../ofs/rules.js';
import { ACCEPTED_REASON, exposureDelta, type Order, type OrderChange, type RetailExposure } from './order.js';
import { isLiveStatus, OrderStatus } from './status.js';

export const CANCELLATION_REASON = 'Cancellation requested by the user';

/** The new terms of a modified bid. */
export interface OrderModification extends BidTerms {
  disclosedQuantity: number;
}

/** "Modification requested: quantity 10 -> 20, price 101.00 -> 102.00", plus any other term that changed. */
export function modificationReason(order: Order, change: OrderModification): string {
  const parts = [
    `quantity ${order.quantity} -> ${change.quantity}`,
    `price ${formatPrice(order.pricePaise)} -> ${formatPrice(change.pricePaise)}`,
  ];
  if (order.orderType !== change.orderType) parts.push(`order_type ${order.orderType} -> ${change.orderType}`);
  if (order.disclosedQuantity !== change.disclosedQuantity)
    parts.push(`disclosed_quantity ${order.disclosedQuantity} -> ${change.disclosedQuantity}`);
  return `Modification requested: ${parts.join(', ')}`;
}

function orderNotFound(exchange: string, orderId: string): ApiError {
  return new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId} on ${exchange}`, [
    { field: 'order_id', message: 'no order of yours has this id on this exchange' },
  ]);
}

/** Who asks: the caller of a request, as the rules read it. */
export interface Requester {
  userId: string;
  category: BidderCategory;
}

/** A new bid: what the request asked (`bid`) and the order it becomes if accepted. */
export interface PlaceCommand {
  kind: 'place';
  caller: Requester;
  bid: OfsBid;
  order: Order;
}

export interface ModifyCommand {
  kind: 'modify';
  caller: Requester;
  exchange: string;
  orderId: string;
  request: ModifiedTerms;
  requestId: string | null;
}

/** A cancellation, or a carry-forward to T+1 (a bid in an offer). */
export interface OrderActionCommand {
  kind: 'cancel' | 'carry';
  caller: Requester;
  exchange: string;
  orderId: string;
  requestId: string | null;
  /** Who asks on the owner's behalf and why (the kill switch); absent: the owner itself. */
  onBehalf?: { actor: string; reason: string };
  /** A carry-forward's new terms (NSE takes a carry-forward with the bid's terms); absent parts stay as they are. */
  revision?: CarryForwardRevision;
}

/** New terms sent with a carry-forward: the price in rupees as sent, the whole bid's quantity. */
export interface CarryForwardRevision {
  price?: number;
  quantity?: number;
}

/** What a request asks of the order-entry batch. */
export type OrderCommand = PlaceCommand | ModifyCommand | OrderActionCommand;

export const issueKey = (exchange: string, scripToken: number) => `${exchange}\u0000${scripToken}`;

/**
 * What a batch's judgments read, loaded once for the batch (OrderEntryService.read) and kept up to date as
 * its commands are accepted: a later command sees the earlier ones' effects (another bid of the same user
 * counts in its retail limit, a modification sees the order as the one before left it).
 */
export class BatchSnapshot {
  /** The retail totals by user and symbol: a command reads only its caller's, in its symbol. */
  private readonly exposureRows = new Map<string, RetailExposure[]>();

  /** The live bids of the batch's offer bidders in their offers, by user and offer, then order id. */
  private readonly offerBids = new Map<string, Map<string, Order>>();

  constructor(
    readonly now: number,
    readonly issues: Map<string, OfsIssue | undefined>,
    readonly orders: Map<string, Order>,
    exposureRows: readonly RetailExposure[],
    /** The offers of the instruments that are no issue, by instrument. */
    readonly offers: Map<string, OfferRegistration | undefined> = new Map(),
    /** What the offers' rules read of the bidders, by offer and user. */
    readonly bidders: Map<string, OfferBidder> = new Map(),
    liveOfferBids: readonly Order[] = [],
    /** The registered algos of the orders placed or modified, as the transaction read (and locked) them. */
    readonly algos: Map<string, AlgoRegistration> = new Map(),
    /** The 0 %-margin standing of the users whose bids may take 0 % margin, by user. */
    private readonly zeroMargin: Map<string, ZeroMarginExposure> = new Map(),
  ) {
    for (const row of exposureRows) this.exposureRowsOf(row.userId, row.symbol).push(row);
    for (const order of liveOfferBids) this.offerBidsOf(order.userId, order.offerId!).set(order.orderId, order);
  }

  private offerBidsOf(userId: string, offerId: string): Map<string, Order> {
    const key = `${userId}\u0000${offerId}`;
    let bids = this.offerBids.get(key);
    if (bids === undefined) this.offerBids.set(key, (bids = new Map()));
    return bids;
  }

  offer(exchange: string, scripToken: number): OfferRegistration | undefined {
    return this.offers.get(issueKey(exchange, scripToken));
  }

  /** The user's other live bids in the offer (without `except`), as its limits count them. */
  otherOfferBids(userId: string, offerId: string, except: Order | null): OtherOfferBid[] {
    return [...this.offerBidsOf(userId, offerId).values()]
      .filter((order) => order.orderId !== except?.orderId)
      .map((order) => ({
        category: order.offerCategory!,
        orderType: order.orderType,
        pricePaise: order.pricePaise,
        quantity: order.quantity - order.tradedQuantity,
      }));
  }

  private exposureRowsOf(userId: string, symbol: string): RetailExposure[] {
    const key = `${userId}\u0000${symbol}`;
    let rows = this.exposureRows.get(key);
    if (rows === undefined) this.exposureRows.set(key, (rows = []));
    return rows;
  }

  issue(exchange: string, scripToken: number): OfsIssue | undefined {
    return this.issues.get(issueKey(exchange, scripToken));
  }

  /** The registered algo an order carries, if its ID is one's. */
  algo(algoId: string | null): AlgoRegistration | undefined {
    return algoId === null ? undefined : this.algos.get(algoId);
  }

  /** The user's retail exposure in the issues of the symbol, without `except` (the order a modification replaces). */
  exposures(userId: string, symbol: string, except: Order | null): IssueExposure[] {
    const rows = this.exposureRowsOf(userId, symbol);
    if (except === null) return rows;
    const own = exposureDelta(except, { ...except, status: OrderStatus.CANCELLED });
    return rows.map((row) =>
      row.exchange === except.exchange && row.scripToken === except.scripToken
        ? {
            ...row,
            priceValuePaise: row.priceValuePaise + own.priceValuePaise,
            cutoffQuantity: row.cutoffQuantity + own.cutoffQuantity,
          }
        : row,
    );
  }

  /**
   * The refusal, if any, of `after` (a new or changed 0 %-margin bid; `before`, what it was) by its client's
   * 0 %-margin limit, over the client's other live 0 %-margin bids as the batch stands.
   */
  zeroMarginViolations(after: Order, before: Order | null): Violation[] {
    if (after.marginType !== 'T') return [];
    const standing = this.zeroMargin.get(after.userId);
    const others = (standing?.openPaise ?? 0n) - zeroMarginValueOf(before);
    return zeroMarginLimitViolations(standing, others, zeroMarginValueOf(after));
  }

  /** Records an accepted change, for the commands after it. */
  accept(change: OrderChange): void {
    const { after } = change;
    this.orders.set(after.orderId, after);
    const standing = this.zeroMargin.get(after.userId);
    if (standing !== undefined) standing.openPaise += zeroMarginValueOf(after) - zeroMarginValueOf(change.before);
    if (after.offerId !== null) {
      const bids = this.offerBidsOf(after.userId, after.offerId);
      if (isLiveStatus(after.status)) bids.set(after.orderId, after);
      else bids.delete(after.orderId);
    }
    const delta = exposureDelta(change.before, after);
    if (delta.priceValuePaise === 0 && delta.cutoffQuantity === 0) return;
    const { scripToken } = after;
    const rows = this.exposureRowsOf(after.userId, after.symbol);
    let row = rows.find((r) => r.exchange === after.exchange && r.scripToken === scripToken);
    if (row === undefined) {
      const issue = this.issue(after.exchange, scripToken)!;
      row = {
        userId: after.userId,
        symbol: after.symbol,
        exchange: after.exchange,
        scripToken,
        priceValuePaise: 0,
        cutoffQuantity: 0,
        retailCutoffPricePaise: issue.retailCutoffPricePaise,
        floorPricePaise: issue.floorPricePaise,
      };
      rows.push(row);
    }
    row.priceValuePaise += delta.priceValuePaise;
    row.cutoffQuantity += delta.cutoffQuantity;
  }
}

/**
 * The change a command makes, judged against the batch's snapshot, and recorded in it for the commands
 * after it; throws the ApiError that refuses it. Nothing is written here.
 */
export function judgeOrderCommand(command: OrderCommand, state: BatchSnapshot): OrderChange {
  const change = changeOf(command, state);
  state.accept(change);
  return change;
}

function changeOf(command: OrderCommand, state: BatchSnapshot): OrderChange {
  switch (command.kind) {
    case 'place':
      return judgePlacement(command, state);
    case 'modify':
      return judgeModification(command, state);
    case 'cancel':
      return judgeCancellation(command, state);
    case 'carry':
      return judgeCarryForward(command, state);
  }
}

/** An order (new or modified) whose algo the kill switch stopped is refused, whatever else it asks. */
function checkKillSwitch(state: BatchSnapshot, order: Order): void {
  const stopped = killSwitchViolations(state.algo(order.algoId));
  if (stopped !== null) throw stopped;
}

function judgePlacement(command: PlaceCommand, state: BatchSnapshot): OrderChange {
  const { caller, bid } = command;
  checkKillSwitch(state, command.order);
  const issue = state.issue(command.order.exchange, command.order.scripToken);
  const offer = issue === undefined ? state.offer(command.order.exchange, command.order.scripToken) : undefined;
  if (offer !== undefined) return judgeOfferPlacement(command, state, offer);
  ApiError.throwIfAny(issueViolations(bid, issue));
  const order: Order = { ...command.order, createdAt: state.now, updatedAt: state.now };
  checkPreTrade(state, caller, issue!, order, null);
  return {
    before: null,
    after: order,
    reason: ACCEPTED_REASON,
    origin: { actor: caller.userId, requestId: order.requestId },
    outbox: 'PLACE',
  };
}

function judgeModification(command: ModifyCommand, state: BatchSnapshot): OrderChange {
  const { caller, request } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  checkKillSwitch(state, order);
  if (request.traded_quantity !== undefined && request.traded_quantity !== order.tradedQuantity) {
    throw new ApiError(
      Errors.ORDER_TRADED_QUANTITY_STALE,
      `The order's traded quantity is ${order.tradedQuantity}, not ${request.traded_quantity}: it has changed since you read it; read it again`,
      [{ field: 'traded_quantity', message: `must be the order's current traded quantity, ${order.tradedQuantity}` }],
    );
  }
  if (order.offerId !== null) return judgeOfferModification(command, state, order);
  const modified: OfsBid = {
    scrip_info: { exchange: order.exchange, scrip_token: order.scripToken, symbol: order.symbol, series: order.series },
    order_type: request.order_type,
    quantity: request.quantity,
    price: request.price,
  };
  const issue = state.issue(order.exchange, order.scripToken);
  ApiError.throwIfAny(issueViolations(modified, issue));
  const change: OrderModification = {
    orderType: request.order_type,
    quantity: Number(request.quantity),
    pricePaise: rupeesToPaise(request.price)!,
    disclosedQuantity: request.disclosed_quantity ?? 0,
  };
  checkPreTrade(state, caller, issue!, change, order);
  return modificationOf(command, state, order, change);
}

/** The accepted modification: the order with its new terms, queued for the OMS. */
function modificationOf(
  command: ModifyCommand,
  state: BatchSnapshot,
  order: Order,
  change: OrderModification,
): OrderChange {
  return {
    before: order,
    after: {
      ...order,
      orderType: change.orderType,
      quantity: change.quantity,
      pricePaise: change.pricePaise,
      disclosedQuantity: change.disclosedQuantity,
      updatedAt: state.now,
    },
    reason: modificationReason(order, change),
    origin: { actor: command.caller.userId, requestId: command.requestId },
    outbox: 'MODIFY',
  };
}

function judgeCancellation(command: OrderActionCommand, state: BatchSnapshot): OrderChange {
  const { caller } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  if (order.offerId !== null) {
    ApiError.throwIfAny(offerCancellationViolations(offerContextOf(state, order), liveOfferBidOf(order), state.now));
    return cancellationOf(command, state, order);
  }
  const issue = state.issue(order.exchange, order.scripToken);
  if (issue === undefined) {
    throw new ApiError(
      Errors.OFS_ISSUE_NOT_FOUND,
      `The OFS issue of order ${command.orderId} is no longer registered`,
      [{ field: 'order_id', message: "the order's OFS issue is not registered" }],
    );
  }
  ApiError.throwIfAny(windowViolations(issue, caller.category, state.now));
  return cancellationOf(command, state, order);
}

function cancellationOf(command: OrderActionCommand, state: BatchSnapshot, order: Order): OrderChange {
  return {
    before: order,
    after: { ...order, cancelRequestedAt: state.now, updatedAt: state.now },
    reason: command.onBehalf?.reason ?? CANCELLATION_REASON,
    origin: { actor: command.onBehalf?.actor ?? command.caller.userId, requestId: command.requestId },
    outbox: 'CANCEL',
  };
}

/** The offer of an order's listing, where it stands now (an order in an offer keeps its listing). */
function offerContextOf(state: BatchSnapshot, order: Order): OfferContext {
  const registration = state.offer(order.exchange, order.scripToken);
  if (registration === undefined || registration.offer.offerId !== order.offerId) {
    throw new ApiError(
      Errors.OFS_OFFER_NOT_FOUND,
      `The offer ${order.offerId} of order ${order.orderId} is no longer registered`,
      [{ field: 'order_id', message: "the order's offer is not registered" }],
    );
  }
  return contextOf(registration, state.now);
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

/** A new bid on a listing of an offer: its category and margin from the series and the bidder, then the offer's rules. */
function judgeOfferPlacement(
  command: PlaceCommand,
  state: BatchSnapshot,
  registration: OfferRegistration,
): OrderChange {
  const { caller, bid } = command;
  const { offer } = registration;
  const listing = listingOf(offer, command.order.exchange, command.order.scripToken)!;
  // A user the registry no longer knows bids as its session says (the login found it).
  const bidder = state.bidders.get(`${offer.offerId}\u0000${caller.userId}`) ?? {
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
    contextOf(registration, state.now),
    listing,
    bidder,
    { symbol: bid.scrip_info.symbol, series: bid.scrip_info.series, price: bid.price, terms },
    state.otherOfferBids(caller.userId, offer.offerId, null),
    state.now,
  );
  ApiError.throwIfAny(judged.violations);
  const order: Order = {
    ...command.order,
    // The issue model's category: only retail bids are retail there (an employee's bid has its own limit).
    category: judged.category === 'RETAIL' ? 'RETAIL' : 'NON_RETAIL',
    offerId: offer.offerId,
    offerCategory: judged.category,
    marginType: judged.category === null ? null : judged.marginType,
    createdAt: state.now,
    updatedAt: state.now,
  };
  ApiError.throwIfAny(state.zeroMarginViolations(order, null));
  return {
    before: null,
    after: order,
    reason: ACCEPTED_REASON,
    origin: { actor: caller.userId, requestId: order.requestId },
    outbox: 'PLACE',
  };
}

/** What a bid counts against its client's 0 %-margin limit: a live 0 %-margin bid's open quantity at its price. */
function zeroMarginValueOf(order: Order | null): bigint {
  return order !== null && order.marginType === 'T' && isLiveStatus(order.status) ? zeroMarginValuePaise(order) : 0n;
}

function judgeOfferModification(command: ModifyCommand, state: BatchSnapshot, order: Order): OrderChange {
  const { caller, request } = command;
  const change: OrderModification = {
    orderType: request.order_type,
    quantity: Number(request.quantity),
    pricePaise: rupeesToPaise(request.price) ?? 0,
    disclosedQuantity: request.disclosed_quantity ?? 0,
  };
  // Only retail and employee bids have limits, and they are never allotted in part while live.
  const others = state.otherOfferBids(caller.userId, order.offerId!, order);
  const context = offerContextOf(state, order);
  ApiError.throwIfAny(
    offerModificationViolations(context, liveOfferBidOf(order, context), request.price, change, others, state.now),
  );
  const modified = modificationOf(command, state, order, change);
  ApiError.throwIfAny(state.zeroMarginViolations(modified.after, order));
  return modified;
}

/**
 * Carry-forward of an unallotted non-retail bid in an offer to T+1, at or above the T-day cut-off, with
 * new terms when the request sends them (a bid below the cut-off needs them); a second request changes
 * nothing, and a second one with other terms is a modification's job.
 */
function judgeCarryForward(command: OrderActionCommand, state: BatchSnapshot): OrderChange {
  const { caller } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  // Carried forward, the bid is placed again on T+1: a stopped algo's is not.
  checkKillSwitch(state, order);
  if (order.offerId === null) {
    throw new ApiError(
      Errors.OFS_CARRY_FORWARD_NOT_ALLOWED,
      `Order ${order.orderId} is a bid in an OFS issue, not in an offer: only bids in an offer are carried forward`,
      [{ field: 'order_id', message: 'the order is not a bid in an offer' }],
    );
  }
  const unallotted = order.quantity - order.tradedQuantity;
  const context = offerContextOf(state, order);
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
      state.now,
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
    carriedForwardAt: state.now,
    updatedAt: state.now,
  };
  if (revised) ApiError.throwIfAny(state.zeroMarginViolations(after, order));
  return {
    before: order,
    after,
    reason: `Carried forward to T+1: ${terms.quantity - order.tradedQuantity} unallotted shares at ${formatPrice(terms.pricePaise)}${revisedFrom}`,
    origin,
    outbox: 'CARRY_FORWARD',
  };
}

/**
 * The pre-trade checks: the caller's window, the price rules, the series' order value upper limit, and for a retail caller the Rs 2,00,000
 * limit over the caller's live bids in the issue's symbol (without `replaced`, the order a modification
 * replaces).
 */
function checkPreTrade(
  state: BatchSnapshot,
  caller: Requester,
  issue: OfsIssue,
  terms: BidTerms,
  replaced: Order | null,
): void {
  ApiError.throwIfAny(windowViolations(issue, caller.category, state.now));
  ApiError.throwIfAny(priceViolations(terms, issue, caller.category));
  ApiError.throwIfAny(orderValueViolations(issue.valueLimitPaise, terms, issue.retailCutoffPricePaise));
  if (caller.category !== 'RETAIL') return;
  ApiError.throwIfAny(
    retailLimitViolations(terms, issue, caller.category, state.exposures(caller.userId, issue.symbol, replaced)),
  );
}

/** The caller's order on that exchange, still live and with no cancellation under way. */
function ownLiveOrder(state: BatchSnapshot, caller: Requester, exchange: string, orderId: string): Order {
  const order = state.orders.get(orderId);
  // Another user's order answers exactly like one that does not exist.
  if (order === undefined || order.userId !== caller.userId || order.exchange !== exchange)
    throw orderNotFound(exchange, orderId);
  if (!isLiveStatus(order.status)) {
    throw new ApiError(
      Errors.ORDER_NOT_LIVE,
      `Order ${orderId} is ${order.status}: a finished order can no longer be modified or cancelled`,
      [{ field: 'order_id', message: `the order is ${order.status}` }],
    );
  }
  if (order.cancelRequestedAt !== null) {
    throw new ApiError(
      Errors.ORDER_CANCEL_PENDING,
      `A cancellation of order ${orderId} is already under way: it can no longer be modified or cancelled`,
      [{ field: 'order_id', message: 'a cancellation is under way' }],
    );
  }
  return order;
}
