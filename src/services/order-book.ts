/**
 * The order book and the order history: what the caller's orders are now, and how they got there. A user
 * sees only their own orders; another user's order answers exactly like one that does not exist.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { paiseToRupees } from '../domain/ofs-issue.js';
import type { OrderBookEntry, OrderBookQuery, OrderHistoryEntry } from '../schemas/orders.js';
import type { Order, RecordedChange } from '../domain/order.js';
import { isLiveStatus } from '../domain/order-status.js';
import type { OrderRepository } from '../store/orders.js';
import type { Caller } from './auth.js';

export const DEFAULT_PAGE_SIZE = 20;

export interface OrderBookPage {
  orders: OrderBookEntry[];
  total_count: number;
  offset: number;
  limit: number;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();
const orEmpty = (value: string | null) => value ?? '';

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
    order_price: paiseToRupees(order.pricePaise),
    traded_price: order.tradedPricePaise === null ? 0 : paiseToRupees(order.tradedPricePaise),
    disclosed_quantity: order.disclosedQuantity,
    order_identifier: orEmpty(order.orderIdentifier),
    algo_id: orEmpty(order.algoId),
    strategy_id: orEmpty(order.strategyId),
    part_code: orEmpty(order.partCode),
    vender_code: orEmpty(order.venderCode),
    error_reason: orEmpty(order.errorReason),
    exchange_order_id: orEmpty(order.exchangeOrderId),
    order_timestamp: iso(order.createdAt),
    last_modified: iso(order.updatedAt),
    category: order.category,
  };
}

export function toOrderHistoryEntry(entry: RecordedChange): OrderHistoryEntry {
  return {
    status: entry.status,
    reason: entry.reason,
    at: iso(entry.at),
    quantity: entry.quantity,
    price: paiseToRupees(entry.pricePaise),
    traded_quantity: entry.tradedQuantity,
  };
}

export class OrderBookService {
  constructor(private readonly orders: OrderRepository) {}

  /** One page of the caller's orders, newest first, with the number of orders that match in all. */
  async orderBook(caller: Caller, query: OrderBookQuery): Promise<OrderBookPage> {
    // The schema has checked that offset and limit are strings of digits in range.
    const page = query.offset === undefined ? 1 : Number(query.offset);
    const pageSize = query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit);
    const { orders, totalCount } = await this.orders.orderBook({
      userId: caller.userId,
      status: query.orderStatus,
      orderId: query.order_id,
      page,
      pageSize,
    });
    return { orders: orders.map(toOrderBookEntry), total_count: totalCount, offset: page, limit: pageSize };
  }

  /** The caller's order's changes, oldest first. */
  async history(caller: Caller, orderId: string): Promise<OrderHistoryEntry[]> {
    const order = await this.orders.findOwned(orderId, caller.userId);
    if (order === undefined) {
      throw new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId}`, [{ field: 'order_id', message: 'no order of yours has this id' }]);
    }
    return (await this.orders.history(orderId)).map(toOrderHistoryEntry);
  }
}
