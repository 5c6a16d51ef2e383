/**
 * An order as the services and the OMS see it: what order entry accepted and what became of it. The store
 * maps it to and from its table (snake_case columns, PostgreSQL's int8 as strings); nothing above the store
 * sees a row.
 */
import {
  countsTowardRetailLimit,
  exposureOfBid,
  type BidderCategory,
  type ExposureAmounts,
  type IssueExposure,
} from '../ofs/rules.js';
import { allotmentCostPaise } from '../funds/blocking.js';
import { OrderStatus } from './status.js';
import { tradeIdOf, type Trade } from '../funds/trades.js';
import type { MarginType, OfferCategory } from '../ofs/offer/offer.js';
import type { ClientType } from '../access/member-data.js';

export interface Order {
  orderId: string;
  userId: string;
  exchange: string;
  scripToken: number;
  symbol: string;
  series: string;
  transactionType: string;
  productType: string;
  orderType: string;
  quantity: number;
  pricePaise: number;
  disclosedQuantity: number;
  tradedQuantity: number;
  status: OrderStatus;
  /** Why the OMS or the exchange rejected it, or why it was not allotted. */
  errorReason: string | null;
  orderIdentifier: string | null;
  algoId: string | null;
  strategyId: string | null;
  partCode: string | null;
  venderCode: string | null;
  /** The request that placed it. */
  requestId: string | null;
  createdAt: number;
  updatedAt: number;
  /** The caller's category when the order was placed. */
  category: BidderCategory;
  /** Set when the user asked to cancel it; the OMS finishes the cancellation. */
  cancelRequestedAt: number | null;
  /** The clearing price of what was allotted. */
  tradedPricePaise: number | null;
  exchangeOrderId: string | null;
  /**
   * The funds blocked for the bid (docs/design/funds.md): null when its bidder has no funds account (it is
   * not funds-checked), else what the OMS blocked, 0 once the bid is finished.
   */
  fundsBlockedPaise: number | null;
  /** A bid in an offer (docs/design/ofs.md): its offer; null on a bid in an issue of the one-listing model. */
  offerId: string | null;
  /** The bid's category in its offer (from its series and the bidder); null outside an offer. */
  offerCategory: OfferCategory | null;
  /** The bid's margin in its offer: H (100 %) or T (0 %, blocks nothing); null outside an offer. */
  marginType: MarginType | null;
  /** When the bidder carried the unallotted non-retail bid forward to T+1. */
  carriedForwardAt: number | null;
  /**
   * The member data its client had when order entry accepted it (docs/design/member-data.md), kept for the
   * bid's whole life: an exchange link sends these with every message of the bid, whatever the user's record
   * says later. Null on orders placed before migration 0025 (or without the data recorded).
   */
  ucc: string | null;
  clientType: ClientType | null;
  custodianCode: string | null;
  pan: string | null;
}

/** An order as the API accepts it, before the OMS has seen it. */
export type NewOrder = Pick<
  Order,
  | 'orderId'
  | 'userId'
  | 'exchange'
  | 'scripToken'
  | 'symbol'
  | 'series'
  | 'transactionType'
  | 'productType'
  | 'orderType'
  | 'quantity'
  | 'pricePaise'
  | 'disclosedQuantity'
  | 'orderIdentifier'
  | 'algoId'
  | 'strategyId'
  | 'partCode'
  | 'venderCode'
  | 'requestId'
  | 'category'
  | 'offerId'
  | 'offerCategory'
  | 'marginType'
> &
  /** The client's member data as order entry read it with the session (absent: none recorded). */
  Partial<Pick<Order, 'ucc' | 'clientType' | 'custodianCode' | 'pan'>>;

/**
 * A new order as order entry accepts it: OMSXMITTED, nothing traded. Written out field by field: an object
 * spread here cost 2 % of the server's CPU under load (every bid makes one, and the objects spread from it
 * after it were slower to read too).
 */
export function acceptedOrder(order: NewOrder, now: number): Order {
  return {
    orderId: order.orderId,
    userId: order.userId,
    exchange: order.exchange,
    scripToken: order.scripToken,
    symbol: order.symbol,
    series: order.series,
    transactionType: order.transactionType,
    productType: order.productType,
    orderType: order.orderType,
    quantity: order.quantity,
    pricePaise: order.pricePaise,
    disclosedQuantity: order.disclosedQuantity,
    tradedQuantity: 0,
    status: OrderStatus.OMSXMITTED,
    errorReason: null,
    orderIdentifier: order.orderIdentifier,
    algoId: order.algoId,
    strategyId: order.strategyId,
    partCode: order.partCode,
    venderCode: order.venderCode,
    requestId: order.requestId,
    createdAt: now,
    updatedAt: now,
    category: order.category,
    cancelRequestedAt: null,
    tradedPricePaise: null,
    exchangeOrderId: null,
    fundsBlockedPaise: null,
    offerId: order.offerId,
    offerCategory: order.offerCategory,
    marginType: order.marginType,
    carriedForwardAt: null,
    ucc: order.ucc ?? null,
    clientType: order.clientType ?? null,
    custodianCode: order.custodianCode ?? null,
    pan: order.pan ?? null,
  };
}

export const ACCEPTED_REASON = 'Order entry accepted and queued for the OMS';

/** One entry of an order's history (its audit trail): the order's terms and status after a change. */
export interface RecordedChange {
  orderId: string;
  status: OrderStatus;
  reason: string;
  quantity: number;
  pricePaise: number;
  tradedQuantity: number;
  /** The traded price the change left the order with (null: nothing allotted, or an entry older than migration 0014). */
  tradedPricePaise: number | null;
  at: number;
  /** Who made the change: the user, "oms" or "exchange" (null on entries older than the audit trail). */
  actor: string | null;
  requestId: string | null;
}

/**
 * Who made an order change, for its history entry: the user, through a request, or the OMS worker ("oms"
 * for its own decisions, "exchange" for what the exchange answered or reported).
 */
export interface ChangeOrigin {
  actor: string;
  requestId: string | null;
}

export const OMS_ORIGIN: ChangeOrigin = { actor: 'oms', requestId: null };
export const EXCHANGE_ORIGIN: ChangeOrigin = { actor: 'exchange', requestId: null };

/** The work for the OMS that an order change queues. */
export type OutboxAction = 'PLACE' | 'MODIFY' | 'CANCEL' | 'CARRY_FORWARD';

/** One change of one order: what it was (null: a new order), what it is now, and why. */
export interface OrderChange {
  before: Order | null;
  after: Order;
  /** The reason of its history entry (the order event). */
  reason: string;
  origin: ChangeOrigin;
  outbox?: OutboxAction;
  /** The trade the change makes: an allotment. */
  trade?: Trade;
  /**
   * Nothing changes (a carry-forward asked again): the request is answered, and nothing is written, no
   * history row and no event (issue 47 row 6).
   */
  unchanged?: true;
}

/**
 * The trade of an allotment of `quantity` shares at `pricePaise` to the order. An order has at most two: a
 * bid in an offer allotted in part on T may be allotted the rest on T+1 (its second trade, `part` 2).
 */
export function tradeOfAllotment(
  order: Order,
  quantity: number,
  pricePaise: number,
  at: number,
  settlesAt: number,
  part: 1 | 2 = 1,
): Trade {
  if (quantity <= 0) throw new Error(`order ${order.orderId} has no allotment`);
  return {
    tradeId: part === 1 ? tradeIdOf(order.orderId) : `${tradeIdOf(order.orderId)}-${part}`,
    orderId: order.orderId,
    userId: order.userId,
    exchange: order.exchange,
    scripToken: order.scripToken,
    symbol: order.symbol,
    series: order.series,
    transactionType: order.transactionType,
    productType: order.productType,
    quantity,
    pricePaise,
    tradedAt: at,
    settlesAt,
    exchangeOrderId: order.exchangeOrderId,
    orderIdentifier: order.orderIdentifier,
  };
}

/** The order's traded price after a further allotment: the average over its allotments, to the nearest paisa. */
export function averageTradedPricePaise(
  order: Pick<Order, 'tradedQuantity' | 'tradedPricePaise'>,
  quantity: number,
  pricePaise: number,
): number {
  if (order.tradedQuantity === 0 || order.tradedPricePaise === null) return pricePaise;
  const value = BigInt(order.tradedQuantity) * BigInt(order.tradedPricePaise) + BigInt(quantity) * BigInt(pricePaise);
  const total = BigInt(order.tradedQuantity + quantity);
  return Number((value * 2n + total) / (2n * total));
}

/** What the order adds to its issue's retail exposure now (nothing unless a live retail bid in an issue). */
export function orderExposure(order: Order): ExposureAmounts {
  // A bid in an offer counts in its offer's limits (order entry reads the bidder's live bids in the offer).
  if (order.offerId !== null || !countsTowardRetailLimit(order)) return { priceValuePaise: 0, cutoffQuantity: 0 };
  return exposureOfBid(order);
}

/** after - before, for the retail exposure of the order's issue. */
export function exposureDelta(before: Order | null, after: Order): ExposureAmounts {
  const now = orderExposure(after);
  const was = before === null ? { priceValuePaise: 0, cutoffQuantity: 0 } : orderExposure(before);
  return {
    priceValuePaise: now.priceValuePaise - was.priceValuePaise,
    cutoffQuantity: now.cutoffQuantity - was.cutoffQuantity,
  };
}

/** A user's running retail totals in one issue (the retail limit's state), with that issue's prices. */
export interface RetailExposure extends IssueExposure {
  userId: string;
  symbol: string;
  exchange: string;
  scripToken: number;
}

/** An order event: one entry of an order's history, with the order as it is now. */
export interface OrderEventRecord {
  /** The id its user sees: their n-th order event has n (it reveals nothing of other users' events). */
  eventId: number;
  /** Its place among every user's events (the history row's id): the order the feed reads them in. */
  historyId: number;
  userId: string;
  change: RecordedChange;
  order: Order;
  /** The trade the change made (an allotment), when it made one: an order allotted on T and T+1 has two. */
  trade?: { tradeId: string; quantity: number; pricePaise: number };
}

/** What changes of an order do to its bidder's funds: blocked more (or less), and what an allotment debits. */
export interface FundsEffect {
  userId: string;
  orderId: string;
  /** after - before of the order's block; negative: released. */
  blockedDeltaPaise: number;
  /** The allotment's cost, debited from cash (and released from the block) when the order became EXECUTED. */
  debitPaise: number;
}

/**
 * The effect on funds of an order going from `before` to `after` (null: none), with what its allotments
 * in between cost (`debitPaise`: their trades). Only funds-checked orders have one.
 */
export function fundsEffect(before: Order | null, after: Order, debitPaise: number): FundsEffect | null {
  if (after.fundsBlockedPaise === null) return null;
  const blockedDeltaPaise = after.fundsBlockedPaise - (before?.fundsBlockedPaise ?? 0);
  if (blockedDeltaPaise === 0 && debitPaise === 0) return null;
  return { userId: after.userId, orderId: after.orderId, blockedDeltaPaise, debitPaise };
}

/** What a trade costs: its quantity at its price. */
export function tradeCostPaise(trade: Pick<Trade, 'quantity' | 'pricePaise'>): number {
  return allotmentCostPaise(trade.quantity, trade.pricePaise);
}
