/**
 * Migration 0008 fills in the trades of orders allotted before it ran: one per EXECUTED order with an
 * allotment, settling T+1 at 09:00 India time; other orders get none.
 */
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateTo, migrateToLatest } from '../../src/store/schema/migrations.js';
import { createTestDatabase } from '../support/databases.js';

let store: Store | undefined;
let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await store?.close();
  await dispose?.();
});

it('turns each allotted order into a trade that settles T+1 at 09:00 India time', async () => {
  const database = await createTestDatabase('ordergate_trades_migration');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateTo(store, '0007_funds');
  await store.db
    .insertInto('users')
    .values({ user_id: 'u', password_hash: 'x', category: 'RETAIL', totp_secret: null, created_at: 0 })
    .execute();
  const allottedAt = Date.parse('2026-11-23T20:00:00+05:30');
  const order = (orderId: string, status: string, traded: number, price: number | null) => ({
    order_id: orderId,
    user_id: 'u',
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
    traded_quantity: traded,
    status,
    error_reason: null,
    order_identifier: 'tag',
    algo_id: null,
    strategy_id: null,
    part_code: null,
    vender_code: null,
    request_id: null,
    created_at: allottedAt - 1000,
    updated_at: allottedAt,
    category: 'RETAIL',
    cancel_requested_at: null,
    traded_price_paise: price,
    exchange_order_id: `X-${orderId}`,
    funds_blocked_paise: null,
  });
  await store.db
    .insertInto('orders')
    .values([order('a', 'EXECUTED', 7, 10_100), order('b', 'CANCELLED', 0, null), order('c', 'PENDING', 0, null)])
    .execute();

  await migrateToLatest(store);

  const trades = await store.db.selectFrom('trades').selectAll().execute();
  expect(
    trades.map((t) => ({
      ...t,
      scrip_token: Number(t.scrip_token),
      quantity: Number(t.quantity),
      price_paise: Number(t.price_paise),
      traded_at: Number(t.traded_at),
      settles_at: Number(t.settles_at),
    })),
  ).toEqual([
    {
      trade_id: 'T-a',
      order_id: 'a',
      user_id: 'u',
      exchange: 'NSE_EQ',
      scrip_token: 500112,
      symbol: 'SBIN',
      series: 'OF',
      transaction_type: 'BUY',
      product_type: 'OFS',
      quantity: 7,
      price_paise: 10_100,
      traded_at: allottedAt,
      settles_at: Date.parse('2026-11-24T09:00:00+05:30'),
      exchange_order_id: 'X-a',
      order_identifier: 'tag',
    },
  ]);
});
