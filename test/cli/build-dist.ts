/**
 * For the global setup (test/support/global-setup.ts): the CLI and end-to-end tests run the built package
 * (dist/), as `npm start` and the `ordergate` bin do. It is built again (scripts/build-server.ts, about a
 * second) unless it is newer than every source file; `npm test` has type-checked the sources before.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildServer } from '../../scripts/build-server.js';

const root = join(import.meta.dirname, '..', '..');
const outputs = ['dist/main.js', 'dist/cli/index.js'].map((file) => join(root, file));

function newestSourceMtime(): number {
  const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, 'src', file));
  return Math.max(...[...sources, join(root, 'package.json'), join(root, 'scripts', 'build-server.ts')].map((f) => statSync(f).mtimeMs));
}

function isFresh(): boolean {
  if (!outputs.every((file) => existsSync(file))) return false;
  return Math.min(...outputs.map((file) => statSync(file).mtimeMs)) >= newestSourceMtime();
}

export default async function buildDist(): Promise<void> {
  if (isFresh()) return;
  await buildServer();
  if (!outputs.every((file) => existsSync(file))) throw new Error(`build-dist: the build did not produce ${outputs.join(', ')}`);
}
