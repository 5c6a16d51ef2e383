/**
 * The npm lifecycle steps around dist/, in plain JavaScript: a production install (`npm ci --omit=dev`) has
 * neither TypeScript nor tsx, and runs this file too (it ships in the release tarball, package.json `files`).
 *
 *   node scripts/lifecycle.mjs prepare   `npm ci`/`npm install` in this folder, and `npm pack`: builds dist/
 *                                        (`npm run build`) when the dev dependencies are installed; without
 *                                        them (--omit=dev) it says so and leaves dist/ as it is.
 *   node scripts/lifecycle.mjs start     Before `npm start` runs dist/main.js: builds dist/ when it is missing
 *                                        or older than its sources (src/, console/, the build scripts,
 *                                        package.json) and the dev dependencies are there. A release (no
 *                                        src/) runs dist/ as it came. Without dev dependencies a missing
 *                                        dist/ stops the start; an older one is served, with a warning.
 *   node scripts/lifecycle.mjs prepack   `npm pack`: package-lock.json copied to npm-shrinkwrap.json, which
 *   node scripts/lifecycle.mjs postpack  npm puts in the tarball (it never packs package-lock.json), so that
 *                                        `npm ci --omit=dev` in the unpacked tarball installs the exact
 *                                        versions this commit was tested with; postpack removes the copy.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const SERVER_OUTPUTS = ['dist/main.js', 'dist/cli/index.js'];
const CONSOLE_OUTPUTS = ['dist/console/index.html'];
const SHRINKWRAP = join(ROOT, 'npm-shrinkwrap.json');

const say = (line) => process.stderr.write(`ordergate: ${line}\n`);

/** Whether `npm run build` can run here: TypeScript and tsx are dev dependencies. */
function devToolsInstalled() {
  const require = createRequire(join(ROOT, 'package.json'));
  try {
    require.resolve('typescript/package.json');
    require.resolve('tsx/package.json');
    return true;
  } catch {
    return false;
  }
}

function build() {
  // npm runs this file with npm_execpath set to its own CLI: the same npm builds.
  const npm = process.env.npm_execpath;
  const run = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (run.error) throw run.error;
  if (run.status !== 0) process.exit(run.status ?? 1);
}

/** The newest modification time of the files under each folder and of each file (those that exist). */
function newestMtime(paths) {
  let newest = 0;
  for (const path of paths.map((p) => join(ROOT, p)).filter((p) => existsSync(p))) {
    const stat = statSync(path);
    const files = stat.isDirectory()
      ? readdirSync(path, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
      : [path];
    for (const file of files) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** Outputs that exist and are newer than every source. */
function fresh(outputs, sources) {
  const paths = outputs.map((file) => join(ROOT, file));
  if (!paths.every((path) => existsSync(path))) return false;
  return Math.min(...paths.map((path) => statSync(path).mtimeMs)) >= newestMtime(sources);
}

function distComplete() {
  return [...SERVER_OUTPUTS, ...CONSOLE_OUTPUTS].every((file) => existsSync(join(ROOT, file)));
}

function prepare() {
  if (devToolsInstalled()) return build();
  say(
    distComplete()
      ? 'no dev dependencies installed (--omit=dev): dist/ is served as it is, not rebuilt'
      : 'no dev dependencies installed (--omit=dev) and no dist/: build it where they are (npm ci && npm run build) and copy dist/ here, or install the release tarball (npm pack)',
  );
}

function start() {
  // A release tarball holds dist/ and no sources: nothing to compare.
  const fromSources = existsSync(join(ROOT, 'src'));
  const upToDate =
    distComplete() &&
    (!fromSources ||
      (fresh(SERVER_OUTPUTS, ['src', 'package.json', 'scripts/build-server.ts']) &&
        fresh(CONSOLE_OUTPUTS, ['console', 'scripts/build-console.ts'])));
  if (upToDate) return;
  if (fromSources && devToolsInstalled()) {
    say(distComplete() ? 'the sources changed since dist/ was built: building it' : 'no dist/ yet: building it');
    return build();
  }
  if (!distComplete()) {
    say(
      'no dist/ to run and no dev dependencies to build it: run `npm run build` on a machine with them (npm ci), or install the release tarball (npm pack)',
    );
    process.exit(1);
  }
  say('dist/ looks older than the sources, and without dev dependencies it cannot be rebuilt: serving it as it is');
}

function prepack() {
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(lock)) copyFileSync(lock, SHRINKWRAP);
}

function postpack() {
  if (existsSync(join(ROOT, 'package-lock.json'))) rmSync(SHRINKWRAP, { force: true });
}

const steps = { prepare, start, prepack, postpack };
const step = steps[process.argv[2]];
if (step === undefined) {
  say(`usage: node ${join('scripts', 'lifecycle.mjs')} ${Object.keys(steps).join('|')}`);
  process.exit(2);
}
step();
