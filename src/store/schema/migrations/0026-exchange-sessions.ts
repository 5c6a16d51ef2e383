/**
 * Migration 0026-exchange-sessions (issue 49, "one link session owner at a time across nodes";
 * docs/exchanges.md): the lease of an exchange API user's session. An exchange may end an API user's earlier
 * session at a new login, so that two nodes sending through one API user would end each other's sessions
 * all day: the node that holds the lease sends, the others stand by, and one takes over when the holder
 * stops renewing it (its node died).
 *
 * - `exchange_sessions`: one row per session name (the exchange and the API user), its holder (a node's
 *   worker id) and until when (epoch ms).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('exchange_sessions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('held_until', 'bigint', (c) => c.notNull())
    .execute();
}
