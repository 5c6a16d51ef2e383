/**
 * A list's page and its count come from one snapshot (src/store/snapshot.ts), on the run's database: an
 * order entered between the page's statement and the count's is in neither, where before it was counted but
 * not listed (the ODIN client end-to-end test saw total_records 1 with an empty page on PostgreSQL).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { openStore, type Store } from '../../src/store/database.js';
import { OrderRepository } from '../../src/store/orders.js';
import { UserRepository } from '../../src/store/users.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';

let database: TestDatabase;
let store: Store;
/** A second handle on the database: its writes are another session's, as another request's would be. */
let other: Store;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  other = openStore(database.databaseUrl);
  await new UserRepository(store.db, store.dialect).create({ userId: 'u', passwordHash: 'x', category: 'RETAIL', totpSecret: null, now: 0 });
});
afterAll(async () => {
  await store.close();
  await other.close();
  await database.dispose();
});

let inserted = 0;
async function insertOrder(db: Store['db']): Promise<void> {
  inserted += 1;
  await db
    .insertInto('orders')
    .values({
      order_id: `o${inserted}`,
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
      traded_quantity: 0,
      status: 'PENDING',
      error_reason: null,
      order_identifier: null,
      algo_id: null,
      strategy_id: null,
      part_code: null,
      vender_code: null,
      request_id: null,
      created_at: inserted,
      updated_at: inserted,
      category: 'RETAIL',
      cancel_requested_at: null,
      traded_price_paise: null,
      exchange_order_id: null,
    } as never)
    .execute();
}

/** Once the first SELECT of a list has its rows, another session enters an order and commits it. */
function enterAnOrderAfterTheFirstRead(): KyselyPlugin {
  let done = false;
  return {
    transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (!done && args.result.rows.length > 0 && 'order_id' in args.result.rows[0]!) {
        done = true;
        await insertOrder(other.db);
      }
      return args.result;
    },
  };
}

it('the order book page and its total agree when an order is entered between them', async () => {
  await insertOrder(store.db);
  const orders = new OrderRepository(store.db.withPlugin(enterAnOrderAfterTheFirstRead()), store.dialect);
  const book = await orders.orderBook({ userId: 'u', page: 1, pageSize: 20 });
  expect(book.orders.map((o) => o.orderId)).toEqual(['o1']);
  expect(book.totalCount).toBe(1);
  // The order was entered: the next read has both.
  const again = await new OrderRepository(store.db, store.dialect).orderBook({ userId: 'u', page: 1, pageSize: 20 });
  expect([again.orders.length, again.totalCount]).toEqual([2, 2]);
});
