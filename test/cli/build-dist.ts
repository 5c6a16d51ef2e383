/**
 * For the global setup (test/support/global-setup.ts): the CLI and end-to-end tests run the built package (dist/), as `npm start` and the
 * `ordergate` bin do. Build it once per run, unless it is newer than every source file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const outputs = ['dist/main.js', 'dist/cli/index.js'].map((file) => join(root, file));

function newestSourceMtime(): number {
  const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, 'src', file));
  return Math.max(...[...sources, join(root, 'package.json'), join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json')].map((f) => statSync(f).mtimeMs));
}

function isFresh(): boolean {
  if (!outputs.every((file) => existsSync(file))) return false;
  return Math.min(...outputs.map((file) => statSync(file).mtimeMs)) >= newestSourceMtime();
}

export default function buildDist(): void {
  if (isFresh()) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  // tsc emits even when it reports type errors; `npm run typecheck` is the gate for those, so the tests
  // still run against what was emitted.
  if (build.status !== 0) process.stderr.write(`build-dist: tsc reported errors:\n${build.stdout}${build.stderr}\n`);
  if (!outputs.every((file) => existsSync(file))) throw new Error(`build-dist: the build did not produce ${outputs.join(', ')}`);
}
