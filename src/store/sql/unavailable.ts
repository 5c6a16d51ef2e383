/**
 * The database cannot be used right now: the one error the store lets out for it. Every statement the
 * store runs goes through a driver wrapped here (`unavailableAware`), and every write transaction through
 * Store.writeTransaction, which turn a driver's error that means "not now" (a lost or refused connection, a
 * server starting up or in recovery, a locked or full SQLite file) into a DatabaseUnavailableError with the
 * driver's error as its cause. Above the store, code asks `error instanceof DatabaseUnavailableError` (the
 * HTTP error handler answers it 503 e-503 with Retry-After) and never reads a driver's codes.
 */
import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { DatabaseUnavailableError } from '../../domain/errors.js';

/** A connection reached a server in recovery (a standby): ordergate writes only to a primary. */
export class StandbyServerError extends Error {
  override name = 'StandbyServerError';

  constructor() {
    super('the server is in recovery (a standby, not the primary): ordergate writes to a primary only');
  }
}

/** SQLSTATE 25006: a write refused by a server in recovery (or a read-only transaction). */
export const READ_ONLY_SQL_TRANSACTION = '25006';

/**
 * A named prepared statement whose result columns changed under it (a migration altered a table that a
 * live connection's statement reads with `select *`): SQLSTATE 0A000 with this message. The connection is
 * dropped (its statements are prepared again on the next) and the request answered "not now".
 */
export function isStalePreparedPlan(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === '0A000' &&
    error.message.startsWith('cached plan must not change result type')
  );
}

/** The error to let out of the store: a DatabaseUnavailableError when it means "not now", else itself. */
export function storeError(error: unknown): unknown {
  return error instanceof DatabaseUnavailableError || !isDatabaseUnavailable(error)
    ? error
    : new DatabaseUnavailableError(error);
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw storeError(error);
  }
}

/** A connection whose queries fail with store errors. */
function awareConnection(connection: DatabaseConnection): DatabaseConnection {
  return {
    executeQuery: (query) => translated(() => connection.executeQuery(query)),
    async *streamQuery<R>(
      query: Parameters<DatabaseConnection['streamQuery']>[0],
      chunkSize?: number,
    ): AsyncIterableIterator<QueryResult<R>> {
      try {
        yield* connection.streamQuery<R>(query, chunkSize);
      } catch (error) {
        throw storeError(error);
      }
    },
  };
}

/**
 * The dialect with its driver's failures turned into store errors (see the file comment). `outer` wraps each
 * connection handed out (PostgreSQL: BeginAheadConnection), around the translation.
 */
export function unavailableAware(
  dialect: Dialect,
  outer: (connection: DatabaseConnection) => DatabaseConnection = (connection) => connection,
): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = dialect.createDriver();
      // Kysely hands the driver back the connections it acquired: the wrapper keeps the driver's own.
      const inner = new WeakMap<DatabaseConnection, DatabaseConnection>();
      const own = (connection: DatabaseConnection) => inner.get(connection) ?? connection;
      return {
        init: () => translated(() => driver.init()),
        acquireConnection: () =>
          translated(async () => {
            const connection = await driver.acquireConnection();
            const aware = outer(awareConnection(connection));
            inner.set(aware, connection);
            return aware;
          }),
        beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
          translated(() => driver.beginTransaction(own(connection), settings)),
        commitTransaction: (connection: DatabaseConnection) =>
          translated(() => driver.commitTransaction(own(connection))),
        rollbackTransaction: (connection: DatabaseConnection) =>
          translated(() => driver.rollbackTransaction(own(connection))),
        releaseConnection: (connection: DatabaseConnection) => driver.releaseConnection(own(connection)),
        destroy: () => driver.destroy(),
      };
    },
  };
}

/** Node's socket errors that mean the server cannot be reached (now). */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** pg's own errors when a connection is lost, cannot be made in time, or an answer does not come. */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'timeout expired',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/**
 * SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 57P01-57P03 (admin
 * shutdown, crash shutdown, cannot connect now: starting up or in recovery), 53300 (too many connections),
 * 25006 (a write refused as read-only: the server became a standby; ordergate opens no read-only
 * transaction of its own).
 */
function isUnavailableSqlState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '53300' ||
    code === READ_ONLY_SQL_TRANSACTION
  );
}

/**
 * SQLite result codes of a file that cannot be used now but may be again without a restart: locked by
 * another process beyond busy_timeout (BUSY, LOCKED), an I/O error, a file or directory that cannot be
 * opened or written (CANTOPEN, READONLY: permissions, a read-only or unmounted volume), a full disk
 * (FULL), a lock protocol race (PROTOCOL). Corruption (CORRUPT, NOTADB) is not transient: a 500.
 */
const SQLITE_UNAVAILABLE_PREFIXES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_FULL',
  'SQLITE_PROTOCOL',
];

/**
 * Whether a driver's error says that the database cannot be reached or used right now (a retry later may
 * succeed), as opposed to a bug or a refused statement.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (error instanceof DatabaseUnavailableError || error instanceof StandbyServerError) return true;
  if (!(error instanceof Error) || depth > 4) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_ERROR_CODES.has(code)) return true;
    if (code.startsWith('SQLITE_')) return SQLITE_UNAVAILABLE_PREFIXES.some((prefix) => code.startsWith(prefix));
    if (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)) return true;
  }
  if (isStalePreparedPlan(error)) return true;
  if (PG_CONNECTION_MESSAGES.some((message) => error.message.startsWith(message))) return true;
  // Connecting to a name with several addresses fails with all of their errors at once.
  if (error instanceof AggregateError && error.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1)))
    return true;
  return isDatabaseUnavailable(error.cause, depth + 1);
}
