/**
 * Test databases: every test server or OMS bench gets its own, created for it and dropped afterwards, so
 * that runs never see each other's data. The dialect comes from ORDERGATE_TEST_DIALECT (set by the
 * vitest project: "sqlite", the default, or "postgres"); PostgreSQL is reached at TEST_POSTGRES_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres, a user that may create databases).
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';

export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export type TestDialect = 'sqlite' | 'postgres';

export function testDialect(): TestDialect {
  return process.env.ORDERGATE_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
}

export interface TestDatabase {
  databaseUrl: string;
  dispose(): Promise<void>;
}

async function postgresAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** `template`: a database to copy (CREATE DATABASE ... TEMPLATE), else an empty one. */
export async function createPostgresDatabase(prefix = 'ordergate_test', template?: string): Promise<TestDatabase> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '')}`;
  await postgresAdmin(
    template === undefined ? `create database ${name}` : `create database ${name} template ${template}`,
  );
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return { databaseUrl: url.toString(), dispose: () => postgresAdmin(`drop database if exists ${name} with (force)`) };
}

/** `template`: an SQLite file to copy, else an empty database. */
export function createSqliteDatabase(template?: string): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-test-'));
  const file = join(dir, 'ordergate.db');
  if (template !== undefined) copyFileSync(template, file);
  return {
    databaseUrl: `sqlite:${file}`,
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A new empty database of the run's dialect. */
export async function createTestDatabase(prefix?: string): Promise<TestDatabase> {
  return testDialect() === 'postgres' ? createPostgresDatabase(prefix) : createSqliteDatabase();
}

/**
 * A new database of the run's dialect with the schema of today's migrations: a copy of the run's migrated
 * template (test/support/global-setup.ts), or, outside a vitest run that made one, migrated here.
 */
export async function createMigratedTestDatabase(prefix?: string): Promise<TestDatabase> {
  const dialect = testDialect();
  const template = inject('migratedTemplate');
  if (template?.dialect === dialect) {
    return dialect === 'postgres'
      ? createPostgresDatabase(prefix, template.location)
      : createSqliteDatabase(template.location);
  }
  const database = await createTestDatabase(prefix);
  const store = openStore(database.databaseUrl);
  try {
    await migrateToLatest(store);
  } finally {
    await store.close();
  }
  return database;
}

/**
 * An SQLite file at `file` (its folder made) with the schema of today's migrations: a copy of the run's
 * SQLite template when it has one, else migrated here. For tests that choose the file's path themselves.
 */
export async function createMigratedSqliteFile(file: string): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const template = inject('migratedTemplate');
  if (template?.dialect === 'sqlite') return copyFileSync(template.location, file);
  const store = openStore(`sqlite:${file}`);
  try {
    await migrateToLatest(store);
  } finally {
    await store.close();
  }
}
