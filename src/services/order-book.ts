/**
 * The order book and the order history: what the caller's orders are now, and how they got there. A user
 * sees only their own orders; another user's order answers exactly like one that does not exist.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { paiseToRupees } from '../domain/ofs-issue.js';
import type { OrderBookEntry, OrderBookQuery, OrderHistoryEntry } from '../schemas/orders.js';
import { LIVE_STATUSES, type OrderStatus } from '../domain/order-status.js';
import type { OrderHistoryRow, OrderRepository, OrderRow } from '../store/orders.js';
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

export function toOrderBookEntry(row: OrderRow): OrderBookEntry {
  const quantity = Number(row.quantity);
  const traded = Number(row.traded_quantity);
  const live = LIVE_STATUSES.includes(row.status as OrderStatus);
  return {
    order_id: row.order_id,
    exchange: row.exchange,
    scrip_token: Number(row.scrip_token),
    symbol: row.symbol,
    series: row.series,
    transaction_type: row.transaction_type,
    product_type: row.product_type,
    order_type: row.order_type,
    status: row.status as OrderStatus,
    total_quantity: quantity,
    traded_quantity: traded,
    // A finished order has nothing left working: what was not allotted is cancelled.
    pending_quantity: live ? quantity - traded : 0,
    order_price: paiseToRupees(Number(row.price_paise)),
    traded_price: row.traded_price_paise === null ? 0 : paiseToRupees(Number(row.traded_price_paise)),
    disclosed_quantity: Number(row.disclosed_quantity),
    order_identifier: orEmpty(row.order_identifier),
    algo_id: orEmpty(row.algo_id),
    strategy_id: orEmpty(row.strategy_id),
    part_code: orEmpty(row.part_code),
    vender_code: orEmpty(row.vender_code),
    error_reason: orEmpty(row.error_reason),
    exchange_order_id: orEmpty(row.exchange_order_id),
    order_timestamp: iso(Number(row.created_at)),
    last_modified: iso(Number(row.updated_at)),
    category: row.category as OrderBookEntry['category'],
  };
}

export function toOrderHistoryEntry(row: OrderHistoryRow): OrderHistoryEntry {
  return {
    status: row.status as OrderStatus,
    reason: row.reason,
    at: iso(Number(row.at)),
    quantity: Number(row.quantity),
    price: paiseToRupees(Number(row.price_paise)),
    traded_quantity: Number(row.traded_quantity),
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
