/**
 * Migration 0005-audit: the audit trail (docs/design/audit.md). `audit_requests` records every
 * order-entry request; `order_history`, the log of every order state change, gains who made each change
 * (`actor`) and the request that caused it (`request_id`). Both tables become append-only: the database
 * itself refuses UPDATE and DELETE on them (and TRUNCATE on PostgreSQL), whoever asks.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

/** The tables no statement may change or delete a row of. */
export const APPEND_ONLY_TABLES = ['audit_requests', 'order_history'] as const;

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await serialKeyTable(db, dialect, 'audit_requests')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('client_address', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('order_id', 'text')
    .addColumn('ordercart_id', 'text')
    .addColumn('body', 'text')
    .execute();
  await db.schema.createIndex('audit_requests_at').on('audit_requests').columns(['at', 'id']).execute();
  await db.schema.createIndex('audit_requests_request').on('audit_requests').column('request_id').execute();
  await db.schema.createIndex('audit_requests_user').on('audit_requests').columns(['user_id', 'at']).execute();
  await db.schema.createIndex('audit_requests_order').on('audit_requests').column('order_id').execute();

  // Null on the rows written before this migration: who made those changes was not recorded.
  await db.schema.alterTable('order_history').addColumn('actor', 'text').execute();
  await db.schema.alterTable('order_history').addColumn('request_id', 'text').execute();
  await db.schema.createIndex('order_history_request').on('order_history').column('request_id').execute();
  await db.schema.createIndex('order_history_at').on('order_history').columns(['at', 'id']).execute();

  if (dialect === 'postgres') {
    await sql`
      create function ordergate_refuse_change() returns trigger language plpgsql as $$
      begin
        raise exception '% is append-only: % refused', tg_table_name, tg_op using errcode = 'insufficient_privilege';
      end
      $$`.execute(db);
    for (const table of APPEND_ONLY_TABLES) {
      await sql`create trigger ${sql.id(`${table}_append_only`)} before update or delete on ${sql.table(table)}
        for each row execute function ordergate_refuse_change()`.execute(db);
      await sql`create trigger ${sql.id(`${table}_no_truncate`)} before truncate on ${sql.table(table)}
        for each statement execute function ordergate_refuse_change()`.execute(db);
    }
  } else {
    for (const table of APPEND_ONLY_TABLES) {
      for (const operation of ['update', 'delete'] as const) {
        await sql`create trigger ${sql.id(`${table}_no_${operation}`)} before ${sql.raw(operation)} on ${sql.table(table)}
          begin select raise(abort, ${sql.lit(`${table} is append-only: ${operation} refused`)}); end`.execute(db);
      }
    }
  }
}
