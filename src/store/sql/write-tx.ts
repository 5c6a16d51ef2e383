/**
 * A write transaction. Above the store (services, the OMS) it is opaque, a `StoreTx`: what
 * `Store.writeTransaction` hands to its work, to be passed back to repository methods, so that their
 * statements run in it. Only the store looks inside (`openTx`): the Kysely transaction and, on SQLite, the
 * statements of the very connection that transaction holds, so that a batch runs its many small
 * statements synchronously, without a Kysely query object or a promise per statement; on PostgreSQL a
 * batch sends one set-based statement per step instead (bulk.ts).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

export interface SqliteStatements {
  /** The prepared statement of a write that returns no rows, cached on the connection. */
  statement(sql: string): BetterSqlite3.Statement;
  /** The rows of a statement that returns rows (a query, or a write with RETURNING). */
  rows<R>(sql: string, ...parameters: unknown[]): R[];
  /** The first row of a statement that returns rows, if any. */
  row<R>(sql: string, ...parameters: unknown[]): R | undefined;
  /** The rows of a query that selects one JSON array of `columns` per row, as objects (see sqlite-driver.ts). */
  jsonRows<R>(sql: string, columns: readonly string[], ...parameters: unknown[]): R[];
}

export interface WriteTx {
  /** Kysely on the connection that holds the transaction: its queries run inside it. */
  readonly trx: Kysely<Database>;
  /** SQLite only: the statements of the connection the transaction holds. Use them inside it alone. */
  readonly sqlite: SqliteStatements | null;
  /**
   * PostgreSQL, in Store.writeTransaction: sends a statement whose answer nothing waits for (a lock, a
   * write) without waiting for it. The connection pipelines: the statements after it go out at once and
   * the server runs them after it, in order, so a batch's lock and its first read, or its last write and
   * the commit, cost one round trip. Its failure fails the transaction: the store throws it (not the
   * "transaction is aborted" of the statements after it) at the next statement or at the commit, which the
   * aborted transaction answers with a rollback. Null elsewhere: see `sendAhead`.
   */
  readonly ahead: ((query: CompiledQuery) => void) | null;
}

/** Runs a statement whose answer nothing needs in the transaction: sent ahead where it can be (WriteTx.ahead). */
export async function sendAhead(tx: WriteTx, query: CompiledQuery): Promise<void> {
  if (tx.ahead !== null) tx.ahead(query);
  else await tx.trx.executeQuery(query);
}

declare const sealed: unique symbol;

/** A write transaction as the layers above the store hold it: handed back to repositories, never opened. */
export interface StoreTx {
  readonly [sealed]: true;
}

/** The store's side of a StoreTx. */
type OpenTx = WriteTx & StoreTx;

/** A StoreTx of this Kysely transaction (and, on SQLite, its connection's statements; see WriteTx). */
export function sealTx(
  trx: Kysely<Database>,
  sqlite: SqliteStatements | null,
  ahead: WriteTx['ahead'] = null,
): StoreTx {
  const tx: WriteTx = { trx, sqlite, ahead };
  return tx as OpenTx;
}

/** Where a repository method runs its statements: in `tx` when it is given one, else on `db`. */
export function executorOf(db: Kysely<Database>, tx: StoreTx | undefined): Kysely<Database> {
  return tx === undefined ? db : openTx(tx).trx;
}

/** What a StoreTx holds; for the store's repositories alone. */
export function openTx(tx: StoreTx): WriteTx {
  return tx as OpenTx;
}
