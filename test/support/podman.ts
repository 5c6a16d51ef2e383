/**
 * podman for the image test (test/deploy/container.test.ts), in a sandbox of its own: its own image store
 * (`--root`, `--runroot`) and its own `CONTAINERS_CONF` under a temporary folder, which `remove()` deletes
 * with every container, volume and image in it. The machine's podman settings and images are not touched,
 * nor its network settings: the containers use the host's network (`--network=host`), since a bridge
 * network would have netavark turn on `net.ipv4.ip_forward`.
 *
 * The base image: no image registry can be reached from the test machines, so Debian 12 is built with
 * `debootstrap --variant=minbase bookworm` and imported under the name the Containerfile's FROM uses. The
 * root file system is kept as a tarball per day in BASE_CACHE (a re-run that day imports it in seconds
 * instead of bootstrapping again for about a minute); older ones are removed when a new one is made.
 */
import { execFile, spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** The Containerfile's default BASE_IMAGE: the name a real registry serves Debian 12's slim image under. */
export const BASE_IMAGE = 'docker.io/library/debian:bookworm-slim';
export const BASE_CACHE = process.env.ORDERGATE_TEST_BASE_CACHE ?? '/var/tmp/ordergate-test-base';
const DEBIAN_MIRROR = process.env.ORDERGATE_TEST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';

/**
 * What podman needs here: the `runc` runtime (Debian's podman 4.3 would pick crun when present), default
 * ulimits within the machine's hard limits (podman's own default, nofile 1048576, is refused where the hard
 * limit is lower: 20000 on the test machines), cgroupfs and a file for events (no systemd needed), and a
 * temporary folder of its own (the default /run/libpod is shared with the machine's podman).
 */
function containersConf(tmpDir: string): string {
  return [
    '[containers]',
    'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
    '',
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    `tmp_dir = "${tmpDir}"`,
    '',
  ].join('\n');
}

/** Whether a program is on the PATH. */
export function onPath(program: string): boolean {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '')
    .some((dir) => existsSync(join(dir, program)));
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (at most `timeoutMs`), without a shell. */
export function run(
  program: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(new Error(`${program} ${args.join(' ')}: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
      },
    );
  });
}

/** Runs a program and throws, with its stderr, unless it exits 0. */
export async function runOk(
  program: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  const result = await run(program, args, options);
  if (result.code !== 0) {
    throw new Error(`${program} ${args.join(' ')} exited ${result.code}:\n${result.stderr.slice(-4000)}`);
  }
  return result.stdout;
}

/** Runs a program with its output appended to `logFile`; throws with the log's tail unless it exits 0. */
function runLogged(
  program: string,
  args: readonly string[],
  logFile: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`$ ${program} ${args.join(' ')}\n`);
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer) => {
      log.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      log.end();
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      log.end();
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${program} ${args.slice(0, 2).join(' ')} ended ${signal ?? `with ${code}`} (the whole output: ${logFile}):\n${tail}`,
          ),
        );
    });
  });
}

/** The UTC day, for the base tarball's name. */
const today = () => new Date().toISOString().slice(0, 10);

/**
 * Debian 12's root file system from debootstrap's minbase variant, as a tarball in BASE_CACHE: today's, made
 * now if missing (written under another name and renamed, so that a run that dies half-way leaves no
 * tarball, and two runs at once each write their own).
 */
export async function debianBaseTarball(logFile: string): Promise<string> {
  mkdirSync(BASE_CACHE, { recursive: true });
  const tarball = join(BASE_CACHE, `bookworm-minbase-${today()}.tar`);
  if (existsSync(tarball)) return tarball;
  const rootfs = mkdtempSync(join(BASE_CACHE, 'rootfs-'));
  const partial = `${tarball}.partial-${process.pid}`;
  try {
    await runLogged(
      'debootstrap',
      ['--variant=minbase', 'bookworm', rootfs, DEBIAN_MIRROR],
      logFile,
      process.env,
      15 * 60_000,
    );
    await runLogged('tar', ['--numeric-owner', '-C', rootfs, '-cf', partial, '.'], logFile, process.env, 5 * 60_000);
    renameSync(partial, tarball);
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }
  for (const old of readdirSync(BASE_CACHE).filter((name) => /^bookworm-minbase-.*\.tar$/.test(name))) {
    if (join(BASE_CACHE, old) !== tarball) rmSync(join(BASE_CACHE, old), { force: true });
  }
  return tarball;
}

/** podman over a sandbox of its own under a new temporary folder. */
export class PodmanSandbox {
  readonly dir: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly globalArgs: string[];

  constructor(parent = '/var/tmp') {
    // Not under /tmp, which may be a tmpfs: the image store holds a few gigabytes while the image builds.
    this.dir = mkdtempSync(join(parent, 'ordergate-podman-'));
    const tmpDir = join(this.dir, 'libpod-tmp');
    mkdirSync(tmpDir);
    writeFileSync(join(this.dir, 'containers.conf'), containersConf(tmpDir));
    this.env = { ...process.env, CONTAINERS_CONF: join(this.dir, 'containers.conf') };
    this.globalArgs = ['--root', join(this.dir, 'storage'), '--runroot', join(this.dir, 'run')];
  }

  /** `podman ARGS`, to its end. */
  run(args: readonly string[], timeoutMs = 120_000): Promise<RunResult> {
    return run('podman', [...this.globalArgs, ...args], { env: this.env, timeoutMs });
  }

  /** `podman ARGS`; its stdout, or an error with its stderr unless it exits 0. */
  ok(args: readonly string[], timeoutMs = 120_000): Promise<string> {
    return runOk('podman', [...this.globalArgs, ...args], { env: this.env, timeoutMs });
  }

  /**
   * `podman ARGS` with its output in `logFile`, at a lower CPU priority (`nice`: a build beside the rest of
   * the suite takes what the other tests leave; every process of the build inherits it).
   */
  logged(args: readonly string[], logFile: string, timeoutMs: number): Promise<void> {
    return runLogged('nice', ['-n', '10', 'podman', ...this.globalArgs, ...args], logFile, this.env, timeoutMs);
  }

  /** Removes every container, volume and image of the sandbox, then its folder. */
  async remove(): Promise<void> {
    await this.run(['rm', '--all', '--force', '--time', '5']).catch(() => undefined);
    await this.run(['volume', 'rm', '--all', '--force']).catch(() => undefined);
    await this.run(['rmi', '--all', '--force'], 300_000).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
