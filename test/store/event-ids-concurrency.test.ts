/**
 * Per-user event ids under concurrent writers (docs/events.md; OrderRepository.reserveEventIds): two nodes'
 * order entry and two OMS workers write the same users' orders side by side, retail totals included. Every
 * transaction finishes (no wait in a circle), and each user's events are numbered 1, 2, 3... without gap or
 * repeat, in the order of their rows' ids (the order the event feed reads them in).
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/services/auth.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker, createServices } from '../../src/wiring.js';
import type { OfsOrderRequest } from '../../src/schemas/orders.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { openIssue, validBid } from '../support/server.js';
import { testMember, testMemberData } from '../support/member-data.js';

const USERS = 6;
const HOUR = 60 * 60 * 1000;

describe('per-user event ids with two nodes and two OMS workers writing at once', () => {
  let database: TestDatabase;
  let nodes: Store[];

  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_event_ids');
    nodes = [openStore(database.databaseUrl), openStore(database.databaseUrl)];
    const users = new UserRepository(nodes[0]!.db, nodes[0]!.dialect);
    const passwordHash = await TEST_PASSWORD_HASHER.hash('not-used-here');
    for (let i = 0; i < USERS; i++) {
      await users.create({
        userId: `user${i}`,
        passwordHash,
        category: i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL',
        totpSecret: null,
        now: Date.now(),
        member: testMemberData(`user${i}`),
      });
    }
    const now = Date.now();
    await new OfsIssueRepository(nodes[0]!.db).upsert([openIssue(now)], now);
  });
  afterAll(async () => {
    for (const node of nodes ?? []) await node.close();
    await database?.dispose();
  });

  it('numbers each user’s events without gap, in id order, and every transaction finishes', async () => {
    const entries = nodes.map((node) => createServices(node, { tokenTtlSeconds: 3600 }).orderEntry);
    const workers = nodes.map((node) => createOmsWorker(node, { logger: pino({ level: 'silent' }) }));
    const caller = (i: number): Caller => ({
      userId: `user${i % USERS}`,
      category: i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL',
      member: testMember(`user${i % USERS}`, i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL'),
      tokenHash: 'not-used',
      expiresAt: Date.now() + HOUR,
    });
    const runOms = () => Promise.all(workers.map((worker) => worker.runOnce()));

    const placed: { caller: Caller; orderId: string }[] = [];
    for (let round = 0; round < 4; round++) {
      const bids = Array.from({ length: 40 }, async (_, i) => {
        const who = caller(i);
        const orderId = await entries[i % 2]!.placeOfsBid(who, validBid({ quantity: '1' }) as OfsOrderRequest, null);
        placed.push({ caller: who, orderId });
      });
      // Cancels of the last round's bids (a retail total falls) while new bids raise the same users' totals
      // and the OMS admits, places and settles what is queued: the same users' rows, from four writers.
      const cancels = placed
        .splice(0)
        .filter((_, i) => i % 4 === 0)
        .map(({ caller: who, orderId }, i) => entries[(i + 1) % 2]!.cancelOrder(who, 'NSE_EQ', orderId, null));
      await Promise.all([...bids, ...cancels, runOms()]);
    }
    while ((await runOms()).some((done) => done > 0));

    const history = await nodes[0]!.db
      .selectFrom('order_history')
      .select(['id', 'user_id', 'user_event_id'])
      .orderBy('id')
      .execute();
    const counters = await nodes[0]!.db
      .selectFrom('user_event_counters')
      .select(['user_id', 'last_event_id'])
      .execute();
    const statuses = await nodes[0]!.db
      .selectFrom('orders')
      .select('status')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy('status')
      .orderBy('status')
      .execute();
    expect(statuses.map((row) => [row.status, Number(row.n)])).toEqual([
      ['CANCELLED', 30],
      ['PENDING', 130],
    ]);
    // Three events at least per bid: queued, then sent and accepted, or a cancellation asked and done.
    expect(history.length).toBeGreaterThanOrEqual(160 * 3);
    for (let i = 0; i < USERS; i++) {
      const ids = history.filter((row) => row.user_id === `user${i}`).map((row) => Number(row.user_event_id));
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(ids.map((_, n) => n + 1));
      expect(Number(counters.find((row) => row.user_id === `user${i}`)?.last_event_id)).toBe(ids.length);
    }
  });
});
