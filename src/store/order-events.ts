/**
 * The order events: the order_history rows read as a feed, each with its order's current row and owner.
 * An event's id is its history row's id.
 */
import type { Kysely, Selectable } from 'kysely';
import type { OrderRow } from './orders.js';
import type { Database, OrderHistoryTable } from './tables.js';

/** One history row with the order as it is now (the order's own columns, and the change's). */
export interface OrderEventRow {
  eventId: number;
  userId: string;
  status: string;
  reason: string;
  at: number;
  order: OrderRow;
}

type HistoryColumns = Pick<Selectable<OrderHistoryTable>, 'id' | 'status' | 'reason' | 'at'>;

export class OrderEventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The newest event id, 0 when there is none. */
  async latestEventId(): Promise<number> {
    const row = await this.db
      .selectFrom('order_history')
      .select((eb) => eb.fn.max('id').as('latest'))
      .executeTakeFirst();
    return row?.latest == null ? 0 : Number(row.latest);
  }

  /** The events of every user after `afterId`, oldest first, at most `limit`. */
  async eventsAfter(afterId: number, limit: number): Promise<OrderEventRow[]> {
    const rows = await this.withOrders().where('order_history.id', '>', afterId).orderBy('order_history.id').limit(limit).execute();
    return rows.map(toEventRow);
  }

  /** One user's events with `afterId` < id <= `upToId`, oldest first, at most `limit`. */
  async userEventsBetween(userId: string, afterId: number, upToId: number, limit: number): Promise<OrderEventRow[]> {
    const rows = await this.withOrders()
      .where('orders.user_id', '=', userId)
      .where('order_history.id', '>', afterId)
      .where('order_history.id', '<=', upToId)
      .orderBy('order_history.id')
      .limit(limit)
      .execute();
    return rows.map(toEventRow);
  }

  /** The events with these ids (any user), oldest first. */
  async eventsByIds(ids: readonly number[]): Promise<OrderEventRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.withOrders().where('order_history.id', 'in', ids).orderBy('order_history.id').execute();
    return rows.map(toEventRow);
  }

  private withOrders() {
    return this.db
      .selectFrom('order_history')
      .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
      .selectAll('orders')
      .select([
        'order_history.id as history_id',
        'order_history.status as history_status',
        'order_history.reason as history_reason',
        'order_history.at as history_at',
      ]);
  }
}

function toEventRow(row: OrderRow & { history_id: HistoryColumns['id']; history_status: string; history_reason: string; history_at: number }): OrderEventRow {
  const { history_id, history_status, history_reason, history_at, ...order } = row;
  return {
    eventId: Number(history_id),
    userId: order.user_id,
    status: history_status,
    reason: history_reason,
    at: Number(history_at),
    order,
  };
}
