/**
 * Migration 0024-member-data (issue 49 row 5; docs/design/member-data.md): what an exchange bid needs of
 * its client, on the user.
 *
 * - `users.ucc`: the client's Unique Client Code at the exchanges (1 to 10 capital letters or digits),
 *   unique: one client, one user; null: not recorded, and the user's bids are refused (422 e-385).
 * - `users.pan`: the client's PAN; several users may share one (the retail limit counts per PAN).
 * - `users.client_type`: CLI (a client's bids, the default) or PRO (the member's own account).
 * - `users.custodian_code`: the custodian's participant id, which an MF, IC or OTHS bid and every 0 %-margin
 *   bid need; null: none.
 *
 * Existing users get none of them: until the operator records them (`ordergate users set-member`,
 * `ordergate users import-clients`), their new bids, modifications and carry-forwards answer 422 e-385.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('ucc', 'text').execute();
  await db.schema.alterTable('users').addColumn('pan', 'text').execute();
  await db.schema
    .alterTable('users')
    .addColumn('client_type', 'text', (col) => col.notNull().defaultTo('CLI'))
    .execute();
  await db.schema.alterTable('users').addColumn('custodian_code', 'text').execute();
  await db.schema.createIndex('users_ucc').unique().on('users').column('ucc').execute();
  await db.schema.createIndex('users_pan').on('users').column('pan').execute();
}
