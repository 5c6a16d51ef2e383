/**
 * Migration 0007-funds (docs/design/funds.md): users' funds accounts and their ledger.
 *
 * - `funds_accounts`: one row per funds-checked user. cash = deposits - withdrawals - debits; the live bids
 *   block part of it (`blocked_paise`); available = cash - blocked; `debited_paise` totals every debit.
 * - `funds_ledger`: every change of an account (DEPOSIT, WITHDRAW, BLOCK, RELEASE, DEBIT), append-only like
 *   the audit tables of 0005: the database refuses UPDATE and DELETE on it (and TRUNCATE on PostgreSQL).
 * - `orders.funds_blocked_paise`: what the order blocks now; null for an order that is not funds-checked.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

const LEDGER = 'funds_ledger';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('funds_accounts')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.user_id'))
    .addColumn('cash_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('blocked_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('debited_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await serialKeyTable(db, dialect, LEDGER)
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) =>
      c.notNull().check(sql`kind in ('DEPOSIT', 'WITHDRAW', 'BLOCK', 'RELEASE', 'DEBIT')`),
    )
    .addColumn('amount_paise', 'bigint', (c) => c.notNull().check(sql`amount_paise > 0`))
    .addColumn('order_id', 'text')
    .execute();
  await db.schema.createIndex('funds_ledger_user').on(LEDGER).columns(['user_id', 'id']).execute();

  await db.schema.alterTable('orders').addColumn('funds_blocked_paise', 'bigint').execute();

  if (dialect === 'postgres') {
    // ordergate_refuse_change() is 0005's.
    await sql`create trigger ${sql.id(`${LEDGER}_append_only`)} before update or delete on ${sql.table(LEDGER)}
      for each row execute function ordergate_refuse_change()`.execute(db);
    await sql`create trigger ${sql.id(`${LEDGER}_no_truncate`)} before truncate on ${sql.table(LEDGER)}
      for each statement execute function ordergate_refuse_change()`.execute(db);
  } else {
    for (const operation of ['update', 'delete'] as const) {
      await sql`create trigger ${sql.id(`${LEDGER}_no_${operation}`)} before ${sql.raw(operation)} on ${sql.table(LEDGER)}
        begin select raise(abort, ${sql.lit(`${LEDGER} is append-only: ${operation} refused`)}); end`.execute(db);
    }
  }
}
