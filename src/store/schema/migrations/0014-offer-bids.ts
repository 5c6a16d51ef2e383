/**
 * Migration 0014-offer-bids (docs/design/ofs.md): bids in an offer under the SEBI framework.
 *
 * - `orders.offer_id`, `offer_category` (RETAIL, EMPLOYEE, NII, MF, IC, OTHS), `margin_type` (H or T) and
 *   `carried_forward_at` (when the bidder carried an unallotted non-retail bid forward to T+1). Null on
 *   bids in an issue of the one-listing model.
 * - `ofs_offers.t_proceed_at`: the operator's decision to allot an under-subscribed T day anyway;
 *   `t1_retail_cutoff_price_paise`: the retail cut-off the T+1 allocation found.
 * - `ofs_offer_indicative`: the indicative price the exchange publishes through T, as it changes.
 * - The simulated exchange's book: the bid's offer, bidder, margin type, what it was allotted on T, and
 *   whether it was carried forward; its events may be partial (a T-day allotment that leaves the bid live).
 * - `trades.order_id` is no longer unique: a bid allotted in part on T and the rest on T+1 has two trades
 *   (`T-<order id>` and `T-<order id>-2`); the trade id stays the key that makes a repeated event harmless.
 *   SQLite cannot drop a column's UNIQUE: its table is rebuilt, rows and indexes as they were.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('orders').addColumn('offer_id', 'text').execute();
  await db.schema.alterTable('orders').addColumn('offer_category', 'text').execute();
  await db.schema.alterTable('orders').addColumn('margin_type', 'text').execute();
  await db.schema.alterTable('orders').addColumn('carried_forward_at', 'bigint').execute();
  // The employee and retail limits of an offer read a user's live bids in it; the operator's book reads the
  // offer's bids. Partial: the bids in issues (every bid of the one-listing model) carry no index entry.
  await db.schema
    .createIndex('orders_user_offer')
    .on('orders')
    .columns(['user_id', 'offer_id'])
    .where(sql.ref('offer_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('orders_offer')
    .on('orders')
    .column('offer_id')
    .where(sql.ref('offer_id'), 'is not', null)
    .execute();

  // The traded price each change left an order with: a bid allotted in part stays live with one.
  await db.schema.alterTable('order_history').addColumn('traded_price_paise', 'bigint').execute();

  await db.schema.alterTable('ofs_offers').addColumn('t_proceed_at', 'bigint').execute();
  // The retail cut-off the T+1 allocation found (the UNIFORM retail price is it less the discount).
  await db.schema.alterTable('ofs_offers').addColumn('t1_retail_cutoff_price_paise', 'bigint').execute();
  // What the exchange publishes through T: the indicative price and the quantity bid, all valid non-retail
  // bids and apart by margin type, one row each time the figures change.
  await db.schema
    .createTable('ofs_offer_indicative')
    .addColumn('offer_id', 'text', (c) => c.notNull().references('ofs_offers.offer_id'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('price_paise', 'bigint')
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('price_h_paise', 'bigint')
    .addColumn('quantity_h', 'bigint', (c) => c.notNull())
    .addColumn('price_t_paise', 'bigint')
    .addColumn('quantity_t', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ofs_offer_indicative_pk', ['offer_id', 'at'])
    .execute();
  // The live feed of the event streams reads what every offer published since an instant.
  await db.schema.createIndex('ofs_offer_indicative_at').on('ofs_offer_indicative').column('at').execute();

  await db.schema.alterTable('sim_exchange_bids').addColumn('offer_id', 'text').execute();
  await db.schema.alterTable('sim_exchange_bids').addColumn('user_id', 'text').execute();
  await db.schema.alterTable('sim_exchange_bids').addColumn('margin_type', 'text').execute();
  await db.schema
    .alterTable('sim_exchange_bids')
    .addColumn('t_allotted', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sim_exchange_bids')
    .addColumn('carried_forward', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('sim_exchange_bids_offer')
    .on('sim_exchange_bids')
    .columns(['offer_id', 'status'])
    .execute();

  if (dialect === 'postgres') {
    await sql`alter table trades drop constraint trades_order_id_key`.execute(db);
  } else {
    await db.schema
      .createTable('trades_0014')
      .addColumn('trade_id', 'text', (c) => c.primaryKey())
      .addColumn('order_id', 'text', (c) => c.notNull().references('orders.order_id'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
      .addColumn('exchange', 'text', (c) => c.notNull())
      .addColumn('scrip_token', 'bigint', (c) => c.notNull())
      .addColumn('symbol', 'text', (c) => c.notNull())
      .addColumn('series', 'text', (c) => c.notNull())
      .addColumn('transaction_type', 'text', (c) => c.notNull())
      .addColumn('product_type', 'text', (c) => c.notNull())
      .addColumn('quantity', 'bigint', (c) => c.notNull())
      .addColumn('price_paise', 'bigint', (c) => c.notNull())
      .addColumn('traded_at', 'bigint', (c) => c.notNull())
      .addColumn('settles_at', 'bigint', (c) => c.notNull())
      .addColumn('exchange_order_id', 'text')
      .addColumn('order_identifier', 'text')
      .execute();
    await sql`insert into trades_0014 select trade_id, order_id, user_id, exchange, scrip_token, symbol, series, transaction_type, product_type,
      quantity, price_paise, traded_at, settles_at, exchange_order_id, order_identifier from trades`.execute(db);
    await db.schema.dropTable('trades').execute();
    await sql`alter table trades_0014 rename to trades`.execute(db);
    await db.schema
      .createIndex('trades_user_time')
      .on('trades')
      .columns(['user_id', 'traded_at', 'trade_id'])
      .execute();
    await db.schema.createIndex('trades_user_settles').on('trades').columns(['user_id', 'settles_at']).execute();
  }
  await db.schema.createIndex('trades_order').on('trades').column('order_id').execute();
}
