/**
 * Kysely's SQLite dialect with our own driver for better-sqlite3. Kysely's stock driver wakes every waiting
 * query each time its one connection is released (a thundering herd that costs O(n^2) under load) and
 * prepares every statement anew. This driver hands the connection to waiters strictly first in, first
 * out, caches prepared statements by their SQL, and opens write transactions with BEGIN IMMEDIATE so that
 * a second process writing the same file waits (busy_timeout) instead of failing half-way.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

const STATEMENT_CACHE_SIZE = 256;

/**
 * The one connection of a SQLite store, with its prepared statements cached by their SQL. Besides serving
 * Kysely, it hands its statements to the batch writes (write-tx.ts), which run them synchronously inside a
 * transaction that Kysely holds on this same connection.
 */
export class StatementCachingConnection implements DatabaseConnection {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly sqlite: BetterSqlite3.Database) {}

  statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.sqlite.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.statement(compiledQuery.sql);
    const parameters = compiledQuery.parameters as unknown[];
    if (statement.reader) return { rows: statement.all(parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used by ordergate');
  }
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

class OrdergateSqliteDriver implements Driver {
  private readonly lock = new FifoLock();

  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly connection: StatementCachingConnection,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    this.lock.release();
  }

  async destroy(): Promise<void> {
    this.sqlite.close();
  }
}

export class OrdergateSqliteDialect extends SqliteDialect {
  readonly connection: StatementCachingConnection;

  constructor(private readonly sqlite: BetterSqlite3.Database) {
    super({ database: sqlite });
    this.connection = new StatementCachingConnection(sqlite);
  }

  override createDriver(): Driver {
    return new OrdergateSqliteDriver(this.sqlite, this.connection);
  }
}
