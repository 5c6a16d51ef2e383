/**
 * Vitest global setup, once per project: the built package for the tests that run dist/ (build-dist.ts),
 * and a migrated template database of the project's dialect, which every test database that needs the
 * schema is copied from (a file copy on SQLite, CREATE DATABASE ... TEMPLATE on PostgreSQL) instead of
 * running the migrations again. Tests that migrate on their own (the migrations' own tests, nodes that
 * start on an empty database) still get an empty database from createTestDatabase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import buildDist from '../cli/build-dist.js';
import { createPostgresDatabase, type TestDialect } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated template of the project's dialect: a SQLite file's path or a PostgreSQL database's name. */
    migratedTemplate: { dialect: TestDialect; location: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // `npm run test:fast` runs no file that needs dist/.
  if (process.env.TEST_SKIP_DIST_BUILD !== '1') await buildDist();
  const dialect: TestDialect = project.config.env.ORDERGATE_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ordergate-template-'));
    const file = join(dir, 'ordergate.db');
    const store = openStore(`sqlite:${file}`);
    await migrateToLatest(store);
    // Closing checkpoints the WAL into the file: the copies need the file alone.
    await store.close();
    project.provide('migratedTemplate', { dialect, location: file });
    return async () => rmSync(dir, { recursive: true, force: true });
  }
  const template = await createPostgresDatabase('ordergate_template');
  const store = openStore(template.databaseUrl);
  await migrateToLatest(store);
  await store.close();
  project.provide('migratedTemplate', { dialect, location: new URL(template.databaseUrl).pathname.slice(1) });
  return () => template.dispose();
}
