/** Orders, their status history and the OMS outbox. */
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { LiveBid } from '../domain/pre-trade.js';
import type { DialectName } from './database.js';
import { prepareQuery, type PreparedQuery } from './prepared.js';
import type { Database, OrderHistoryTable, OrdersTable } from './tables.js';
import { prepareEnqueueDeliveries } from './webhooks.js';

export type OrderRow = Selectable<OrdersTable>;

/** An order as accepted by the API, before the OMS has seen it. */
export interface NewOrder {
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
  orderIdentifier: string | null;
  algoId: string | null;
  strategyId: string | null;
  partCode: string | null;
  venderCode: string | null;
  requestId: string | null;
  category: string;
}

/** The order statuses (ODIN vocabulary, product.md). */
export const OrderStatus = {
  /** Accepted and queued for the OMS. */
  OMSXMITTED: 'OMSXMITTED',
  /** Sent to the exchange. */
  EXXMITTED: 'EXXMITTED',
  /** Live at the exchange. */
  PENDING: 'PENDING',
  /** Rejected by the OMS. */
  OMSREJECT: 'OMSREJECT',
  /** Rejected by the exchange. */
  ORDERERROR: 'ORDERERROR',
  /** Cancelled by the user, or not allotted at close. */
  CANCELLED: 'CANCELLED',
  /** Allotted: traded quantity = allotted quantity. */
  EXECUTED: 'EXECUTED',
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** Statuses of an order that is still working: it may be modified or cancelled, and counts in limits. */
export const LIVE_STATUSES: readonly OrderStatus[] = [OrderStatus.OMSXMITTED, OrderStatus.EXXMITTED, OrderStatus.PENDING];

const ACCEPTED_STATUS = OrderStatus.OMSXMITTED;

/** What a status change may also set on the order. */
export interface TransitionFields {
  tradedQuantity?: number;
  tradedPricePaise?: number | null;
  errorReason?: string | null;
  exchangeOrderId?: string | null;
}

/** What a modification changes on the order: the terms of the bid. */
export interface OrderModification {
  orderType: string;
  quantity: number;
  pricePaise: number;
  disclosedQuantity: number;
}

/** Filters and page of the order book; `page` counts from 1. */
export interface OrderBookQuery {
  userId: string;
  status?: string | undefined;
  orderId?: string | undefined;
  page: number;
  pageSize: number;
}

export type OrderHistoryRow = Selectable<OrderHistoryTable>;

/**
 * Who made an order change, for its history row (the audit trail): the user, through a request, or the
 * OMS worker ("oms" for its own decisions, "exchange" for what the exchange answered or reported).
 */
export interface ChangeOrigin {
  actor: string;
  requestId: string | null;
}

export const OMS_ORIGIN: ChangeOrigin = { actor: 'oms', requestId: null };
export const EXCHANGE_ORIGIN: ChangeOrigin = { actor: 'exchange', requestId: null };
/** A change whose maker is not known (test fixtures that write as the API would). */
const UNKNOWN_ORIGIN = { actor: null, requestId: null };

/** The PostgreSQL advisory lock key (two int4) of order entry: "ordg", 1. */
const ORDER_ENTRY_LOCK = [0x6f726467, 1] as const;

type AcceptedValues = NewOrder & { now: number };

type LiveBidRow = Pick<OrderRow, 'order_id' | 'order_type' | 'quantity' | 'price_paise'> & {
  retail_cutoff_price_paise: number | null;
  floor_price_paise: number;
};

export class OrderRepository {
  // The order-entry hot path: compiled once (see prepared.ts).
  private readonly insertOrderQuery: PreparedQuery<AcceptedValues, unknown>;
  private readonly insertFirstHistoryQuery: PreparedQuery<AcceptedValues, { id: number }>;
  private readonly enqueueDeliveriesQuery: PreparedQuery<{ eventId: number; now: number }, unknown>;
  private readonly insertPlaceOutboxQuery: PreparedQuery<AcceptedValues, unknown>;
  private readonly liveBidsInSymbolQuery: PreparedQuery<{ userId: string; symbol: string }, LiveBidRow>;

  /**
   * `dialect` decides how a transaction locks: PostgreSQL takes locks (advisory, select ... for update),
   * while SQLite's write transactions (BEGIN IMMEDIATE) already exclude every other writer.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName = 'sqlite',
  ) {
    this.insertOrderQuery = prepareQuery((order: AcceptedValues) =>
      db.insertInto('orders').values({
        order_id: order.orderId,
        user_id: order.userId,
        exchange: order.exchange,
        scrip_token: order.scripToken,
        symbol: order.symbol,
        series: order.series,
        transaction_type: order.transactionType,
        product_type: order.productType,
        order_type: order.orderType,
        quantity: order.quantity,
        price_paise: order.pricePaise,
        disclosed_quantity: order.disclosedQuantity,
        traded_quantity: 0,
        status: ACCEPTED_STATUS,
        error_reason: null,
        order_identifier: order.orderIdentifier,
        algo_id: order.algoId,
        strategy_id: order.strategyId,
        part_code: order.partCode,
        vender_code: order.venderCode,
        request_id: order.requestId,
        category: order.category,
        created_at: order.now,
        updated_at: order.now,
      }),
    );
    this.insertFirstHistoryQuery = prepareQuery((order: AcceptedValues) =>
      db.insertInto('order_history').values({
        order_id: order.orderId,
        status: ACCEPTED_STATUS,
        reason: 'Order entry accepted and queued for the OMS',
        quantity: order.quantity,
        price_paise: order.pricePaise,
        traded_quantity: 0,
        at: order.now,
        actor: order.userId,
        request_id: order.requestId,
      }).returning('id'),
    );
    this.enqueueDeliveriesQuery = prepareEnqueueDeliveries(db);
    this.insertPlaceOutboxQuery = prepareQuery((order: AcceptedValues) =>
      db.insertInto('outbox').values({ order_id: order.orderId, action: 'PLACE', created_at: order.now }),
    );
    this.liveBidsInSymbolQuery = prepareQuery((p: { userId: string; symbol: string }) =>
      db
        .selectFrom('orders')
        .innerJoin('ofs_issues', (join) =>
          join.onRef('ofs_issues.exchange', '=', 'orders.exchange').onRef('ofs_issues.scrip_token', '=', 'orders.scrip_token'),
        )
        .select([
          'orders.order_id',
          'orders.order_type',
          'orders.quantity',
          'orders.price_paise',
          'ofs_issues.retail_cutoff_price_paise',
          'ofs_issues.floor_price_paise',
        ])
        .where('orders.user_id', '=', p.userId)
        .where('orders.status', 'in', LIVE_STATUSES)
        .where('ofs_issues.symbol', '=', p.symbol),
    );
  }

  /** The transactions that hold the order-entry lock already (the group committer runs several units in one). */
  private readonly orderEntryHeld = new WeakSet<Transaction<Database>>();

  /**
   * Writes an accepted order with its first history entry and its outbox entry for the OMS. Call inside
   * a transaction: the three rows are one fact.
   */
  async insertAccepted(trx: Transaction<Database>, order: NewOrder, now: number): Promise<void> {
    const values: AcceptedValues = { ...order, now };
    await this.insertOrderQuery.execute(trx, values);
    const [history] = await this.insertFirstHistoryQuery.execute(trx, values);
    await this.enqueueDeliveriesQuery.execute(trx, { eventId: Number(history!.id), now });
    await this.insertPlaceOutboxQuery.execute(trx, values);
  }

  /**
   * Moves an order to a status and appends the change to its history (with the order's quantities and
   * price after the change), in the caller's transaction. The history is the order's event log: every
   * status change goes through here.
   */
  async transition(
    trx: Transaction<Database>,
    orderId: string,
    status: OrderStatus,
    reason: string,
    now: number,
    origin: ChangeOrigin,
    fields: TransitionFields = {},
  ): Promise<void> {
    await trx
      .updateTable('orders')
      .set({
        status,
        updated_at: now,
        ...(fields.tradedQuantity !== undefined && { traded_quantity: fields.tradedQuantity }),
        ...(fields.tradedPricePaise !== undefined && { traded_price_paise: fields.tradedPricePaise }),
        ...(fields.errorReason !== undefined && { error_reason: fields.errorReason }),
        ...(fields.exchangeOrderId !== undefined && { exchange_order_id: fields.exchangeOrderId }),
      })
      .where('order_id', '=', orderId)
      .execute();
    await this.appendHistory(trx, orderId, reason, now, origin);
  }

  /**
   * Appends the order's current state to its history with a reason (a change that keeps the status), and
   * queues the new event for the owner's webhooks in the same transaction.
   */
  async appendHistory(
    trx: Transaction<Database>,
    orderId: string,
    reason: string,
    now: number,
    origin: ChangeOrigin | typeof UNKNOWN_ORIGIN = UNKNOWN_ORIGIN,
  ): Promise<void> {
    const history = await trx
      .insertInto('order_history')
      .columns(['order_id', 'status', 'reason', 'quantity', 'price_paise', 'traded_quantity', 'at', 'actor', 'request_id'])
      .expression((eb) =>
        eb
          .selectFrom('orders')
          .select((s) => [
            'order_id',
            'status',
            s.val(reason).as('reason'),
            'quantity',
            'price_paise',
            'traded_quantity',
            s.val(now).as('at'),
            s.val(origin.actor).as('actor'),
            s.val(origin.requestId).as('request_id'),
          ])
          .where('order_id', '=', orderId),
      )
      .returning('id')
      .executeTakeFirst();
    if (history !== undefined) await this.enqueueDeliveriesQuery.execute(trx, { eventId: Number(history.id), now });
  }

  async find(orderId: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  }

  /**
   * Makes the rest of an order-entry transaction the only one on the database, on every node, until it
   * ends: what its checks read (a user's live bids) is then still true when its writes commit. On SQLite
   * the write transaction (BEGIN IMMEDIATE) already is the only writer. On PostgreSQL a transaction-level
   * advisory lock, taken first thing in the transaction: a lock per user would deadlock, as the group
   * committer writes several users in one transaction and another node may take them in another order.
   */
  async holdOrderEntry(trx: Transaction<Database>): Promise<void> {
    if (this.dialect !== 'postgres' || this.orderEntryHeld.has(trx)) return;
    await sql`select pg_advisory_xact_lock(${ORDER_ENTRY_LOCK[0]}, ${ORDER_ENTRY_LOCK[1]})`.execute(trx);
    this.orderEntryHeld.add(trx);
  }

  /**
   * The user's live bids in every registered issue of the symbol, on either exchange, each with the
   * prices of its own issue.
   */
  async liveBidsInSymbol(trx: Transaction<Database>, userId: string, symbol: string): Promise<(LiveBid & { orderId: string })[]> {
    const rows = await this.liveBidsInSymbolQuery.execute(trx, { userId, symbol });
    return rows.map((row) => ({
      orderId: row.order_id,
      orderType: row.order_type,
      quantity: Number(row.quantity),
      pricePaise: Number(row.price_paise),
      retailCutoffPricePaise: row.retail_cutoff_price_paise === null ? null : Number(row.retail_cutoff_price_paise),
      floorPricePaise: Number(row.floor_price_paise),
    }));
  }

  /** The order, read in a transaction that may change it (locked until the end of it on PostgreSQL). */
  async findForChange(trx: Transaction<Database>, orderId: string): Promise<OrderRow | undefined> {
    const query = trx.selectFrom('orders').selectAll().where('order_id', '=', orderId);
    return (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  }

  /** Changes a live order's terms in place, records why in its history and queues a MODIFY for the OMS. */
  async requestModification(
    trx: Transaction<Database>,
    orderId: string,
    change: OrderModification,
    reason: string,
    now: number,
    origin: ChangeOrigin,
  ): Promise<void> {
    await trx
      .updateTable('orders')
      .set({
        order_type: change.orderType,
        quantity: change.quantity,
        price_paise: change.pricePaise,
        disclosed_quantity: change.disclosedQuantity,
        updated_at: now,
      })
      .where('order_id', '=', orderId)
      .execute();
    await this.appendHistory(trx, orderId, reason, now, origin);
    await trx.insertInto('outbox').values({ order_id: orderId, action: 'MODIFY', created_at: now }).execute();
  }

  /** Marks a live order as to be cancelled, records it in its history and queues a CANCEL for the OMS. */
  async requestCancellation(trx: Transaction<Database>, orderId: string, reason: string, now: number, origin: ChangeOrigin): Promise<void> {
    await trx.updateTable('orders').set({ cancel_requested_at: now, updated_at: now }).where('order_id', '=', orderId).execute();
    await this.appendHistory(trx, orderId, reason, now, origin);
    await trx.insertInto('outbox').values({ order_id: orderId, action: 'CANCEL', created_at: now }).execute();
  }

  /** One page of the user's orders, newest first, and how many orders match the filters in all. */
  async orderBook(query: OrderBookQuery): Promise<{ orders: OrderRow[]; totalCount: number }> {
    let filtered = this.db.selectFrom('orders').where('user_id', '=', query.userId);
    if (query.status !== undefined) filtered = filtered.where('status', '=', query.status);
    if (query.orderId !== undefined) filtered = filtered.where('order_id', '=', query.orderId);
    const orders = await filtered
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('order_id', 'desc')
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize)
      .execute();
    const count = await filtered.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return { orders, totalCount: Number(count.n) };
  }

  /** The user's order (undefined for another user's or an unknown id). */
  async findOwned(orderId: string, userId: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).where('user_id', '=', userId).executeTakeFirst();
  }

  /** The order's changes, oldest first. */
  async history(orderId: string): Promise<OrderHistoryRow[]> {
    return this.db.selectFrom('order_history').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
  }

  async pendingOutbox(): Promise<{ id: number; order_id: string; action: string }[]> {
    return this.db
      .selectFrom('outbox')
      .select(['id', 'order_id', 'action'])
      .where('done_at', 'is', null)
      .orderBy('id')
      .execute();
  }
}
