/**
 * Migration 0009-totp-steps (docs/design/decisions.md, "Authentication"): `users.totp_last_step`, the
 * TOTP time step (30 s since the epoch) of the last code a login accepted, so that a code works once;
 * null until the user's first TOTP login.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('users').addColumn('totp_last_step', 'bigint').execute();
}
