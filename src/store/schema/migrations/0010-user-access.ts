/**
 * Migration 0010-user-access (docs/design/security.md, findings 8 and 13): `users.disabled_at`, when the
 * operator disabled the user (`ordergate users disable`; null: enabled). A disabled user cannot log in and
 * their sessions no longer authenticate.
 *
 * A database upgraded with a user `demo` that still has `ordergate demo`'s published password and that
 * also holds other users is a production database with a known login: that demo user is disabled and its
 * sessions revoked here, as `ordergate users add` does from now on.
 */
import type { Kysely } from 'kysely';
import { verifyPassword } from '../../../auth/credentials.js';
import type { DialectName } from '../../sql/database.js';

/** `ordergate demo`'s user and published password, as they were when this migration was written. */
const DEMO_USER_ID = 'demo';
const DEMO_PASSWORD = 'ordergate-demo';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();

  const demo = await db
    .selectFrom('users')
    .select('password_hash')
    .where('user_id', '=', DEMO_USER_ID)
    .executeTakeFirst();
  if (demo === undefined) return;
  const others = await db
    .selectFrom('users')
    .select('user_id')
    .where('user_id', '<>', DEMO_USER_ID)
    .limit(1)
    .executeTakeFirst();
  if (others === undefined || !(await verifyPassword(DEMO_PASSWORD, demo.password_hash as string))) return;
  const now = Date.now();
  await db.updateTable('users').set({ disabled_at: now }).where('user_id', '=', DEMO_USER_ID).execute();
  await db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', DEMO_USER_ID)
    .where('revoked_at', 'is', null)
    .execute();
}
