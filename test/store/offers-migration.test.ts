/**
 * Migration 0013 gives users the framework's categories: NON_RETAIL users become NII, everyone's margin
 * type is H, and an issue of the one-listing model still sees RETAIL and NON_RETAIL.
 */
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { migrateTo, migrateToLatest } from '../../src/store/migrations.js';
import { UserRepository } from '../../src/store/users.js';
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
  const user = (userId: string, category: string) => ({ user_id: userId, password_hash: 'x', category, totp_secret: null, created_at: 0 });
  await store.db
    .insertInto('users')
    .values([user('r', 'RETAIL'), user('n', 'NON_RETAIL')])
    .execute();

  await migrateToLatest(store);

  const rows = await store.db.selectFrom('users').select(['user_id', 'category', 'margin_type']).orderBy('user_id').execute();
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
