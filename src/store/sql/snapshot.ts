/**
 * Reads that must agree with each other, in one snapshot of the database: a list's page and its count.
 * Read one statement after the other, an order entered in between was counted but not listed (a page of
 * none with total_records 1), which a client paging until it has them all cannot make sense of.
 *
 * PostgreSQL: a read-only REPEATABLE READ transaction (its statements share the snapshot of the first).
 * SQLite: a deferred transaction on the connection, which takes no write lock and reads one snapshot of the
 * WAL; holding the connection keeps every other statement of this process out until it ends.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

export async function inOneSnapshot<T>(db: Kysely<Database>, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work);
  }
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}
