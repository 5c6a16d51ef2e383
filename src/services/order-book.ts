/**
 * The order book and the order history: what the caller's orders are now, and how they got there. A user
 * sees only their own orders; another user's order answers exactly like one that does not exist.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { formatPrice } from '../domain/ofs-issue.js';
import { odinTimestamp, statusesOf } from '../domain/odin.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import type { OrderBookEntry, OrderBookQuery, OrderHistoryEntry } from '../schemas/orders.js';
import type { Order, RecordedChange } from '../domain/order.js';
import { isLiveStatus, OrderStatus } from '../domain/order-status.js';
import type { OrderRepository } from '../store/orders.js';
import type { Caller } from './auth.js';

export const DEFAULT_PAGE_SIZE = 20;

/** A list's page from its query (the schema has checked that offset and limit are digit strings in range). */
export function pageOf(query: { offset?: string | undefined; limit?: string | undefined }): { page: number; pageSize: number } {
  return { page: query.offset === undefined ? 1 : Number(query.offset), pageSize: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit) };
}

export interface OrderBookPage {
  data: OrderBookEntry[];
  metadata: PageMetadata;
}

const orEmpty = (value: string | null) => value ?? '';
const ZERO_PRICE = formatPrice(0);

/** An order under ODIN's order-book names and formats (prices as strings, times in India time). */
export function toOrderBookEntry(order: Order): OrderBookEntry {
  return {
    order_id: order.orderId,
    exchange: order.exchange,
    scrip_token: order.scripToken,
    symbol: order.symbol,
    series: order.series,
    transaction_type: order.transactionType,
    product_type: order.productType,
    order_type: order.orderType,
    status: order.status,
    total_quantity: order.quantity,
    traded_quantity: order.tradedQuantity,
    // A finished order has nothing left working: what was not allotted is cancelled.
    pending_quantity: isLiveStatus(order.status) ? order.quantity - order.tradedQuantity : 0,
    disclosed_quantity: order.disclosedQuantity,
    order_price: formatPrice(order.pricePaise),
    trigger_price: ZERO_PRICE,
    traded_price: order.tradedPricePaise === null ? ZERO_PRICE : formatPrice(order.tradedPricePaise),
    validity: 'DAY',
    validity_days: 0,
    order_timestamp: odinTimestamp(order.createdAt),
    // The exchange's last report is the order's last change once the exchange has it.
    exchange_timestamp: order.exchangeOrderId === null ? '' : odinTimestamp(order.updatedAt),
    last_modified: odinTimestamp(order.updatedAt),
    error_reason: orEmpty(order.errorReason),
    exchange_order_no: orEmpty(order.exchangeOrderId),
    client_id: order.userId,
    order_identifier: orEmpty(order.orderIdentifier),
    algo_id: orEmpty(order.algoId),
    strategy_id: orEmpty(order.strategyId),
    part_code: orEmpty(order.partCode),
    vender_code: orEmpty(order.venderCode),
    category: order.category,
    offer_id: orEmpty(order.offerId),
    bid_category: orEmpty(order.offerCategory),
    margin_type: orEmpty(order.marginType),
    carried_forward: order.carriedForwardAt !== null,
  };
}

/** Statuses of an order the exchange does not have (yet, or ever). */
const BEFORE_THE_EXCHANGE: readonly OrderStatus[] = [OrderStatus.OMSXMITTED, OrderStatus.EXXMITTED, OrderStatus.OMSREJECT];

/**
 * One change of the order: the order as that change left it (status, quantities, price, and the reason
 * of a rejection or a non-allotment), the rest as the order is now.
 */
export function toOrderHistoryEntry(order: Order, change: RecordedChange): OrderHistoryEntry {
  const finishedUnfilled = !isLiveStatus(change.status) && change.status !== OrderStatus.EXECUTED;
  const entry = toOrderBookEntry({
    ...order,
    status: change.status,
    quantity: change.quantity,
    pricePaise: change.pricePaise,
    tradedQuantity: change.tradedQuantity,
    updatedAt: change.at,
    errorReason: finishedUnfilled ? order.errorReason : null,
    // The price the change left the order with (entries older than migration 0014 keep none: the order's).
    tradedPricePaise: change.tradedQuantity > 0 ? (change.tradedPricePaise ?? order.tradedPricePaise) : null,
    exchangeOrderId: BEFORE_THE_EXCHANGE.includes(change.status) ? null : order.exchangeOrderId,
  });
  return { ...entry, reason: change.reason };
}

export class OrderBookService {
  constructor(private readonly orders: OrderRepository) {}

  /** One page of the caller's orders, newest first, with the number of orders that match in all. */
  async orderBook(caller: Caller, query: OrderBookQuery): Promise<OrderBookPage> {
    const { page, pageSize } = pageOf(query);
    const { orders, totalCount } = await this.orders.orderBook({
      userId: caller.userId,
      statuses: statusesOf(query.orderStatus),
      orderId: query.order_id,
      page,
      pageSize,
    });
    return { data: orders.map(toOrderBookEntry), metadata: { total_records: totalCount, offset: page, limit: pageSize } };
  }

  /** The caller's order's changes, oldest first. */
  async history(caller: Caller, orderId: string): Promise<OrderHistoryEntry[]> {
    // The changes first, then the order: the order read is never older than the last change read (each
    // entry takes what the order is now for what its change did not record, e.g. the allotment price).
    const changes = await this.orders.history(orderId);
    const order = await this.orders.findOwned(orderId, caller.userId);
    if (order === undefined) {
      throw new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId}`, [{ field: 'order_id', message: 'no order of yours has this id' }]);
    }
    return changes.map((change) => toOrderHistoryEntry(order, change));
  }
}
