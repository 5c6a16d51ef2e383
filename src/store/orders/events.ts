/**
 * The order events: the order_history rows read as a feed, each with its order's current row and owner.
 * The feed reads every user's events in the order of the rows' ids (`historyId`); a user sees each by their
 * own count (`eventId`, the row's user_event_id: their n-th event has n, migration 0016).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../sql/database.js';
import type { OrderEventRecord } from '../../domain/orders/order.js';
import type { OrderStatus } from '../../domain/orders/status.js';
import { orderFromRow, type OrderRow } from './orders.js';
import type { Database, OrderHistoryTable } from '../schema/tables.js';

type HistoryColumns = Pick<Selectable<OrderHistoryTable>, 'id' | 'status' | 'reason' | 'at'>;

export class OrderEventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The events of every user with `afterId` < id <= `upToId`, oldest first, at most `limit`. */
  async eventsBetween(afterId: number, upToId: number, limit: number): Promise<OrderEventRecord[]> {
    const rows = await this.withOrders()
      .where('order_history.id', '>', afterId)
      .where('order_history.id', '<=', upToId)
      .orderBy('order_history.id')
      .limit(limit)
      .execute();
    return rows.map(eventFromRow);
  }

  /**
   * One user's events after their event `afterEventId` whose rows are up to `upToHistoryId`, oldest first,
   * at most `limit`.
   */
  async userEventsBetween(
    userId: string,
    afterEventId: number,
    upToHistoryId: number,
    limit: number,
  ): Promise<OrderEventRecord[]> {
    const rows = await this.withOrders()
      .where('order_history.user_id', '=', userId)
      .where('order_history.user_event_id', '>', afterEventId)
      .where('order_history.id', '<=', upToHistoryId)
      .orderBy('order_history.user_event_id')
      .limit(limit)
      .execute();
    return rows.map(eventFromRow);
  }

  /** The user's last event id (0: none yet). */
  async lastUserEvent(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('user_event_counters')
      .select('last_event_id')
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row === undefined ? 0 : Number(row.last_event_id);
  }

  /** The user's last event id whose row is up to `historyId` (0: none). */
  async lastUserEventThrough(userId: string, historyId: number): Promise<number> {
    // A user's event ids and row ids grow together: the first row found down the (user, event id) index.
    const row = await this.db
      .selectFrom('order_history')
      .select('user_event_id')
      .where('user_id', '=', userId)
      .where('id', '<=', historyId)
      .orderBy('user_event_id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? 0 : Number(row.user_event_id);
  }

  /** The events of these history rows (any user), oldest first. */
  async eventsByIds(ids: readonly number[]): Promise<OrderEventRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.withOrders().where('order_history.id', 'in', ids).orderBy('order_history.id').execute();
    return rows.map(eventFromRow);
  }

  private withOrders() {
    return (
      this.db
        .selectFrom('order_history')
        .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
        // The trade an allotment made is written in the same transaction, at the same instant as its history row.
        .leftJoin('trades', (join) =>
          join
            .onRef('trades.order_id', '=', 'order_history.order_id')
            .onRef('trades.traded_at', '=', 'order_history.at'),
        )
        .selectAll('orders')
        .select([
          'trades.trade_id as trade_id',
          'trades.quantity as trade_quantity',
          'trades.price_paise as trade_price_paise',
          'order_history.id as history_id',
          'order_history.user_event_id as user_event_id',
          'order_history.status as history_status',
          'order_history.reason as history_reason',
          'order_history.at as history_at',
          'order_history.quantity as history_quantity',
          'order_history.price_paise as history_price_paise',
          'order_history.traded_quantity as history_traded_quantity',
          'order_history.traded_price_paise as history_traded_price_paise',
          'order_history.actor as history_actor',
          'order_history.request_id as history_request_id',
        ])
    );
  }
}

interface HistoryValues {
  history_id: HistoryColumns['id'];
  user_event_id: number;
  history_status: string;
  history_reason: string;
  history_at: number;
  history_quantity: number;
  history_price_paise: number;
  history_traded_quantity: number;
  history_traded_price_paise: number | null;
  history_actor: string | null;
  history_request_id: string | null;
  trade_id: string | null;
  trade_quantity: number | null;
  trade_price_paise: number | null;
}

function eventFromRow(row: OrderRow & HistoryValues): OrderEventRecord {
  const {
    history_id,
    user_event_id,
    history_status,
    history_reason,
    history_at,
    history_quantity,
    history_price_paise,
    history_traded_quantity,
    history_traded_price_paise,
    history_actor,
    history_request_id,
    trade_id,
    trade_quantity,
    trade_price_paise,
    ...order
  } = row;
  return {
    ...(trade_id !== null &&
      Number(history_traded_quantity) > 0 && {
        trade: { tradeId: trade_id, quantity: Number(trade_quantity), pricePaise: Number(trade_price_paise) },
      }),
    eventId: Number(user_event_id),
    historyId: Number(history_id),
    userId: order.user_id,
    change: {
      orderId: order.order_id,
      status: history_status as OrderStatus,
      reason: history_reason,
      quantity: Number(history_quantity),
      pricePaise: Number(history_price_paise),
      tradedQuantity: Number(history_traded_quantity),
      tradedPricePaise: history_traded_price_paise === null ? null : Number(history_traded_price_paise),
      at: Number(history_at),
      actor: history_actor,
      requestId: history_request_id,
    },
    order: orderFromRow(order),
  };
}

/** How long a new horizon waits, at most, for the transactions that were writing events when it started. */
export const HORIZON_START_WAIT_MS = 2_000;
/** Ids read per step of a horizon. */
const HORIZON_STEP = 1_000;

interface Gap {
  /** The first id missing. */
  from: number;
  /** The snapshot's xmax when the gap was seen: every transaction that may still fill it has a smaller xid. */
  xmax: bigint;
}

/**
 * The committed event horizon: the highest event id up to which every event is committed or never will
 * be. A reader that takes events in id order up to the horizon, and only up to it, never sees an event
 * committed later with a smaller id than one it has passed: no gap, no repeat, on any number of nodes.
 *
 * SQLite writes one transaction at a time, so its ids are taken in commit order and the horizon is the
 * newest id. On PostgreSQL a bigserial id is taken when its row is inserted, not at commit: two order
 * changes on two nodes (or an order entry and the OMS) commit in either order. There the horizon stops
 * before the first missing id (a gap) until the gap is settled: every transaction that may still fill it
 * (they all took their transaction id, Store.writeTransaction, before their event ids, so they are older
 * than the snapshot in which the gap was seen) has ended. Then what committed is read and the rest (a
 * rolled-back transaction's ids) is passed over. One horizon per reader; it keeps its position.
 */
export class EventHorizon {
  private position = 0;
  private started = false;
  private gap: Gap | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly startWaitMs = HORIZON_START_WAIT_MS,
  ) {}

  /** The horizon as of the last advance(). */
  get value(): number {
    return this.position;
  }

  /** Moves the horizon as far as it can go now, and answers it. The first call starts at the newest event. */
  async advance(): Promise<number> {
    if (!this.started) {
      this.position = await this.newest();
      this.started = true;
      return this.position;
    }
    if (this.dialect === 'sqlite') {
      this.position = Math.max(this.position, await this.latestId());
      return this.position;
    }
    for (;;) {
      const { xmin, xmax, ids } = await this.idsAfter(this.position);
      let next = this.position;
      for (const id of ids) {
        if (id !== next + 1) {
          // Ids next+1 .. id-1 are missing: settled once every transaction that might fill them has ended,
          // as seen by the snapshot that read `ids` (so any of them that committed would be among them).
          if (this.gap === null || this.gap.from !== next + 1) this.gap = { from: next + 1, xmax };
          if (xmin < this.gap.xmax) break;
          this.gap = null;
        }
        next = id;
      }
      this.position = next;
      if (ids.length < HORIZON_STEP || this.gap !== null) return this.position;
    }
  }

  /**
   * The newest event id, once the transactions that were under way when it was read have ended (PostgreSQL;
   * at most startWaitMs): their events, whatever their ids, count as before the start.
   */
  private async newest(): Promise<number> {
    if (this.dialect === 'sqlite') return this.latestId();
    const start = await sql<{ latest: string | null; xmax: string }>`
      select (select max(id) from order_history)::text as latest, pg_snapshot_xmax(pg_current_snapshot())::text as xmax`.execute(
      this.db,
    );
    const { latest, xmax } = start.rows[0]!;
    const deadline = Date.now() + this.startWaitMs;
    while (Date.now() < deadline && (await this.snapshotXmin()) < BigInt(xmax))
      await new Promise((resolve) => setTimeout(resolve, 10));
    return latest === null ? 0 : Number(latest);
  }

  private async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('order_history')
      .select((eb) => eb.fn.max('id').as('latest'))
      .executeTakeFirst();
    return row?.latest == null ? 0 : Number(row.latest);
  }

  private async snapshotXmin(): Promise<bigint> {
    const result = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(
      this.db,
    );
    return BigInt(result.rows[0]!.xmin);
  }

  /** In one statement (one snapshot): its xmin and xmax, and the ids after `afterId`. */
  private async idsAfter(afterId: number): Promise<{ xmin: bigint; xmax: bigint; ids: number[] }> {
    const result = await sql<{ xmin: string; xmax: string; id: number | null }>`
      select s.xmin, s.xmax, h.id
      from (select pg_snapshot_xmin(pg_current_snapshot())::text as xmin, pg_snapshot_xmax(pg_current_snapshot())::text as xmax) s
      left join lateral (select id from order_history where id > ${afterId} order by id limit ${HORIZON_STEP}) h on true
      order by h.id`.execute(this.db);
    const first = result.rows[0]!;
    return {
      xmin: BigInt(first.xmin),
      xmax: BigInt(first.xmax),
      ids: result.rows.filter((row) => row.id !== null).map((row) => Number(row.id)),
    };
  }
}
