/**
 * Several processes starting at once on one new SQLite file (the nodes of an upgrade started together, a
 * CLI command beside `serve`) each migrate it: one at a time, the later ones finding the work done. SQLite's
 * Kysely adapter takes no migration lock and runs each migration outside a transaction, so two processes
 * used to run the same CREATE TABLE and one failed ("table users already exists"). Ours runs the pending
 * migrations in one BEGIN IMMEDIATE transaction (sqlite-driver.ts): the second waits for the first's commit
 * (busy_timeout), then reads the migrations as done.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from './run-ordergate.js';

const PROCESSES = 4;
const dir = mkdtempSync(join(tmpdir(), 'ordergate-migration-race-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `ordergate ofs holidays list` (it migrates, then only reads): its exit code and stderr. */
function migrateAndRead(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'ofs', 'holidays', 'list'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('migrating one new SQLite file from several processes at once', () => {
  it.each([1, 2, 3])('run %i: every process starts, and each migration is recorded once', async (run) => {
    const file = join(dir, `race-${run}.db`);
    const env = cleanEnv({ DATABASE_URL: `sqlite:${file}` });
    const results = await Promise.all(Array.from({ length: PROCESSES }, () => migrateAndRead(env)));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const db = new Database(file, { readonly: true });
    try {
      const names = db.prepare('select name from kysely_migration order by name').pluck().all() as string[];
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
      expect(names.at(-1)).toMatch(/^\d{4}_/);
    } finally {
      db.close();
    }
  });
});
