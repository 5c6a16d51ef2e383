/**
 * Several nodes on one PostgreSQL database: two API processes (OMS_EMBEDDED=false) and two `ordergate
 * oms` workers. Clients bid through both APIs at once; afterwards every acknowledged order exists exactly
 * once, is whole, and reached the simulated exchange exactly once: the outbox never handed one order to
 * two workers. PostgreSQL only (SQLite is one file on one machine).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { maintenanceProblem, maintenanceSettings } from '../../src/store/sql/health.js';
import { createPostgresDatabase, testDialect } from '../support/databases.js';
import { auditOrders, bidCrowd, eventually, killAll, login, openOutbox, seed, sleep, startNode } from './nodes.js';

afterAll(() => killAll());

describe.skipIf(testDialect() !== 'postgres')('two API nodes and two OMS workers on one PostgreSQL', () => {
  it('every acknowledged order exists once and went to the exchange exactly once', { timeout: 90_000 }, async () => {
    const database = await createPostgresDatabase('ordergate_nodes');
    try {
      const env = { DATABASE_URL: database.databaseUrl, OMS_EMBEDDED: 'false' };
      // The nodes start at once against the empty database (each migrates it first); the workers poll
      // fast, so that they compete for the same outbox entries.
      const [apiA, apiB, omsA, omsB] = await Promise.all([
        startNode('serve', env),
        startNode('serve', env),
        startNode('oms', { ...env, OMS_POLL_MS: '10' }),
        startNode('oms', { ...env, OMS_POLL_MS: '10' }),
      ]);
      const users = await seed(database.databaseUrl, 8);
      // Logged in on one node, a session works on the other: each user bids through both.
      const bidders = await Promise.all(users.map((user, i) => login(i % 2 === 0 ? apiA.url : apiB.url, user)));
      const loadStarted = Date.now();
      const crowd = bidCrowd([apiA.url, apiB.url], bidders, 32);
      expect(await eventually(async () => crowd.acknowledged().length >= 200, 40_000, 50)).toBe(true);
      await crowd.stop();
      const acknowledged = crowd.acknowledged();
      expect(crowd.outcomes.filter((outcome) => outcome.kind !== 'acknowledged')).toEqual([]);

      const store = openStore(database.databaseUrl);
      try {
        const loadMs = Date.now() - loadStarted;
        expect(await eventually(async () => (await openOutbox(store)) === 0, 30_000, 250)).toBe(true);
        const drainMs = Date.now() - loadStarted - loadMs;
        const { orders } = await auditOrders(store);
        expect(new Set(acknowledged).size).toBe(acknowledged.length);
        expect(orders.size).toBe(acknowledged.length);
        for (const orderId of acknowledged) expect(orders.has(orderId), orderId).toBe(true);
        const faults = [...orders].filter(
          ([, order]) =>
            order.status !== 'PENDING' ||
            order.history !== 3 ||
            order.outbox !== 1 ||
            order.exchangeRows !== 1 ||
            order.transmissions !== 1,
        );
        expect(faults).toEqual([]);

        // Each process warned at its start exactly when the server does not vacuum (src/store/sql/health.ts).
        const problem = maintenanceProblem((await maintenanceSettings(store))!);
        for (const node of [apiA, apiB, omsA, omsB])
          expect(node.stderr().includes(`"msg":"${problem}"`)).toBe(problem !== null);

        // Both workers took part (the outbox records who finished each entry).
        const byWorker = await store.db
          .selectFrom('outbox')
          .select(['claimed_by'])
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .groupBy('claimed_by')
          .execute();
        expect(byWorker.map((row) => row.claimed_by).filter((worker) => worker !== null)).toHaveLength(2);
        process.stdout.write(
          `multi-node: ${acknowledged.length} acknowledged through two APIs in ${loadMs} ms, outbox drained ${drainMs} ms later, entries per worker ${JSON.stringify(byWorker.map((row) => Number(row.n)))}\n`,
        );
      } finally {
        await store.close();
      }
      for (const node of [apiA, apiB, omsA, omsB]) node.child.kill('SIGTERM');
      const exits = await Promise.all([apiA, apiB, omsA, omsB].map((node) => node.exited));
      expect(exits.map((exit) => exit.code)).toEqual([0, 0, 0, 0]);
    } finally {
      killAll();
      await sleep(100);
      await database.dispose();
    }
  });
});
