/**
 * Order events reach their readers in id order with no gap and no repeat, on both databases, although on
 * PostgreSQL nothing makes transactions commit in the order of their event ids any more (no global lock):
 * a reader goes only as far as the committed event horizon (src/store/orders/events.ts). Here two
 * transactions write events and the one with the smaller id stays open: the stream holds the later event
 * back until the earlier one commits, then sends both in order; a rolled-back transaction's ids are passed
 * over once it has ended. And the OMS does not wait for an open order-entry transaction of another user;
 * one user's transactions take their event ids (issue 21 row 9) one after another.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventHorizon } from '../../src/store/orders/events.js';
import { OrderRepository } from '../../src/store/orders/orders.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { createOmsWorker } from '../../src/wiring.js';
import { testDialect } from '../support/databases.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { openEventStream } from '../support/sse.js';
import { openTx } from '../../src/store/sql/write-tx.js';

const postgres = testDialect() === 'postgres';

describe('order event ids reach readers in order', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  /** A second connection pool to the same database: the writes of "another node". */
  let other: Store;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    other = openStore(server.store.location.startsWith('sqlite:') ? server.store.location : databaseUrlOf(server));
  });
  afterAll(async () => {
    await other.close();
    await server.close();
  });

  const bid = async (user: TestUser = alice) => {
    const placed = await server.call('POST', '/transactional/v1/orders/regular', {
      body: validBid({ quantity: '10' }),
      token: user.token,
      apiKey: user.apiKey,
    });
    expect(placed.status, placed.text).toBe(200);
    return placed.body.data.orderId as string;
  };

  /**
   * Appends a history row (an event) to the order in its own transaction, held open until `release`;
   * `eventId` is the row's id (its place in the feed), `userEventId` the id its user sees.
   */
  function holdEvent(store: Store, orderId: string, reason: string) {
    let release!: (commit: boolean) => void;
    const decided = new Promise<boolean>((resolve) => (release = resolve));
    let written!: (ids: { id: number; userEventId: number }) => void;
    const ids = new Promise<{ id: number; userEventId: number }>((resolve) => (written = resolve));
    const eventId = ids.then(({ id }) => id);
    const userEventId = ids.then(({ userEventId }) => userEventId);
    const orders = new OrderRepository(store.db, store.dialect);
    const done = store
      .writeTransaction(async (tx) => {
        const order = (await orders.lockOrders(tx, [orderId])).get(orderId)!;
        await orders.apply(
          tx,
          [{ before: order, after: order, reason, origin: { actor: 'test', requestId: null } }],
          server.clock.now,
        );
        const row = await openTx(tx)
          .trx.selectFrom('order_history')
          .select(['id', 'user_event_id'])
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirstOrThrow();
        written({ id: Number(row.id), userEventId: Number(row.user_event_id) });
        if (!(await decided)) throw new Error('rolled back by the test');
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error && error.message === 'rolled back by the test')) throw error;
      });
    return { eventId, userEventId, release, done };
  }

  it('takes events in id order up to the newest when nothing is under way', async () => {
    const orderId = await bid();
    const horizon = new EventHorizon(server.store.db, server.store.dialect);
    const start = await horizon.advance();
    const stream = await openEventStream(server.url, alice.token);
    const held = holdEvent(server.store, orderId, 'First');
    held.release(true);
    await held.done;
    const id = await held.eventId;
    expect(id).toBeGreaterThan(start);
    expect(await horizon.advance()).toBe(id);
    const userEventId = await held.userEventId;
    await stream.until(() => stream.events.some((e) => e.id === userEventId), 'the event');
    stream.close();
  });

  it.skipIf(!postgres)(
    "holds a later event back while an earlier one (another user's) is uncommitted, then sends both",
    async () => {
      const [first, second] = [await bid(alice), await bid(bob)];
      const aliceStream = await openEventStream(server.url, alice.token);
      const bobStream = await openEventStream(server.url, bob.token);
      const horizon = new EventHorizon(server.store.db, server.store.dialect);
      await horizon.advance();

      const early = holdEvent(server.store, first, 'Earlier id, committed last');
      const earlyId = await early.eventId;
      const late = holdEvent(other, second, 'Later id, committed first');
      const lateId = await late.eventId;
      expect(lateId).toBeGreaterThan(earlyId);
      late.release(true);
      await late.done;

      // Committed, but behind an uncommitted event: no reader may pass it yet.
      expect(await horizon.advance()).toBe(earlyId - 1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const lateUserId = await late.userEventId;
      expect(bobStream.events.map((e) => e.id)).not.toContain(lateUserId);

      early.release(true);
      await early.done;
      expect(await horizon.advance()).toBe(lateId);
      const earlyUserId = await early.userEventId;
      await aliceStream.until(() => aliceStream.events.some((e) => e.id === earlyUserId), "alice's event");
      await bobStream.until(() => bobStream.events.some((e) => e.id === lateUserId), "bob's event");
      expect(aliceStream.events.at(-1)!.data.reason).toBe('Earlier id, committed last');
      expect(bobStream.events.at(-1)!.data.reason).toBe('Later id, committed first');
      aliceStream.close();
      bobStream.close();
    },
  );

  it.skipIf(!postgres)(
    "numbers one user's events in the order of their rows: a second transaction of the user waits for the first",
    async () => {
      const [first, second] = [await bid(alice), await bid(alice)];
      const stream = await openEventStream(server.url, alice.token);
      const early = holdEvent(server.store, first, 'First of two');
      const earlyId = await early.eventId;
      const late = holdEvent(other, second, 'Second of two');
      // Its history row waits for alice's counter row, held by the open transaction.
      expect(
        await Promise.race([
          late.eventId.then(() => 'written'),
          new Promise((resolve) => setTimeout(() => resolve('waited'), 500)),
        ]),
      ).toBe('waited');
      early.release(true);
      await early.done;
      late.release(true);
      await late.done;
      expect(await late.eventId).toBeGreaterThan(earlyId);
      const [earlyUserId, lateUserId] = [await early.userEventId, await late.userEventId];
      expect(lateUserId).toBe(earlyUserId + 1);
      await stream.until(() => stream.events.some((e) => e.id === lateUserId), 'both events');
      expect(stream.events.slice(-2).map((e) => [e.id, e.data.reason])).toEqual([
        [earlyUserId, 'First of two'],
        [lateUserId, 'Second of two'],
      ]);
      stream.close();
    },
  );

  it.skipIf(!postgres)('passes over the ids of a transaction that rolled back, once it has ended', async () => {
    const [first, second] = [await bid(alice), await bid(bob)];
    const horizon = new EventHorizon(server.store.db, server.store.dialect);
    await horizon.advance();
    const stream = await openEventStream(server.url, bob.token);

    const doomed = holdEvent(server.store, first, 'Never committed');
    const doomedId = await doomed.eventId;
    const kept = holdEvent(other, second, 'Committed');
    const keptId = await kept.eventId;
    kept.release(true);
    await kept.done;
    expect(await horizon.advance()).toBe(doomedId - 1);

    doomed.release(false);
    await doomed.done;
    // Once every transaction older than the gap has ended: a snapshot's xmin is the whole cluster's, so a
    // transaction of another database (another test's) may hold the horizon a little longer.
    let horizonNow = await horizon.advance();
    for (
      const deadline = Date.now() + 15_000;
      horizonNow !== keptId && Date.now() < deadline;
      horizonNow = await horizon.advance()
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(horizonNow).toBe(keptId);
    await stream.until(() => stream.events.some((e) => e.data.reason === 'Committed'), 'the committed event');
    expect(stream.events.map((e) => e.data.reason)).not.toContain('Never committed');
    stream.close();
  });

  it.skipIf(!postgres)(
    'lets the OMS work beside an open transaction that changes another order (no global lock)',
    async () => {
      const oms = createOmsWorker(other, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
      const pending = await bid(alice);
      await oms.runOnce();
      const orderId = await bid(bob);
      const held = holdEvent(server.store, pending, "A change of another user's order, left open");
      await held.eventId;
      const outcome = await Promise.race([
        oms.runOnce().then(() => 'done'),
        new Promise((resolve) => setTimeout(() => resolve('waited'), 3_000)),
      ]);
      held.release(true);
      await held.done;
      expect(outcome).toBe('done');
      const status = await server.store.db
        .selectFrom('orders')
        .select('status')
        .where('order_id', '=', orderId)
        .executeTakeFirstOrThrow();
      expect(status.status).toBe('PENDING');
    },
  );
});

/** The PostgreSQL URL of the test server's own database (Store.location hides credentials; trust auth needs none). */
function databaseUrlOf(server: TestServer): string {
  const base = new URL(process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = new URL(server.store.location).pathname;
  return base.toString();
}
