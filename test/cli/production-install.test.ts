/**
 * The production install, for real (issue 52): the release tarball `npm pack` makes of this checkout (dist/
 * as built, package-lock.json packed as npm-shrinkwrap.json), unpacked into a fresh folder and installed
 * there with `npm ci --omit=dev` from the npm registry (no TypeScript, tsx or esbuild; better-sqlite3 built
 * for the Node running the test); then `npm start` serves from it on a free port over a new SQLite file:
 * the readiness endpoint answers, and so does the web console. One install per run: it compiles
 * better-sqlite3 (a minute or two), so it runs among the long files, first.
 *
 * `npm pack` is not run in this checkout, whose `prepare` would rebuild dist/ under the other files' servers:
 * the files it would pack (`npm pack --dry-run`) are copied to a folder of their own, with the lock, and packed
 * there, where `prepare` finds no dev dependencies and packs dist/ as the global setup built it.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT } from './run-ordergate.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** npm's install of the tarball: registry downloads and better-sqlite3's compilation, beside the whole suite. */
const INSTALL_MS = 600_000;
const START_MS = 30_000;

const work = mkdtempSync(join(tmpdir(), 'ordergate-production-'));
const STAGE = join(work, 'stage');
const RELEASE = join(work, 'release');
const APP = join(work, 'app', 'package');
const DATABASE = join(work, 'data', 'ordergate.db');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment npm gets as an operator's shell would give it: none of the `npm_*` settings of the npm
 * (`npm test`) this test may run under (they name this checkout as the prefix), but `npm_config_nodedir`,
 * which says whose headers native addons build against (.ci/run sets it for its Node 24 pass).
 */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cleanEnv(extra);
  for (const name of Object.keys(env)) {
    if (/^npm_/i.test(name) && name.toLowerCase() !== 'npm_config_nodedir') delete env[name];
  }
  return env;
}

/** Runs a command to its end (or kills it after `timeoutMs`): its exit code and output. */
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not end within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ok = (result: Run, what: string) => expect(result.code, `${what}:\n${result.stdout}\n${result.stderr}`).toBe(0);

let packed: string[] = [];
let installLog = '';
let server: ReturnType<typeof spawn> | undefined;
let serverLog = '';
let url = '';

/** `npm start` in the installed folder; resolves with the URL it logs once it listens. */
function npmStart(): Promise<string> {
  const child = spawn('npm', ['start'], {
    cwd: APP,
    env: npmEnv({ DATABASE_URL: `sqlite:${DATABASE}`, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (serverLog += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start did not listen within ${START_MS} ms:\n${serverLog}`)),
      START_MS,
    );
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before listening:\n${serverLog}`));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      serverLog += chunk;
      for (const line of serverLog.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'ordergate listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
          return;
        }
      }
    });
  });
}

beforeAll(async () => {
  // The files `npm pack` takes from this checkout (package.json `files`, README, LICENSE), and the lock.
  const listed = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT, 60_000);
  ok(listed, 'npm pack --dry-run');
  const files = (JSON.parse(listed.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
  for (const file of [...files, 'package-lock.json']) cpSync(join(ROOT, file), join(STAGE, file), { recursive: true });

  mkdirSync(RELEASE);
  const pack = await run('npm', ['pack', '--json', '--pack-destination', RELEASE], STAGE, 120_000);
  ok(pack, 'npm pack');
  const [tarball] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as {
    filename: string;
    files: { path: string }[];
  }[];
  packed = tarball!.files.map((file) => file.path);

  mkdirSync(join(work, 'app'));
  ok(await run('tar', ['-xzf', join(RELEASE, tarball!.filename), '-C', join(work, 'app')], work, 60_000), 'tar');
  const install = await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], APP, INSTALL_MS);
  installLog = `${install.stdout}${install.stderr}`;
  ok(install, 'npm ci --omit=dev');
  url = await npmStart();
}, INSTALL_MS + 240_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  rmSync(work, { recursive: true, force: true });
});

describe('a production install: the npm pack tarball, npm ci --omit=dev, npm start', () => {
  it('packs dist/, the lock as npm-shrinkwrap.json and the lifecycle script, and no sources', () => {
    for (const file of [
      'package.json',
      'npm-shrinkwrap.json',
      'README.md',
      'LICENSE',
      'scripts/lifecycle.mjs',
      'dist/main.js',
      'dist/cli/index.js',
      'dist/console/index.html',
    ]) {
      expect(packed, file).toContain(file);
    }
    expect(packed.filter((file) => /^(src|test|console|bench|docs)\//.test(file))).toEqual([]);
    // postpack removed the copy of the lock from the folder it packed.
    expect(existsSync(join(STAGE, 'npm-shrinkwrap.json'))).toBe(false);
  });

  it('installs the runtime dependencies only, at the locked versions, and builds nothing', () => {
    expect(installLog).toMatch(/no dev dependencies installed \(--omit=dev\): dist\/ is served as it is/);
    for (const dev of ['typescript', 'tsx', 'esbuild', 'vitest', 'eslint']) {
      expect(existsSync(join(APP, 'node_modules', dev)), dev).toBe(false);
    }
    const locked = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    };
    for (const name of ['better-sqlite3', 'fastify', 'pg']) {
      const installed = JSON.parse(readFileSync(join(APP, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(installed.version, name).toBe(locked.packages[`node_modules/${name}`]!.version);
    }
  });

  it('serves: GET /health/ready answers 200 over the new SQLite file, GET /console/ the web console', async () => {
    const ready = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(10_000) });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe('ok');
    expect(existsSync(DATABASE)).toBe(true);

    const page = await fetch(`${url}/console/`, { signal: AbortSignal.timeout(10_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<title>ordergate console</title>');
    const script = /src="([^"]*app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const asset = await fetch(new URL(script!, `${url}/console/`), { signal: AbortSignal.timeout(10_000) });
    expect(asset.status).toBe(200);
  });

  it('runs dist/ as it came: npm start neither type-checks nor rebuilds', () => {
    expect(serverLog).not.toMatch(/building it|build-server|build-console/);
    expect(serverLog).toContain('exec node --max-old-space-size=1024 dist/main.js');
  });

  it('the ordergate command runs from the install: npx ordergate --version', async () => {
    const version = await run('npx', ['ordergate', '--version'], APP, 60_000);
    ok(version, 'npx ordergate --version');
    expect(version.stdout.trim()).toBe(VERSION);
  });

  it('stops on SIGTERM to npm start, as a service manager sends it', async () => {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server!.kill('SIGTERM');
    await expect(
      Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('still running'), 15_000))]),
    ).resolves.toBe('exited');
    expect(serverLog).toMatch(/"signal":"SIGTERM","msg":"shutting down"/);
    await expect(fetch(`${url}/health/live`, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
  });
});
