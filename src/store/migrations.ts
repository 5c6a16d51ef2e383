/**
 * Schema migrations, written once with Kysely's schema builder for both dialects. They run at start-up
 * (server and every CLI command); Kysely's migration lock lets several processes start at once.
 * Never edit a released migration: add a new one.
 */
import { Kysely, Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { DialectName, Store } from './database.js';
import { serialKeyTable } from './migration-helpers.js';
import * as webhooks from './migrations/0003-webhooks.js';
import * as idempotency from './migrations/0004-idempotency.js';
import * as audit from './migrations/0005-audit.js';
import * as speed from './migrations/0006-speed.js';
import * as funds from './migrations/0007-funds.js';
import * as trades from './migrations/0008-trades.js';
import * as totpSteps from './migrations/0009-totp-steps.js';
import * as userAccess from './migrations/0010-user-access.js';
import * as auditRetention from './migrations/0011-audit-retention.js';
import * as operators from './migrations/0012-operators.js';
import * as offers from './migrations/0013-offers.js';
import * as offerBids from './migrations/0014-offer-bids.js';
import * as sessionEndings from './migrations/0015-session-endings.js';
import * as userEventIds from './migrations/0016-user-event-ids.js';

function migrations(dialect: DialectName): Record<string, Migration> {
  const serialKey = (db: Kysely<any>, table: string) => serialKeyTable(db, dialect, table);

  return {
    '0001_core': {
      async up(db: Kysely<any>) {
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

        await serialKey(db, 'order_history')
          .addColumn('order_id', 'text', (c) => c.notNull().references('orders.order_id'))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('quantity', 'bigint', (c) => c.notNull())
          .addColumn('price_paise', 'bigint', (c) => c.notNull())
          .addColumn('traded_quantity', 'bigint', (c) => c.notNull())
          .addColumn('at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('order_history_order').on('order_history').columns(['order_id', 'id']).execute();

        await serialKey(db, 'outbox')
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
      },
    },
    '0002_oms': {
      async up(db: Kysely<any>) {
        // The category the order was placed under: its window and its side of the allocation.
        await db.schema.alterTable('orders').addColumn('category', 'text', (c) => c.notNull().defaultTo('RETAIL')).execute();
        await db.schema.alterTable('orders').addColumn('cancel_requested_at', 'bigint').execute();
        await db.schema.alterTable('orders').addColumn('traded_price_paise', 'bigint').execute();
        await db.schema.alterTable('orders').addColumn('exchange_order_id', 'text').execute();
        await db.schema.createIndex('orders_user_symbol_status').on('orders').columns(['user_id', 'symbol', 'status']).execute();
        await db.schema.createIndex('orders_issue_status').on('orders').columns(['exchange', 'scrip_token', 'status']).execute();
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
        await db.schema.createIndex('sim_exchange_bids_issue').on('sim_exchange_bids').columns(['exchange', 'scrip_token', 'status']).execute();
        await serialKey(db, 'sim_exchange_events')
          .addColumn('order_id', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('quantity', 'bigint', (c) => c.notNull())
          .addColumn('price_paise', 'bigint')
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('delivered_at', 'bigint')
          .execute();
        await db.schema.createIndex('sim_exchange_events_pending').on('sim_exchange_events').columns(['delivered_at', 'id']).execute();
      },
    },
    // Later migrations live in ./migrations/, one file each.
    '0003_webhooks': { up: (db: Kysely<any>) => webhooks.up(db, dialect) },
    '0004_idempotency': { up: (db: Kysely<any>) => idempotency.up(db, dialect) },
    '0005_audit': { up: (db: Kysely<any>) => audit.up(db, dialect) },
    '0006_speed': { up: (db: Kysely<any>) => speed.up(db, dialect) },
    '0007_funds': { up: (db: Kysely<any>) => funds.up(db, dialect) },
    '0008_trades': { up: (db: Kysely<any>) => trades.up(db, dialect) },
    '0009_totp_steps': { up: (db: Kysely<any>) => totpSteps.up(db, dialect) },
    '0010_user_access': { up: (db: Kysely<any>) => userAccess.up(db, dialect) },
    '0011_audit_retention': { up: (db: Kysely<any>) => auditRetention.up(db, dialect) },
    '0012_operators': { up: (db: Kysely<any>) => operators.up(db, dialect) },
    '0013_offers': { up: (db: Kysely<any>) => offers.up(db, dialect) },
    '0014_offer_bids': { up: (db: Kysely<any>) => offerBids.up(db, dialect) },
    '0015_session_endings': { up: (db: Kysely<any>) => sessionEndings.up(db, dialect) },
    '0016_user_event_ids': { up: (db: Kysely<any>) => userEventIds.up(db, dialect) },
  };
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Brings the schema up to date; safe to call from several processes at once. */
export async function migrateToLatest(store: Store): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateToLatest());
}

/** Brings the schema up to migration `name` (e.g. "0007_funds"), for tests of a later migration's data steps. */
export async function migrateTo(store: Store, name: string): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateTo(name));
}

async function migrate(store: Store, run: (migrator: Migrator) => ReturnType<Migrator['migrateToLatest']>): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(store.dialect) };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await run(migrator);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
