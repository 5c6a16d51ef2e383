/**
 * Migration 0025-order-member-data (issue 49 row 5; docs/design/member-data.md): each order keeps the member
 * data its client had when order entry accepted it, so that an exchange link sends the same UCC, client
 * type and custodian for the bid's whole life, whatever the user's record says later.
 *
 * - `orders.ucc`, `orders.client_type` (CLI or PRO), `orders.custodian_code`, `orders.pan`: written by order
 *   entry at placement from the session's read of the user (migration 0024's columns), never changed after.
 *
 * Nullable: orders placed before this migration keep none (null), as does an order whose client had none.
 * No index: nothing looks orders up by them (the retail limit per PAN reads `users.pan`).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('orders').addColumn('ucc', 'text').execute();
  await db.schema.alterTable('orders').addColumn('client_type', 'text').execute();
  await db.schema.alterTable('orders').addColumn('custodian_code', 'text').execute();
  await db.schema.alterTable('orders').addColumn('pan', 'text').execute();
}
