/**
 * Order entry: an OFS bid, a modification or a cancellation, from the API to a durable change with its
 * outbox entry for the OMS. Request-alone rules run first (400), then the caller rules (403); then the
 * request becomes a command for the group commit, which judges a whole batch of commands against the
 * stored data in one transaction and writes the accepted ones together (read, judge, write below): the order
 * (404, 409), the registered issue and the pre-trade checks (422). Each change is acknowledged only after
 * that transaction has committed.
 */
import { timeOrderedId } from '../ids.js';
import { ApiError, Errors } from '../domain/errors.js';
import { callerViolations, crossFieldViolations, issueViolations, modifyPathViolations, type ModifiedTerms, type OfsBid } from '../domain/ofs-bid.js';
import { formatPrice, rupeesToPaise, type OfsIssue } from '../domain/ofs-issue.js';
import { isLiveStatus, OrderStatus } from '../domain/order-status.js';
import { priceViolations, retailLimitViolations, windowViolations, type BidTerms, type IssueExposure } from '../domain/ofs-rules.js';
import type { ModifyOrderRequest, OfsOrderRequest } from '../schemas/orders.js';
import type { Store } from '../store/database.js';
import type { OrderEntryMetrics } from '../metrics/operator-metrics.js';
import { GroupCommitter, type Judgment } from '../store/group-commit.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { OfferRegistration, OfsOfferRepository } from '../store/ofs-offers.js';
import { listingOf, offerState } from '../domain/ofs-offer.js';
import {
  carryForwardViolations,
  offerCancellationViolations,
  offerModificationViolations,
  offerPlacementViolations,
  type LiveOfferBid,
  type OfferBidder,
  type OfferContext,
  type OtherOfferBid,
} from '../domain/ofs-offer-rules.js';
import { ACCEPTED_REASON, acceptedOrder, exposureDelta, type Order, type OrderChange, type RetailExposure } from '../domain/order.js';
import type { OrderRepository } from '../store/orders.js';
import type { StoreTx } from '../store/write-tx.js';
import type { Caller } from './auth.js';
import type { AnswerInTransaction } from './idempotency.js';

const emptyToNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

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
  if (order.disclosedQuantity !== change.disclosedQuantity) parts.push(`disclosed_quantity ${order.disclosedQuantity} -> ${change.disclosedQuantity}`);
  return `Modification requested: ${parts.join(', ')}`;
}

function orderNotFound(exchange: string, orderId: string): ApiError {
  return new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId} on ${exchange}`, [
    { field: 'order_id', message: 'no order of yours has this id on this exchange' },
  ]);
}

/** What a request asks of the order-entry batch. */
type Command =
  | { kind: 'place'; caller: Caller; bid: OfsBid; order: Order; answer: AnswerInTransaction<string> | undefined }
  | {
      kind: 'modify';
      caller: Caller;
      exchange: string;
      orderId: string;
      request: ModifiedTerms;
      requestId: string | null;
      answer: AnswerInTransaction<void> | undefined;
    }
  | { kind: 'cancel'; caller: Caller; exchange: string; orderId: string; requestId: string | null; answer: AnswerInTransaction<void> | undefined }
  | { kind: 'carry'; caller: Caller; exchange: string; orderId: string; requestId: string | null; answer: AnswerInTransaction<void> | undefined };

/**
 * What a batch's judgments read, loaded once for the batch and kept up to date as its commands are
 * accepted: a later command sees the earlier ones' effects (another bid of the same user counts in its
 * retail limit, a modification sees the order as the one before left it).
 */
class BatchState {
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
      .map((order) => ({ category: order.offerCategory!, orderType: order.orderType, pricePaise: order.pricePaise, quantity: order.quantity - order.tradedQuantity }));
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

  /** The user's retail exposure in the issues of the symbol, without `except` (the order a modification replaces). */
  exposures(userId: string, symbol: string, except: Order | null): IssueExposure[] {
    const rows = this.exposureRowsOf(userId, symbol);
    if (except === null) return rows;
    const own = exposureDelta(except, { ...except, status: OrderStatus.CANCELLED });
    return rows.map((row) =>
      row.exchange === except.exchange && row.scripToken === except.scripToken
        ? { ...row, priceValuePaise: row.priceValuePaise + own.priceValuePaise, cutoffQuantity: row.cutoffQuantity + own.cutoffQuantity }
        : row,
    );
  }

  /** Records an accepted change, for the commands after it. */
  accept(change: OrderChange): void {
    const { after } = change;
    this.orders.set(after.orderId, after);
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
 * Order-entry batches one PostgreSQL node runs at once (each on its own connection of the pool of 10): a
 * batch mostly waits for round trips and its commit, and its locks (per retail user, per order) let
 * batches of different users run side by side.
 */
export const POSTGRES_BATCHES_IN_FLIGHT = 4;

const issueKey = (exchange: string, scripToken: number) => `${exchange}\u0000${scripToken}`;

/** What a batch is judged on: the loaded state, and each command's idempotency key still held (or the refusal). */
interface Loaded {
  state: BatchState;
  held: Map<Command, ApiError>;
}

export class OrderEntryService {
  private readonly committer: GroupCommitter<Command, Loaded, unknown, OrderChange>;

  constructor(
    private readonly store: Pick<Store, 'writeTransaction' | 'dialect'>,
    private readonly issues: OfsIssueRepository,
    private readonly offers: OfsOfferRepository,
    private readonly orders: OrderRepository,
    private readonly now: () => number,
    metrics?: OrderEntryMetrics,
  ) {
    this.committer = new GroupCommitter(
      store,
      { read: (tx, commands) => this.read(tx, commands), judge, write: (tx, accepted, { state }) => this.write(tx, accepted, state.now) },
      { maxInFlight: store.dialect === 'postgres' ? POSTGRES_BATCHES_IN_FLIGHT : 1, ...(metrics !== undefined && { metrics }) },
    );
  }

  /** Whether order entry's commits fall behind (load shedding): see GroupCommitter.fallsBehind. */
  commitsFallBehind(maxWaitMs: number): { behind: boolean; oldestWaitMs: number } {
    return this.committer.fallsBehind(maxWaitMs);
  }

  /**
   * Places an OFS bid and answers its order id once it is durably stored. `answer`, for a request with an
   * idempotency key, writes the request's answer in the same transaction as the order.
   */
  async placeOfsBid(caller: Caller, bid: OfsOrderRequest, requestId: string | null, answer?: AnswerInTransaction<string>): Promise<string> {
    ApiError.throwIfAny(crossFieldViolations(bid));
    ApiError.throwIfAny(callerViolations(bid, caller.userId));
    const { exchange, scrip_token } = bid.scrip_info;
    // A price that is not a whole number of paise is refused by issueViolations before this is stored.
    const order = acceptedOrder(
      {
        orderId: timeOrderedId(),
        userId: caller.userId,
        exchange,
        scripToken: scrip_token,
        symbol: bid.scrip_info.symbol,
        series: bid.scrip_info.series,
        transactionType: bid.transaction_type,
        productType: bid.product_type,
        orderType: bid.order_type,
        quantity: Number(bid.quantity),
        pricePaise: rupeesToPaise(bid.price) ?? 0,
        disclosedQuantity: bid.disclosed_quantity ?? 0,
        orderIdentifier: emptyToNull(bid.order_identifier),
        algoId: emptyToNull(bid.algo_id),
        strategyId: emptyToNull(bid.strategy_id),
        partCode: emptyToNull(bid.part_code),
        venderCode: emptyToNull(bid.vender_code),
        requestId,
        category: caller.category,
        // Set by the batch's judgment when the instrument is a listing of an offer.
        offerId: null,
        offerCategory: null,
        marginType: null,
      },
      0,
    );
    await this.committer.run({ kind: 'place', caller, bid, order, answer });
    return order.orderId;
  }

  /**
   * Replaces the terms of one of the caller's live orders and queues the change for the OMS. The new
   * terms keep every rule a new bid keeps; the retail limit counts them instead of the order's current
   * terms.
   */
  async modifyOrder(
    caller: Caller,
    exchange: string,
    orderId: string,
    request: ModifyOrderRequest,
    requestId: string | null,
    answer?: AnswerInTransaction<void>,
  ): Promise<void> {
    ApiError.throwIfAny(modifyPathViolations(request, exchange, orderId));
    // The schema has checked the numbers' form: whole numbers, or strings of their digits.
    const terms: ModifiedTerms = {
      order_type: request.order_type,
      quantity: String(request.quantity),
      price: request.price,
      disclosed_quantity: request.disclosed_quantity,
      traded_quantity: request.traded_quantity === undefined ? undefined : Number(request.traded_quantity),
    };
    ApiError.throwIfAny(crossFieldViolations(terms));
    await this.committer.run({ kind: 'modify', caller, exchange, orderId, request: terms, requestId, answer });
  }

  /**
   * Carries one of the caller's unallotted non-retail bids in an offer forward to T+1 (its unallotted
   * quantity), and queues it for the exchange. Again for a bid already carried forward: no change.
   */
  async carryForward(caller: Caller, exchange: string, orderId: string, requestId: string | null, answer?: AnswerInTransaction<void>): Promise<void> {
    await this.committer.run({ kind: 'carry', caller, exchange, orderId, requestId, answer });
  }

  /** Asks the OMS to cancel one of the caller's live orders. */
  async cancelOrder(caller: Caller, exchange: string, orderId: string, requestId: string | null, answer?: AnswerInTransaction<void>): Promise<void> {
    await this.committer.run({ kind: 'cancel', caller, exchange, orderId, requestId, answer });
  }

  /**
   * What a batch reads: the locks (PostgreSQL: per retail user, for what can raise a retail total; see
   * lockUsers), the orders it changes (locked), their issues and the bids', the retail totals, and whether
   * each request still holds its idempotency key.
   */
  private async read(tx: StoreTx, commands: readonly Command[]): Promise<Loaded> {
    const now = this.now();
    const retailUsers = commands.filter((c) => (c.kind === 'place' || c.kind === 'modify') && c.caller.category === 'RETAIL').map((c) => c.caller.userId);
    // A modification of a bid in an offer may raise its bidder's retail or employee total there, like a new bid.
    const limitedUsers = commands.filter((c) => c.kind === 'modify' || c.kind === 'place').map((c) => c.caller.userId);
    const placements = commands.filter((c) => c.kind === 'place');
    // The instruments bid on that are no issue may be an offer's listings: their users' limits are judged too.
    const instruments = new Map<string, [string, number]>();
    for (const { order } of placements) instruments.set(issueKey(order.exchange, order.scripToken), [order.exchange, order.scripToken]);
    const issues = new Map<string, OfsIssue | undefined>();
    const offers = new Map<string, OfferRegistration | undefined>();
    await this.readInstruments(tx, instruments, issues, offers);
    const hasOffers = [...offers.values()].some((offer) => offer !== undefined);
    await this.orders.lockUsers(tx, hasOffers || commands.some((c) => c.kind === 'modify') ? limitedUsers : retailUsers);
    const orders = await this.orders.lockOrders(
      tx,
      commands.flatMap((c) => (c.kind === 'place' ? [] : [c.orderId])),
    );
    const more = new Map<string, [string, number]>();
    for (const order of orders.values()) {
      const key = issueKey(order.exchange, order.scripToken);
      if (!instruments.has(key)) more.set(key, [order.exchange, order.scripToken]);
    }
    await this.readInstruments(tx, more, issues, offers);
    const held = new Map<Command, ApiError>();
    for (const command of commands) {
      const refusal = await refusalOf(() => command.answer?.confirmHeld(tx));
      if (refusal !== null) held.set(command, refusal);
    }
    // The offers' bidders: who each placing user is in its offer, and its live bids there.
    const offerIds = new Set<string>();
    const bidders = new Map<string, OfferBidder>();
    for (const offer of offers.values()) if (offer !== undefined) offerIds.add(offer.offer.offerId);
    for (const offerId of offerIds) {
      const placing = placements.filter((c) => offers.get(issueKey(c.order.exchange, c.order.scripToken))?.offer.offerId === offerId).map((c) => c.caller.userId);
      for (const [userId, bidder] of await this.offers.bidders(offerId, placing, tx)) bidders.set(`${offerId}\u0000${userId}`, bidder);
    }
    const liveOfferBids = offerIds.size === 0 ? [] : await this.orders.liveOfferBids(tx, limitedUsers, [...offerIds]);
    return { state: new BatchState(now, issues, orders, await this.orders.exposures(tx, retailUsers), offers, bidders, liveOfferBids), held };
  }

  /** Each instrument's issue, or else the offer it is a listing of (or neither). */
  private async readInstruments(
    tx: StoreTx,
    instruments: Map<string, [string, number]>,
    issues: Map<string, OfsIssue | undefined>,
    offers: Map<string, OfferRegistration | undefined>,
  ): Promise<void> {
    for (const [key, [exchange, scripToken]] of instruments) {
      const issue = await this.issues.find(exchange, scripToken, tx);
      issues.set(key, issue);
      if (issue === undefined) offers.set(key, await this.offers.findByListing(exchange, scripToken, tx));
    }
  }

  /** The accepted changes, together; then each request's answer, for a retry to replay. */
  private async write(tx: StoreTx, accepted: readonly { command: Command; change: OrderChange }[], now: number): Promise<void> {
    await this.orders.apply(
      tx,
      accepted.map((a) => a.change),
      now,
    );
    for (const { command } of accepted) {
      if (command.answer === undefined) continue;
      if (command.kind === 'place') await command.answer.keep(tx, command.order.orderId);
      else await command.answer.keep(tx, undefined);
    }
  }
}

/** Null when `work` passes; the ApiError when it refuses (anything else is thrown on). */
async function refusalOf(work: () => Promise<unknown> | undefined): Promise<ApiError | null> {
  try {
    await work();
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * One command of a batch, judged in order against the batch's state (plain functions: nothing is written
 * here, and no transaction is in reach); an accepted change is recorded in the state, so that the commands
 * after it see it.
 */
function judge(command: Command, { state, held }: Loaded): Judgment<unknown, OrderChange> {
  const refusal = held.get(command);
  if (refusal !== undefined) return { accepted: false, error: refusal };
  try {
    const change = changeOf(command, state);
    state.accept(change);
    return { accepted: true, change, value: command.kind === 'place' ? command.order.orderId : undefined };
  } catch (error) {
    if (error instanceof ApiError) return { accepted: false, error };
    throw error;
  }
}

/** The change a command makes, or the ApiError that refuses it. */
function changeOf(command: Command, state: BatchState): OrderChange {
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

function judgePlacement(command: Extract<Command, { kind: 'place' }>, state: BatchState): OrderChange {
  const { caller, bid } = command;
  const issue = state.issue(command.order.exchange, command.order.scripToken);
  const offer = issue === undefined ? state.offer(command.order.exchange, command.order.scripToken) : undefined;
  if (offer !== undefined) return judgeOfferPlacement(command, state, offer);
  ApiError.throwIfAny(issueViolations(bid, issue));
  const order: Order = { ...command.order, createdAt: state.now, updatedAt: state.now };
  checkPreTrade(state, caller, issue!, order, null);
  return { before: null, after: order, reason: ACCEPTED_REASON, origin: { actor: caller.userId, requestId: order.requestId }, outbox: 'PLACE' };
}

function judgeModification(command: Extract<Command, { kind: 'modify' }>, state: BatchState): OrderChange {
  const { caller, request } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
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
function modificationOf(command: Extract<Command, { kind: 'modify' }>, state: BatchState, order: Order, change: OrderModification): OrderChange {
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

function judgeCancellation(command: Extract<Command, { kind: 'cancel' }>, state: BatchState): OrderChange {
  const { caller } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  if (order.offerId !== null) {
    ApiError.throwIfAny(offerCancellationViolations(offerContextOf(state, order), liveOfferBidOf(order), state.now));
    return cancellationOf(command, state, order);
  }
  const issue = state.issue(order.exchange, order.scripToken);
  if (issue === undefined) {
    throw new ApiError(Errors.OFS_ISSUE_NOT_FOUND, `The OFS issue of order ${command.orderId} is no longer registered`, [
      { field: 'order_id', message: "the order's OFS issue is not registered" },
    ]);
  }
  ApiError.throwIfAny(windowViolations(issue, caller.category, state.now));
  return cancellationOf(command, state, order);
}

function cancellationOf(command: Extract<Command, { kind: 'cancel' }>, state: BatchState, order: Order): OrderChange {
  return {
    before: order,
    after: { ...order, cancelRequestedAt: state.now, updatedAt: state.now },
    reason: CANCELLATION_REASON,
    origin: { actor: command.caller.userId, requestId: command.requestId },
    outbox: 'CANCEL',
  };
}

/** The offer of an order's listing, where it stands now (an order in an offer keeps its listing). */
function offerContextOf(state: BatchState, order: Order): OfferContext {
  const registration = state.offer(order.exchange, order.scripToken);
  if (registration === undefined || registration.offer.offerId !== order.offerId) {
    throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `The offer ${order.offerId} of order ${order.orderId} is no longer registered`, [
      { field: 'order_id', message: "the order's offer is not registered" },
    ]);
  }
  return contextOf(registration, state.now);
}

function contextOf(registration: OfferRegistration, now: number): OfferContext {
  return { offer: registration.offer, state: offerState(registration.offer, registration.progress, now), tCutoffPricePaise: registration.tCutoffPricePaise };
}

function liveOfferBidOf(order: Order): LiveOfferBid {
  return {
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
function judgeOfferPlacement(command: Extract<Command, { kind: 'place' }>, state: BatchState, registration: OfferRegistration): OrderChange {
  const { caller, bid } = command;
  const { offer } = registration;
  const listing = listingOf(offer, command.order.exchange, command.order.scripToken)!;
  // A user the registry no longer knows bids as its session says (the login found it).
  const bidder = state.bidders.get(`${offer.offerId}\u0000${caller.userId}`) ?? {
    category: caller.category === 'RETAIL' ? 'RETAIL' : 'NII',
    marginType: 'H',
    employeeOfOffer: false,
  };
  const terms = { orderType: command.order.orderType, pricePaise: command.order.pricePaise, quantity: command.order.quantity };
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
  return { before: null, after: order, reason: ACCEPTED_REASON, origin: { actor: caller.userId, requestId: order.requestId }, outbox: 'PLACE' };
}

function judgeOfferModification(command: Extract<Command, { kind: 'modify' }>, state: BatchState, order: Order): OrderChange {
  const { caller, request } = command;
  const change: OrderModification = {
    orderType: request.order_type,
    quantity: Number(request.quantity),
    pricePaise: rupeesToPaise(request.price) ?? 0,
    disclosedQuantity: request.disclosed_quantity ?? 0,
  };
  // Only retail and employee bids have limits, and they are never allotted in part while live.
  const others = state.otherOfferBids(caller.userId, order.offerId!, order);
  ApiError.throwIfAny(offerModificationViolations(offerContextOf(state, order), liveOfferBidOf(order), request.price, change, others, state.now));
  return modificationOf(command, state, order, change);
}

/** Carry-forward of an unallotted non-retail bid in an offer to T+1; a second request changes nothing. */
function judgeCarryForward(command: Extract<Command, { kind: 'carry' }>, state: BatchState): OrderChange {
  const { caller } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  if (order.offerId === null) {
    throw new ApiError(Errors.OFS_CARRY_FORWARD_NOT_ALLOWED, `Order ${order.orderId} is a bid in an OFS issue, not in an offer: only bids in an offer are carried forward`, [
      { field: 'order_id', message: 'the order is not a bid in an offer' },
    ]);
  }
  const unallotted = order.quantity - order.tradedQuantity;
  const context = offerContextOf(state, order);
  ApiError.throwIfAny(carryForwardViolations(context.offer, context.state, { category: order.offerCategory!, live: true, unallottedQuantity: unallotted }, state.now));
  const origin = { actor: caller.userId, requestId: command.requestId };
  if (order.carriedForwardAt !== null) return { before: order, after: order, reason: 'Carry-forward requested again: the bid is already carried forward', origin };
  return {
    before: order,
    after: { ...order, carriedForwardAt: state.now, updatedAt: state.now },
    reason: `Carried forward to T+1: ${unallotted} unallotted shares at ${formatPrice(order.pricePaise)}`,
    origin,
    outbox: 'CARRY_FORWARD',
  };
}

/**
 * The pre-trade checks: the caller's window, the price rules, and for a retail caller the Rs 2,00,000
 * limit over the caller's live bids in the issue's symbol (without `replaced`, the order a modification
 * replaces).
 */
function checkPreTrade(state: BatchState, caller: Caller, issue: OfsIssue, terms: BidTerms, replaced: Order | null): void {
  ApiError.throwIfAny(windowViolations(issue, caller.category, state.now));
  ApiError.throwIfAny(priceViolations(terms, issue, caller.category));
  if (caller.category !== 'RETAIL') return;
  ApiError.throwIfAny(retailLimitViolations(terms, issue, caller.category, state.exposures(caller.userId, issue.symbol, replaced)));
}

/** The caller's order on that exchange, still live and with no cancellation under way. */
function ownLiveOrder(state: BatchState, caller: Caller, exchange: string, orderId: string): Order {
  const order = state.orders.get(orderId);
  // Another user's order answers exactly like one that does not exist.
  if (order === undefined || order.userId !== caller.userId || order.exchange !== exchange) throw orderNotFound(exchange, orderId);
  if (!isLiveStatus(order.status)) {
    throw new ApiError(Errors.ORDER_NOT_LIVE, `Order ${orderId} is ${order.status}: a finished order can no longer be modified or cancelled`, [
      { field: 'order_id', message: `the order is ${order.status}` },
    ]);
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
