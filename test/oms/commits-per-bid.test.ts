/**
 * The speed guard that does not depend on timing (docs/design/performance.md): 100 bids, placed together
 * and taken by the OMS to PENDING, cost a handful of commits, not one (or more) per bid; on PostgreSQL
 * also a handful of statements (each a round trip), not one per bid. A change that brings back a commit or
 * a round trip per bid fails here, on any machine.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import type { Caller } from '../../src/services/auth.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker, createServices, createSimulatedExchange } from '../../src/wiring.js';
import type { ExchangeAdapter } from '../../src/oms/exchange.js';
import type { OfsOrderRequest } from '../../src/schemas/orders.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { sbinIssue } from '../support/fixtures.js';
import { validBid } from '../support/server.js';
import { testMember, testMemberData } from '../support/member-data.js';

const BIDS = 100;
const HOUR = 60 * 60 * 1000;

describe('commits and statements per bid', () => {
  let database: TestDatabase;
  let store: Store;
  const statements: string[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_commits');
    store = openStore(database.databaseUrl, { onStatement: (sql) => statements.push(sql) });
    await migrateToLatest(store);
    const users = new UserRepository(store.db, store.dialect);
    const passwordHash = await TEST_PASSWORD_HASHER.hash('not-used-here');
    for (let i = 0; i < 10; i++) {
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
    await new OfsIssueRepository(store.db).upsert(
      [
        sbinIssue({
          nonRetailOpensAt: now - HOUR,
          nonRetailClosesAt: now + HOUR,
          retailOpensAt: now - HOUR,
          retailClosesAt: now + HOUR,
        }),
      ],
      now,
    );
  });
  afterAll(async () => {
    await store.close();
    await database.dispose();
  });

  const counted = async (work: () => Promise<unknown>) => {
    statements.length = 0;
    await work();
    const sqls = statements.map((sql) => sql.trim().toLowerCase());
    return {
      commits: sqls.filter((sql) => sql === 'commit').length,
      statements: sqls.length,
      // SQLite: the statements that take the users' event ids (PostgreSQL takes them inside its batch's one write).
      counterUpserts: sqls.filter((sql) => sql.startsWith('insert into user_event_counters')).length,
    };
  };

  /** BIDS bids of the ten users, placed together through order entry. */
  const placeTogether = () => {
    const { orderEntry } = createServices(store, { tokenTtlSeconds: 3600 });
    const callers: Caller[] = Array.from({ length: 10 }, (_, i) => ({
      userId: `user${i}`,
      category: i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL',
      member: testMember(`user${i}`, i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL'),
      tokenHash: 'not-used',
      expiresAt: Date.now() + HOUR,
    }));
    return Promise.all(
      Array.from({ length: BIDS }, (_, i) =>
        orderEntry.placeOfsBid(callers[i % 10]!, validBid({ quantity: '1' }) as OfsOrderRequest, null),
      ),
    );
  };

  const pendingCount = async () =>
    Number(
      (
        await store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '=', 'PENDING')
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('order entry: 100 bids that arrive together share one commit', async () => {
    const cost = await counted(placeTogether);
    expect(cost.commits).toBe(1);
    // SQLite runs a prepared statement per row (no round trip); PostgreSQL one statement per step: BEGIN with
    // the issue's read, the retail users' locks, their totals, all the writes (event ids included), COMMIT.
    if (store.dialect === 'postgres') expect(cost.statements).toBeLessThanOrEqual(6);
    else expect(cost.statements).toBeLessThanOrEqual(4 * BIDS + 12);
    // The ten users' event ids in one statement, not one per user.
    if (store.dialect === 'sqlite') expect(cost.counterUpserts).toBe(1);
  });

  it('the OMS with the simulated exchange: the same 100 bids reach PENDING in one commit', async () => {
    const oms = createOmsWorker(store, { logger: pino({ level: 'silent' }) });
    const cost = await counted(() => oms.runOnce());
    expect(await pendingCount()).toBe(BIDS);
    // The claim (one statement of its own), then admission, placement and settlement in one transaction.
    expect(cost.commits).toBe(1);
    if (store.dialect === 'postgres') expect(cost.statements).toBeLessThanOrEqual(17);
    else expect(cost.statements).toBeLessThanOrEqual(5 * BIDS + 40);
    // One per write of the orders' changes (admission and settlement), whatever the number of users.
    if (store.dialect === 'sqlite') expect(cost.counterUpserts).toBeLessThanOrEqual(2);
  });

  it('the OMS with an exchange outside the database: 100 more bids reach PENDING with a few commits for the whole batch', async () => {
    await placeTogether();
    const simulated = createSimulatedExchange(store, Date.now);
    // What an adapter to a real exchange offers: no placement inside our transaction.
    const remote: ExchangeAdapter = {
      findBids: (orderIds) => simulated.findBids(orderIds),
      placeBids: (bids) => simulated.placeBids(bids),
      modify: (orderId, terms) => simulated.modify(orderId, terms),
      cancel: (orderId) => simulated.cancel(orderId),
      carryForward: (orderId, terms) => simulated.carryForward(orderId, terms),
      pollEvents: () => simulated.pollEvents(),
      acknowledge: (eventIds) => simulated.acknowledge(eventIds),
    };
    const oms = createOmsWorker(store, { logger: pino({ level: 'silent' }), exchange: remote });
    const cost = await counted(() => oms.runOnce());
    expect(await pendingCount()).toBe(2 * BIDS);
    // Admit (EXXMITTED committed before the exchange is called), the exchange's placement, settle (with the outbox done).
    expect(cost.commits).toBe(3);
    if (store.dialect === 'postgres') expect(cost.statements).toBeLessThanOrEqual(24);
    else expect(cost.statements).toBeLessThanOrEqual(6 * BIDS + 40);
  });
});
