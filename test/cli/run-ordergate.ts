/** Runs the built `ordergate` command as a real process, the way an operator or a script does. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, expect } from 'vitest';
import { createMigratedSqliteFile } from '../support/databases.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'cli', 'index.js');

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The parent's environment without the settings the tests choose themselves. */
export function cleanEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'HOST', 'PORT', 'LOG_LEVEL', 'TOKEN_TTL_SECONDS']) delete env[name];
  return { ...env, ...overrides };
}

/** Every command must exit on its own once its work is done: one that hangs fails the test. */
export function runOrdergate(
  args: string[],
  options: { env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<CommandResult> {
  return runNode([CLI, ...args], `ordergate ${args.join(' ')}`, options);
}

/**
 * Runs `node <args>` from the repository's root with `env` (over cleanEnv); fails once `timeoutMs` passes.
 * `onStdout` sees the output as it comes (all of it so far), for a test that acts while the process runs.
 */
export function runNode(
  args: string[],
  name: string,
  options: { env: Record<string, string>; stdin?: string; timeoutMs?: number; onStdout?: (stdout: string) => void },
): Promise<CommandResult> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: cleanEnv(options.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      options.onStdout?.(stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not exit within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** A failure: exit 1, nothing on stdout, exactly one line `ordergate: <reason>` on stderr. */
export function expectOneLineFailure(result: CommandResult, reason: RegExp): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^ordergate: [^\n]+\n$/);
  expect(result.stderr).toMatch(reason);
}

/** `name: value` lines, the result format of `users add` and `apikeys create`. */
export function fieldsOf(stdout: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^([a-z_]+): (.*)$/.exec(line);
    if (match) fields[match[1]!] = match[2]!;
  }
  return fields;
}

/**
 * `ordergate ofs import` of the issues as given (the import format): registers them, or updates those
 * registered already, as an operator does. With windows that end now, it closes an issue's bidding at the
 * moment the test chooses, so that an end-to-end test waits for no clock.
 */
export async function importOfsIssues(issues: readonly object[], env: Record<string, string>): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'ofs-import-'));
  try {
    const file = join(folder, 'issues.json');
    writeFileSync(file, JSON.stringify(issues));
    const imported = await runOrdergate(['ofs', 'import', file], { env });
    expect(imported.code, imported.stderr).toBe(0);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The issue (import format) with both bidding windows ending now: imported, the OMS allots it at its next pass. */
export function closedNow<T extends object>(issue: T): T {
  const now = new Date().toISOString();
  return { ...issue, non_retail_closes_at: now, retail_closes_at: now };
}

/**
 * A new SQLite file with today's schema for each test of the calling file (its hooks are registered here,
 * at the file's top level), in a folder removed after the file: `path()` is the current test's file.
 */
export function sqliteFilePerTest(prefix: string): { path(): string } {
  const workDir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));
  let current = '';
  let counter = 0;
  beforeEach(async () => {
    current = join(workDir, `db-${++counter}`, 'ordergate.db');
    await createMigratedSqliteFile(current);
  });
  return { path: () => current };
}
