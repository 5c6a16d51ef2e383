/**
 * Migration 0023-issue-value-limit (issue 47 row 3, for the one-listing issues as 0022 did for the offers'
 * listings): `ofs_issues.value_limit_paise`, the order value upper limit the exchange sets for the issue's
 * series (NSE's `orderValueUpperLimit`), imported until the exchange link reads it; null: none.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ofs_issues').addColumn('value_limit_paise', 'bigint').execute();
}
