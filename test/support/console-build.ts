/**
 * The web console, built once for the test run: the global setup builds it when its sources are newer than
 * dist/console/ (as build-dist.ts does for the server), and a browser test only makes sure of it. Several
 * test files building it at once would swap the folder under each other's servers.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildConsole } from '../../scripts/build-console.js';
import { ROOT } from '../cli/run-ordergate.js';

/** The newest modification time of the files under `dir`. */
function newest(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    }),
  );
}

/** Builds the console unless dist/console/ is newer than every source of it. */
export async function ensureConsoleBuilt(): Promise<void> {
  const built = join(ROOT, 'dist', 'console', 'index.html');
  const sources = Math.max(newest(join(ROOT, 'console')), statSync(join(ROOT, 'scripts', 'build-console.ts')).mtimeMs);
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  await buildConsole();
}
