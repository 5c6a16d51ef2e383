/**
 * Migration 0013 gives users the framework's categories: NON_RETAIL users become NII, everyone's margin
 * type is H, and an issue of the one-listing model still sees RETAIL and NON_RETAIL. Migration 0020 makes
 * the green-shoe decision a quantity.
 */
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateTo, migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createTestDatabase } from '../support/databases.js';

let store: Store | undefined;
let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await store?.close();
  await dispose?.();
});

it('turns NON_RETAIL users into NII with 100 % margin, and leaves RETAIL users as they were', async () => {
  const database = await createTestDatabase('ordergate_offers_migration');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateTo(store, '0012_operators');
  const user = (userId: string, category: string) => ({
    user_id: userId,
    password_hash: 'x',
    category,
    totp_secret: null,
    created_at: 0,
  });
  await store.db
    .insertInto('users')
    .values([user('r', 'RETAIL'), user('n', 'NON_RETAIL')])
    .execute();

  await migrateToLatest(store);

  const rows = await store.db
    .selectFrom('users')
    .select(['user_id', 'category', 'margin_type'])
    .orderBy('user_id')
    .execute();
  expect(rows).toEqual([
    { user_id: 'n', category: 'NII', margin_type: 'H' },
    { user_id: 'r', category: 'RETAIL', margin_type: 'H' },
  ]);
  const users = new UserRepository(store.db, store.dialect);
  expect(await users.find('n')).toMatchObject({ category: 'NON_RETAIL', offerCategory: 'NII', marginType: 'H' });
  expect(await users.find('r')).toMatchObject({ category: 'RETAIL', offerCategory: 'RETAIL', marginType: 'H' });

  expect(await users.setCategory('n', 'MF', 'T')).toBe(true);
  expect(await users.find('n')).toMatchObject({ category: 'NON_RETAIL', offerCategory: 'MF', marginType: 'T' });
  expect(await users.setCategory('nobody', 'MF', 'T')).toBe(false);
});

it('migration 0020 turns the green-shoe decision into shares: 1 is the whole option, 0 none; offers registered before allot at their T close', async () => {
  const database = await createTestDatabase('ordergate_offers_migration');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateTo(store, '0019_trading_holidays');
  const offer = (offerId: string, exercised: number) => ({
    offer_id: offerId,
    symbol: offerId,
    floor_price_paise: 10_000,
    tick_size_paise: 5,
    base_quantity: 1_000,
    green_shoe_quantity: 4_000_000_000,
    green_shoe_exercised: exercised,
    retail_reserve_pct: 10,
    retail_allocation_price: 'UNIFORM',
    employee_quantity: 0,
    allocation: 'PRICE_PRIORITY',
    t_opens_at: 1_000,
    t_closes_at: 2_000,
    t1_opens_at: 5_000,
    t1_closes_at: 6_000,
    updated_at: 0,
  });
  await store.db
    .insertInto('ofs_offers')
    .values([offer('ALL', 1), offer('NONE', 0)] as never)
    .execute();

  await migrateToLatest(store);

  const offers = new OfsOfferRepository(store.db);
  // 4,000,000,000 shares: past a 32-bit integer, as PostgreSQL's column now holds.
  expect((await offers.find('ALL'))!.offer).toMatchObject({
    greenShoeExercised: 4_000_000_000,
    greenShoeDecidedAt: null,
    greenShoeDecisionBy: 2_000,
    employeeGreenShoeQuantity: 0,
    printedPortions: null,
  });
  expect((await offers.find('NONE'))!.offer.greenShoeExercised).toBe(0);
});
