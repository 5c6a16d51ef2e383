/**
 * Kysely set-up for both dialects. This is the only file that knows which database is behind the store:
 * everything else talks to `Kysely<Database>`.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Duplex } from 'node:stream';
import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, sql, type DatabaseConnection } from 'kysely';
import pg from 'pg';
import { OrdergateSqliteDialect } from './sqlite-driver.js';
import { WalSync, type DataSync } from './wal-sync.js';
import { BeginAheadConnection } from './begin-ahead.js';
import {
  isStalePreparedPlan,
  READ_ONLY_SQL_TRANSACTION,
  StandbyServerError,
  storeError,
  unavailableAware,
} from './unavailable.js';
import type { Database } from '../schema/tables.js';
import { sealTx, type SqliteStatements, type StoreTx } from './write-tx.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  /**
   * For reads outside any transaction (the order book, the event feed, health). On SQLite a second connection,
   * so that such reads never wait behind an open write transaction on the single writer connection (WAL
   * lets readers run beside the writer); on PostgreSQL the same pool as `db`.
   */
  readDb: Kysely<Database>;
  /**
   * For the credential look-ups of every request (sessions, API keys, revocations): on SQLite a read-only
   * connection of its own that reads without waiting for the WAL's sync under way, which `readDb` waits for
   * (wal-sync.ts). What it may see before it is on disk cannot let anything in: a session or a key reaches
   * its holder only in the answer to the commit that made it, sent after that commit's sync; a revocation
   * or a disabled user seen early refuses a request a moment sooner (docs/design/decisions.md, "Durability
   * and the write path"). On PostgreSQL the same pool as `db`.
   */
  credentialsDb: Kysely<Database>;
  dialect: DialectName;
  /** A human-readable description of where the data lives (no credentials). */
  location: string;
  /** Runs `work` in one write transaction of `db` (see write-tx.ts); commits when it resolves. */
  writeTransaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T>;
  /**
   * How many write transactions are worth running at once (order entry's batches in flight): 1 on SQLite,
   * whose one writer runs one at a time; on PostgreSQL a few (POSTGRES_WRITE_LANES).
   */
  writeLanes: number;
  close(): Promise<void>;
}

/**
 * Write transactions one PostgreSQL node runs at once (each on its own connection of the pool of 10): a
 * transaction mostly waits for round trips and its commit, and its locks (per user, per order) let those of
 * different users run side by side.
 */
export const POSTGRES_WRITE_LANES = 4;

export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

export interface ParsedDatabaseUrl {
  dialect: DialectName;
  /** File path for SQLite (":memory:" allowed), connection string for PostgreSQL. */
  target: string;
}

export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // node-postgres connects to one host: a libpq-style host list would be misread, not failed over.
    const authority = url.slice(url.indexOf('//') + 2).split(/[/?#]/)[0]!;
    if (authority.includes(',')) {
      throw new DatabaseUrlError(
        'DATABASE_URL names several hosts: ordergate connects to one; put HAProxy (checking Patroni) in front of the cluster and name it (docs/deployment.md)',
      );
    }
    return { dialect: 'postgres', target: url };
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '')
      throw new DatabaseUrlError('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/ordergate.db');
    return { dialect: 'sqlite', target: path };
  }
  throw new DatabaseUrlError(
    `DATABASE_URL must start with sqlite:, postgres:// or postgresql://, got "${url.split(':')[0]}:..."`,
  );
}

// int8 (bigint) columns hold epoch milliseconds and quantities, all far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export interface StoreOptions {
  /**
   * SQLite: how long a write waits for another process's write lock before it fails with SQLITE_BUSY
   * (then answered 503). The CLI waits long (DEFAULT_SQLITE_BUSY_TIMEOUT_MS); the server waits
   * SERVER_SQLITE_BUSY_TIMEOUT_MS, so that a request answers within a second. better-sqlite3 waits
   * synchronously: the whole process waits with it.
   */
  sqliteBusyTimeoutMs?: number;
  /**
   * Called with the SQL of every statement the store sends (BEGIN and COMMIT included), on every
   * connection: the tests count commits and statements per bid with it.
   */
  onStatement?: (sql: string) => void;
  /** SQLite: how the WAL is synced after a commit (wal-sync.ts); fs.fdatasync unless a test stands in for the disk. */
  sqliteDataSync?: DataSync;
}

export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const SERVER_SQLITE_BUSY_TIMEOUT_MS = 750;

function openSqliteConnection(
  path: string,
  busyTimeoutMs: number,
  onStatement?: (sql: string) => void,
): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(path, onStatement ? { verbose: (message) => onStatement(String(message)) } : {});
  sqlite.pragma('journal_mode = WAL');
  // An acknowledged order must survive a power cut: the WAL is synced after every commit, before the commit
  // is answered, by the driver off the event loop (wal-sync.ts); NORMAL is FULL without SQLite's own sync
  // of each commit inside the call. A database in memory has nothing to sync.
  sqlite.pragma(path === ':memory:' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and the server may write the same file: wait for the other writer instead of failing.
  sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  // Checkpoint every 10,000 WAL pages (about 40 MB) instead of 1,000: a page that many commits rewrite
  // (the last leaf of each user's index range) is copied into the database once per checkpoint.
  sqlite.pragma('wal_autocheckpoint = 10000');
  return sqlite;
}

function openSqlite(
  path: string,
  busyTimeoutMs: number,
  onStatement?: (sql: string) => void,
  dataSync?: DataSync,
): {
  db: Kysely<Database>;
  readDb: Kysely<Database>;
  credentialsDb: Kysely<Database>;
  statements: SqliteStatements;
  walSync: WalSync | null;
} {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  // One sync for both connections: the reader waits for the writer's commits to be on disk.
  const walSync = path === ':memory:' ? null : new WalSync(`${resolve(path)}-wal`, dataSync);
  const dialect = new OrdergateSqliteDialect(openSqliteConnection(path, busyTimeoutMs, onStatement), walSync);
  const db = new Kysely<Database>({ dialect: unavailableAware(dialect) });
  // An in-memory database exists only on its own connection.
  const readDb =
    path === ':memory:'
      ? db
      : new Kysely<Database>({
          dialect: unavailableAware(
            new OrdergateSqliteDialect(openSqliteConnection(path, busyTimeoutMs, onStatement), walSync),
          ),
        });
  // Read-only: it never waits for a sync, so a write on it would be answered before it is durable.
  const credentialsDb =
    path === ':memory:'
      ? db
      : new Kysely<Database>({
          dialect: unavailableAware(
            new OrdergateSqliteDialect(openReadOnlySqliteConnection(path, busyTimeoutMs, onStatement), walSync, false),
          ),
        });
  return { db, readDb, credentialsDb, statements: dialect.connection, walSync };
}

/** A connection that can only read (the credentials' look-ups, Store.credentialsDb). */
function openReadOnlySqliteConnection(
  path: string,
  busyTimeoutMs: number,
  onStatement?: (sql: string) => void,
): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(path, {
    readonly: true,
    ...(onStatement && { verbose: (message) => onStatement(String(message)) }),
  });
  sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  return sqlite;
}

/**
 * Bounds on every wait for PostgreSQL, so that an outage is answered (503) instead of hanging a request:
 * a new connection (or a free slot of the pool) within CONNECT_TIMEOUT_MS, an answer to a query within
 * QUERY_TIMEOUT_MS. A connection whose query timed out is destroyed, never handed out again: its server
 * may be gone without a word (a silent network partition), and the next query would wait behind the lost
 * one. See docs/design/faults.md.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 750;
export const POSTGRES_QUERY_TIMEOUT_MS = 5_000;
/**
 * A query without an answer after this long makes the store check, on a fresh connection, that the
 * database still answers (within POSTGRES_PROBE_TIMEOUT_MS). If it does not, the waiting connections are
 * cut, so that their requests answer 503 within about a second even when the network drops packets
 * silently (no reset), instead of after the query timeout; a slow query on a live database goes on.
 */
export const POSTGRES_PROBE_AFTER_MS = 500;
export const POSTGRES_PROBE_TIMEOUT_MS = 400;

/** Whether the database answers a fresh connection; one check at a time, shared by every waiting query. */
class LivenessCheck {
  private running: Promise<boolean> | null = null;

  constructor(private readonly connectionString: string) {}

  check(): Promise<boolean> {
    this.running ??= this.probe().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async probe(): Promise<boolean> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: POSTGRES_PROBE_TIMEOUT_MS,
      query_timeout: POSTGRES_PROBE_TIMEOUT_MS,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      // end() would wait for an answer that may never come.
      socketOf(client)?.destroy();
    }
  }
}

/**
 * The queries under way on each pooled connection, swept every 100 ms: when one has waited
 * POSTGRES_PROBE_AFTER_MS, the liveness check runs, and if the database does not answer, the connections of
 * the stalled queries are cut. One timer for the pool, not one per query (order entry's hot path).
 */
class StalledQueryWatch {
  /** Per connection: since when it has had a query unanswered, and how many are (it pipelines). */
  private readonly started = new Map<pg.PoolClient, { at: number; pending: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly liveness: LivenessCheck) {
    this.timer = setInterval(() => this.sweep(), 100);
    this.timer.unref();
  }

  begin(client: pg.PoolClient): void {
    const under = this.started.get(client);
    if (under === undefined) this.started.set(client, { at: Date.now(), pending: 1 });
    else under.pending += 1;
  }

  end(client: pg.PoolClient): void {
    const under = this.started.get(client);
    if (under !== undefined && --under.pending === 0) this.started.delete(client);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const limit = Date.now() - POSTGRES_PROBE_AFTER_MS;
    const stalled = [...this.started].filter(([, { at }]) => at <= limit).map(([client]) => client);
    if (stalled.length === 0) return;
    void this.liveness.check().then((alive) => {
      if (!alive) for (const client of stalled) destroyConnection(client);
    });
  }
}

/**
 * A connection to a primary only (libpq's `target_session_attrs=read-write`): once connected, the pool asks
 * the server whether it is in recovery, and a standby (a stale one that a proxy still routes to, as HAProxy
 * does before its first health check, or an old primary demoted during a failover) is refused and its
 * connection closed before any statement of ours runs on it: the call answers 503, a later one connects again.
 */
async function refuseStandby(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ in_recovery: boolean }>('select pg_is_in_recovery() as in_recovery');
  if (rows[0]?.in_recovery !== false) throw new StandbyServerError();
}

/** How many SQL texts are given a name: beyond it, a text is sent unnamed (parsed and planned each time). */
const NAMED_STATEMENTS_MAX = 512;
const statementNames = new Map<string, string>();

/**
 * A query with parameters as a named prepared statement: each connection parses and plans its SQL text
 * once (pg sends the Parse the first time a connection meets the name) instead of at every execution.
 * Kysely's SQL texts are fixed per query shape (lists are one array parameter, store/sql/bulk.ts), so the
 * names stay few.
 */
function namedStatement(args: unknown[]): unknown[] {
  const [text, values, ...rest] = args;
  if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || rest.length > 0) return args;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= NAMED_STATEMENTS_MAX) return args;
    name = `og${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return [{ name, text, values }];
}

function openPostgres(
  connectionString: string,
  onStatement?: (sql: string) => void,
): { db: Kysely<Database>; close(): Promise<void> } {
  const watch = new StalledQueryWatch(new LivenessCheck(connectionString));
  const pool = new pg.Pool({
    connectionString,
    // pg-pool awaits onConnect's promise and ends the client when it rejects; @types/pg types it as void.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: refuseStandby,
    max: 10,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    query_timeout: POSTGRES_QUERY_TIMEOUT_MS,
    // Queries sent while one is under way go out at once (write transactions send statements ahead,
    // WriteTx.ahead); the server answers them in order. One holder uses a connection at a time.
    pipeline: true,
    // Idle connections to a vanished server are found and dropped by the pool, not by the next request.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    // A connection lost while checked out (between two queries of a transaction) emits 'error' on the
    // client, which has no listener then: without this one the process would crash. The query under way,
    // if any, fails on its own, and the pool drops the client when it is released.
    client.on('error', () => undefined);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const holdWrites = writesHeldForTheTick(client);
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (onStatement)
        onStatement(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text));
      holdWrites();
      const result = query(...namedStatement(args));
      if (result instanceof Promise) {
        watch.begin(client);
        result.then(
          () => watch.end(client),
          (error: unknown) => {
            watch.end(client);
            // A statement refused as read-only: the server has become a standby (a demoted primary) under this
            // connection. It is dropped, not reused.
            if (
              error instanceof Error &&
              (error.message === 'Query read timeout' ||
                (error as { code?: unknown }).code === READ_ONLY_SQL_TRANSACTION ||
                isStalePreparedPlan(error))
            ) {
              destroyConnection(client);
            }
          },
        );
      }
      return result;
    };
  });
  const db = new Kysely<Database>({
    dialect: unavailableAware(new PostgresDialect({ pool }), (connection) => new BeginAheadConnection(connection)),
  });
  return {
    db,
    close: async () => {
      watch.stop();
      await db.destroy();
    },
  };
}

/**
 * Holds the connection's socket writes until the end of the tick: the queries sent in one tick (a statement
 * sent ahead and the one behind it, the last write and the COMMIT; see WriteTx.ahead) leave in one write,
 * so the server wakes once for them, not once each. A query alone leaves at the same tick's end.
 */
function writesHeldForTheTick(client: pg.PoolClient): () => void {
  const stream = socketOf(client);
  let held = false;
  return () => {
    if (held || stream === undefined) return;
    held = true;
    stream.cork();
    process.nextTick(() => {
      held = false;
      stream.uncork();
    });
  };
}

/**
 * PostgreSQL: the statements a write transaction sent ahead (WriteTx.ahead) on its connection, which
 * pipelines (the pool's `pipeline` option), and the first of them to fail.
 */
class SentAhead {
  private readonly answers: Promise<void>[] = [];
  private failed: { error: Error } | undefined;

  constructor(private readonly connection: DatabaseConnection) {}

  readonly send = (query: CompiledQuery): void => {
    this.answers.push(
      this.connection.executeQuery(query).then(
        () => undefined,
        (error: unknown) => {
          // Answered in the order sent: the first failure is the cause, the later ones its consequence.
          this.failed ??= { error: error instanceof Error ? error : new Error(String(error)) };
        },
      ),
    );
  };

  /** Once every statement sent ahead is answered: the first failure, if any. */
  async failure(): Promise<Error | undefined> {
    await Promise.all(this.answers);
    return this.failed?.error;
  }
}

/**
 * Closes the client's socket at once. Ended first, so that the pool drops it when it is released rather
 * than handing it out again before the socket's close is seen.
 */
function destroyConnection(client: pg.PoolClient): void {
  client.end().catch(() => undefined);
  socketOf(client)?.destroy();
}

/** The socket under a pg client (pg does not type its connection's stream). */
function socketOf(client: pg.ClientBase): Pick<Duplex, 'cork' | 'uncork' | 'destroy'> | undefined {
  return (client as unknown as { connection: { stream?: Duplex } }).connection.stream;
}

export function openStore(url: string, options: StoreOptions = {}): Store {
  const { dialect, target } = parseDatabaseUrl(url);
  if (dialect === 'sqlite') {
    const { db, readDb, credentialsDb, statements, walSync } = openSqlite(
      target,
      options.sqliteBusyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS,
      options.onStatement,
      options.sqliteDataSync,
    );
    const close = async () => {
      if (credentialsDb !== db) await credentialsDb.destroy();
      if (readDb !== db) await readDb.destroy();
      await db.destroy();
      walSync?.close();
    };
    // The transaction holds the one connection (the driver's lock): its statements are this batch's alone.
    // Its statements run on the connection itself, not through Kysely's driver: their errors are translated here.
    const writeTransaction = <T>(work: (tx: StoreTx) => Promise<T>) =>
      db
        .transaction()
        .execute((trx) => work(sealTx(trx, statements)))
        .catch((error: unknown) => {
          throw storeError(error);
        });
    return { db, readDb, credentialsDb, dialect, location: `sqlite:${target}`, writeTransaction, writeLanes: 1, close };
  }
  const { db, close } = openPostgres(target, options.onStatement);
  const { host, pathname } = new URL(target);
  const writeTransaction = <T>(work: (tx: StoreTx) => Promise<T>) =>
    db.connection().execute(async (connection) => {
      // The connection itself, for the statements sent ahead (WriteTx.ahead), which do not queue behind
      // Kysely's one query at a time on it.
      const own = await connection.getExecutor().provideConnection(async (own) => own);
      if (!(own instanceof BeginAheadConnection)) throw new Error('a PostgreSQL store hands out BeginAheadConnections');
      const ahead = new SentAhead(own);
      // BEGIN, and the transaction takes its id before anything else (the event horizon, order-events.ts,
      // relies on every transaction that writes an event having its id before it takes an event id). A
      // simple query: several statements, no parameters. Sent ahead: it travels with the work's first read,
      // and what is not a read waits for its answer (begin-ahead.ts).
      const begun = own.beginAhead(CompiledQuery.raw('begin; select pg_current_xact_id()'));
      const beginFailure = begun.then(
        () => undefined,
        (error: unknown) => error,
      );
      try {
        let result: T;
        try {
          result = await work(sealTx(connection, null, ahead.send));
        } catch (error) {
          await sql
            .raw('rollback')
            .execute(connection)
            .catch(() => undefined);
          // A failed BEGIN failed what was held for it; a statement sent ahead that failed aborted the
          // transaction, and the later ones failed for it.
          throw (await beginFailure) ?? (await ahead.failure()) ?? error;
        }
        // Sent behind the statements sent ahead, before their answers: if one of them failed, the aborted
        // transaction answers the COMMIT with a rollback, and its failure is thrown.
        // Its answer is taken at once, so that a failure never waits unhandled behind theirs.
        const committed = sql
          .raw('commit')
          .execute(connection)
          .then(
            () => undefined,
            (error: unknown) => ({ error }),
          );
        const failure = await ahead.failure();
        if (failure !== undefined) throw failure;
        const commitFailure = await committed;
        if (commitFailure !== undefined) throw commitFailure.error;
        return result;
      } finally {
        own.closeGate();
      }
    });
  return {
    db,
    readDb: db,
    credentialsDb: db,
    dialect,
    location: `postgres://${host}${pathname}`,
    writeTransaction,
    writeLanes: POSTGRES_WRITE_LANES,
    close,
  };
}
