/**
 * Kysely's SQLite dialect with our own driver for better-sqlite3. Kysely's stock driver wakes every waiting
 * query each time its one connection is released (a thundering herd that costs O(n^2) under load) and
 * prepares every statement anew. This driver hands the connection to waiters strictly first in, first
 * out, caches prepared statements by their SQL, and opens write transactions with BEGIN IMMEDIATE so that
 * a second process writing the same file waits (busy_timeout) instead of failing half-way.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { WalSync } from './wal-sync.js';

const STATEMENT_CACHE_SIZE = 256;

/** Makes a row object of a row's values, in the statement's column order (see rowMaker). */
type RowMaker = (values: unknown[]) => Record<string, unknown>;

/**
 * A row maker for these columns. better-sqlite3 builds each row object by setting its columns one by one
 * from C++ (about 0.5 us a column: 15-20 us for an order's 32), while an object literal of the row's values,
 * compiled once per statement, has its shape from the start: reading the values as an array (raw mode) and
 * making the object with it costs about a third (docs/design/performance-log.md). A repeated column name keeps
 * its last value, in its first place, as better-sqlite3's own objects do. The names are the statement's own
 * columns (ordergate's SQL, never a request's), each quoted as a string literal.
 */
function rowMaker(columns: readonly string[]): RowMaker {
  const fields = columns.map((name, i) => `${JSON.stringify(name)}: values[${i}]`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled on purpose (above); never a request's text
  return new Function('values', `return { ${fields.join(', ')} };`) as RowMaker;
}

/** The select list of a jsonRows query: `json_array(a, b, ...)` of these columns (ordergate's own names). */
export function jsonArrayOf(columns: readonly string[]): string {
  return `json_array(${columns.join(', ')})`;
}

/**
 * The row object, named by `columns`, of one row read as the JSON text of `jsonArrayOf` its values. For
 * columns of integers (within 2^53), text and null: JSON holds no blob, and parses a real written as `1.0`
 * as 1. jsonRows reads rows so in a transaction; a query read through Kysely parses its column with this.
 */
export function jsonRowReader<R>(columns: readonly string[]): (json: string) => R {
  const make = rowMaker(columns);
  return (json) => make(JSON.parse(json) as unknown[]) as R;
}

/** A prepared statement, and for one that returns rows (in raw mode) the maker of its row objects. */
interface Prepared {
  statement: BetterSqlite3.Statement;
  make: RowMaker | null;
}

/**
 * The one connection of a SQLite store, with its prepared statements cached by their SQL. Besides serving
 * Kysely, it hands its statements to the batch writes (write-tx.ts), which run them synchronously inside a
 * transaction that Kysely holds on this same connection. A statement that returns rows is read through
 * rows() and row() alone: it is prepared in raw mode, and they make its row objects.
 */
export class StatementCachingConnection implements DatabaseConnection {
  private readonly prepared = new Map<string, Prepared>();
  /** jsonRows' row readers, by their column lists (constants of the code). */
  private readonly jsonReaders = new WeakMap<readonly string[], (json: string) => unknown>();

  /**
   * `walSync`: the WAL's sync after each commit (wal-sync.ts); null for a database without one (in memory).
   * `waitForSync`: whether a read waits for the sync under way (false: the credentials' read-only
   * connection, Store.credentialsDb; it still fails once a sync has failed).
   */
  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly walSync: WalSync | null = null,
    private readonly waitForSync = true,
  ) {}

  private prepare(sql: string): Prepared {
    let prepared = this.prepared.get(sql);
    if (prepared === undefined) {
      const statement = this.sqlite.prepare(sql);
      prepared = { statement, make: null };
      if (statement.reader) {
        prepared.make = rowMaker(statement.columns().map((column) => column.name));
        statement.raw(true);
      }
      if (this.prepared.size >= STATEMENT_CACHE_SIZE) this.prepared.delete(this.prepared.keys().next().value!);
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }

  /** The prepared statement of a write that returns no rows (run it with `run`). */
  statement(sql: string): BetterSqlite3.Statement {
    const { statement, make } = this.prepare(sql);
    if (make !== null) throw new Error(`a statement that returns rows is read with rows() or row(): ${sql}`);
    return statement;
  }

  /** The rows of a statement that returns rows (a query, or a write with RETURNING). */
  rows<R>(sql: string, ...parameters: unknown[]): R[] {
    const { statement, make } = this.reader(sql);
    return (statement.all(...parameters) as unknown[][]).map(make) as R[];
  }

  /** The first row of a statement that returns rows, if any. */
  row<R>(sql: string, ...parameters: unknown[]): R | undefined {
    const { statement, make } = this.reader(sql);
    const values = statement.get(...parameters) as unknown[] | undefined;
    return values === undefined ? undefined : (make(values) as R);
  }

  /**
   * The rows of a query whose select list is one JSON array of `columns`' values (`select ${jsonArrayOf(columns)}
   * from ...`), as objects named by `columns`. better-sqlite3 on Node 20 makes a row it reads as values by
   * one V8 `Set` per value (about 930 instructions each: 32 for an order); one text per row, parsed by
   * JSON.parse, costs a fraction of that for a wide row (docs/design/performance-log.md). Its columns' types:
   * see jsonRowReader.
   */
  jsonRows<R>(sql: string, columns: readonly string[], ...parameters: unknown[]): R[] {
    const { statement } = this.reader(sql);
    let read = this.jsonReaders.get(columns);
    if (read === undefined) this.jsonReaders.set(columns, (read = jsonRowReader(columns)));
    return (statement.all(...parameters) as [string][]).map((values) => read(values[0])) as R[];
  }

  private reader(sql: string): { statement: BetterSqlite3.Statement; make: RowMaker } {
    const { statement, make } = this.prepare(sql);
    if (make === null) throw new Error(`a statement that returns no rows is run with statement(): ${sql}`);
    return { statement, make };
  }

  /**
   * Runs a statement. With a WAL sync (wal-sync.ts): waits first for the commits not yet on disk, so that
   * nothing is read before it is durable, except inside a transaction (its BEGIN included), whose answer
   * waits for its own commit's sync, which covers every commit before it (see commit()); and after a
   * statement that committed (a COMMIT, or a write outside a transaction), waits for the WAL's sync before
   * answering, holding the connection meanwhile. A row write outside a transaction that changed no row (the
   * OMS's claim of due outbox entries when none is due, every pass) wrote nothing, and waits for no sync.
   */
  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { statement, make } = this.prepare(compiledQuery.sql);
    const parameters = compiledQuery.parameters as unknown[];
    if (this.walSync === null) return run<R>(statement, make, parameters);
    if (!this.waitForSync || this.sqlite.inTransaction || BEGIN.test(compiledQuery.sql)) {
      this.walSync.throwIfFailed();
      return run<R>(statement, make, parameters);
    }
    let unsynced = this.walSync.settled();
    while (unsynced !== null) {
      await unsynced;
      unsynced = this.walSync.settled();
    }
    const inTransaction = this.sqlite.inTransaction;
    const result = run<R>(statement, make, parameters);
    if (
      !this.sqlite.inTransaction &&
      (inTransaction || (!statement.readonly && !changedNoRow(compiledQuery.sql, result)))
    )
      await this.walSync.durable();
    return result;
  }

  /**
   * Commits the transaction under way at once, and answers its durability apart: a promise that resolves
   * once the WAL's sync covering it has ended (at once without a WAL sync). The driver hands the connection
   * to the next transaction in between (commits pipelined: the next batch's statements run during this
   * one's sync). Safe by the WAL's order: a commit's frames follow the earlier ones', recovery stops at the
   * first frame that does not check out, and every transaction is answered only after a sync begun after
   * its own commit, which covers the ones it read from. A COMMIT that fails throws, the transaction still
   * open and held (the driver rolls it back).
   */
  commit(): Promise<void> {
    this.walSync?.throwIfFailed();
    this.prepare('commit').statement.run();
    return this.walSync === null ? Promise.resolve() : this.walSync.durable();
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used by ordergate');
  }
}

/** A BEGIN (of a transaction whose statements need not wait for earlier commits' syncs, see executeQuery). */
const BEGIN = /^\s*begin\b/i;

/** An INSERT, UPDATE or DELETE (not DDL, whose changes SQLite does not count). */
const ROW_WRITE = /^\s*(insert|update|delete)\s/i;

/**
 * Whether a statement was a row write that changed no row: SQLite wrote nothing (a row trigger fires for a
 * changed row only). A write with RETURNING answers a row for each row it changed.
 */
function changedNoRow(sql: string, result: QueryResult<unknown>): boolean {
  const changed = result.numAffectedRows ?? BigInt(result.rows.length);
  return changed === 0n && ROW_WRITE.test(sql);
}

/**
 * Runs a statement with a query's parameters as the call's arguments: better-sqlite3 reads an array's
 * elements through V8's API, one slow look-up each (see bulk.ts, rowRunner). Kysely's parameters are
 * numbers, strings, null and buffers, which bind alike either way.
 */
function run<R>(statement: BetterSqlite3.Statement, make: RowMaker | null, parameters: unknown[]): QueryResult<R> {
  if (make !== null) return { rows: (statement.all(...parameters) as unknown[][]).map(make) as R[] };
  const { changes, lastInsertRowid } = statement.run(...parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** A lock that hands over to exactly one waiter, in arrival order. */
class FifoLock {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * One holder's use of the connection, from its acquisition to its release: released once, either by the
 * driver at the end of the holder's work or earlier, right after a transaction's COMMIT (commits pipelined,
 * see StatementCachingConnection.commit). After its release it runs nothing more.
 */
class Lease implements DatabaseConnection {
  released = false;

  constructor(
    readonly connection: StatementCachingConnection,
    private readonly lock: FifoLock,
  ) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.released)
      return Promise.reject(new Error(`a SQLite connection used after its release: ${compiledQuery.sql}`));
    return this.connection.executeQuery<R>(compiledQuery);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.lock.release();
  }
}

/** The lease Kysely hands back (the driver hands out nothing else). */
function leaseOf(connection: DatabaseConnection): Lease {
  if (!(connection instanceof Lease)) throw new Error('the SQLite driver hands out leases');
  return connection;
}

class OrdergateSqliteDriver implements Driver {
  private readonly lock = new FifoLock();

  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly connection: StatementCachingConnection,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return new Lease(this.connection, this.lock);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /** Commits, hands the connection on, then waits for the commit's sync (commits pipelined, see above). */
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = leaseOf(connection);
    const durable = lease.connection.commit();
    lease.release();
    await durable;
  }

  /**
   * Rolls the transaction back; nothing to do once its COMMIT has run (what failed then was its sync, which
   * fails the store for good: wal-sync.ts) and the connection has gone to the next holder.
   */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = leaseOf(connection);
    if (lease.released) return;
    await lease.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    leaseOf(connection).release();
  }

  async destroy(): Promise<void> {
    this.sqlite.close();
  }
}

/**
 * Kysely's SQLite adapter runs each migration outside a transaction and takes no lock, which is safe only
 * for one process: two processes starting on one new file ran the same CREATE TABLE and one failed ("table
 * users already exists"). SQLite's DDL is transactional, so the pending migrations run in one transaction,
 * BEGIN IMMEDIATE as every write transaction here: a second process waits for the first's commit (its
 * busy_timeout), then finds them done; a migration that fails leaves nothing behind, as on PostgreSQL.
 */
class OrdergateSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class OrdergateSqliteDialect extends SqliteDialect {
  readonly connection: StatementCachingConnection;

  /** `walSync`, `waitForSync`: see StatementCachingConnection (the WAL sync's owner closes it). */
  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    walSync: WalSync | null = null,
    waitForSync = true,
  ) {
    super({ database: sqlite });
    this.connection = new StatementCachingConnection(sqlite, walSync, waitForSync);
  }

  override createDriver(): Driver {
    return new OrdergateSqliteDriver(this.sqlite, this.connection);
  }

  override createAdapter(): DialectAdapter {
    return new OrdergateSqliteAdapter();
  }
}
