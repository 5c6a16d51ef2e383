/**
 * The caller's order book as the console knows it: loaded once, then kept current by the order events (a
 * new order arrives with its first event, OMSXMITTED, stored in the same transaction as the order). Views
 * subscribe to hear which order changed.
 */
import { get } from './api.js';
import type { Order, OrderEvent } from './types.js';

export type OrderListener = (order: Order, previous: Order | undefined) => void;

const PAGE = 100;

export class OrderStore {
  private readonly orders = new Map<string, Order>();
  private readonly listeners = new Set<OrderListener>();

  /** Newest first, as the order book lists them. */
  list(): Order[] {
    return [...this.orders.values()].sort((a, b) => (a.order_id < b.order_id ? 1 : a.order_id > b.order_id ? -1 : 0));
  }

  find(orderId: string): Order | undefined {
    return this.orders.get(orderId);
  }

  subscribe(listener: OrderListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reads the first page of the order book. Call it once the event stream is open: an order already known
   * from a later event keeps that event's state.
   */
  async load(): Promise<void> {
    const page = await get<Order[]>(`/transactional/v1/orders?offset=1&limit=${PAGE}`);
    for (const order of page) {
      const known = this.orders.get(order.order_id);
      if (known === undefined || known.last_modified < order.last_modified) this.put(order);
    }
  }

  apply(event: OrderEvent): void {
    this.put(event.order);
  }

  private put(order: Order): void {
    const previous = this.orders.get(order.order_id);
    this.orders.set(order.order_id, order);
    for (const listener of this.listeners) listener(order, previous);
  }
}
