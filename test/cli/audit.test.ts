/**
 * `ordergate audit` as an operator runs it: the built bin over a SQLite file that a real server and the
 * OMS worker have written (an order placed, sent to the exchange, cancelled; another user's refused and
 * accepted bids). The trail merges the requests and the order changes in time order, and its filters hold.
 * `audit archive` and `audit verify-archive`, on SQLite and on PostgreSQL: the old records go to a file the
 * database vouches for, and leave the trail.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPostgresDatabase,
  createSqliteDatabase,
  TEST_POSTGRES_URL,
  type TestDatabase,
} from '../support/databases.js';
import { tcpReachable } from '../support/tcp-probe.js';
import { startTestServer, validBid, type CallResult, type TestUser } from '../support/server.js';
import { createOmsWorker } from '../../src/wiring.js';
import { expectOneLineFailure, fieldsOf, runOrdergate } from './run-ordergate.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const T0 = Date.parse('2026-11-23T05:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let database: TestDatabase;
let alice: TestUser;
let bob: TestUser;
let aliceOrder: string;
let bobOrder: string;
let placed: CallResult;
let cancelled: CallResult;
let bobRefused: CallResult;
let bobPlaced: CallResult;

const requestId = (res: CallResult) => res.headers.get('request-id')!;

beforeAll(async () => {
  database = createSqliteDatabase();
  const server = await startTestServer({ databaseUrl: database.databaseUrl, now: T0 });
  try {
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    const worker = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });

    placed = await server.call('POST', PLACE_ORDER, { body: validBid(), ...as(alice) });
    aliceOrder = placed.body.data.orderId;
    server.clock.now = T0 + 1000;
    await worker.runOnce();
    server.clock.now = T0 + 2000;
    bobRefused = await server.call('POST', PLACE_ORDER, { body: validBid({ price: 99 }), ...as(bob) });
    bobPlaced = await server.call('POST', PLACE_ORDER, { body: validBid({ quantity: '5' }), ...as(bob) });
    bobOrder = bobPlaced.body.data.orderId;
    server.clock.now = T0 + 3000;
    cancelled = await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/${aliceOrder}`, as(alice));
    server.clock.now = T0 + 4000;
    await worker.runOnce();
    expect([placed.status, bobRefused.status, bobPlaced.status, cancelled.status]).toEqual([200, 422, 200, 200]);
  } finally {
    // Closing the server writes the request records still queued.
    await server.close();
  }
});
afterAll(() => database.dispose());

const audit = (args: string[]) => runOrdergate(['audit', ...args], { env: { DATABASE_URL: database.databaseUrl } });

async function auditJson(args: string[]): Promise<Record<string, unknown>[]> {
  const result = await audit([...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout === ''
    ? []
    : result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
}

describe('ordergate audit', () => {
  it("--order: the order's whole trail in time order, requests beside the changes they made, with who made each", async () => {
    const trail = await auditJson(['--order', aliceOrder]);
    expect(
      trail.map((entry) => [
        entry.at,
        entry.kind,
        entry.kind === 'request' ? entry.user_id : entry.actor,
        entry.request_id,
        entry.status,
      ]),
    ).toEqual([
      [at(0), 'request', 'alice', requestId(placed), 200],
      [at(0), 'order_change', 'alice', requestId(placed), 'OMSXMITTED'],
      [at(1), 'order_change', 'oms', null, 'EXXMITTED'],
      [at(1), 'order_change', 'exchange', null, 'PENDING'],
      [at(3), 'request', 'alice', requestId(cancelled), 200],
      [at(3), 'order_change', 'alice', requestId(cancelled), 'PENDING'],
      [at(4), 'order_change', 'exchange', null, 'CANCELLED'],
    ]);
    expect(trail[0]).toEqual({
      kind: 'request',
      at: at(0),
      request_id: requestId(placed),
      user_id: 'alice',
      client_address: '127.0.0.1',
      method: 'POST',
      route: PLACE_ORDER,
      path: PLACE_ORDER,
      path_cut: null,
      status: 200,
      code: 's-101',
      order_id: aliceOrder,
      ordercart_id: null,
      body: validBid(),
      body_cut: null,
    });
    expect(trail[4]).toMatchObject({
      method: 'DELETE',
      path: `${PLACE_ORDER}/NSE_EQ/${aliceOrder}`,
      code: 's-101',
      order_id: aliceOrder,
      body: null,
    });
    expect(trail[5]).toMatchObject({
      order_id: aliceOrder,
      user_id: 'alice',
      reason: 'Cancellation requested by the user',
      quantity: 10,
      price: '101.50',
      traded_quantity: 0,
    });
  });

  it("--user: the user's requests, refused ones too, and the changes of the user's orders; nobody else's", async () => {
    const trail = await auditJson(['--user', 'bob']);
    expect(
      trail.map((entry) => [
        entry.at,
        entry.kind,
        entry.status,
        entry.kind === 'request' ? entry.code : entry.order_id,
      ]),
    ).toEqual([
      [at(2), 'request', 422, bobRefused.body.code],
      [at(2), 'request', 200, 's-101'],
      [at(2), 'order_change', 'OMSXMITTED', bobOrder],
      [at(4), 'order_change', 'EXXMITTED', bobOrder],
      [at(4), 'order_change', 'PENDING', bobOrder],
    ]);
    expect(trail.every((entry) => entry.user_id === 'bob')).toBe(true);
    expect(trail[0]).toMatchObject({
      request_id: requestId(bobRefused),
      order_id: null,
      body: validBid({ price: 99 }),
    });
  });

  it('--request-id: the request and the change it made', async () => {
    const trail = await auditJson(['--request-id', requestId(cancelled)]);
    expect(trail.map((entry) => [entry.kind, entry.request_id, entry.order_id])).toEqual([
      ['request', requestId(cancelled), aliceOrder],
      ['order_change', requestId(cancelled), aliceOrder],
    ]);
  });

  it('--since and --until select a time range (since inclusive, until exclusive); filters combine', async () => {
    const range = await auditJson(['--since', at(3), '--until', at(4)]);
    expect(range.map((entry) => [entry.at, entry.kind, entry.request_id])).toEqual([
      [at(3), 'request', requestId(cancelled)],
      [at(3), 'order_change', requestId(cancelled)],
    ]);
    const bobLater = await auditJson(['--user', 'bob', '--since', '2026-11-23T05:00:03+00:00']);
    expect(bobLater.map((entry) => entry.status)).toEqual(['EXXMITTED', 'PENDING']);
    expect(await auditJson(['--until', at(0)])).toEqual([]);
  });

  it('--limit keeps the newest entries, still oldest first; the default shows them all here', async () => {
    const all = await auditJson([]);
    expect(all).toHaveLength(7 + 5);
    expect(all.map((entry) => entry.at)).toEqual([...all.map((entry) => entry.at as string)].sort());
    expect(await auditJson(['--limit', '2'])).toEqual(all.slice(-2));
  });

  it('prints a readable table without --json', async () => {
    const result = await audit(['--order', aliceOrder]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1 + 7);
    expect(lines[0]).toMatch(/^AT\s+KIND\s+WHO\s+ADDRESS\s+REQUEST_ID\s+ORDER\s+WHAT$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^2026-11-23T05:00:00Z\\s+request\\s+alice\\s+127\\.0\\.0\\.1\\s+${requestId(placed)}\\s+${aliceOrder}\\s+POST ${PLACE_ORDER} -> 200 s-101$`,
      ),
    );
    expect(lines[7]).toMatch(
      new RegExp(
        `^2026-11-23T05:00:04Z\\s+order\\s+exchange\\s+-\\s+-\\s+${aliceOrder}\\s+CANCELLED \\(qty 10 price 101\\.50 traded 0\\): `,
      ),
    );
  });

  it('stores and shows no credential', async () => {
    const everything = (await audit(['--json'])).stdout + (await audit([])).stdout;
    expect(everything).toContain('alice');
    for (const secret of [alice.password, alice.apiKey, alice.token, bob.apiKey, bob.token])
      expect(everything).not.toContain(secret);
  });

  it('nothing matching: nothing on stdout, exit 0; a bad filter: exit 1 with one line', async () => {
    const none = await audit(['--user', 'nobody']);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    for (const args of [
      ['--since', 'yesterday'],
      ['--until', '2026-11-23T05:00:00'],
      ['--limit', '0'],
      ['--limit', 'ten'],
    ]) {
      const bad = await audit(args);
      expect(bad.code, args.join(' ')).toBe(1);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toMatch(/^ordergate: [^\n]+\n$/);
    }
  });
});

const postgresReachable = await tcpReachable(new URL(TEST_POSTGRES_URL), 5432);

describe.each([
  { dialect: 'sqlite', create: async () => createSqliteDatabase() },
  { dialect: 'postgres', create: () => createPostgresDatabase() },
])('ordergate audit archive and verify-archive ($dialect)', ({ dialect, create }) => {
  const skip = dialect === 'postgres' && !postgresReachable;
  let db: TestDatabase;
  let dir: string;
  let early: CallResult[];
  let late: CallResult;

  beforeAll(async () => {
    if (skip) return;
    db = await create();
    dir = mkdtempSync(join(tmpdir(), 'ordergate-archive-cli-'));
    const server = await startTestServer({ databaseUrl: db.databaseUrl, now: T0 });
    try {
      await server.registerIssue();
      const carol = await server.createUser('carol');
      const as = { token: carol.token, apiKey: carol.apiKey };
      early = [await server.call('POST', PLACE_ORDER, { body: validBid(), ...as })];
      server.clock.now = T0 + 1000;
      early.push(await server.call('POST', PLACE_ORDER, { body: validBid({ price: 99 }), ...as }));
      server.clock.now = T0 + 2 * 3_600_000;
      late = await server.call('POST', PLACE_ORDER, { body: validBid({ quantity: '3' }), ...as });
    } finally {
      await server.close();
    }
  });
  afterAll(async () => {
    if (skip) return;
    await db.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[]) => runOrdergate(['audit', ...args], { env: { DATABASE_URL: db.databaseUrl } });
  const trailIds = async () => {
    const result = await run(['--json']);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout
      .trimEnd()
      .split('\n')
      .filter((line) => line.includes('"kind":"request"'))
      .map((line) => JSON.parse(line).request_id);
  };

  it.skipIf(skip)(
    'archives the records before a date to a file, removes exactly them, and the file verifies against the database',
    async () => {
      const file = join(dir, 'audit-2026-11-23.jsonl');
      expect(late.status, late.text).toBe(200);
      const archived = await run(['archive', '--before', '2026-11-23T06:00:00Z', '--to', file]);
      expect(archived.code, archived.stderr).toBe(0);
      const fields = fieldsOf(archived.stdout);
      const bytes = readFileSync(file);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      expect(fields).toMatchObject({
        archived: file,
        digest_file: `${file}.sha256`,
        rows: '2',
        before: '2026-11-23T06:00:00Z',
        digest: sha256,
      });
      // What `sha256sum -c` reads.
      expect(readFileSync(`${file}.sha256`, 'utf8')).toBe(`${sha256}  audit-2026-11-23.jsonl\n`);
      const lines = bytes
        .toString('utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.slice(1, -1).map((line) => [line.request_id, line.user_id, line.status_code])).toEqual(
        early.map((res) => [res.headers.get('request-id'), 'carol', res.status]),
      );

      // The trail keeps the later record alone; the order changes (the orders' own history) stay.
      expect(await trailIds()).toEqual([late.headers.get('request-id')]);
      const changes = await run(['--json', '--user', 'carol']);
      expect(changes.stdout.split('\n').filter((line) => line.includes('"kind":"order_change"'))).toHaveLength(2);

      const verified = await run(['verify-archive', file]);
      expect(verified.code, verified.stderr).toBe(0);
      expect(fieldsOf(verified.stdout)).toEqual({
        verified: file,
        rows: '2',
        first_id: fields.first_id,
        last_id: fields.last_id,
        before: '2026-11-23T06:00:00Z',
        archived_at: fields.archived_at,
        digest: sha256,
      });

      // A record changed in the file: the database has no archive with that digest.
      const forged = join(dir, 'forged.jsonl');
      writeFileSync(forged, bytes.toString('utf8').replace('"carol"', '"mallory"'));
      expectOneLineFailure(await run(['verify-archive', forged]), /not an archive this database made/);
      // Nothing left before the date: no file; the same file again: refused, nothing removed.
      const again = await run(['archive', '--before', '2026-11-23T06:00:00Z', '--to', join(dir, 'again.jsonl')]);
      expect(again).toMatchObject({ code: 0, stdout: '' });
      expect(again.stderr).toMatch(/nothing archived/);
      expectOneLineFailure(await run(['archive', '--before', '2026-11-24', '--to', file]), /exists/);
      expect(await trailIds()).toEqual([late.headers.get('request-id')]);
      expectOneLineFailure(await run(['archive', '--to', join(dir, 'x.jsonl')]), /--before/);
    },
  );
});
