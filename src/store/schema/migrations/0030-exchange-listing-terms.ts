/**
 * Migration 0030-exchange-listing-terms (issue 50, item 3; docs/operations.md, "Forecast and the exchange's
 * terms"): what the exchange last said of its listings (NSE's `activeSecurities`), kept beside the operator's
 * import so that `ordergate ofs exchange-terms` can show each difference; nothing in it is applied.
 *
 * - `exchange_listing_terms`: one row per exchange segment and symbol, the last answer for it (the
 *   exchange's entry as JSON, as read) and when it was read. A listing the exchange no longer lists keeps
 *   its last row.
 * - `exchange_terms_reads`: one row per exchange segment: when it was last read, and the last read that
 *   failed (when, and why).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('exchange_listing_terms')
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('read_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('exchange_listing_terms_pkey', ['exchange', 'symbol'])
    .execute();
  await db.schema
    .createTable('exchange_terms_reads')
    .addColumn('exchange', 'text', (c) => c.primaryKey())
    .addColumn('read_at', 'bigint')
    .addColumn('error', 'text')
    .addColumn('error_at', 'bigint')
    .execute();
}
