/**
 * One instrument's allotments that cannot be applied never hold back another's (docs/design/oms.md, "One
 * instrument's failure is its own"), on the run's database: two issues allotted in one pass, one of whose
 * allotments cannot be written (a trade row under its id is already there, as a repair by hand could
 * leave). The delivery is applied again instrument by instrument: the other issue's orders end at once;
 * the broken one's events wait, unacknowledged, are tried again after 1, 2, 4 and 8 s, and set aside at
 * the fifth failure (left out of the exchange's polls from then on); once the row is fixed and the
 * operator takes the issue back, they are applied.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { InstrumentFaultRepository } from '../../src/store/ofs/instrument-faults.js';
import { HOUR, OmsBench, T0 } from './fixture.js';

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
});
afterEach(async () => {
  await bench.close();
});

it("applies one issue's allotments while another's fail, sets those aside, and applies them once taken back", async () => {
  await bench.registerIssue({ scripToken: 500113 });
  const good = await bench.placeOrder({ userId: 'inst1', pricePaise: 10_150, quantity: 10 });
  const bad = await bench.placeOrder({ userId: 'inst2', pricePaise: 10_150, quantity: 10, scripToken: 500113 });
  const worker = bench.worker();
  await worker.runOnce();
  expect([await bench.status(good), await bench.status(bad)]).toEqual(['PENDING', 'PENDING']);

  // The trade the allotment of `bad` would write is there already.
  const order = await bench.order(bad);
  await bench.store.db
    .insertInto('trades')
    .values({
      trade_id: `T-${bad}`,
      order_id: bad,
      user_id: order.user_id,
      exchange: 'NSE_EQ',
      scrip_token: 500113,
      symbol: 'SBIN',
      series: 'OF',
      transaction_type: 'BUY',
      product_type: 'OFS',
      quantity: 1,
      price_paise: 1,
      traded_at: T0,
      settles_at: T0,
      exchange_order_id: null,
      order_identifier: null,
    })
    .execute();

  bench.clock.now = T0 + 2 * HOUR + 1_000;
  await worker.runOnce();
  expect(await bench.status(good)).toBe('EXECUTED');
  expect(await bench.status(bad)).toBe('PENDING');
  const faults = new InstrumentFaultRepository(bench.store.db, bench.store.dialect);
  expect(await faults.all()).toMatchObject([
    { instrument: 'issue:NSE_EQ:500113', step: 'events', failures: 1, setAsideAt: null },
  ]);

  for (const pauseMs of [1_000, 2_000, 4_000, 8_000]) {
    bench.clock.now += pauseMs;
    await worker.runOnce();
  }
  expect(await faults.all()).toMatchObject([
    { instrument: 'issue:NSE_EQ:500113', step: 'events', failures: 5, setAsideAt: bench.clock.now },
  ]);
  // Set aside, its event is left out of the exchange's polls; it is not acknowledged.
  const undelivered = await bench.store.db
    .selectFrom('sim_exchange_events')
    .select('order_id')
    .where('delivered_at', 'is', null)
    .execute();
  expect(undelivered.map((e) => e.order_id)).toEqual([bad]);
  expect(await bench.exchange().pollEvents()).toEqual([]);

  await bench.store.db.deleteFrom('trades').where('trade_id', '=', `T-${bad}`).execute();
  expect(await faults.clear('issue:NSE_EQ:500113')).toBe(true);
  await worker.runOnce();
  expect(await bench.status(bad)).toBe('EXECUTED');
  expect(await bench.order(bad)).toMatchObject({ traded_quantity: 10 });
  expect(await faults.all()).toEqual([]);
});
