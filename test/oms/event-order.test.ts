/**
 * Order events become visible in the order of their ids, on both databases: a transaction that changes
 * orders (the OMS worker's as much as order entry's) cannot commit history rows while an earlier one is
 * still open. Otherwise a stream's poller that has read id 11 would never see id 10 committed later.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderRepository } from '../../src/store/orders.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

describe('order event ids follow commit order', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
  });
  afterAll(async () => {
    await server.close();
  });

  const historyIds = async () =>
    (await server.store.readDb.selectFrom('order_history').select('id').orderBy('id').execute()).map((row) => Number(row.id));

  it('an OMS transaction waits for an open order-changing transaction, and its events get later ids', async () => {
    const placed = await server.call('POST', '/transactional/v1/orders/regular', { body: validBid({ quantity: '10' }), token: alice.token, apiKey: alice.apiKey });
    expect(placed.status, placed.text).toBe(200);
    const orderId = placed.body.data.orderId as string;
    const before = await historyIds();

    // A transaction that writes an event and stays open, as a slow order-entry commit would.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const written = new Promise<void>((resolve) => (inside = resolve));
    let heldId = 0;
    const orders = new OrderRepository(server.store.db, server.store.dialect);
    const open = server.store.db.transaction().execute(async (trx) => {
      await orders.holdOrderEntry(trx);
      await orders.appendHistory(trx, orderId, 'Held open by the test', server.clock.now);
      const row = await trx.selectFrom('order_history').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
      heldId = Number(row.id);
      inside();
      await held;
    });
    await written;

    const oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    let passDone = false;
    const pass = oms.runOnce().then(() => (passDone = true));
    await new Promise((resolve) => setTimeout(resolve, 750));
    // Nothing the worker does is committed beside the open transaction.
    expect(passDone).toBe(false);
    expect(await historyIds()).toEqual(before);

    release();
    await open;
    await pass;
    const after = (await historyIds()).filter((id) => !before.includes(id));
    // The held event, then the worker's (EXXMITTED, PENDING), all after it.
    expect(after[0]).toBe(heldId);
    expect(after.length).toBe(3);
    expect(after.slice(1).every((id) => id > heldId)).toBe(true);
  });
});
