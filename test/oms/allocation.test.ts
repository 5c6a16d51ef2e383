/**
 * Allocation at close through the simulated exchange and the OMS: when it runs, what the orders become,
 * that it runs once with several workers, and that its events count once however often they are delivered.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, ObservedExchange, OmsBench, T0 } from './fixture.js';
import { createSimulatedExchange } from '../../src/wiring.js';

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
});
afterEach(async () => {
  await bench.close();
});

/** The later close of the test issue's two windows. */
const CLOSE = T0 + 2 * HOUR;

/**
 * Offer 1000, 10% retail, proportionate, cut-off 101.00. Retail asks for exactly its 100 shares; non-retail
 * asks 1300 for 900: the clearing price is 101.00, where 1200 shares are bid at or above, so N1 and N2 get
 * 450 each and N3 (at 100.00) nothing. R3 is cancelled before the close and takes no part.
 */
async function bookOfBids() {
  const ids = {
    r1: await bench.placeOrder({ userId: 'retail1', pricePaise: 0, quantity: 60 }),
    r2: await bench.placeOrder({ userId: 'retail2', pricePaise: 10_150, quantity: 40 }),
    r3: await bench.placeOrder({ userId: 'retail1', pricePaise: 10_100, quantity: 30 }),
    n1: await bench.placeOrder({ userId: 'inst1', pricePaise: 10_200, quantity: 600 }),
    n2: await bench.placeOrder({ userId: 'inst2', pricePaise: 10_100, quantity: 600 }),
    n3: await bench.placeOrder({ userId: 'inst1', pricePaise: 10_000, quantity: 100 }),
  };
  const worker = bench.worker();
  await worker.runOnce();
  await bench.requestCancellation(ids.r3);
  await worker.runOnce();
  for (const [name, id] of Object.entries(ids))
    expect(await bench.status(id), name).toBe(name === 'r3' ? 'CANCELLED' : 'PENDING');
  return ids;
}

async function expectAllocated(ids: Awaited<ReturnType<typeof bookOfBids>>) {
  for (const id of [ids.r1, ids.r2, ids.n1, ids.n2]) expect(await bench.status(id)).toBe('EXECUTED');
  expect(await bench.order(ids.r1)).toMatchObject({ traded_quantity: 60, traded_price_paise: 10_100 });
  expect(await bench.order(ids.r2)).toMatchObject({ traded_quantity: 40, traded_price_paise: 10_100 });
  expect(await bench.order(ids.n1)).toMatchObject({ traded_quantity: 450, traded_price_paise: 10_100 });
  expect(await bench.order(ids.n2)).toMatchObject({ traded_quantity: 450, traded_price_paise: 10_100 });
  expect(await bench.order(ids.n3)).toMatchObject({
    status: 'CANCELLED',
    traded_quantity: 0,
    traded_price_paise: null,
    error_reason: 'Not allotted: bid 100.00 below the clearing price 101.00',
  });
  // Cancelled by its user before the close: left as it was.
  expect((await bench.history(ids.r3)).at(-1)).toMatchObject({ status: 'CANCELLED', reason: 'Cancelled by the user' });
}

describe('allocation at close', () => {
  it('waits for the later close, then makes allotted orders EXECUTED and the others CANCELLED with the reason', async () => {
    const ids = await bookOfBids();
    const worker = bench.worker();

    // The non-retail window has closed, the retail one not yet: no allocation.
    bench.clock.now = CLOSE - 1;
    expect(await worker.runOnce()).toBe(0);
    expect(await bench.status(ids.n1)).toBe('PENDING');
    expect(await bench.events()).toEqual([]);

    bench.clock.now = CLOSE;
    expect(await worker.runOnce()).toBe(5);

    await expectAllocated(ids);
    expect((await bench.history(ids.n1)).at(-1)).toEqual({
      status: 'EXECUTED',
      reason: 'Allotted 450 of 600 at 101.00 (proportionate, oversubscribed 1.33x)',
      quantity: 600,
      price_paise: 10_200,
      traded_quantity: 450,
      at: CLOSE,
    });
    expect((await bench.history(ids.r1)).at(-1)!.reason).toBe(
      'Allotted 60 of 60 at 101.00 (cut-off bid; in full, the retail portion was not oversubscribed)',
    );
    expect((await bench.history(ids.n3)).at(-1)).toMatchObject({
      status: 'CANCELLED',
      reason: 'Not allotted: bid 100.00 below the clearing price 101.00',
    });
    const issue = await bench.store.db.selectFrom('ofs_issues').select('allocated_at').executeTakeFirstOrThrow();
    expect(Number(issue.allocated_at)).toBe(CLOSE);
    const bids = await bench.store.db.selectFrom('sim_exchange_bids').select(['order_id', 'status']).execute();
    expect(Object.fromEntries(bids.map((b) => [b.order_id, b.status]))).toEqual({
      [ids.r1]: 'ALLOTTED',
      [ids.r2]: 'ALLOTTED',
      [ids.r3]: 'CANCELLED',
      [ids.n1]: 'ALLOTTED',
      [ids.n2]: 'ALLOTTED',
      [ids.n3]: 'NOT_ALLOTTED',
    });

    // Done once: later passes find nothing to do.
    bench.clock.now = CLOSE + HOUR;
    expect(await worker.runOnce()).toBe(0);
    expect(await bench.events()).toHaveLength(5);
    expect((await bench.events()).every((event) => event.delivered_at !== null)).toBe(true);
  });

  it('allocates again when the issue is re-imported with windows that close later (a re-run demo)', async () => {
    const first = await bookOfBids();
    bench.clock.now = CLOSE;
    await bench.worker().runOnce();
    await expectAllocated(first);

    const reopenedClose = CLOSE + 2 * HOUR;
    await bench.registerIssue({
      nonRetailOpensAt: CLOSE,
      nonRetailClosesAt: reopenedClose,
      retailOpensAt: CLOSE,
      retailClosesAt: reopenedClose,
    });
    expect(
      (await bench.store.db.selectFrom('ofs_issues').select('allocated_at').executeTakeFirstOrThrow()).allocated_at,
    ).toBeNull();
    const later = await bench.placeOrder({ userId: 'inst2', pricePaise: 10_300, quantity: 70 });
    const worker = bench.worker();
    await worker.runOnce();
    expect(await bench.status(later)).toBe('PENDING');

    bench.clock.now = reopenedClose;
    await worker.runOnce();
    expect(await bench.order(later)).toMatchObject({ status: 'EXECUTED', traded_quantity: 70 });
    // The first allocation's orders are finished and untouched.
    await expectAllocated(first);
  });

  it('gives a bid that no longer fits the issue at close (floor raised since) no allotment, with the reason', async () => {
    const ids = await bookOfBids();
    await bench.registerIssue({ floorPricePaise: 10_150 });
    bench.clock.now = CLOSE;
    await bench.worker().runOnce();
    expect(await bench.order(ids.n2)).toMatchObject({
      status: 'CANCELLED',
      error_reason: 'Not allotted: at close price 101.00 is below the floor price 101.50',
    });
  });

  it('runs once when two workers poll at the same moment: one event per bid, one final status per order', async () => {
    const ids = await bookOfBids();
    bench.clock.now = CLOSE;
    const first = bench.worker({ exchange: bench.exchange() });
    const second = bench.worker({ exchange: bench.exchange() });

    await Promise.all([first.runOnce(), second.runOnce()]);

    await expectAllocated(ids);
    expect(await bench.events()).toHaveLength(5);
    for (const id of Object.values(ids)) {
      const finals = (await bench.statusTrail(id)).filter((status) => status === 'EXECUTED' || status === 'CANCELLED');
      expect(finals, id).toHaveLength(1);
    }
  });

  it('allots at its own step, on its own clock, not when its events are read', async () => {
    await bookOfBids();
    bench.clock.now = CLOSE;
    const exchange = bench.exchange();
    // Reading the events at the close changes nothing: the exchange has not taken its step.
    expect(await exchange.pollEvents()).toEqual([]);
    expect(await bench.events()).toHaveLength(0);
    await exchange.step();
    expect(await bench.events()).toHaveLength(5);
    expect(await exchange.pollEvents()).toHaveLength(5);
  });

  it('answers a step asked for while another runs with one that reads the clock when it starts', async () => {
    await bookOfBids();
    bench.clock.now = CLOSE - 60_000;
    const exchange = bench.exchange();
    // The first step is held at its issue market until the clock has moved past the close.
    const markets = exchange as unknown as { issueMarket: { step(now: number): Promise<void> } };
    const step = markets.issueMarket.step.bind(markets.issueMarket);
    const seen: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    markets.issueMarket.step = async (now) => {
      seen.push(now);
      if (seen.length === 1) await gate;
      return step(now);
    };
    const first = exchange.step();
    await new Promise(setImmediate);
    bench.clock.now = CLOSE;
    const second = exchange.step();
    release();
    await Promise.all([first, second]);
    expect(seen).toEqual([CLOSE - 60_000, CLOSE]);
    expect(await bench.events()).toHaveLength(5);
  });

  it('takes its step on its own once started, until stopped', async () => {
    await bookOfBids();
    bench.clock.now = CLOSE;
    const exchange = createSimulatedExchange(bench.store, bench.now, undefined, { passMs: 1 });
    const stepped = new Promise<void>((resolve) => {
      const step = exchange.step.bind(exchange);
      exchange.step = async () => {
        await step();
        resolve();
      };
    });
    exchange.start();
    await stepped;
    await exchange.stop();
    expect(await bench.events()).toHaveLength(5);
  });

  it('allocates an issue once when two exchange instances take their step at the same moment', async () => {
    await bookOfBids();
    bench.clock.now = CLOSE;
    await Promise.all([bench.exchange().step(), bench.exchange().step()]);
    const [a, b] = await Promise.all([bench.exchange().pollEvents(), bench.exchange().pollEvents()]);
    const delivered = new Set([...a, ...b].map((event) => event.orderId));
    expect(delivered.size).toBe(5);
    expect(await bench.events()).toHaveLength(5);
  });

  it('applies an event delivered again (not acknowledged the first time) only once', async () => {
    const ids = await bookOfBids();
    bench.clock.now = CLOSE;
    let acknowledgements = 0;
    const exchange = new ObservedExchange(bench.exchange(), {
      before: (method) => {
        if (method === 'acknowledge' && ++acknowledgements === 1) throw new Error('link to the exchange lost');
      },
    });
    const worker = bench.worker({ exchange });

    await expect(worker.runOnce()).rejects.toThrow('link to the exchange lost');
    await expectAllocated(ids);
    expect((await bench.events()).every((event) => event.delivered_at === null)).toBe(true);
    const before = await Promise.all(Object.values(ids).map((id) => bench.history(id)));

    // Redelivered: nothing changes on the orders, and this time the events are acknowledged.
    expect(await worker.runOnce()).toBe(5);
    expect(await Promise.all(Object.values(ids).map((id) => bench.history(id)))).toEqual(before);
    expect((await bench.events()).every((event) => event.delivered_at !== null)).toBe(true);
    expect(await worker.runOnce()).toBe(0);
    expect(exchange.count('acknowledge')).toBe(2);
  });

  it('settles every order of a large book in the first pass after the close, beyond one delivery of events', async () => {
    const ids = [];
    for (let i = 0; i < 620; i += 1)
      ids.push(await bench.placeOrder({ userId: 'inst1', pricePaise: 10_200, quantity: 1 }));
    const worker = bench.worker();
    expect(await worker.runOnce()).toBe(620);
    bench.clock.now = CLOSE;

    expect(await worker.runOnce()).toBe(620);

    const statuses = await bench.store.db.selectFrom('orders').select(['status', 'traded_quantity']).execute();
    expect(statuses.every((row) => row.status === 'EXECUTED' && Number(row.traded_quantity) === 1)).toBe(true);
  });

  it('leaves an issue without bids allocated and quiet', async () => {
    bench.clock.now = CLOSE;
    expect(await bench.worker().runOnce()).toBe(0);
    const issue = await bench.store.db.selectFrom('ofs_issues').select('allocated_at').executeTakeFirstOrThrow();
    expect(Number(issue.allocated_at)).toBe(CLOSE);
  });
});
