/** What the benchmark scripts share to start, reach and stop the servers they measure. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import pg from 'pg';

export const ROOT = join(import.meta.dirname, '..');

/** The benchmarks' PostgreSQL server: an administrator's connection (its databases are made from it). */
export const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL || process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement as the administrator: on the server (create or drop a database), or in `database`. */
export async function postgresAdmin(statement: string, database?: string): Promise<void> {
  const client = new pg.Client({ connectionString: database === undefined ? POSTGRES_URL : postgresUrlOf(database) });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The URL of a database of the benchmark's PostgreSQL server. */
export function postgresUrlOf(name: string): string {
  const parsed = new URL(POSTGRES_URL);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** A whole number of at least 1, or commander's clear error (an option's parser). */
export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number of at least 1');
  return n;
}

/** A port free on 127.0.0.1 now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** The node flags of `npm start` (package.json's start script), so that a benchmark runs what it runs. */
export function startNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;
  const command = /\bnode((?:\s+--\S+)*)\s+dist\/main\.js\b/.exec(start);
  if (command === null) throw new Error(`package.json's start script does not run node [flags] dist/main.js: ${start}`);
  return command[1]!.split(/\s+/).filter((flag) => flag !== '');
}

/**
 * Waits until `url` answers 2xx (the server is listening and ready), failing as soon as `child` exits or
 * after `timeoutMs`.
 */
export async function waitUntilAnswering(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server at ${url} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server at ${url} did not answer within ${timeoutMs / 1000} s`);
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
