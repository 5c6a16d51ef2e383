/**
 * For the global setup (test/support/global-setup.ts): the CLI and end-to-end tests run the built package
 * (dist/), as `npm start` and the `ordergate` bin do, and the browser tests its web console (dist/console/).
 * Each is built again (scripts/build-server.ts, scripts/build-console.ts, about a second each) unless it is
 * newer than every source file of it; `npm test` has type-checked the sources before. A browser test makes
 * sure of the console too (`ensureConsoleBuilt`), for runs without the global build (TEST_SKIP_DIST_BUILD):
 * several test files building it at once would swap the folder under each other's servers.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildConsole } from '../../scripts/build-console.js';
import { buildServer } from '../../scripts/build-server.js';

const root = join(import.meta.dirname, '..', '..');
const serverOutputs = ['dist/main.js', 'dist/cli/index.js'].map((file) => join(root, file));
const consoleOutput = join(root, 'dist', 'console', 'index.html');

/** The newest modification time of the files under `dir` (those `keep` keeps) and of `more`. */
function newestMtime(dir: string, keep: (file: string) => boolean, more: readonly string[]): number {
  const files = readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(keep)
    .map((file) => join(root, dir, file));
  return Math.max(...[...files, ...more.map((file) => join(root, file))].map((f) => statSync(f).mtimeMs));
}

/** Whether every output exists and is newer than `sourcesMtime`. */
const isFresh = (outputs: readonly string[], sourcesMtime: () => number) =>
  outputs.every((file) => existsSync(file)) &&
  Math.min(...outputs.map((file) => statSync(file).mtimeMs)) >= sourcesMtime();

/** Builds the web console unless dist/console/ is newer than every source of it. */
export async function ensureConsoleBuilt(): Promise<void> {
  if (isFresh([consoleOutput], () => newestMtime('console', () => true, ['scripts/build-console.ts']))) return;
  await buildConsole();
}

export default async function buildDist(): Promise<void> {
  if (
    !isFresh(serverOutputs, () =>
      newestMtime('src', (file) => file.endsWith('.ts'), ['package.json', 'scripts/build-server.ts']),
    )
  ) {
    await buildServer();
    if (!serverOutputs.every((file) => existsSync(file)))
      throw new Error(`build-dist: the build did not produce ${serverOutputs.join(', ')}`);
  }
  await ensureConsoleBuilt();
}
