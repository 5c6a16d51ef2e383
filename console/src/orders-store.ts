/**
 * The caller's order book as the console knows it: read once, page by page, then kept current by the order
 * events (a new order arrives with its first event, OMSXMITTED, stored in the same transaction as the order).
 * Views subscribe to hear which order changed, and when the book has been read. The store also keeps the last
 * few changes worth telling the user (a new status, an allotment, a modification, a carry-forward), for the
 * order book's notices.
 */
import { api } from './api.js';
import type { Order, OrderEvent } from './types.js';

export type OrderListener = (order: Order, previous: Order | undefined) => void;

/** The API's largest page (`limit` is 1 to 1000). */
const PAGE = 1000;
/** The most orders read at login: a bound on the time and memory a huge book costs the page. */
export const MOST_ORDERS = 5_000;

/** How far the read of the book went. */
export type BookRead =
  | { state: 'reading' }
  | { state: 'complete' }
  /** MOST_ORDERS were read and the book holds `total` (older orders are not shown). */
  | { state: 'capped'; read: number; total: number }
  | { state: 'failed'; message: string };

/** Sent to the OMS or to the exchange, not yet answered: an order passes through these on its way. */
export const IN_FLIGHT = new Set<string>(['OMSXMITTED', 'EXXMITTED']);
/** The statuses an order ends in: it can no longer be modified or cancelled. */
export const FINISHED = new Set<string>(['OMSREJECT', 'ORDERERROR', 'CANCELLED', 'EXECUTED']);

/** Still working (in flight or live at the exchange): it may be modified or cancelled. */
export const isOpen = (order: Pick<Order, 'status'>): boolean => !FINISHED.has(order.status);

/** A change of one of the user's orders worth telling them, as an event brought it. */
export interface OrderChange {
  order: Order;
  /** The order as the console knew it before; undefined when the event made it known. */
  previous: Order | undefined;
}

/** How many changes the store keeps for the notices. */
export const RECENT_CHANGES = 5;

/**
 * Whether a change is worth a notice: the order reached a status other than in flight (the steps on the way
 * are not), was allotted more, was modified, or was carried forward. An order placed a moment ago (its first
 * event, in flight) is not: its form said so.
 */
export function isNotable(order: Order, previous: Order | undefined): boolean {
  if (previous === undefined) return !IN_FLIGHT.has(order.status);
  if (previous.status !== order.status) return !IN_FLIGHT.has(order.status);
  return (
    order.traded_quantity > previous.traded_quantity ||
    order.carried_forward !== previous.carried_forward ||
    order.total_quantity !== previous.total_quantity ||
    order.order_price !== previous.order_price ||
    order.order_type !== previous.order_type
  );
}

/** Order ids compared newest first, as the order book lists them. */
export const newerFirst = (a: string, b: string): number => (a < b ? 1 : a > b ? -1 : 0);

export class OrderStore {
  private readonly orders = new Map<string, Order>();
  private readonly listeners = new Set<OrderListener>();
  private readonly readListeners = new Set<(read: BookRead) => void>();
  private bookRead: BookRead = { state: 'reading' };
  private readonly changes: OrderChange[] = [];

  /** Newest first, as the order book lists them. */
  list(): Order[] {
    return [...this.orders.values()].sort((a, b) => newerFirst(a.order_id, b.order_id));
  }

  find(orderId: string): Order | undefined {
    return this.orders.get(orderId);
  }

  /** The last RECENT_CHANGES notable changes, newest first. */
  recentChanges(): readonly OrderChange[] {
    return this.changes;
  }

  get read(): BookRead {
    return this.bookRead;
  }

  /** Hears each order that changed (an event); the book's read at login is told by onRead instead. */
  subscribe(listener: OrderListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears once when the read of the book ends (complete, capped or failed). */
  onRead(listener: (read: BookRead) => void): () => void {
    this.readListeners.add(listener);
    return () => this.readListeners.delete(listener);
  }

  /**
   * Reads the order book, every page of it up to MOST_ORDERS. Call it once the event stream is open: an
   * order already known from a later event keeps that event's state. `offset` is a page number and the
   * book is newest first, so an order placed meanwhile pushes the later pages down: an order then comes
   * twice (kept once), none is skipped. Rejects with the API's error after telling onRead.
   */
  async load(): Promise<void> {
    try {
      for (let page = 1; ; page++) {
        const body = await api((client) => client.orderBook({ offset: page, limit: PAGE }));
        for (const order of body.data) {
          const known = this.orders.get(order.order_id);
          if (known === undefined || known.last_modified < order.last_modified) this.orders.set(order.order_id, order);
        }
        const total = body.metadata?.total_records ?? 0;
        if (body.data.length < PAGE || page * PAGE >= total) break;
        if (page * PAGE >= MOST_ORDERS) {
          this.finish({ state: 'capped', read: page * PAGE, total });
          return;
        }
      }
      this.finish({ state: 'complete' });
    } catch (error) {
      this.finish({ state: 'failed', message: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  apply(event: OrderEvent): void {
    const previous = this.orders.get(event.order.order_id);
    this.orders.set(event.order.order_id, event.order);
    if (isNotable(event.order, previous)) {
      this.changes.unshift({ order: event.order, previous });
      this.changes.length = Math.min(this.changes.length, RECENT_CHANGES);
    }
    for (const listener of this.listeners) listener(event.order, previous);
  }

  private finish(read: BookRead): void {
    this.bookRead = read;
    for (const listener of this.readListeners) listener(read);
  }
}
