/**
 * Kysely set-up for both dialects. This is the only file that knows which database is behind the store:
 * everything else talks to `Kysely<Database>`.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
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

function openSqlite(path: string): Kysely<Database> {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  // An acknowledged order must survive a power cut: fsync on every commit.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and the server may write the same file: wait for the other writer instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
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
  const db = dialect === 'sqlite' ? openSqlite(target) : openPostgres(target);
  const location = dialect === 'sqlite' ? `sqlite:${target}` : `postgres://${new URL(target).host}${new URL(target).pathname}`;
  return { db, dialect, location, close: () => db.destroy() };
}
