/**
 * Migration 0025 gives orders the member data order entry keeps on each (docs/design/member-data.md): an
 * order stored before it keeps none, and reads back with each field null.
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

it('leaves the member data of an order stored before it null', async () => {
  const database = await createTestDatabase('ordergate_order_member_migration');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateTo(store, '0024_member_data');
  await store.db
    .insertInto('users')
    .values({ user_id: 'old', password_hash: 'x', category: 'RETAIL', totp_secret: null, created_at: 0 })
    .execute();
  // The user's data is recorded; the order, placed before migration 0025, has none of its own.
  await store.db
    .updateTable('users')
    .set({ ucc: 'OLD1', pan: 'OLDPK1234O', custodian_code: 'C1' })
    .where('user_id', '=', 'old')
    .execute();
  await store.db
    .insertInto('orders')
    .values({
      order_id: 'before-0025',
      user_id: 'old',
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
      cancel_requested_at: null,
      traded_price_paise: null,
      exchange_order_id: null,
      funds_blocked_paise: null,
    })
    .execute();
  await migrateToLatest(store);
  const repository = new OrderRepository(store.db, store.dialect);
  const none = { ucc: null, clientType: null, custodianCode: null, pan: null };
  expect(await repository.find('before-0025')).toMatchObject({ orderId: 'before-0025', ...none });
  const locked = await store.writeTransaction((tx) => repository.lockOrders(tx, ['before-0025']));
  expect(locked.get('before-0025')).toMatchObject(none);
});
