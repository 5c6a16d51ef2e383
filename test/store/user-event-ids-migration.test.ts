/**
 * Migration 0016 numbers the order events already stored per user (issue 21 row 9): each user's n-th
 * event, in the order of the history rows, gets n, and the user's counter stands at their last; the
 * next event written goes on from there.
 */
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateTo, migrateToLatest } from '../../src/store/schema/migrations.js';
import { OrderRepository } from '../../src/store/orders/orders.js';
import { createTestDatabase } from '../support/databases.js';

let store: Store | undefined;
let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await store?.close();
  await dispose?.();
});

it("numbers each user's stored events 1, 2, 3, ... in row order, and goes on from there", async () => {
  const database = await createTestDatabase('ordergate_user_event_ids_migration');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateTo(store, '0015_session_endings');
  for (const userId of ['alice', 'bob']) {
    await store.db
      .insertInto('users')
      .values({ user_id: userId, password_hash: 'x', category: 'RETAIL', totp_secret: null, created_at: 0 })
      .execute();
  }
  const order = (orderId: string, userId: string) => ({
    order_id: orderId,
    user_id: userId,
    exchange: 'NSE_EQ',
    scrip_token: 500112,
    symbol: 'SBIN',
    series: 'OF',
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: 'RL',
    quantity: 10,
    price_paise: 10_150,
    disclosed_quantity: 0,
    traded_quantity: 0,
    status: 'PENDING',
    error_reason: null,
    order_identifier: null,
    algo_id: null,
    strategy_id: null,
    part_code: null,
    vender_code: null,
    request_id: null,
    created_at: 1,
    updated_at: 1,
    category: 'RETAIL',
    cancel_requested_at: null,
    traded_price_paise: null,
    exchange_order_id: null,
    funds_blocked_paise: null,
  });
  await store.db
    .insertInto('orders')
    .values([order('a1', 'alice'), order('b1', 'bob'), order('a2', 'alice')])
    .execute();
  // Interleaved: alice, bob, alice, alice, bob.
  const history = (orderId: string, reason: string) => ({
    order_id: orderId,
    status: 'PENDING',
    reason,
    quantity: 10,
    price_paise: 10_150,
    traded_quantity: 0,
    at: 1,
    actor: null,
    request_id: null,
  });
  for (const [orderId, reason] of [
    ['a1', 'a-1'],
    ['b1', 'b-1'],
    ['a2', 'a-2'],
    ['a1', 'a-3'],
    ['b1', 'b-2'],
  ] as const) {
    await store.db
      .insertInto('order_history')
      .values(history(orderId, reason) as never)
      .execute();
  }

  await migrateToLatest(store);

  const rows = await store.db
    .selectFrom('order_history')
    .select(['reason', 'user_id', 'user_event_id'])
    .orderBy('id')
    .execute();
  expect(rows.map((r) => [r.reason, r.user_id, Number(r.user_event_id)])).toEqual([
    ['a-1', 'alice', 1],
    ['b-1', 'bob', 1],
    ['a-2', 'alice', 2],
    ['a-3', 'alice', 3],
    ['b-2', 'bob', 2],
  ]);
  const counters = await store.db.selectFrom('user_event_counters').selectAll().orderBy('user_id').execute();
  expect(counters.map((c) => [c.user_id, Number(c.last_event_id)])).toEqual([
    ['alice', 3],
    ['bob', 2],
  ]);

  // The next events of a batch: alice's 4th and 5th, bob's 3rd.
  const orders = new OrderRepository(store.db, store.dialect);
  const [a1, b1] = [(await orders.find('a1'))!, (await orders.find('b1'))!];
  const origin = { actor: 'test', requestId: null };
  await store.writeTransaction((tx) =>
    orders.apply(
      tx,
      [
        { before: a1, after: a1, reason: 'a-4', origin },
        { before: b1, after: b1, reason: 'b-3', origin },
        { before: a1, after: a1, reason: 'a-5', origin },
      ],
      2,
    ),
  );
  const next = await store.db
    .selectFrom('order_history')
    .select(['reason', 'user_event_id'])
    .where('at', '=', 2)
    .orderBy('id')
    .execute();
  expect(next.map((r) => [r.reason, Number(r.user_event_id)])).toEqual([
    ['a-4', 4],
    ['b-3', 3],
    ['a-5', 5],
  ]);
});
