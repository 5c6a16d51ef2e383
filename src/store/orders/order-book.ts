/**
 * The order read model: what the order book and the order history calls read (a user's page of orders,
 * an order of theirs, its changes), and the plans the database chooses for them. The order path's writes
 * and the reads its transactions judge by are OrderRepository's (orders.ts).
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Order, RecordedChange } from '../../domain/orders/order.js';
import type { Database } from '../schema/tables.js';
import type { DialectName } from '../sql/database.js';
import { listParameter } from '../sql/bulk.js';
import { inOneSnapshot } from '../sql/snapshot.js';
import { EXPOSURES, historyEntryFromRow, orderFromRow, type OrderPageRequest } from './orders.js';

/** A user's bids in one offer with what happened to them: the allotment explained reads these (issue 51). */
export interface OfferBidRecords {
  /** Oldest first (placement, then id). */
  orders: Order[];
  /** Each order's allotments (its trades), oldest first. */
  trades: { orderId: string; quantity: number; pricePaise: number; tradedAt: number; settlesAt: number }[];
  /** Each order's changes, oldest first. */
  changes: RecordedChange[];
  /** Each order's funds ledger rows (BLOCK, RELEASE, DEBIT), oldest first. */
  funds: { orderId: string; kind: 'BLOCK' | 'RELEASE' | 'DEBIT'; amountPaise: number; at: number }[];
}

export class OrderBookReads {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** One page of the user's orders, newest first, and how many orders match the filters in all. */
  async orderBook(query: OrderPageRequest): Promise<{ orders: Order[]; totalCount: number }> {
    return inOneSnapshot(this.db, async (db) => {
      const { page, count } = this.orderBookQueries(query, db);
      const orders = await page.execute();
      const total = await count.executeTakeFirstOrThrow();
      return { orders: orders.map(orderFromRow), totalCount: Number(total.n) };
    });
  }

  private orderBookQueries(query: OrderPageRequest, db: Kysely<Database> = this.db) {
    let filtered = db.selectFrom('orders').where('user_id', '=', query.userId);
    if (query.statuses !== undefined) filtered = filtered.where('status', 'in', [...query.statuses]);
    if (query.orderId !== undefined) filtered = filtered.where('order_id', '=', query.orderId);
    return {
      page: filtered
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('order_id', 'desc')
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize),
      count: filtered.select((eb) => eb.fn.countAll<number | string>().as('n')),
    };
  }

  private historyQuery(orderId: string) {
    return this.db.selectFrom('order_history').selectAll().where('order_id', '=', orderId).orderBy('id');
  }

  /**
   * The plans the database chooses for the reads whose cost must not grow with the orders stored (an
   * order-book page and its count, an order's history, the retail limit's running totals), for a user and
   * one of their orders: what `npm run bench -- --preload` shows (docs/design/performance.md).
   */
  async readPlans(userId: string, orderId: string): Promise<Record<string, string[]>> {
    const { page, count } = this.orderBookQueries({ userId, page: 1, pageSize: 20 });
    // The retail totals as order entry reads them: the user's and those of the accounts under its PAN.
    const holder = await this.db.selectFrom('users').select('pan').where('user_id', '=', userId).executeTakeFirst();
    const pans = holder?.pan === null || holder?.pan === undefined ? [] : [holder.pan];
    const exposures = {
      compile: () =>
        CompiledQuery.raw(EXPOSURES[this.dialect], [
          listParameter(this.dialect, [userId]),
          listParameter(this.dialect, pans),
        ]),
    };
    const queries = {
      order_book_page: page,
      order_book_count: count,
      order_history: this.historyQuery(orderId),
      retail_limit_totals: exposures,
    };
    const plans: Record<string, string[]> = {};
    for (const [name, query] of Object.entries(queries)) {
      const compiled = query.compile();
      const explain = this.dialect === 'postgres' ? 'explain ' : 'explain query plan ';
      const result = await this.db.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]),
      );
      plans[name] = result.rows.map((row) => String(row['QUERY PLAN'] ?? row.detail));
    }
    return plans;
  }

  /** The user's order (undefined for another user's or an unknown id). */
  async findOwned(orderId: string, userId: string): Promise<Order | undefined> {
    const row = await this.db
      .selectFrom('orders')
      .selectAll()
      .where('order_id', '=', orderId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row && orderFromRow(row);
  }

  /**
   * The user's bids in an offer (every listing) with their trades, changes and funds ledger rows: four
   * reads in one snapshot whatever the number of bids (index orders_user_offer; the others by the orders'
   * ids through it, and the ledger by its user).
   */
  async offerBids(userId: string, offerId: string): Promise<OfferBidRecords> {
    return inOneSnapshot(this.db, async (db) => {
      const mine = db
        .selectFrom('orders')
        .select('order_id')
        .where('user_id', '=', userId)
        .where('offer_id', '=', offerId);
      const orders = await db
        .selectFrom('orders')
        .selectAll()
        .where('user_id', '=', userId)
        .where('offer_id', '=', offerId)
        .orderBy('created_at')
        .orderBy('order_id')
        .execute();
      if (orders.length === 0) return { orders: [], trades: [], changes: [], funds: [] };
      const trades = await db
        .selectFrom('trades')
        .select(['order_id', 'quantity', 'price_paise', 'traded_at', 'settles_at'])
        .where('user_id', '=', userId)
        .where('order_id', 'in', mine)
        .orderBy('traded_at')
        .orderBy('trade_id')
        .execute();
      const changes = await db
        .selectFrom('order_history')
        .selectAll()
        .where('order_id', 'in', mine)
        .orderBy('id')
        .execute();
      const funds = await db
        .selectFrom('funds_ledger')
        .select(['order_id', 'kind', 'amount_paise', 'at'])
        .where('user_id', '=', userId)
        .where('order_id', 'in', mine)
        .where('kind', 'in', ['BLOCK', 'RELEASE', 'DEBIT'])
        .orderBy('id')
        .execute();
      // PostgreSQL answers bigints as strings.
      return {
        orders: orders.map(orderFromRow),
        trades: trades.map((row) => ({
          orderId: row.order_id,
          quantity: Number(row.quantity),
          pricePaise: Number(row.price_paise),
          tradedAt: Number(row.traded_at),
          settlesAt: Number(row.settles_at),
        })),
        changes: changes.map(historyEntryFromRow),
        funds: funds.map((row) => ({
          orderId: row.order_id ?? '',
          kind: row.kind as 'BLOCK' | 'RELEASE' | 'DEBIT',
          amountPaise: Number(row.amount_paise),
          at: Number(row.at),
        })),
      };
    });
  }

  /** The order's changes, oldest first. */
  async history(orderId: string): Promise<RecordedChange[]> {
    return (await this.historyQuery(orderId).execute()).map(historyEntryFromRow);
  }
}
