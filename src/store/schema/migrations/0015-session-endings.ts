/**
 * Migration 0015-session-endings (issue 21 row 3): every node ends the event streams and order sockets of
 * a session within a poll of its end. The order-event poller asks, each time it looks for events, which
 * sessions were revoked and which users disabled lately: both by time, through these indexes.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.createIndex('sessions_revoked_at').on('sessions').column('revoked_at').execute();
  await db.schema.createIndex('users_disabled_at').on('users').column('disabled_at').execute();
}
