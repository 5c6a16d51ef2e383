/**
 * Migration 0019-trading-holidays (shared/spec/ofs-framework.md, "Settlement days are trading days"):
 *
 * - `trading_holidays`: the exchanges' holidays the operator imported (`ordergate ofs holidays import`), one
 *   row per India date ('YYYY-MM-DD', so that text order is date order), with the exchange's name for it.
 *   An import replaces whole years, as the exchanges publish their lists.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('trading_holidays')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('imported_at', 'bigint', (c) => c.notNull())
    .execute();
}
