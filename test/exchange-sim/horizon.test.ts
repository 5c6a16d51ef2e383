/**
 * How far the message stream reads (SimEventHorizon, src/store/ofs/sim-exchange.ts): only up to where every
 * event is committed or never will be. On PostgreSQL an event's id is taken at its insert, so an allocation
 * that commits late may hold a smaller id than one already committed: the horizon waits before it, and
 * passes over the id of a transaction that rolled back. On SQLite, one writer at a time, it is the newest id.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimEventHorizon } from '../../src/store/ofs/sim-exchange.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { createMigratedTestDatabase, testDialect } from '../support/databases.js';

let store: Store;
let dispose: () => Promise<void>;

beforeAll(async () => {
  const database = await createMigratedTestDatabase('ordergate_xsim_horizon');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
  await migrateToLatest(store);
});
afterAll(async () => {
  await store?.close();
  await dispose?.();
});

const event = (orderId: string) => ({
  order_id: orderId,
  kind: 'ALLOTTED',
  quantity: 1,
  price_paise: 10_000,
  reason: 'test',
  created_at: 1,
  day: null,
});

async function insert(orderId: string): Promise<number> {
  const row = await store.db
    .insertInto('sim_exchange_events')
    .values(event(orderId))
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

describe('the events horizon', () => {
  it('reaches the newest committed event, and starts where its reader is', async () => {
    const first = await insert('h-1');
    const second = await insert('h-2');
    expect(await new SimEventHorizon(store.db, store.dialect).advance()).toBe(second);
    const behind = new SimEventHorizon(store.db, store.dialect, first);
    expect(behind.value).toBe(first);
    expect(await behind.advance()).toBe(second);
  });

  it.runIf(testDialect() === 'postgres')(
    'waits before an id a transaction under way took, and passes over one rolled back',
    async () => {
      const horizon = new SimEventHorizon(store.db, store.dialect);
      const start = await horizon.advance();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
      let early = 0;
      const late = store.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('sim_exchange_events')
          .values(event('h-late'))
          .returning('id')
          .executeTakeFirstOrThrow();
        early = Number(row.id);
        inserted();
        await gate;
      });
      await insertedYet;
      const after = await insert('h-after');
      expect(after).toBeGreaterThan(early);
      // The late event's id is before the committed one: the horizon stops before it while it may commit.
      expect(await horizon.advance()).toBe(start);
      release();
      await late;
      expect(await horizon.advance()).toBe(after);

      // An id whose transaction rolled back is passed over once nothing can fill it.
      await store.db
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('sim_exchange_events').values(event('h-rolled-back')).execute();
          throw new Error('roll back');
        })
        .catch(() => undefined);
      const last = await insert('h-last');
      // Settled once every transaction under way when the gap was seen has ended: PostgreSQL's snapshot is
      // the server's, so a transaction of another test's database may hold it a moment.
      await vi.waitFor(async () => expect(await horizon.advance()).toBe(last), { timeout: 10_000, interval: 10 });
    },
  );
});
