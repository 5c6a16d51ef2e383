/**
 * Test databases: every test server or OMS bench gets its own, created for it and dropped afterwards, so
 * that runs never see each other's data. The dialect comes from ORDERGATE_TEST_DIALECT (set by the
 * vitest project: "sqlite", the default, or "postgres"); PostgreSQL is reached at TEST_POSTGRES_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres, a user that may create databases).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

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

export async function createPostgresDatabase(prefix = 'ordergate_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '')}`;
  await postgresAdmin(`create database ${name}`);
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return { databaseUrl: url.toString(), dispose: () => postgresAdmin(`drop database if exists ${name} with (force)`) };
}

export function createSqliteDatabase(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-test-'));
  return {
    databaseUrl: `sqlite:${join(dir, 'ordergate.db')}`,
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A new empty database of the run's dialect. */
export async function createTestDatabase(prefix?: string): Promise<TestDatabase> {
  return testDialect() === 'postgres' ? createPostgresDatabase(prefix) : createSqliteDatabase();
}
