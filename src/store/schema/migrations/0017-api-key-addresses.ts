/**
 * Migration 0017-api-key-addresses (issue 23, SEBI's static IP rule; docs/design/sebi-algo.md):
 *
 * - `api_keys.allowed_ips`: the key's registered addresses, canonical, comma-separated (the primary first);
 *   null: none registered (refused when STATIC_IP_REQUIRED is on). `ips_changed_at`: when they were last set.
 * - `api_key_address_changes`: every setting of a key's addresses, with what they were and whether the
 *   operator overrode the once-a-week rule: what an exchange's audit asks to see.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('ips_changed_at', 'bigint').execute();
  await serialKeyTable(db, dialect, 'api_key_address_changes')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.key_id'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('previous_ips', 'text')
    .addColumn('allowed_ips', 'text', (c) => c.notNull())
    .addColumn('override', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('api_key_address_changes_key')
    .on('api_key_address_changes')
    .columns(['key_id', 'id'])
    .execute();
}
