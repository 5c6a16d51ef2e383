/**
 * Migration 0002-oms: what the embedded OMS needs. Orders gain the category they were placed under, a
 * cancellation request, the traded price and the exchange's order id; issues gain when they were allocated;
 * and the simulated OFS exchange gets its own book of bids and the events it sends back.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  // The category the order was placed under: its window and its side of the allocation.
  await db.schema
    .alterTable('orders')
    .addColumn('category', 'text', (c) => c.notNull().defaultTo('RETAIL'))
    .execute();
  await db.schema.alterTable('orders').addColumn('cancel_requested_at', 'bigint').execute();
  await db.schema.alterTable('orders').addColumn('traded_price_paise', 'bigint').execute();
  await db.schema.alterTable('orders').addColumn('exchange_order_id', 'text').execute();
  await db.schema
    .createIndex('orders_user_symbol_status')
    .on('orders')
    .columns(['user_id', 'symbol', 'status'])
    .execute();
  await db.schema
    .createIndex('orders_issue_status')
    .on('orders')
    .columns(['exchange', 'scrip_token', 'status'])
    .execute();
  await db.schema.alterTable('ofs_issues').addColumn('allocated_at', 'bigint').execute();

  // The simulated OFS exchange keeps its own book, as a real one would on its side of the wire.
  await db.schema
    .createTable('sim_exchange_bids')
    .addColumn('order_id', 'text', (c) => c.primaryKey())
    .addColumn('exchange_order_id', 'text', (c) => c.notNull().unique())
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('scrip_token', 'bigint', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('order_type', 'text', (c) => c.notNull())
    .addColumn('price_paise', 'bigint', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('transmissions', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sim_exchange_bids_issue')
    .on('sim_exchange_bids')
    .columns(['exchange', 'scrip_token', 'status'])
    .execute();
  await serialKeyTable(db, dialect, 'sim_exchange_events')
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('price_paise', 'bigint')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('sim_exchange_events_pending')
    .on('sim_exchange_events')
    .columns(['delivered_at', 'id'])
    .execute();
}
