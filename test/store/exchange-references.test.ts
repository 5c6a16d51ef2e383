/**
 * The short references of our bids on BSE's narrow wire (migration 0028): one per order and exchange, the
 * same when asked again (by any worker), read back to their orders, never longer than iBBS's CP code (16)
 * and of the characters it takes. On both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REFERENCE_PATTERN } from '../../src/oms/links/bse-ibbs/mapping.js';
import {
  ExchangeReferenceRepository,
  idOfShortReference,
  shortReferenceOf,
} from '../../src/store/orders/exchange-references.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { createMigratedTestDatabase } from '../support/databases.js';

let store: Store;
let dispose: () => Promise<void>;
beforeEach(async () => {
  const database = await createMigratedTestDatabase('ordergate_xrefs');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
});
afterEach(async () => {
  await store.close();
  await dispose();
});

const ORDERS = ['0193-a', '0193-b', '0193-c'];

describe('exchange references', () => {
  it('gives one per order and exchange, the same when asked again, and reads it back to its order', async () => {
    const references = new ExchangeReferenceRepository(store.db);
    const first = await references.referencesOf('BSE_EQ', ORDERS);
    expect([...first.keys()].sort()).toEqual(ORDERS);
    expect(new Set(first.values()).size).toBe(3);
    for (const reference of first.values()) expect(reference).toMatch(REFERENCE_PATTERN);

    // Asked again, with one more, by another repository (another worker): the same, and one new.
    const again = await new ExchangeReferenceRepository(store.db).referencesOf('BSE_EQ', [...ORDERS, '0193-d']);
    for (const orderId of ORDERS) expect(again.get(orderId)).toBe(first.get(orderId));
    expect(again.get('0193-d')).toMatch(/^OG[0-9A-Z]+$/);

    const back = await references.ordersOf('BSE_EQ', [...again.values(), 'NOTOURS', 'OGZZZZZZZZZZZ']);
    expect(new Map([...back].map(([reference, orderId]) => [orderId, reference]))).toEqual(again);
    // Another exchange's references are its own.
    expect(await references.ordersOf('NSE_EQ', [...again.values()])).toEqual(new Map());
  });

  it('gives two workers asking at once the same reference for one order', async () => {
    const [a, b] = await Promise.all([
      new ExchangeReferenceRepository(store.db).referencesOf('BSE_EQ', ORDERS),
      new ExchangeReferenceRepository(store.db).referencesOf('BSE_EQ', ORDERS),
    ]);
    expect(a).toEqual(b);
  });

  it('writes a reference within the CP code’s 16 characters up to ids far beyond any day’s bids', () => {
    for (const id of [1, 35, 36, 1_000_000, Number.MAX_SAFE_INTEGER]) {
      const reference = shortReferenceOf(id);
      expect(reference.length).toBeLessThanOrEqual(16);
      expect(reference).toMatch(REFERENCE_PATTERN);
      expect(idOfShortReference(reference)).toBe(id);
    }
    expect(idOfShortReference('OG')).toBeNull();
    expect(idOfShortReference('og12')).toBeNull();
  });
});
