/**
 * Migration 0001-core: the tables of the first release. Users with their API keys and sessions, the OFS
 * issues, the orders with their history and the OMS outbox that carries them to the exchange, and the
 * order carts.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('totp_secret', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('key_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('ofs_issues')
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('scrip_token', 'bigint', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('series', 'text', (c) => c.notNull())
    .addColumn('floor_price_paise', 'bigint', (c) => c.notNull())
    .addColumn('tick_size_paise', 'bigint', (c) => c.notNull())
    .addColumn('offer_quantity', 'bigint', (c) => c.notNull())
    .addColumn('retail_reserve_pct', 'double precision', (c) => c.notNull())
    .addColumn('retail_cutoff_price_paise', 'bigint')
    .addColumn('allocation', 'text', (c) => c.notNull())
    .addColumn('non_retail_opens_at', 'bigint', (c) => c.notNull())
    .addColumn('non_retail_closes_at', 'bigint', (c) => c.notNull())
    .addColumn('retail_opens_at', 'bigint', (c) => c.notNull())
    .addColumn('retail_closes_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ofs_issues_pk', ['exchange', 'scrip_token'])
    .execute();
  await db.schema.createIndex('ofs_issues_symbol').on('ofs_issues').column('symbol').execute();

  await db.schema
    .createTable('orders')
    .addColumn('order_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('scrip_token', 'bigint', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('series', 'text', (c) => c.notNull())
    .addColumn('transaction_type', 'text', (c) => c.notNull())
    .addColumn('product_type', 'text', (c) => c.notNull())
    .addColumn('order_type', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('price_paise', 'bigint', (c) => c.notNull())
    .addColumn('disclosed_quantity', 'bigint', (c) => c.notNull())
    .addColumn('traded_quantity', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error_reason', 'text')
    .addColumn('order_identifier', 'text')
    .addColumn('algo_id', 'text')
    .addColumn('strategy_id', 'text')
    .addColumn('part_code', 'text')
    .addColumn('vender_code', 'text')
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('orders_user_created').on('orders').columns(['user_id', 'created_at']).execute();

  await serialKeyTable(db, dialect, 'order_history')
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.order_id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('price_paise', 'bigint', (c) => c.notNull())
    .addColumn('traded_quantity', 'bigint', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_history_order').on('order_history').columns(['order_id', 'id']).execute();

  await serialKeyTable(db, dialect, 'outbox')
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.order_id'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('done_at', 'bigint')
    .execute();
  await db.schema.createIndex('outbox_pending').on('outbox').columns(['done_at', 'id']).execute();

  await db.schema
    .createTable('order_carts')
    .addColumn('ordercart_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('orders_json', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('executed_no_time', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('modified_by', 'text', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_carts_user').on('order_carts').columns(['user_id', 'created_at']).execute();
}
