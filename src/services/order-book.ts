/**
 * The order book and the order history: what the caller's orders are now, and how they got there. A user
 * sees only their own orders; another user's order answers exactly like one that does not exist.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { statusesOf } from '../domain/orders/odin.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import { toOrderBookEntry, toOrderHistoryEntry } from '../schemas/mappers/orders.js';
import type { OrderBookEntry, OrderBookQuery, OrderHistoryEntry } from '../schemas/orders.js';
import type { OrderBookReads } from '../store/orders/order-book.js';
import type { Caller } from './auth.js';

export const DEFAULT_PAGE_SIZE = 20;

/** A list's page from its query (the schema has checked that offset and limit are digit strings in range). */
export function pageOf(query: { offset?: string | undefined; limit?: string | undefined }): {
  page: number;
  pageSize: number;
} {
  return {
    page: query.offset === undefined ? 1 : Number(query.offset),
    pageSize: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
  };
}

export interface OrderBookPage {
  data: OrderBookEntry[];
  metadata: PageMetadata;
}

export class OrderBookService {
  constructor(private readonly orders: OrderBookReads) {}

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
    return {
      data: orders.map(toOrderBookEntry),
      metadata: { total_records: totalCount, offset: page, limit: pageSize },
    };
  }

  /** The caller's order's changes, oldest first. */
  async history(caller: Caller, orderId: string): Promise<OrderHistoryEntry[]> {
    // The changes first, then the order: the order read is never older than the last change read (each
    // entry takes what the order is now for what its change did not record, e.g. the allotment price).
    const changes = await this.orders.history(orderId);
    const order = await this.orders.findOwned(orderId, caller.userId);
    if (order === undefined) {
      throw new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId}`, [
        { field: 'order_id', message: 'no order of yours has this id' },
      ]);
    }
    return changes.map((change) => toOrderHistoryEntry(order, change));
  }
}
