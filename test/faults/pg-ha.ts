/**
 * The HA topology of docs/deployment.md, started for a test from the recipe's own text: etcd (one member),
 * two PostgreSQL 15 clusters managed by Patroni (a primary and a synchronous standby), and HAProxy in front,
 * routing to whichever member Patroni's REST API says is the primary. All from Debian's packages, in a
 * folder of its own, on free ports of loopback addresses.
 *
 * Patroni's configuration, HAProxy's and the commands that create ordergate's role and database are the
 * blocks docs/deployment.md marks `<!-- ha-config: NAME -->`, read from the file at each start; only the
 * values that differ between the recipe's machines and this one are replaced (MACHINE_SPECIFIC), so that the
 * recipe and what the failover test runs cannot drift apart. test/docs-ha-recipe.test.ts checks the same
 * blocks on every run, without Patroni.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const EXECUTABLES = {
  patroni: '/usr/bin/patroni',
  patronictl: '/usr/bin/patronictl',
  etcd: '/usr/bin/etcd',
  haproxy: '/usr/sbin/haproxy',
  postgres: `${PG_BIN}/postgres`,
};
/** Debian's own HAProxy configuration, which the recipe's block is appended to on an ordergate node. */
const DEBIAN_HAPROXY_CFG = '/etc/haproxy/haproxy.cfg';

export const DEPLOYMENT_MD = join(import.meta.dirname, '..', '..', 'docs', 'deployment.md');

/** The recipe's blocks, by the name of their marker. */
export type RecipeBlock = 'patroni.yml' | 'haproxy.cfg' | 'create-ordergate.sh';
export const RECIPE_BLOCKS: readonly RecipeBlock[] = ['patroni.yml', 'haproxy.cfg', 'create-ordergate.sh'];

/**
 * The text of the fenced block that follows the line `<!-- ha-config: NAME -->` in `markdown`, without the
 * indentation of its fence (the blocks sit in a numbered list). Exactly one marker of the name, or it throws.
 */
export function recipeBlock(markdown: string, name: RecipeBlock): string {
  const lines = markdown.split('\n');
  const markers = lines.flatMap((line, at) => (line.trim() === `<!-- ha-config: ${name} -->` ? [at] : []));
  if (markers.length !== 1)
    throw new Error(`docs/deployment.md has ${markers.length} markers <!-- ha-config: ${name} -->, not one`);
  let at = markers[0]! + 1;
  while (lines[at]?.trim() === '') at += 1;
  const fence = /^( *)```[a-z]*$/.exec(lines[at] ?? '');
  if (fence === null)
    throw new Error(`docs/deployment.md: <!-- ha-config: ${name} --> is not followed by a fenced block`);
  const indent = fence[1]!;
  const block: string[] = [];
  for (at += 1; lines[at]?.trim() !== '```'; at += 1) {
    const line = lines[at];
    if (line === undefined) throw new Error(`docs/deployment.md: the block of <!-- ha-config: ${name} --> has no end`);
    if (line.trim() !== '' && !line.startsWith(indent))
      throw new Error(`docs/deployment.md: a line of ${name} is indented less than its fence: ${line}`);
    block.push(line.slice(indent.length));
  }
  return `${block.join('\n')}\n`;
}

/** A member as the recipe's blocks need it: its address and ports on this machine. */
export interface RecipeMember {
  name: string;
  host: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
}

/** What differs between the recipe's machines and the one that runs it. */
export interface RecipeMachine {
  /** The recipe's pg1 (10.0.0.11) and pg2 (10.0.0.12), in that order. */
  members: readonly [RecipeMember, RecipeMember];
  /** etcd's client address (host:port). */
  etcd: string;
  /** The one address every connection comes from, as a CIDR (the members' and the ordergate nodes' in the recipe). */
  clients: string;
  socketDir: string;
  haproxyPort: number;
  passwords: { superuser: string; replication: string };
}

/** One value of the recipe that is its machines' own, and what stands for it here. */
type Substitution = readonly [inRecipe: string, here: string];

/** A string as a single-quoted YAML scalar. */
const yamlQuoted = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * The recipe's machine-specific values, block by block (docs/deployment.md shows this table). Everything else
 * in a block runs as written. The patroni.yml block is pg1's; each member's file is made from it, as the
 * recipe tells the operator to make pg2's.
 */
export const MACHINE_SPECIFIC = {
  'patroni.yml': (machine: RecipeMachine, member: RecipeMember): Substitution[] => [
    ['name: pg1', `name: ${member.name}`],
    ['10.0.0.11:8008', `${member.host}:${member.restPort}`],
    ['10.0.0.11:5432', `${member.host}:${member.pgPort}`],
    ['10.0.0.21:2379, 10.0.0.22:2379, 10.0.0.23:2379', machine.etcd],
    ['/var/lib/postgresql/15/ordergate', member.dataDir],
    ['/var/run/postgresql', machine.socketDir],
    ['10.0.0.11/32', machine.clients],
    ['10.0.0.12/32', machine.clients],
    ['10.0.1.0/24', machine.clients],
    ["'<superuser password>'", yamlQuoted(machine.passwords.superuser)],
    ["'<replication password>'", yamlQuoted(machine.passwords.replication)],
  ],
  'haproxy.cfg': (machine: RecipeMachine): Substitution[] => [
    ['bind 127.0.0.1:5000', `bind 127.0.0.1:${machine.haproxyPort}`],
    ...machine.members.map((member, i): Substitution => [
      `server pg${i + 1} 10.0.0.1${i + 1}:5432 check port 8008`,
      `server ${member.name} ${member.host}:${member.pgPort} check port ${member.restPort}`,
    ]),
  ],
  /** Run against the leader (the recipe's pg1); ORDERGATE_DB_PASSWORD and PGPASSWORD come from the environment. */
  'create-ordergate.sh': (_machine: RecipeMachine, leader: RecipeMember): Substitution[] => [
    ['host=10.0.0.11 port=5432', `host=${leader.host} port=${leader.pgPort}`],
  ],
};

/**
 * What in a block is still the recipe's machines' own once substituted: an address of 10.0.0.0/8 or a
 * `<... password>` placeholder outside comments.
 */
export function placeholdersLeft(text: string): string[] {
  const code = text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .join('\n');
  return [...code.matchAll(/\b10\.\d+\.\d+\.\d+(\/\d+)?|<[^<>\n]*password>/g)].map((match) => match[0]);
}

/** `block` with each substitution made; a value the block does not hold, or a placeholder left, throws. */
export function substitute(block: string, name: RecipeBlock, table: readonly Substitution[]): string {
  let text = block;
  for (const [inRecipe, here] of table) {
    if (!text.includes(inRecipe))
      throw new Error(
        `docs/deployment.md's ${name} no longer holds "${inRecipe}", which test/faults/pg-ha.ts replaces`,
      );
    text = text.replaceAll(inRecipe, here);
  }
  const left = placeholdersLeft(text);
  if (left.length > 0)
    throw new Error(
      `docs/deployment.md's ${name} holds machine-specific values test/faults/pg-ha.ts does not replace: ${left.join(', ')}`,
    );
  return text;
}

/** The recipe's three files for `machine`, from docs/deployment.md's text. */
export function recipeFiles(markdown: string, machine: RecipeMachine, leader: RecipeMember = machine.members[0]) {
  return {
    patroni: machine.members.map((member) =>
      substitute(recipeBlock(markdown, 'patroni.yml'), 'patroni.yml', MACHINE_SPECIFIC['patroni.yml'](machine, member)),
    ),
    haproxy: substitute(recipeBlock(markdown, 'haproxy.cfg'), 'haproxy.cfg', MACHINE_SPECIFIC['haproxy.cfg'](machine)),
    createOrdergate: substitute(
      recipeBlock(markdown, 'create-ordergate.sh'),
      'create-ordergate.sh',
      MACHINE_SPECIFIC['create-ordergate.sh'](machine, leader),
    ),
  };
}

/**
 * The State `patronictl list` gives a standby that follows its leader, by Patroni's version: `running` up to
 * 3.0.3 (Debian 12 ships 3.0.2), `streaming` from 3.0.4 (which names it by its replication).
 */
export function followingStandbyState(patroniVersion: string): 'running' | 'streaming' {
  const [major = 0, minor = 0, patch = 0] = patroniVersion.split('.').map(Number);
  return major * 1_000_000 + minor * 1_000 + patch >= 3_000_004 ? 'streaming' : 'running';
}

/** The Debian packages the topology needs that this machine lacks (none: it can run). */
export function missingHaPackages(): string[] {
  const packages: Record<keyof typeof EXECUTABLES, string> = {
    patroni: 'patroni',
    patronictl: 'patroni',
    etcd: 'etcd-server',
    haproxy: 'haproxy',
    postgres: 'postgresql-15',
  };
  const missing = (Object.keys(EXECUTABLES) as (keyof typeof EXECUTABLES)[])
    .filter((name) => !existsSync(EXECUTABLES[name]))
    .map((name) => packages[name]);
  return [...new Set(missing)];
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
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

/** `command` as the postgres account when running as root (setpriv execs: a signal to the child reaches it). */
function asPostgres(command: string, args: string[]): [string, string[]] {
  const ids = postgresIds();
  return ids === null
    ? [command, args]
    : ['setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--init-groups', '--', command, ...args]];
}

export interface HaMember extends RecipeMember {
  /** Patroni's process (it runs PostgreSQL); null once stopped. */
  patroni: ChildProcess | null;
  log(): string;
}

/** A row of `patronictl list -f json`. */
export interface PatronictlRow {
  Member: string;
  Role: string;
  State: string;
  'Lag in MB'?: number | string;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A member's role as its Patroni REST API tells it: GET /primary answers 200 on the leader only. */
async function restStatus(member: HaMember, path: string): Promise<number> {
  try {
    const response = await fetch(`http://${member.host}:${member.restPort}${path}`, {
      signal: AbortSignal.timeout(1000),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** Runs `command` to its end; a non-zero exit throws with its output. */
function run(
  command: string,
  args: string[],
  what: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000, ...options });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0)
    throw new Error(
      `${what} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`}):\n${output}`,
    );
  return output;
}

const PASSWORDS = { superuser: 'ha-superuser-secret', replication: 'ha-replication-secret' };
/** The ordergate role's password: a quote, an at sign, a colon, a slash and a percent sign, which psql and the URL must carry. */
const ORDERGATE_PASSWORD = "og's p@ss:w/rd%";

export class HaCluster {
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly dir: string,
    readonly machine: RecipeMachine,
    readonly members: HaMember[],
    readonly haproxyPort: number,
  ) {}

  /** A database URL through HAProxy, i.e. to whichever member is the primary, as the superuser. */
  url(database = 'postgres'): string {
    return `postgres://postgres:${PASSWORDS.superuser}@127.0.0.1:${this.haproxyPort}/${database}`;
  }

  /** The ordergate nodes' DATABASE_URL, as the recipe gives it: the ordergate role through HAProxy. */
  ordergateUrl(): string {
    return `postgres://ordergate:${encodeURIComponent(ORDERGATE_PASSWORD)}@127.0.0.1:${this.haproxyPort}/ordergate`;
  }

  /** A database URL straight to one member, as the superuser. */
  memberUrl(member: HaMember, database = 'postgres'): string {
    return `postgres://postgres:${PASSWORDS.superuser}@${member.host}:${member.pgPort}/${database}`;
  }

  static async start(): Promise<HaCluster> {
    const markdown = readFileSync(DEPLOYMENT_MD, 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'ordergate-ha-'));
    const ids = postgresIds();
    // Two loopback addresses of their own, as two machines would have (`patroni --validate-config` refuses
    // 127.0.0.1 as a connect_address). Every connection still comes from 127.0.0.1, the loopback's source.
    const hosts = ['127.0.10.11', '127.0.10.12'] as const;
    const [etcdClient, etcdPeer, haproxyPort, pg1, rest1, pg2, rest2] = await Promise.all([
      freePort('127.0.0.1'),
      freePort('127.0.0.1'),
      freePort('127.0.0.1'),
      freePort(hosts[0]),
      freePort(hosts[0]),
      freePort(hosts[1]),
      freePort(hosts[1]),
    ]);
    const members: [HaMember, HaMember] = [
      {
        name: 'pg1',
        host: hosts[0],
        pgPort: pg1,
        restPort: rest1,
        dataDir: join(dir, 'pg1'),
        patroni: null,
        log: () => '',
      },
      {
        name: 'pg2',
        host: hosts[1],
        pgPort: pg2,
        restPort: rest2,
        dataDir: join(dir, 'pg2'),
        patroni: null,
        log: () => '',
      },
    ];
    const machine: RecipeMachine = {
      members,
      etcd: `127.0.0.1:${etcdClient}`,
      clients: '127.0.0.1/32',
      socketDir: dir,
      haproxyPort,
      passwords: PASSWORDS,
    };
    const cluster = new HaCluster(dir, machine, members, haproxyPort);
    try {
      const files = recipeFiles(markdown, machine);
      if (ids !== null) chownSync(dir, ids.uid, ids.gid);
      await cluster.startEtcd(etcdClient, etcdPeer);
      for (const [i, member] of members.entries()) {
        mkdirSync(member.dataDir, { recursive: true, mode: 0o700 });
        writeFileSync(cluster.configFile(member), files.patroni[i]!, { mode: 0o600 });
        if (ids !== null)
          for (const path of [member.dataDir, cluster.configFile(member)]) chownSync(path, ids.uid, ids.gid);
        // Step 3's check, with etcd up and before Patroni runs (it checks that the ports are free).
        run(
          ...asPostgres(EXECUTABLES.patroni, ['--validate-config', cluster.configFile(member)]),
          `patroni --validate-config of ${member.name}`,
          {
            env: cluster.env(),
          },
        );
      }
      writeFileSync(join(dir, 'haproxy.cfg'), files.haproxy);
      // Step 6's check: no warning (a missing timeout is one), alone and appended to Debian's file.
      run(EXECUTABLES.haproxy, ['-dW', '-c', '-f', join(dir, 'haproxy.cfg')], 'haproxy -dW -c of the recipe');
      if (existsSync(DEBIAN_HAPROXY_CFG))
        run(
          EXECUTABLES.haproxy,
          ['-dW', '-c', '-f', DEBIAN_HAPROXY_CFG, '-f', join(dir, 'haproxy.cfg')],
          `haproxy -dW -c of ${DEBIAN_HAPROXY_CFG} with the recipe appended`,
        );
      // The first member bootstraps the cluster and leads; the second is cloned from it and follows.
      cluster.startPatroni(members[0]);
      await cluster.waitFor(async () => (await restStatus(members[0], '/primary')) === 200, 60_000, 'pg1 to lead');
      cluster.startPatroni(members[1]);
      await cluster.waitFor(
        async () => (await restStatus(members[1], '/sync')) === 200,
        90_000,
        'pg2 to follow as the synchronous standby',
      );
      cluster.startHaproxy();
      // HAProxy takes every server for up until its first checks: wait until they have run.
      let inRow = 0;
      await cluster.waitFor(
        async () => (inRow = (await cluster.answers(cluster.url())) ? inRow + 1 : 0) >= 5,
        20_000,
        'HAProxy to reach the primary only',
      );
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  configFile(member: HaMember): string {
    return join(this.dir, `${member.name}.yml`);
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, HOME: this.dir, PATH: `${PG_BIN}:${process.env.PATH}` };
  }

  /**
   * Step 5 of the recipe: its commands, run by bash against the leader, with the superuser's password in
   * PGPASSWORD (psql would ask for it) and the role's in ORDERGATE_DB_PASSWORD.
   */
  async createOrdergateDatabase(): Promise<void> {
    const leader = await this.leader();
    if (leader === null) throw new Error('no leader to create the ordergate role and database on');
    const script = recipeFiles(readFileSync(DEPLOYMENT_MD, 'utf8'), this.machine, leader).createOrdergate;
    run('bash', ['-c', script], "the recipe's step 5 (create-ordergate.sh)", {
      cwd: this.dir,
      env: { ...this.env(), PGPASSWORD: PASSWORDS.superuser, ORDERGATE_DB_PASSWORD: ORDERGATE_PASSWORD },
    });
  }

  /** `patronictl list` (step 4 of the recipe), as JSON. */
  patronictlList(): PatronictlRow[] {
    return JSON.parse(
      run(EXECUTABLES.patronictl, ['-c', this.configFile(this.members[0]!), 'list', '-f', 'json'], 'patronictl list', {
        env: this.env(),
      }),
    ) as PatronictlRow[];
  }

  /** The installed Patroni's version (`patroni --version`: "patroni 3.0.2"). */
  static patroniVersion(): string {
    return run(EXECUTABLES.patroni, ['--version'], 'patroni --version').trim().split(/\s+/).at(-1)!;
  }

  private spawn(command: string, args: string[], postgres: boolean, logFile: string): ChildProcess {
    const [file, argv] = postgres ? asPostgres(command, args) : [command, args];
    const child = spawn(file, argv, { cwd: this.dir, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
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
    const child = this.spawn(EXECUTABLES.patroni, [this.configFile(member)], true, `${member.name}-patroni.log`);
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

  /** Whether the member runs as a standby of the leader (Patroni's GET /replica). */
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
    return this.children
      .map((child) => `--- ${child.spawnfile} ${child.pid}\n${tail((child as ChildProcess & { log(): string }).log())}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    // Patroni stops its PostgreSQL on SIGTERM; then the rest. Whatever is left is killed.
    const stopped = (child: ChildProcess) =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const patronis = this.members.flatMap((member) => (member.patroni === null ? [] : [member.patroni]));
    for (const child of patronis) child.kill('SIGTERM');
    await Promise.race([Promise.all(patronis.map(stopped)), sleep(15_000)]);
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.race([Promise.all(this.children.map(stopped)), sleep(5_000)]);
    // A postmaster outliving its Patroni (killed above) is stopped too.
    for (const member of this.members) {
      if (existsSync(join(member.dataDir, 'postmaster.pid')))
        spawnSync(`${PG_BIN}/pg_ctl`, ['-D', member.dataDir, '-m', 'immediate', 'stop'], {
          stdio: 'ignore',
          uid: postgresIds()?.uid,
        });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
