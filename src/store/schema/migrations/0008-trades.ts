/**
 * Migration 0008-trades (docs/design/portfolio.md): the trade of every allotment, written by
 * OrderRepository.apply in the transaction that makes the order EXECUTED; positions and holdings are read
 * from it (a trade is a position until `settles_at`, then a holding). Trades already allotted are filled
 * in from the EXECUTED orders, settling T+1 as the default says. An OFS issue's import may set a shorter
 * settlement delay (`settlement_delay_ms`; null: T+1).
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

/** T+1 at 09:00 India time, in SQL: the day of the trade in India time, plus a day and nine hours. */
const DAY_MS = 86_400_000;
const IST_OFFSET_MS = 19_800_000;
const NINE_HOURS_MS = 32_400_000;

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('trades')
    .addColumn('trade_id', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull().unique().references('orders.order_id'))
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
  // The trade book (newest first) and the portfolio's reads, per user.
  await db.schema.createIndex('trades_user_time').on('trades').columns(['user_id', 'traded_at', 'trade_id']).execute();
  await db.schema.createIndex('trades_user_settles').on('trades').columns(['user_id', 'settles_at']).execute();
  await db.schema.alterTable('ofs_issues').addColumn('settlement_delay_ms', 'bigint').execute();

  // Integer division of the shifted time by a day, in either dialect: the day starts at India midnight.
  await sql`
    insert into trades (trade_id, order_id, user_id, exchange, scrip_token, symbol, series, transaction_type, product_type,
      quantity, price_paise, traded_at, settles_at, exchange_order_id, order_identifier)
    select 'T-' || order_id, order_id, user_id, exchange, scrip_token, symbol, series, transaction_type, product_type,
      traded_quantity, traded_price_paise, updated_at,
      ((updated_at + ${sql.lit(IST_OFFSET_MS)}) / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)} - ${sql.lit(IST_OFFSET_MS)} + ${sql.lit(DAY_MS + NINE_HOURS_MS)},
      exchange_order_id, order_identifier
    from orders where status = 'EXECUTED' and traded_quantity > 0 and traded_price_paise is not null`.execute(db);
}
