/**
 * Orders, their status history and the OMS outbox. Every change of an order, by order entry or by the OMS,
 * goes through `apply`: one call per batch writes what the domain's write plan says (planOrderWrites: the
 * new and changed orders, one history row per change, the outbox entries, the trades, the retail totals and
 * the funds), numbers the history rows per user (the order events' ids) and queues their webhook
 * deliveries, all in the caller's transaction. Deciding is the plan's; this file only writes.
 */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { LIVE_STATUSES, type OrderStatus } from '../../domain/orders/status.js';
import type { BidderCategory } from '../../domain/ofs/rules.js';
import type { Order, OrderChange, RecordedChange, RetailExposure } from '../../domain/orders/order.js';
import {
  planOrderWrites,
  type AccountChange,
  type ExposureChange,
  type HistoryEntry,
  type LedgerEntry,
  type OutboxEntry,
} from '../../domain/orders/effects.js';
import type { Trade } from '../../domain/funds/trades.js';
import type { MarginType, OfferCategory } from '../../domain/ofs/offer/offer.js';
import type { ClientType } from '../../domain/access/member-data.js';
import { zeroMarginValuePaise, type ZeroMarginExposure } from '../../domain/ofs/offer/rules.js';
import {
  arrayLiteral,
  BulkInsert,
  BulkUpdate,
  columnArrays,
  combinedWrites,
  intColumn as int,
  listParameter,
  queryWithList,
  textColumn as text,
  type BulkColumn,
  type PostgresWrite,
  unnestArguments,
} from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import { jsonArrayOf } from '../sql/sqlite-driver.js';
import type { Database, OrderHistoryTable, OrdersTable } from '../schema/tables.js';
import { ENQUEUE_DELIVERIES } from './webhooks.js';
import { openTx, sendAhead, type SqliteStatements, type StoreTx } from '../sql/write-tx.js';

export type OrderRow = Selectable<OrdersTable>;
type HistoryRow = Selectable<OrderHistoryTable>;

/** A user's orders to list, and which page of them; `page` counts from 1. */
export interface OrderPageRequest {
  userId: string;
  /** Only orders in one of these statuses (undefined: any). */
  statuses?: readonly OrderStatus[] | undefined;
  orderId?: string | undefined;
  page: number;
  pageSize: number;
}

const numberOrNull = (value: number | string | null) => (value === null ? null : Number(value));

/**
 * The order a row holds. Integer columns come back from PostgreSQL as strings (int8); the status and the
 * category are written by order entry and the OMS alone, from their domain types.
 */
export function orderFromRow(row: OrderRow): Order {
  return {
    orderId: row.order_id,
    userId: row.user_id,
    exchange: row.exchange,
    scripToken: Number(row.scrip_token),
    symbol: row.symbol,
    series: row.series,
    transactionType: row.transaction_type,
    productType: row.product_type,
    orderType: row.order_type,
    quantity: Number(row.quantity),
    pricePaise: Number(row.price_paise),
    disclosedQuantity: Number(row.disclosed_quantity),
    tradedQuantity: Number(row.traded_quantity),
    status: row.status as OrderStatus,
    errorReason: row.error_reason,
    orderIdentifier: row.order_identifier,
    algoId: row.algo_id,
    strategyId: row.strategy_id,
    partCode: row.part_code,
    venderCode: row.vender_code,
    requestId: row.request_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    category: row.category as BidderCategory,
    cancelRequestedAt: numberOrNull(row.cancel_requested_at),
    tradedPricePaise: numberOrNull(row.traded_price_paise),
    exchangeOrderId: row.exchange_order_id,
    fundsBlockedPaise: numberOrNull(row.funds_blocked_paise),
    offerId: row.offer_id,
    offerCategory: row.offer_category as OfferCategory | null,
    marginType: row.margin_type as MarginType | null,
    carriedForwardAt: numberOrNull(row.carried_forward_at),
    ucc: row.ucc,
    clientType: row.client_type as ClientType | null,
    custodianCode: row.custodian_code,
    pan: row.pan,
  };
}

export function historyEntryFromRow(row: HistoryRow): RecordedChange {
  return {
    orderId: row.order_id,
    status: row.status as OrderStatus,
    reason: row.reason,
    quantity: Number(row.quantity),
    pricePaise: Number(row.price_paise),
    tradedQuantity: Number(row.traded_quantity),
    tradedPricePaise: numberOrNull(row.traded_price_paise),
    at: Number(row.at),
    actor: row.actor,
    requestId: row.request_id,
  };
}

/** The columns an order change may set (domain/orders/effects.ts storedOrderChanged compares the same fields). */
export const MUTABLE_COLUMNS: readonly BulkColumn<Order>[] = [
  text('order_type', (o) => o.orderType),
  int('quantity', (o) => o.quantity),
  int('price_paise', (o) => o.pricePaise),
  int('disclosed_quantity', (o) => o.disclosedQuantity),
  int('traded_quantity', (o) => o.tradedQuantity),
  text('status', (o) => o.status),
  text('error_reason', (o) => o.errorReason),
  int('cancel_requested_at', (o) => o.cancelRequestedAt),
  int('traded_price_paise', (o) => o.tradedPricePaise),
  text('exchange_order_id', (o) => o.exchangeOrderId),
  int('funds_blocked_paise', (o) => o.fundsBlockedPaise),
  int('carried_forward_at', (o) => o.carriedForwardAt),
  int('updated_at', (o) => o.updatedAt),
];

const ORDER_COLUMNS: readonly BulkColumn<Order>[] = [
  text('order_id', (o) => o.orderId),
  text('user_id', (o) => o.userId),
  text('exchange', (o) => o.exchange),
  int('scrip_token', (o) => o.scripToken),
  text('symbol', (o) => o.symbol),
  text('series', (o) => o.series),
  text('transaction_type', (o) => o.transactionType),
  text('product_type', (o) => o.productType),
  text('order_identifier', (o) => o.orderIdentifier),
  text('algo_id', (o) => o.algoId),
  text('strategy_id', (o) => o.strategyId),
  text('part_code', (o) => o.partCode),
  text('vender_code', (o) => o.venderCode),
  text('request_id', (o) => o.requestId),
  int('created_at', (o) => o.createdAt),
  text('category', (o) => o.category),
  text('offer_id', (o) => o.offerId),
  text('offer_category', (o) => o.offerCategory),
  text('margin_type', (o) => o.marginType),
  text('ucc', (o) => o.ucc),
  text('client_type', (o) => o.clientType),
  text('custodian_code', (o) => o.custodianCode),
  text('pan', (o) => o.pan),
  ...MUTABLE_COLUMNS,
];

/** A history row as written: the plan's entry, numbered among its user's events (reserveEventIds). */
interface HistoryValues extends HistoryEntry {
  userEventId: number;
}

const HISTORY_COLUMNS: readonly BulkColumn<HistoryValues>[] = [
  text('order_id', (h) => h.order.orderId),
  text('user_id', (h) => h.order.userId),
  int('user_event_id', (h) => h.userEventId),
  text('status', (h) => h.order.status),
  text('reason', (h) => h.reason),
  int('quantity', (h) => h.order.quantity),
  int('price_paise', (h) => h.order.pricePaise),
  int('traded_quantity', (h) => h.order.tradedQuantity),
  int('traded_price_paise', (h) => h.order.tradedPricePaise),
  int('at', (h) => h.at),
  text('actor', (h) => h.origin.actor),
  text('request_id', (h) => h.origin.requestId),
];

const HISTORY_NAMES = HISTORY_COLUMNS.map((column) => column.name).join(', ');

/**
 * PostgreSQL: the history rows as a CTE of the batch's statement (see postgresHistory), in the order sent
 * (their ids grow with it), each `user_event_id` its user's counter after the batch less the value sent.
 */
const POSTGRES_HISTORY = (first: number) => `insert into order_history (${HISTORY_NAMES})
  select ${HISTORY_COLUMNS.map((column) => (column.name === 'user_event_id' ? 'c.last_event_id - h.user_event_id' : `h.${column.name}`)).join(', ')}
  from unnest(${unnestArguments(HISTORY_COLUMNS, first)}) with ordinality as h(${HISTORY_NAMES}, n)
  join counters c on c.user_id = h.user_id
  order by h.n
  returning id, user_id`;

/** How many of the events are each user's. */
function eventCounts(owners: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const userId of owners) counts.set(userId, (counts.get(userId) ?? 0) + 1);
  return counts;
}

const EXPOSURE_COLUMNS: readonly BulkColumn<ExposureChange>[] = [
  text('user_id', (d) => d.order.userId),
  text('symbol', (d) => d.order.symbol),
  text('exchange', (d) => d.order.exchange),
  int('scrip_token', (d) => d.order.scripToken),
  int('price_value_paise', (d) => d.priceValuePaise),
  int('cutoff_quantity', (d) => d.cutoffQuantity),
];

const TRADE_COLUMNS: readonly BulkColumn<Trade>[] = [
  text('trade_id', (t) => t.tradeId),
  text('order_id', (t) => t.orderId),
  text('user_id', (t) => t.userId),
  text('exchange', (t) => t.exchange),
  int('scrip_token', (t) => t.scripToken),
  text('symbol', (t) => t.symbol),
  text('series', (t) => t.series),
  text('transaction_type', (t) => t.transactionType),
  text('product_type', (t) => t.productType),
  int('quantity', (t) => t.quantity),
  int('price_paise', (t) => t.pricePaise),
  int('traded_at', (t) => t.tradedAt),
  int('settles_at', (t) => t.settlesAt),
  text('exchange_order_id', (t) => t.exchangeOrderId),
  text('order_identifier', (t) => t.orderIdentifier),
];

/** Every column of an orders row (the columns an insert writes), for SQLite's read of them as JSON. */
export const ORDER_ROW_COLUMNS: readonly string[] = ORDER_COLUMNS.map((column) => column.name);

const LOCK_ORDERS = {
  // Read as one JSON array per row (jsonRows): the OMS reads every order it changes, 32 columns each.
  sqlite: `select ${jsonArrayOf(ORDER_ROW_COLUMNS)} from orders where order_id in (select value from json_each(?))`,
  // Row locks in one order on every node: two transactions that lock some of the same orders never deadlock.
  postgres: 'select * from orders where order_id = any($1::text[]) order by order_id for update',
};

/**
 * SQLite, right after a batch's history rows were inserted: the last one's id, and whether any of the users
 * (a list parameter) has an active webhook (1 or 0).
 */
const LAST_HISTORY_ID_AND_WEBHOOKS = `select last_insert_rowid() as last,
    exists (select 1 from webhooks where removed_at is null and user_id in (select value from json_each(?))) as hooked`;

/**
 * A retail total with the prices of its issue and the PAN its user holds now (the retail limit is per PAN:
 * docs/design/member-data.md): the columns read, and their names in a row.
 */
const EXPOSURE_READ = [
  'e.user_id',
  'u.pan',
  'e.symbol',
  'e.exchange',
  'e.scrip_token',
  'e.price_value_paise',
  'e.cutoff_quantity',
  'i.retail_cutoff_price_paise',
  'i.floor_price_paise',
] as const;
const EXPOSURE_ROW_COLUMNS: readonly string[] = EXPOSURE_READ.map((column) => column.slice(column.indexOf('.') + 1));
const EXPOSURE_FROM = `from retail_exposure e join ofs_issues i on i.exchange = e.exchange and i.scrip_token = e.scrip_token
  join users u on u.user_id = e.user_id`;
/**
 * The totals of the users (the first list parameter) and of every user holding one of the PANs (the
 * second): the accounts under a PAN share its retail limit. The users are found first (their primary key,
 * index users_pan), then their totals (the totals' primary key starts with the user).
 */
export const EXPOSURES = {
  // Read as one JSON array per row (jsonRows), as the orders the OMS locks are: nine values a row.
  sqlite: `select ${jsonArrayOf(EXPOSURE_READ)} ${EXPOSURE_FROM}
    where e.user_id in (select user_id from users where user_id in (select value from json_each(?))
      or pan in (select value from json_each(?)))`,
  postgres: `select ${EXPOSURE_READ.join(', ')} ${EXPOSURE_FROM}
    where e.user_id in (select user_id from users where user_id = any($1::text[]) or pan = any($2::text[]))`,
};

interface ExposureRow {
  user_id: string;
  pan: string | null;
  symbol: string;
  exchange: string;
  scrip_token: number;
  price_value_paise: number;
  cutoff_quantity: number;
  retail_cutoff_price_paise: number | null;
  floor_price_paise: number;
}

/** A user's retail total in an issue, with the PAN the user holds now (null: none, and it counts alone). */
export interface HeldExposure extends RetailExposure {
  pan: string | null;
}

/** Adds each user's events of a batch to their counter, answering the counters after it. */
const RESERVE_EVENT_IDS = {
  // The counts as one JSON object parameter, {"user id": count, ...}. (`where true`: SQLite's upsert after a
  // select needs a where clause.)
  sqlite: `insert into user_event_counters (user_id, last_event_id) select key, value from json_each(?) where true
    on conflict (user_id) do update set last_event_id = user_event_counters.last_event_id + excluded.last_event_id
    returning user_id, last_event_id`,
  // A CTE of the batch's writes (see postgresHistory), parameters from `first`. In the users' order (the
  // arrays come sorted): two transactions lock their rows in one order.
  postgres: (
    first: number,
  ) => `insert into user_event_counters (user_id, last_event_id) select * from unnest($${first}::text[], $${first + 1}::int8[])
    on conflict (user_id) do update set last_event_id = user_event_counters.last_event_id + excluded.last_event_id
    returning user_id, last_event_id`,
};

/**
 * PostgreSQL: the condition that holds a write of the batch's statement back until every counter row of the
 * batch is locked (an uncorrelated subquery runs once, before the first row: `counters` is read to its end).
 */
const AFTER_COUNTERS = '(select count(*) from counters) >= 0';

/**
 * PostgreSQL: one transaction-level advisory lock per user (the first list) and per PAN (the second: the
 * accounts under a PAN share its retail limit), all in one statement, in the order of their keys, so that
 * two transactions never wait for each other in a circle. A PAN's key is hashed with another seed than a
 * user's: a user id spelled as a PAN is not its lock (a collision of two keys only makes two transactions
 * wait for each other needlessly). (SQLite's write transaction excludes every other.)
 */
const LOCK_USERS = `select pg_advisory_xact_lock(k) from (
    select hashtextextended(u, 0) as k from unnest($1::text[]) u
    union select hashtextextended(p, 49) from unnest($2::text[]) p
    order by k) s`;

export class OrderRepository {
  private readonly insertOrders = new BulkInsert<Order>('orders', ORDER_COLUMNS);
  private readonly updateOrders = new BulkUpdate<Order>(
    'orders',
    text('order_id', (o) => o.orderId),
    MUTABLE_COLUMNS,
  );
  private readonly insertHistory = new BulkInsert<HistoryValues>('order_history', HISTORY_COLUMNS);
  private readonly insertOutbox = new BulkInsert<OutboxEntry>('outbox', [
    text('order_id', (e) => e.orderId),
    text('action', (e) => e.action),
    int('created_at', (e) => e.at),
  ]);
  /** Adds the deltas to the running totals (creating a row at the first bid of a user in an issue). */
  private readonly addExposure = new BulkInsert<ExposureChange>(
    'retail_exposure',
    EXPOSURE_COLUMNS,
    `on conflict (user_id, symbol, exchange, scrip_token) do update set
       price_value_paise = retail_exposure.price_value_paise + excluded.price_value_paise,
       cutoff_quantity = retail_exposure.cutoff_quantity + excluded.cutoff_quantity`,
  );

  /**
   * Adds a batch's funds changes to the accounts. Only funds-checked orders have any, and their bidders have
   * an account (accounts are never removed), so this only ever updates; debits come out of cash.
   */
  private readonly addFunds = new BulkInsert<AccountChange>(
    'funds_accounts',
    [
      text('user_id', (d) => d.userId),
      int('cash_paise', (d) => -d.debitPaise),
      int('blocked_paise', (d) => d.blockedPaise),
      int('debited_paise', (d) => d.debitPaise),
      int('created_at', (d) => d.at),
      int('updated_at', (d) => d.at),
    ],
    `on conflict (user_id) do update set
       cash_paise = funds_accounts.cash_paise + excluded.cash_paise,
       blocked_paise = funds_accounts.blocked_paise + excluded.blocked_paise,
       debited_paise = funds_accounts.debited_paise + excluded.debited_paise,
       updated_at = excluded.updated_at`,
  );
  private readonly insertTrades = new BulkInsert<Trade>('trades', TRADE_COLUMNS);
  private readonly insertLedger = new BulkInsert<LedgerEntry>('funds_ledger', [
    text('user_id', (e) => e.userId),
    int('at', (e) => e.at),
    text('kind', (e) => e.kind),
    int('amount_paise', (e) => e.amountPaise),
    text('order_id', (e) => e.orderId),
  ]);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName = 'sqlite',
  ) {}

  /**
   * Writes a batch of order changes in the caller's transaction: what planOrderWrites (domain/orders/effects.ts)
   * says they write, and nothing it does not. The changes of one order come one after another; the last
   * one's `after` is what the order becomes.
   */
  async apply(storeTx: StoreTx, changes: readonly OrderChange[], now: number): Promise<void> {
    if (changes.length === 0) return;
    const tx = openTx(storeTx);
    const plan = planOrderWrites(changes, now);
    if (tx.sqlite) {
      const history = this.numberedHistory(tx.sqlite, plan.history);
      await this.insertOrders.run(tx, plan.inserted);
      await this.updateOrders.run(tx, plan.updated);
      await this.insertHistory.run(tx, history);
      this.enqueueSqliteDeliveries(tx.sqlite, history, now);
      await this.insertOutbox.run(tx, plan.outbox);
      await this.addExposure.run(tx, plan.exposure);
      await this.addFunds.run(tx, plan.accounts);
      await this.insertLedger.run(tx, plan.ledger);
      await this.insertTrades.run(tx, plan.trades);
      return;
    }
    // PostgreSQL: the accounts first (an account row is locked before a counter row, see reserveEventIds),
    // then every other write of the batch, the event ids included, in one statement, one round trip.
    if (plan.accounts.length > 0)
      await combinedWrites(tx, [this.addFunds.postgres(plan.accounts), this.insertLedger.postgres(plan.ledger)]);
    const writes: PostgresWrite[] = [...this.postgresHistory(plan.history, now)];
    if (plan.inserted.length > 0) writes.push(this.insertOrders.postgres(plan.inserted));
    if (plan.updated.length > 0) writes.push(this.updateOrders.postgres(plan.updated));
    if (plan.outbox.length > 0) writes.push(this.insertOutbox.postgres(plan.outbox));
    // The totals after the counters (the lock order, see reserveEventIds).
    if (plan.exposure.length > 0)
      writes.push(this.addExposure.postgres(plan.exposure, plan.history.length > 0 ? AFTER_COUNTERS : ''));
    if (plan.trades.length > 0) writes.push(this.insertTrades.postgres(plan.trades));
    await combinedWrites(tx, writes);
  }

  /** SQLite: the history rows, each numbered among its user's events (see reserveEventIds). */
  private numberedHistory(sqlite: SqliteStatements, entries: readonly HistoryEntry[]): HistoryValues[] {
    const next = this.reserveEventIds(
      sqlite,
      entries.map((entry) => entry.order.userId),
    );
    return entries.map(({ order, reason, at, origin }) => {
      const userEventId = next.get(order.userId)!;
      next.set(order.userId, userEventId + 1);
      // Written out, not spread: a spread followed by more keys takes V8's slow path (docs/design/performance-log.md).
      return { order, reason, at, origin, userEventId };
    });
  }

  /**
   * SQLite: takes the next event ids of the users, as many as each has events in the batch, and answers the
   * first of each (PostgreSQL does the same in the batch's statement, see postgresHistory). Before the
   * history rows are written, users in order: a user's counter row stays locked until the transaction ends
   * (on PostgreSQL; SQLite's write transaction excludes every other), so a user's events are numbered in the
   * order their transactions commit, without gap, and, since each transaction's history rows take their ids
   * after it holds its users' rows, a user's event ids grow with their rows' ids (the event feed relies on
   * it).
   *
   * No wait in a circle on PostgreSQL: every transaction takes its locks in one order, users' advisory
   * locks (order entry), orders' rows, algos' rows (order entry share-locks those of what it places or
   * modifies; the kill switch locks one algo's row alone), accounts' rows (the OMS locks them before it
   * decides, and apply writes the accounts before this), counter rows, then the retail totals (written only
   * once every counter row of the batch is held, AFTER_COUNTERS). A transaction holding a counter row
   * writes only rows it already holds, new rows, and those totals.
   */
  private reserveEventIds(sqlite: SqliteStatements, owners: readonly string[]): Map<string, number> {
    const counts = eventCounts(owners);
    if (counts.size === 0) return new Map();
    // Every user's counter in one statement, not one per user (an OMS pass holds tens of users).
    const reserved = sqlite.rows<{ user_id: string; last_event_id: number }>(
      RESERVE_EVENT_IDS.sqlite,
      JSON.stringify(Object.fromEntries(counts)),
    );
    return new Map(reserved.map((row) => [row.user_id, Number(row.last_event_id) - counts.get(row.user_id)! + 1]));
  }

  /**
   * SQLite, right after the history rows were inserted: their deliveries. One writer, so the rows took the
   * consecutive ids up to the last one inserted. A batch none of whose owners has a webhook skips the join.
   */
  private enqueueSqliteDeliveries(sqlite: SqliteStatements, rows: readonly HistoryValues[], now: number): void {
    if (rows.length === 0) return;
    const owners = [...new Set(rows.map((row) => row.order.userId))];
    const { last, hooked } = sqlite.row<{ last: number; hooked: number }>(
      LAST_HISTORY_ID_AND_WEBHOOKS,
      listParameter('sqlite', owners),
    )!;
    if (hooked === 0) return;
    sqlite.statement(ENQUEUE_DELIVERIES.sqlite).run(now, now, last - rows.length + 1, last);
  }

  /**
   * PostgreSQL, as CTEs of the batch's statement: the users' counters (see reserveEventIds), the history
   * rows in order, each numbered from its user's counter, and a delivery per active webhook of each one's
   * owner. A row is sent with the number of its user's events in the batch after it (in `user_event_id`),
   * and written with the counter less that; it can take its id only once its user's counter row is held.
   */
  private postgresHistory(entries: readonly HistoryEntry[], now: number): PostgresWrite[] {
    if (entries.length === 0) return [];
    const counts = eventCounts(entries.map((entry) => entry.order.userId));
    const users = [...counts.keys()].sort();
    const counters: PostgresWrite = {
      name: 'counters',
      sql: RESERVE_EVENT_IDS.postgres,
      parameters: [arrayLiteral(users), arrayLiteral(users.map((userId) => counts.get(userId)!))],
    };
    const seen = new Map<string, number>();
    const rows = entries.map((entry): HistoryValues => {
      const userId = entry.order.userId;
      seen.set(userId, (seen.get(userId) ?? 0) + 1);
      return {
        order: entry.order,
        reason: entry.reason,
        at: entry.at,
        origin: entry.origin,
        userEventId: counts.get(userId)! - seen.get(userId)!,
      };
    });
    const history: PostgresWrite = {
      name: 'history',
      sql: POSTGRES_HISTORY,
      parameters: columnArrays(HISTORY_COLUMNS, rows),
    };
    const deliveries: PostgresWrite = {
      sql: (first) => ENQUEUE_DELIVERIES.postgres(history.name!, `$${first}::int8`),
      parameters: [now],
    };
    return [counters, history, deliveries];
  }

  /**
   * The orders, read in a transaction that will change them: locked until it ends on PostgreSQL (in order
   * of their ids), answered by id. Unknown ids are left out.
   */
  async lockOrders(storeTx: StoreTx, orderIds: readonly string[]): Promise<Map<string, Order>> {
    const tx = openTx(storeTx);
    if (orderIds.length === 0) return new Map();
    const ids = [...new Set(orderIds)];
    const rows = tx.sqlite
      ? tx.sqlite.jsonRows<OrderRow>(LOCK_ORDERS.sqlite, ORDER_ROW_COLUMNS, listParameter('sqlite', ids))
      : await queryWithList<OrderRow>(tx, LOCK_ORDERS, ids);
    return new Map(rows.map((row) => [row.order_id, orderFromRow(row)]));
  }

  /**
   * PostgreSQL: makes the rest of the transaction the only one on the database, on every node, that can
   * judge new retail exposure for these users and for the accounts under these PANs (order entry's retail
   * bids and modifications take it; the callers' PANs, since the accounts under one share its retail
   * limit). The OMS does not take it: it judges nothing against the limit. Its changes (a bid finished, or
   * the terms the exchange holds restored after a refused modification, which can raise a total again) are
   * applied with atomic updates of the totals, so they stay exact. Take it first thing.
   */
  async lockUsers(storeTx: StoreTx, userIds: readonly string[], pans: readonly string[] = []): Promise<void> {
    const tx = openTx(storeTx);
    if (this.dialect !== 'postgres' || (userIds.length === 0 && pans.length === 0)) return;
    // Sent ahead: the batch's next statement (its reads of the totals) goes out with it and runs once it holds the locks.
    await sendAhead(
      tx,
      CompiledQuery.raw(LOCK_USERS, [
        listParameter('postgres', [...new Set(userIds)]),
        listParameter('postgres', [...new Set(pans)]),
      ]),
    );
  }

  /**
   * The retail exposure rows of the users and of every account under one of the PANs, in every issue, with
   * the prices of each row's issue and the PAN its user holds.
   */
  async exposures(storeTx: StoreTx, userIds: readonly string[], pans: readonly string[] = []): Promise<HeldExposure[]> {
    const tx = openTx(storeTx);
    if (userIds.length === 0 && pans.length === 0) return [];
    const ids = [...new Set(userIds)];
    const held = [...new Set(pans)];
    const rows = tx.sqlite
      ? tx.sqlite.jsonRows<ExposureRow>(
          EXPOSURES.sqlite,
          EXPOSURE_ROW_COLUMNS,
          listParameter('sqlite', ids),
          listParameter('sqlite', held),
        )
      : (
          await tx.trx.executeQuery<ExposureRow>(
            CompiledQuery.raw(EXPOSURES.postgres, [listParameter('postgres', ids), listParameter('postgres', held)]),
          )
        ).rows;
    return rows.map((row) => ({
      userId: row.user_id,
      pan: row.pan,
      symbol: row.symbol,
      exchange: row.exchange,
      scripToken: Number(row.scrip_token),
      priceValuePaise: Number(row.price_value_paise),
      cutoffQuantity: Number(row.cutoff_quantity),
      retailCutoffPricePaise: row.retail_cutoff_price_paise === null ? null : Number(row.retail_cutoff_price_paise),
      floorPricePaise: Number(row.floor_price_paise),
    }));
  }

  /**
   * The users' live bids in the offers (their retail and employee limits count them), and those of every
   * account under one of the PANs (the retail limit is per PAN), read in the transaction that judges new
   * ones; with the PAN each bid's user holds now.
   */
  async liveOfferBids(
    storeTx: StoreTx,
    userIds: readonly string[],
    offerIds: readonly string[],
    pans: readonly string[] = [],
  ): Promise<{ bids: Order[]; pans: Map<string, string | null> }> {
    const held = new Map<string, string | null>();
    if ((userIds.length === 0 && pans.length === 0) || offerIds.length === 0) return { bids: [], pans: held };
    const { trx } = openTx(storeTx);
    const ids = [...new Set(userIds)];
    const panList = [...new Set(pans)];
    const rows = await trx
      .selectFrom('orders')
      .innerJoin('users', 'users.user_id', 'orders.user_id')
      .selectAll('orders')
      .select('users.pan as holder_pan')
      .where('orders.user_id', 'in', (eb) =>
        eb
          .selectFrom('users as h')
          .select('h.user_id')
          .where((w) =>
            panList.length === 0
              ? w('h.user_id', 'in', ids)
              : ids.length === 0
                ? w('h.pan', 'in', panList)
                : w.or([w('h.user_id', 'in', ids), w('h.pan', 'in', panList)]),
          ),
      )
      .where('orders.offer_id', 'in', [...new Set(offerIds)])
      .where('orders.status', 'in', [...LIVE_STATUSES])
      .execute();
    const bids = rows.map(({ holder_pan, ...row }) => {
      held.set(row.user_id, holder_pan);
      return orderFromRow(row);
    });
    return { bids, pans: held };
  }

  /**
   * The users' 0 %-margin standing: the limit the operator set, against their live 0 %-margin bids in every
   * offer valued at their prices (open quantity times price) and what was allotted to such bids and has not
   * settled at `now` (traded quantity times price: the custodian pays for it at settlement), summed exactly.
   * Read in the transaction that judges new bids, after lockUsers.
   */
  async zeroMarginExposure(
    storeTx: StoreTx,
    userIds: readonly string[],
    now: number,
  ): Promise<Map<string, ZeroMarginExposure>> {
    const exposure = new Map<string, ZeroMarginExposure>();
    if (userIds.length === 0) return exposure;
    const { trx } = openTx(storeTx);
    const ids = [...new Set(userIds)];
    const limits = await trx
      .selectFrom('users')
      .select(['user_id', 'zero_margin_limit_paise'])
      .where('user_id', 'in', ids)
      .execute();
    for (const row of limits) {
      exposure.set(row.user_id, {
        limitPaise: row.zero_margin_limit_paise === null ? null : BigInt(row.zero_margin_limit_paise),
        openPaise: 0n,
      });
    }
    const bids = await trx
      .selectFrom('orders')
      .select(['user_id', 'quantity', 'traded_quantity', 'price_paise'])
      .where('user_id', 'in', ids)
      .where('margin_type', '=', 'T')
      .where('status', 'in', [...LIVE_STATUSES])
      .execute();
    for (const bid of bids) {
      const standing = exposure.get(bid.user_id);
      if (standing !== undefined)
        standing.openPaise += zeroMarginValuePaise({
          quantity: Number(bid.quantity),
          tradedQuantity: Number(bid.traded_quantity),
          pricePaise: Number(bid.price_paise),
        });
    }
    // Allotted and not settled yet: the trades of 0 %-margin bids (index trades_user_settles).
    const unsettled = await trx
      .selectFrom('trades')
      .innerJoin('orders', 'orders.order_id', 'trades.order_id')
      .select(['trades.user_id', 'trades.quantity', 'trades.price_paise'])
      .where('trades.user_id', 'in', ids)
      .where('trades.settles_at', '>', now)
      .where('orders.margin_type', '=', 'T')
      .execute();
    for (const trade of unsettled) {
      const standing = exposure.get(trade.user_id);
      if (standing !== undefined) standing.openPaise += BigInt(trade.quantity) * BigInt(trade.price_paise);
    }
    return exposure;
  }

  /** The offer each of these orders bids in, by order id (null: an issue's bid; an unknown id left out). */
  async offersOf(orderIds: readonly string[]): Promise<Map<string, string | null>> {
    if (orderIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('orders')
      .select(['order_id', 'offer_id'])
      .where('order_id', 'in', [...new Set(orderIds)])
      .execute();
    return new Map(rows.map((row) => [row.order_id, row.offer_id]));
  }

  async find(orderId: string): Promise<Order | undefined> {
    const row = await this.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
    return row && orderFromRow(row);
  }
}
