/**
 * Issue 47 row 8: docs/deployment.md's HA recipe works as written on separate machines, and is what the
 * failover test runs. test/faults/pg-ha.ts reads the recipe's blocks (`<!-- ha-config: NAME -->`) and runs
 * them, replacing only its MACHINE_SPECIFIC values; that test needs Patroni, etcd and HAProxy. This one runs
 * everywhere, without a process: the blocks are there, the table replaces every machine-specific value in
 * them and nothing else is left, and the blocks hold the four points of the finding (HAProxy's timeouts,
 * pg_hba, the role and database, the State word of each Patroni version).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEPLOYMENT_MD,
  followingStandbyState,
  placeholdersLeft,
  recipeBlock,
  recipeFiles,
  RECIPE_BLOCKS,
  type RecipeMachine,
} from './faults/pg-ha.js';

const markdown = readFileSync(DEPLOYMENT_MD, 'utf8');

/** A machine as pg-ha.ts makes one, with fixed ports. */
const machine: RecipeMachine = {
  members: [
    { name: 'pg1', host: '127.0.10.11', pgPort: 15432, restPort: 18008, dataDir: '/tmp/ha/pg1' },
    { name: 'pg2', host: '127.0.10.12', pgPort: 25432, restPort: 28008, dataDir: '/tmp/ha/pg2' },
  ],
  etcd: '127.0.0.1:12379',
  clients: '127.0.0.1/32',
  socketDir: '/tmp/ha',
  haproxyPort: 15000,
  passwords: { superuser: "super'secret", replication: 'replication-secret' },
};

/** HAProxy's sections: a line that does not start with a blank starts one. */
function haproxySections(cfg: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of cfg.split('\n').filter((l) => l.trim() !== '')) {
    if (/^\S/.test(line)) sections.set(line.trim(), (current = []));
    else current.push(line.trim());
  }
  return sections;
}

/** An HAProxy time ("500ms", "1s", "30m") in milliseconds. */
function haproxyMs(time: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(time);
  if (match === null) throw new Error(`not an HAProxy time: ${time}`);
  return Number(match[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms']!;
}

describe("docs/deployment.md's HA recipe (issue 47 row 8)", () => {
  it('holds each block once, and test/faults/pg-ha.ts replaces every machine-specific value in them, leaving none', () => {
    for (const name of RECIPE_BLOCKS) expect(recipeBlock(markdown, name).length, name).toBeGreaterThan(0);
    const files = recipeFiles(markdown, machine);
    expect(files.patroni[0]).toContain('name: pg1');
    expect(files.patroni[0]).toContain('listen: 127.0.10.11:15432');
    expect(files.patroni[1]).toContain('name: pg2');
    expect(files.patroni[1]).toContain('connect_address: 127.0.10.12:28008');
    expect(files.patroni[1]).toContain("password: 'super''secret'");
    expect(files.haproxy).toContain('server pg2 127.0.10.12:25432 check port 28008');
    expect(files.createOrdergate).toContain('host=127.0.10.11 port=15432');
    for (const text of [...files.patroni, files.haproxy, files.createOrdergate])
      expect(placeholdersLeft(text)).toEqual([]);
  });

  it('fails when a block loses a value the table replaces, or gains one it does not', () => {
    expect(() =>
      recipeFiles(markdown.replace('connect_address: 10.0.0.11:8008', 'connect_address: 10.0.0.13:8008'), machine),
    ).toThrow(/no longer holds "10.0.0.11:8008"|does not replace: 10.0.0.13/);
    expect(() =>
      recipeFiles(
        markdown.replace('server pg2 10.0.0.12:5432 check port 8008', 'server pg2 10.0.0.12:5433 check port 8008'),
        machine,
      ),
    ).toThrow(/no longer holds/);
    expect(() =>
      recipeFiles(
        markdown.replace('balance first', 'balance first\n     server pg3 10.0.0.13:5432 check port 8008'),
        machine,
      ),
    ).toThrow(/does not replace: 10.0.0.13/);
    expect(() =>
      recipeFiles(
        markdown.replace(
          "rewind: { username: postgres, password: '<superuser password>' }",
          "rewind: { username: rewind, password: '<rewind password>' }",
        ),
        machine,
      ),
    ).toThrow(/does not replace: <rewind password>/);
    expect(() =>
      recipeFiles(
        markdown.replace(
          "replication: { username: replicator, password: '<replication password>' }",
          "replication: { username: replicator, password: '<repl password>' }",
        ),
        machine,
      ),
    ).toThrow(/no longer holds/);
    expect(() => recipeBlock(markdown.replace('<!-- ha-config: haproxy.cfg -->', ''), 'haproxy.cfg')).toThrow(
      /0 markers/,
    );
  });

  it("HAProxy: connect, client, server and check timeouts in the defaults of `listen primary` (long for client and server), and Patroni's check", () => {
    const sections = haproxySections(recipeBlock(markdown, 'haproxy.cfg'));
    expect([...sections.keys()]).toEqual(['defaults', 'listen primary']);
    const timeouts = new Map(
      sections
        .get('defaults')!
        .filter((line) => line.startsWith('timeout '))
        .map((line) => line.split(/\s+/).slice(1) as [string, string]),
    );
    expect([...timeouts.keys()].sort()).toEqual(['check', 'client', 'connect', 'server']);
    // ordergate's pool closes a connection idle for 10 s: client and server timeouts far longer never cut one.
    for (const side of ['client', 'server'])
      expect(haproxyMs(timeouts.get(side)!), side).toBeGreaterThanOrEqual(10 * 60_000);
    for (const quick of ['connect', 'check']) expect(haproxyMs(timeouts.get(quick)!), quick).toBeLessThanOrEqual(5_000);
    expect(sections.get('defaults')).toContain('mode tcp');
    expect(sections.get('listen primary')).toEqual(
      expect.arrayContaining([
        'bind 127.0.0.1:5000',
        'option httpchk OPTIONS /primary',
        'http-check expect status 200',
        'default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
      ]),
    );
  });

  it("Patroni: pg_hba lets in each member's replication and superuser and the ordergate role to its database, every host line with scram-sha-256, on every member", () => {
    const patroni = recipeBlock(markdown, 'patroni.yml');
    const hba = /^ {2}pg_hba: &pg_hba.*\n((?: {4}- .*\n)+)/m.exec(patroni);
    expect(hba, 'bootstrap.pg_hba: &pg_hba, a list').not.toBeNull();
    const lines = hba![1]!.split('\n').flatMap((line) => (line.trim() === '' ? [] : [line.trim().slice(2)]));
    expect(lines).toEqual([
      'local all postgres peer',
      'host replication replicator 10.0.0.11/32 scram-sha-256',
      'host replication replicator 10.0.0.12/32 scram-sha-256',
      'host all postgres 10.0.0.11/32 scram-sha-256',
      'host all postgres 10.0.0.12/32 scram-sha-256',
      'host ordergate ordergate 10.0.1.0/24 scram-sha-256',
    ]);
    // postgresql.pg_hba, which Patroni writes on each member, is the same list.
    expect(patroni).toMatch(/^postgresql:\n(?: {2}.*\n)*? {2}pg_hba: \*pg_hba\b/m);
    expect(patroni).toMatch(/^ {4}synchronous_mode: true\b/m);
  });

  it('creates the ordergate role (with a password, taken from the environment) and its database, with psql against the leader', () => {
    const script = recipeBlock(markdown, 'create-ordergate.sh');
    expect(script).toContain(
      "psql 'host=10.0.0.11 port=5432 user=postgres dbname=postgres' -v ON_ERROR_STOP=1 <<'SQL'",
    );
    expect(script).toContain('\\getenv password ORDERGATE_DB_PASSWORD');
    expect(script).toContain("create role ordergate login password :'password';");
    expect(script).toContain('create database ordergate owner ordergate;');
    expect(markdown).toContain('DATABASE_URL=postgres://ordergate:PASSWORD@127.0.0.1:5000/ordergate');
  });

  it("says the State word of each Patroni version, which the failover test checks against the installed one's", () => {
    expect(markdown).toMatch(
      /State `running` under Debian 12's Patroni 3\.0\.2, or `streaming`\s+under Patroni 3\.0\.4 and later/,
    );
    expect(['3.0.2', '3.0.3', '3.0.4', '3.1.0', '4.0.4'].map(followingStandbyState)).toEqual([
      'running',
      'running',
      'streaming',
      'streaming',
      'streaming',
    ]);
  });
});
