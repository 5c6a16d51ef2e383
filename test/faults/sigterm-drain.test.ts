/**
 * Graceful shutdown: a SIGTERM that arrives while bids are in flight lets every request the
 * server took finish. Each answer that arrives is complete (a 200 with its order id, or the 503 e-503
 * envelope for a request that came in after the shutdown began); each 200'd order is in the database;
 * and no request that went unanswered (a connection refused or closed before its answer) left an order
 * behind. The process then exits with code 0. Runs on the run's dialect.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { createTestDatabase, testDialect } from '../support/databases.js';
import { auditOrders, bidCrowd, eventually, killAll, login, ordersWithIdentifiers, seed, startNode } from './nodes.js';

afterAll(() => killAll());

describe(`SIGTERM drains in-flight requests (${testDialect()})`, () => {
  it(
    'every answered request got a whole answer, every 200 is stored, no unanswered request left an order',
    { timeout: 60_000 },
    async () => {
      const database = await createTestDatabase('ordergate_drain');
      try {
        const users = await seed(database.databaseUrl, 4);
        const server = await startNode('serve', { DATABASE_URL: database.databaseUrl });
        const bidders = await Promise.all(users.map((user) => login(server.url, user)));

        // Clients bid without a pause, so that requests are always in flight; each stops at its first
        // request without an answer (the server has stopped listening).
        const crowd = bidCrowd([server.url], bidders, 40);
        expect(await eventually(async () => crowd.acknowledged().length >= 50, 20_000, 5)).toBe(true);
        server.child.kill('SIGTERM');
        const exit = await server.exited;
        expect(exit).toEqual({ code: 0, signal: null });
        await crowd.stop();
        const all = crowd.outcomes;

        const acknowledged = all.filter((outcome) => outcome.kind === 'acknowledged');
        const refused = all.filter((outcome) => outcome.kind === 'refused');
        const unanswered = all.filter((outcome) => outcome.kind === 'no-answer');
        // Only two whole answers exist: the order's 200, or 503 e-503 after the shutdown began.
        expect(refused.filter((outcome) => outcome.status !== 503 || outcome.code !== 'e-503')).toEqual([]);
        expect(acknowledged.length).toBeGreaterThanOrEqual(50);

        const store = openStore(database.databaseUrl);
        try {
          const { orders } = await auditOrders(store);
          for (const outcome of acknowledged) {
            const order = orders.get(outcome.orderId);
            expect(order, `acknowledged order ${outcome.orderId} is missing`).toBeDefined();
            expect(order!.history).toBeGreaterThanOrEqual(1);
            expect(order!.outbox).toBe(1);
          }
          // A request that was taken always got its answer: none without one left an order behind, and
          // every stored order was acknowledged.
          expect(
            await ordersWithIdentifiers(
              store,
              [...refused, ...unanswered].map((outcome) => outcome.identifier),
            ),
          ).toEqual([]);
          expect(orders.size).toBe(acknowledged.length);
          process.stdout.write(
            `sigterm (${testDialect()}): ${acknowledged.length} acknowledged and stored, ${refused.length} answered 503 e-503, ${unanswered.length} without an answer (${[...new Set(unanswered.map((o) => (o.kind === 'no-answer' ? o.error.slice(0, 60) : '')))].join(' | ')})\n`,
          );
        } finally {
          await store.close();
        }
      } finally {
        killAll();
        await database.dispose();
      }
    },
  );
});
