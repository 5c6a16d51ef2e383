/**
 * Migration 0018-algos (issue 23, SEBI's rules for API and algo orders; docs/design/sebi-algo.md):
 *
 * - `algos`: the algos the broker registered with an exchange (the exchange's algo ID, its segment, the
 *   approval reference), and whether the kill switch stopped one (`disabled_at`, `disabled_reason`).
 * - `algo_users`: who may send orders with each.
 * - `algo_changes`: every registration, stop and start, who did it and what it did (the orders the kill
 *   switch cancelled): what an exchange's audit asks to see.
 * - `orders_algo`: the live orders of one algo, found at once by the kill switch among millions.
 * - `users.second_factor_exempt_at`: when the operator exempted a user from the second factor at login
 *   (LOGIN_SECOND_FACTOR_REQUIRED); null: not exempt.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('algos')
    .addColumn('algo_id', 'text', (c) => c.primaryKey())
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('approval_ref', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('registered_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .execute();
  await db.schema
    .createTable('algo_users')
    .addColumn('algo_id', 'text', (c) => c.notNull().references('algos.algo_id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('algo_users_pk', ['algo_id', 'user_id'])
    .execute();
  await serialKeyTable(db, dialect, 'algo_changes')
    .addColumn('algo_id', 'text', (c) => c.notNull().references('algos.algo_id'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('algo_changes_algo').on('algo_changes').columns(['algo_id', 'id']).execute();
  await db.schema
    .createIndex('orders_algo')
    .on('orders')
    .columns(['algo_id', 'status'])
    .where(sql.ref('algo_id'), 'is not', null)
    .execute();
  await db.schema.alterTable('users').addColumn('second_factor_exempt_at', 'bigint').execute();
}
