/**
 * An acknowledged order survives a SIGKILL of its node: a crowd of clients bids through a real server
 * process (embedded OMS on), the process is killed mid-load, and a new one over the same database (the
 * run's dialect: a SQLite file, or PostgreSQL) finds every acknowledged order whole and sends each to the
 * simulated exchange exactly once. No order is left half-written, acknowledged or not.
 *
 * The restart waits for the outbox leases of the dead worker to run out (OMS_LEASE_MS, 3 s here rather than
 * production's 30 s): entries it held are taken again only then. The drain's bound, shorter than the
 * default lease, also shows that the processes take the setting.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { createTestDatabase, testDialect } from '../support/databases.js';
import { auditOrders, bidCrowd, eventually, killAll, login, openOutbox, seed, sleep, startNode } from './nodes.js';

afterAll(() => killAll());

const LEASE_MS = 3_000;

describe(`SIGKILL under load (${testDialect()})`, () => {
  it(
    'every acknowledged order is there once, whole, and reaches the exchange exactly once after a restart',
    { timeout: 90_000 },
    async () => {
      const database = await createTestDatabase('ordergate_kill');
      try {
        const users = await seed(database.databaseUrl, 6);
        const env = { DATABASE_URL: database.databaseUrl, OMS_LEASE_MS: String(LEASE_MS) };
        const first = await startNode('serve', env);
        const bidders = await Promise.all(users.map((user) => login(first.url, user)));

        const crowd = bidCrowd([first.url], bidders, 24);
        // Kill while the writes and the OMS are busy: after a good number of acknowledgements.
        expect(await eventually(async () => crowd.acknowledged().length >= 300, 30_000, 20)).toBe(true);
        first.child.kill('SIGKILL');
        expect((await first.exited).signal).toBe('SIGKILL');
        await crowd.stop();
        const acknowledged = crowd.acknowledged();
        const unanswered = crowd.outcomes.filter((outcome) => outcome.kind === 'no-answer').length;
        // Requests were in flight when the process died.
        expect(unanswered).toBeGreaterThan(0);
        expect(crowd.outcomes.filter((outcome) => outcome.kind === 'refused')).toEqual([]);

        const killedAt = Date.now();
        const second = await startNode('serve', env);
        const store = openStore(database.databaseUrl);
        try {
          // The new embedded worker finishes the outbox, once the dead one's leases have run out.
          const drained = await eventually(async () => (await openOutbox(store)) === 0, LEASE_MS + 20_000, 100);
          expect(drained, `outbox still open ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`).toBe(
            true,
          );

          const { orders } = await auditOrders(store);
          expect(new Set(acknowledged).size).toBe(acknowledged.length);
          for (const orderId of acknowledged)
            expect(orders.has(orderId), `acknowledged order ${orderId} is missing`).toBe(true);
          // Every order in the database, acknowledged or not (committed just before the kill), is whole and
          // reached the exchange exactly once.
          const faults = [...orders].filter(
            ([, order]) =>
              order.history < 2 ||
              order.outbox !== 1 ||
              order.placeEntries !== 1 ||
              order.exchangeRows !== 1 ||
              order.transmissions !== 1 ||
              order.status !== 'PENDING',
          );
          expect(faults).toEqual([]);
          expect(orders.size).toBeGreaterThanOrEqual(acknowledged.length);
          // What the test saw, for the report.
          process.stdout.write(
            `sigkill (${testDialect()}): ${acknowledged.length} acknowledged, ${orders.size} in the database, ${unanswered} requests unanswered at the kill, outbox drained ${Math.round((Date.now() - killedAt) / 1000)} s after it\n`,
          );
        } finally {
          await store.close();
          second.child.kill('SIGTERM');
          await second.exited;
        }
      } finally {
        killAll();
        await sleep(100);
        await database.dispose();
      }
    },
  );
});
