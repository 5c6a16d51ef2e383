/**
 * The OMS reads the orders it changes with lockOrders; on SQLite that read selects each row as one JSON
 * array of ORDER_ROW_COLUMNS (src/store/sql/sqlite-driver.ts, jsonRows). It must answer exactly the order that
 * reading the row with `select *` answers, for every column, set or null, on the run's database.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { orderFromRow, OrderRepository, ORDER_ROW_COLUMNS } from '../../src/store/orders/orders.js';
import { OmsBench } from '../oms/fixture.js';

let bench: OmsBench;

beforeAll(async () => {
  bench = await OmsBench.open();
});
afterAll(async () => {
  await bench.close();
});

it('names every column of the orders table, once', async () => {
  const row = await bench.order(await bench.placeOrder());
  expect([...ORDER_ROW_COLUMNS].sort()).toEqual(Object.keys(row).sort());
});

it('locks and reads an order as select * reads it: every column set, and every nullable one null', async () => {
  const bare = await bench.placeOrder();
  const full = await bench.placeOrder();
  // Every nullable column set, with text that JSON must escape and the largest exact whole number.
  await sql`update orders set error_reason = ${'a "quoted" \\ reason\nwith ünïcode ₹'}, order_identifier = ${'id-1'},
    algo_id = ${'algo-1'}, strategy_id = ${'strategy-1'}, part_code = ${'part'}, vender_code = ${'vendor'},
    request_id = ${'request-1'}, cancel_requested_at = ${9_007_199_254_740_991}, traded_price_paise = ${12_345},
    exchange_order_id = ${'1100000000000001'}, funds_blocked_paise = ${0}, offer_id = ${'offer-1'},
    offer_category = ${'RETAIL'}, margin_type = ${'FULL'}, carried_forward_at = ${1}, ucc = ${'UCC1'},
    client_type = ${'PRO'}, custodian_code = ${'CUST1'}, pan = ${'ABCPE1234F'}
    where order_id = ${full}`.execute(bench.store.db);
  const repository = new OrderRepository(bench.store.db, bench.store.dialect);
  const locked = await bench.store.writeTransaction((tx) =>
    repository.lockOrders(tx, [bare, full, 'no-such-order', full]),
  );
  expect([...locked.keys()].sort()).toEqual([bare, full].sort());
  for (const orderId of [bare, full]) expect(locked.get(orderId)).toEqual(orderFromRow(await bench.order(orderId)));
  expect(locked.get(full)!.errorReason).toBe('a "quoted" \\ reason\nwith ünïcode ₹');
  expect(locked.get(full)!.cancelRequestedAt).toBe(9_007_199_254_740_991);
  expect(locked.get(bare)!.algoId).toBeNull();
  expect(locked.get(full)).toMatchObject({ ucc: 'UCC1', clientType: 'PRO', custodianCode: 'CUST1', pan: 'ABCPE1234F' });
});
