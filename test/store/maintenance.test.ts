/**
 * The warning at a server's start when PostgreSQL will not keep the tables vacuumed and analyzed
 * (src/store/sql/health.ts; docs/design/performance-log.md, "A database that autovacuum does not keep").
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { maintenanceProblem, maintenanceSettings, warnOfMaintenance } from '../../src/store/sql/health.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';

describe('maintenanceProblem', () => {
  it('is none with autovacuum and track_counts on', () => {
    expect(maintenanceProblem({ autovacuum: 'on', trackCounts: 'on' })).toBeNull();
  });
  it('names autovacuum when it is off', () => {
    expect(maintenanceProblem({ autovacuum: 'off', trackCounts: 'on' })).toMatch(/^autovacuum is off .*VACUUM ANALYZE/);
  });
  it('names track_counts when it is off (autovacuum cannot run without it)', () => {
    expect(maintenanceProblem({ autovacuum: 'on', trackCounts: 'off' })).toMatch(/^track_counts is off/);
  });
});

describe("the server's maintenance settings, read from the database", () => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_maintenance');
    store = openStore(database.databaseUrl);
  });
  afterAll(async () => {
    await store.close();
    await database.dispose();
  });

  it('are those SHOW answers on PostgreSQL, none on SQLite; the warning is logged exactly when one is off', async () => {
    const settings = await maintenanceSettings(store);
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    await warnOfMaintenance(store, { warn: (fields, message) => warnings.push({ fields, message }) });
    if (store.dialect === 'sqlite') {
      expect(settings).toBeNull();
      expect(warnings).toEqual([]);
      return;
    }
    const show = async (name: string) =>
      Object.values((await sql.raw<Record<string, string>>(`show ${name}`).execute(store.db)).rows[0]!)[0]!;
    const expected = { autovacuum: await show('autovacuum'), trackCounts: await show('track_counts') };
    expect(settings).toEqual(expected);
    const problem = maintenanceProblem(expected);
    expect(warnings).toEqual(problem === null ? [] : [{ fields: expected, message: problem }]);
  });
});
