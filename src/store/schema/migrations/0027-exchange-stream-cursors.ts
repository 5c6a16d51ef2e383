/**
 * Migration 0027-exchange-stream-cursors (issue 49; docs/exchanges.md, "The message stream"): how far the OMS
 * has applied each exchange link's message stream, so that a restarted node reopens the stream from there
 * instead of from its beginning (every message applied again would change nothing, at the cost of reading
 * a whole day of them).
 *
 * - `exchange_stream_cursors`: one row per stream (the link's name), the sequence number up to which every
 *   message has been applied and acknowledged.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('exchange_stream_cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute();
}
