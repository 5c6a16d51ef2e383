/**
 * `npm start`'s server (dist/main.js) over a new SQLite file seeded by `ordergate demo --json`: what the
 * browser tests drive, as a trader would find it after the README's quick start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runOrdergate } from '../cli/run-ordergate.js';
import { children, startServer, stopServer, type ServerProcess } from './server-process.js';

/** A folder of the test's own and the environment that points the server and the CLI at its database. */
export function demoWorkspace(prefix: string): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, env: { DATABASE_URL: `sqlite:${join(dir, 'ordergate.db')}` } };
}

/** Seeds the demo (`ordergate demo --json`, whose answer is `demo`) and starts the server. */
export async function startDemoServer<Demo>(
  env: Record<string, string>,
): Promise<{ server: ServerProcess; demo: Demo }> {
  const seeded = await runOrdergate(['demo', '--json'], { env });
  expect(seeded.code, seeded.stderr).toBe(0);
  return { demo: JSON.parse(seeded.stdout) as Demo, server: await startServer(env) };
}

/** Stops the server (and any process it left), and removes the folder. */
export async function stopDemoServer(server: ServerProcess | undefined, dir: string): Promise<void> {
  if (server) await stopServer(server).catch(() => undefined);
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
