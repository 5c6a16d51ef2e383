/**
 * A list's page and its count come from one snapshot (src/store/sql/snapshot.ts), on the run's database: an
 * order entered between the page's statement and the count's is in neither, where before it was counted but
 * not listed (the ODIN client end-to-end test saw total_records 1 with an empty page on PostgreSQL).
 */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OrderBookReads } from '../../src/store/orders/order-book.js';
import { OmsBench } from '../oms/fixture.js';

let bench: OmsBench;
/** A second handle on the database that reads the list: the bench's writes are another session's. */
let reader: Store;

beforeAll(async () => {
  bench = await OmsBench.open();
  reader = openStore(bench.databaseUrl);
});
afterAll(async () => {
  await reader.close();
  await bench.close();
});

/** Once the first SELECT of a list has its rows, another session enters an order and commits it. */
function enterAnOrderAfterTheFirstRead(): KyselyPlugin {
  let done = false;
  return {
    transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (!done && args.result.rows.length > 0 && 'order_id' in args.result.rows[0]!) {
        done = true;
        await bench.placeOrder();
      }
      return args.result;
    },
  };
}

it('the order book page and its total agree when an order is entered between them', async () => {
  const first = await bench.placeOrder();
  const orders = new OrderBookReads(reader.db.withPlugin(enterAnOrderAfterTheFirstRead()), reader.dialect);
  const book = await orders.orderBook({ userId: 'retail1', page: 1, pageSize: 20 });
  expect(book.orders.map((o) => o.orderId)).toEqual([first]);
  expect(book.totalCount).toBe(1);
  // The order was entered: the next read has both.
  const again = await new OrderBookReads(reader.db, reader.dialect).orderBook({
    userId: 'retail1',
    page: 1,
    pageSize: 20,
  });
  expect([again.orders.length, again.totalCount]).toEqual([2, 2]);
});
