/**
 * The write transaction of the batch paths (order entry, the OMS, the simulated exchange). It carries the
 * Kysely transaction and, on SQLite, the statements of the very connection that transaction holds, so that
 * a batch runs its many small statements synchronously, without a Kysely query object or a promise per
 * statement; on PostgreSQL a batch sends one set-based statement per step instead (bulk.ts).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

export interface SqliteStatements {
  /** The prepared statement of this SQL, cached on the connection. */
  statement(sql: string): BetterSqlite3.Statement;
}

export interface WriteTx {
  /** Kysely on the connection that holds the transaction: its queries run inside it. */
  readonly trx: Kysely<Database>;
  /** SQLite only: the statements of the connection the transaction holds. Use them inside it alone. */
  readonly sqlite: SqliteStatements | null;
}
