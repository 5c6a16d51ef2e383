/**
 * Migration 0021-second-factor-lockout (issue 47 row 2; docs/design/rate-limits.md, "Second-factor codes"):
 *
 * - `users.totp_failures`: the TOTP codes checked for the user since its last login that passed (every check
 *   is counted before the code is compared, so that checks arriving together are counted one by one);
 *   `totp_failed_at`: when the last was counted; `totp_locked_at`: when the user's second factor was locked
 *   (LOGIN_SECOND_FACTOR_LOCKOUT_AFTER wrong codes in a row), null: not locked. Only the operator unlocks.
 * - `second_factor_events`: every lock and unlock, with who did it and why: the audit of the lockout.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('totp_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('users').addColumn('totp_failed_at', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('totp_locked_at', 'bigint').execute();
  await serialKeyTable(db, dialect, 'second_factor_events')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('second_factor_events_user')
    .on('second_factor_events')
    .columns(['user_id', 'id'])
    .execute();
}
