/**
 * The HA topology of docs/deployment.md, started for a test: etcd (one member), two PostgreSQL 15 clusters
 * managed by Patroni (a primary and a synchronous standby: `synchronous_mode`, so that a commit is
 * acknowledged once the standby has it; `primary_start_timeout: 0`, so that a crashed primary is failed
 * over rather than restarted), and HAProxy in front, routing to whichever member Patroni's REST API says is
 * the primary. All from Debian's packages, in a folder of its own, on free ports of 127.0.0.1.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const EXECUTABLES = { patroni: '/usr/bin/patroni', etcd: '/usr/bin/etcd', haproxy: '/usr/sbin/haproxy', postgres: `${PG_BIN}/postgres` };

/** The Debian packages the topology needs that this machine lacks (none: it can run). */
export function missingHaPackages(): string[] {
  const packages: Record<keyof typeof EXECUTABLES, string> = { patroni: 'patroni', etcd: 'etcd-server', haproxy: 'haproxy', postgres: 'postgresql-15' };
  return (Object.keys(EXECUTABLES) as (keyof typeof EXECUTABLES)[]).filter((name) => !existsSync(EXECUTABLES[name])).map((name) => packages[name]);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The postgres account: PostgreSQL refuses to run as root. */
function postgresIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (line === undefined) throw new Error('running as root, and there is no postgres account to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export interface HaMember {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  /** Patroni's process (it runs PostgreSQL); null once stopped. */
  patroni: ChildProcess | null;
  log(): string;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A member's role as its Patroni REST API tells it: GET /primary answers 200 on the leader only. */
async function restStatus(member: HaMember, path: string): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${member.restPort}${path}`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

export class HaCluster {
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly dir: string,
    readonly members: HaMember[],
    readonly haproxyPort: number,
  ) {}

  /** A database URL through HAProxy, i.e. to whichever member is the primary. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.haproxyPort}/${database}`;
  }

  /** A database URL straight to one member. */
  memberUrl(member: HaMember, database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${member.pgPort}/${database}`;
  }

  static async start(): Promise<HaCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'ordergate-ha-'));
    const ids = postgresIds();
    const [etcdClient, etcdPeer, haproxyPort, pg1, pg2, rest1, rest2] = await Promise.all(Array.from({ length: 7 }, freePort));
    const members: HaMember[] = [
      { name: 'pg1', pgPort: pg1!, restPort: rest1!, dataDir: join(dir, 'pg1'), patroni: null, log: () => '' },
      { name: 'pg2', pgPort: pg2!, restPort: rest2!, dataDir: join(dir, 'pg2'), patroni: null, log: () => '' },
    ];
    const cluster = new HaCluster(dir, members, haproxyPort!);
    try {
      if (ids !== null) chownSync(dir, ids.uid, ids.gid);
      await cluster.startEtcd(etcdClient!, etcdPeer!);
      for (const member of members) writeFileSync(join(dir, `${member.name}.yml`), patroniConfig(dir, member, etcdClient!));
      writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(haproxyPort!, members));
      if (ids !== null) for (const file of ['pg1.yml', 'pg2.yml']) chownSync(join(dir, file), ids.uid, ids.gid);
      // The first member bootstraps the cluster and leads; the second is cloned from it and follows.
      cluster.startPatroni(members[0]!);
      await cluster.waitFor(async () => (await restStatus(members[0]!, '/primary')) === 200, 60_000, 'pg1 to lead');
      cluster.startPatroni(members[1]!);
      await cluster.waitFor(async () => (await restStatus(members[1]!, '/sync')) === 200, 90_000, 'pg2 to follow as the synchronous standby');
      cluster.startHaproxy();
      // HAProxy takes every server for up until its first checks: wait until they have run.
      let inRow = 0;
      await cluster.waitFor(async () => (inRow = (await cluster.answers(cluster.url())) ? inRow + 1 : 0) >= 5, 20_000, 'HAProxy to reach the primary only');
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  private spawn(command: string, args: string[], asPostgres: boolean, logFile: string): ChildProcess {
    const ids = asPostgres ? postgresIds() : null;
    // setpriv execs: the child is Patroni itself, and a signal to it reaches it.
    const [file, argv] = ids === null ? [command, args] : ['setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--init-groups', '--', command, ...args]];
    const child = spawn(file, argv, {
      cwd: this.dir,
      env: { ...process.env, HOME: this.dir, PATH: `${PG_BIN}:${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const keep = (chunk: Buffer) => {
      log += chunk.toString('utf8');
      if (log.length > 200_000) log = log.slice(-100_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', () => writeFileSync(join(this.dir, logFile), log));
    (child as ChildProcess & { log(): string }).log = () => log;
    this.children.push(child);
    return child;
  }

  private async startEtcd(clientPort: number, peerPort: number): Promise<void> {
    const peer = `http://127.0.0.1:${peerPort}`;
    const client = `http://127.0.0.1:${clientPort}`;
    this.spawn(
      EXECUTABLES.etcd,
      [
        '--name=etcd1',
        `--data-dir=${join(this.dir, 'etcd')}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=etcd1=${peer}`,
      ],
      false,
      'etcd.log',
    );
    await this.waitFor(
      async () => {
        try {
          return (await fetch(`${client}/health`, { signal: AbortSignal.timeout(1000) })).status === 200;
        } catch {
          return false;
        }
      },
      20_000,
      'etcd to answer',
    );
  }

  startPatroni(member: HaMember): void {
    const child = this.spawn(EXECUTABLES.patroni, [join(this.dir, `${member.name}.yml`)], true, `${member.name}-patroni.log`);
    member.patroni = child;
    member.log = () => (child as ChildProcess & { log(): string }).log();
  }

  private startHaproxy(): void {
    this.spawn(EXECUTABLES.haproxy, ['-db', '-f', join(this.dir, 'haproxy.cfg')], false, 'haproxy.log');
  }

  /** Whether a fresh connection to `url` answers a query on a primary (not in recovery). */
  async answers(url: string): Promise<boolean> {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ recovery: boolean }>('select pg_is_in_recovery() as recovery');
      return rows[0]?.recovery === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The member Patroni says leads now, or null. */
  async leader(): Promise<HaMember | null> {
    for (const member of this.members) if ((await restStatus(member, '/primary')) === 200) return member;
    return null;
  }

  /** Whether the member runs as a streaming standby of the leader (Patroni's GET /replica). */
  async isReplica(member: HaMember): Promise<boolean> {
    return (await restStatus(member, '/replica')) === 200;
  }

  /** The PID of the member's postmaster (the first line of postmaster.pid). */
  postmasterPid(member: HaMember): number {
    return Number(readFileSync(join(member.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** SIGKILLs the member's postmaster, as a crash would (its backends die with it). */
  killPostmaster(member: HaMember): void {
    process.kill(this.postmasterPid(member), 'SIGKILL');
  }

  async waitFor(condition: () => Promise<boolean>, ms: number, what: string, everyMs = 200): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\n${this.logs()}`);
      await sleep(everyMs);
    }
  }

  /** The tail of every process's output, for a failure's message (without Patroni's idle "no action" lines). */
  logs(): string {
    const tail = (log: string) =>
      log
        .split('\n')
        .filter((line) => !line.includes('INFO: no action.'))
        .join('\n')
        .slice(-3000);
    return this.children.map((child) => `--- ${child.spawnfile} ${child.pid}\n${tail((child as ChildProcess & { log(): string }).log())}`).join('\n');
  }

  async stop(): Promise<void> {
    // Patroni stops its PostgreSQL on SIGTERM; then the rest. Whatever is left is killed.
    const stopped = (child: ChildProcess) =>
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const patronis = this.members.flatMap((member) => (member.patroni === null ? [] : [member.patroni]));
    for (const child of patronis) child.kill('SIGTERM');
    await Promise.race([Promise.all(patronis.map(stopped)), sleep(15_000)]);
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.race([Promise.all(this.children.map(stopped)), sleep(5_000)]);
    // A postmaster outliving its Patroni (killed above) is stopped too.
    for (const member of this.members) {
      if (existsSync(join(member.dataDir, 'postmaster.pid')))
        spawnSync(`${PG_BIN}/pg_ctl`, ['-D', member.dataDir, '-m', 'immediate', 'stop'], { stdio: 'ignore', uid: postgresIds()?.uid });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function patroniConfig(dir: string, member: HaMember, etcdPort: number): string {
  mkdirSync(member.dataDir, { recursive: true, mode: 0o700 });
  const ids = postgresIds();
  if (ids !== null) chownSync(member.dataDir, ids.uid, ids.gid);
  const hba = ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'];
  return `scope: ordergate-ha
namespace: /ordergate/
name: ${member.name}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${member.restPort}
  connect_address: 127.0.0.1:${member.restPort}
etcd3:
  host: 127.0.0.1:${etcdPort}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    primary_start_timeout: 0
    # Only the synchronous standby is promoted, and it holds every acknowledged commit whatever its replay
    # lag: Patroni's 1 MB default would restart a crashed primary in place under load instead of failing over.
    maximum_lag_on_failover: 1073741824
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: 'on'
        wal_log_hints: 'on'
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
${hba.map((line) => `    - ${line}`).join('\n')}
postgresql:
  listen: 127.0.0.1:${member.pgPort}
  connect_address: 127.0.0.1:${member.pgPort}
  data_dir: ${member.dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${join(dir, `${member.name}.pgpass`)}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: '${dir}'
  pg_hba:
${hba.map((line) => `    - ${line}`).join('\n')}
`;
}

/**
 * HAProxy as Patroni's docs describe it: TCP to the member whose REST API answers GET /primary with 200
 * (checked every 500 ms; a member marked down has its sessions cut). `balance first`: all to the first
 * member up, so that before its first checks (when HAProxy takes every member for up) it still picks one.
 */
function haproxyConfig(port: number, members: readonly HaMember[]): string {
  return `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 1s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind 127.0.0.1:${port}
  balance first
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${members.map((member) => `  server ${member.name} 127.0.0.1:${member.pgPort} maxconn 200 check port ${member.restPort}`).join('\n')}
`;
}
