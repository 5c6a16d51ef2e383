/**
 * Migration 0029-reconciliations (issue 50, item 4; docs/reconciliation.md): the reports of reconciliation,
 * the exchange's book of our bids in one listing of an offer against ordergate's orders, and the operator's
 * requests for one (a CLI process never opens an exchange session of its own: it queues a request, and the
 * node holding the session runs it at its next pass).
 *
 * - `ofs_reconciliations`: one row per run and listing (offer, exchange, symbol): what asked for it
 *   (`trigger`: `close-T`, `close-T1` or `operator`), who and when; its state (`QUEUED`, then `DONE` or
 *   `FAILED` with the reason); when it ran, the book's `asOf`, the counts, and the differences as a JSON
 *   array (one report is read whole, never queried by difference). `close_key` (offer, exchange and
 *   trigger of a close's run; null for the operator's) is unique: one run per close and listing, whichever
 *   node runs it. `claimed_by` and `claimed_until` lease a queued request to the node running it.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await serialKeyTable(db, dialect, 'ofs_reconciliations')
    .addColumn('offer_id', 'text', (c) => c.notNull())
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('close_key', 'text', (c) => c.unique())
    .addColumn('requested_by', 'text')
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('run_at', 'bigint')
    .addColumn('book_as_of', 'bigint')
    .addColumn('ours_count', 'integer')
    .addColumn('book_count', 'integer')
    .addColumn('matched_count', 'integer')
    .addColumn('in_flight_count', 'integer')
    .addColumn('differences_count', 'integer')
    .addColumn('counts_json', 'text')
    .addColumn('differences_json', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('ofs_reconciliations_listing')
    .on('ofs_reconciliations')
    .columns(['offer_id', 'exchange', 'id'])
    .execute();
  await db.schema.createIndex('ofs_reconciliations_state').on('ofs_reconciliations').columns(['state', 'id']).execute();
}
