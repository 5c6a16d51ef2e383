/**
 * Kysely set-up for both dialects. This is the only file that knows which database is behind the store:
 * everything else talks to `Kysely<Database>`.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { OrdergateSqliteDialect } from './sqlite-driver.js';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  /**
   * For reads outside any transaction (authentication on every request). On SQLite a second connection,
   * so that such reads never wait behind an open write transaction on the single writer connection (WAL
   * lets readers run beside the writer); on PostgreSQL the same pool as `db`.
   */
  readDb: Kysely<Database>;
  dialect: DialectName;
  /** A human-readable description of where the data lives (no credentials). */
  location: string;
  close(): Promise<void>;
}

export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

export interface ParsedDatabaseUrl {
  dialect: DialectName;
  /** File path for SQLite (":memory:" allowed), connection string for PostgreSQL. */
  target: string;
}

export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { dialect: 'postgres', target: url };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new DatabaseUrlError('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/ordergate.db');
    return { dialect: 'sqlite', target: path };
  }
  throw new DatabaseUrlError(
    `DATABASE_URL must start with sqlite:, postgres:// or postgresql://, got "${url.split(':')[0]}:..."`,
  );
}

// int8 (bigint) columns hold epoch milliseconds and quantities, all far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (value) => Number(value));

function openSqliteConnection(path: string): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  // An acknowledged order must survive a power cut: fsync on every commit.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and the server may write the same file: wait for the other writer instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

function openSqlite(path: string): { db: Kysely<Database>; readDb: Kysely<Database> } {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Kysely<Database>({ dialect: new OrdergateSqliteDialect(openSqliteConnection(path)) });
  // An in-memory database exists only on its own connection.
  const readDb = path === ':memory:' ? db : new Kysely<Database>({ dialect: new OrdergateSqliteDialect(openSqliteConnection(path)) });
  return { db, readDb };
}

function openPostgres(connectionString: string): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 1000,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

export function openStore(url: string): Store {
  const { dialect, target } = parseDatabaseUrl(url);
  if (dialect === 'sqlite') {
    const { db, readDb } = openSqlite(target);
    const close = async () => {
      if (readDb !== db) await readDb.destroy();
      await db.destroy();
    };
    return { db, readDb, dialect, location: `sqlite:${target}`, close };
  }
  const db = openPostgres(target);
  const { host, pathname } = new URL(target);
  return { db, readDb: db, dialect, location: `postgres://${host}${pathname}`, close: () => db.destroy() };
}
