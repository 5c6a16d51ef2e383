/**
 * Crashes and concurrency: a worker that dies at any point of a placement leaves its orders to the next
 * worker, which resumes them without losing one or transmitting one twice; two workers never take the
 * same outbox entry; an error in a pass is logged and retried, and the loop keeps going.
 *
 * A crash is simulated by an exchange call that never settles: the worker stops right there, holding its
 * outbox lease, and nothing after that point runs, as when the process is killed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { DEFAULT_LEASE_MS } from '../../src/oms/worker.js';
import { OmsRepository } from '../../src/store/orders/outbox.js';
import type { ExchangeBid } from '../../src/oms/exchange.js';
import type { SimulatedExchange } from '../../src/oms/simulated-exchange.js';
import type { StoreTx } from '../../src/store/sql/write-tx.js';
import { crash, HOUR, ObservedExchange, OmsBench, sleep } from './fixture.js';

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
});
afterEach(async () => {
  await bench.close();
});

/** Polls the database until the order has the status, for at most two seconds. */
async function untilStatus(orderId: string, status: string): Promise<void> {
  for (let i = 0; i < 200 && (await bench.status(orderId)) !== status; i += 1) await sleep(10);
  expect(await bench.status(orderId)).toBe(status);
}

describe('crash and resume', () => {
  it('resumes orders that crashed after EXXMITTED was committed but before they were sent: each sent once, none lost', async () => {
    const ids = [
      await bench.placeOrder({ quantity: 11 }),
      await bench.placeOrder({ quantity: 12 }),
      await bench.placeOrder({ quantity: 13 }),
    ];
    const dying = bench.worker({
      exchange: new ObservedExchange(bench.exchange(), {
        before: (method) => (method === 'place' ? crash() : undefined),
      }),
    });
    void dying.runOnce();
    await untilStatus(ids[0]!, 'EXXMITTED');
    expect(await bench.exchangeBid(ids[0]!)).toBeUndefined();

    // A new process over the same database.
    const store = openStore(bench.databaseUrl);
    try {
      const exchange = new ObservedExchange(bench.exchange(store));
      const successor = bench.worker({ store, exchange });

      // The dead worker's lease still holds its entries.
      expect(await successor.runOnce()).toBe(0);
      for (const id of ids) expect(await bench.status(id)).toBe('EXXMITTED');

      bench.clock.now += DEFAULT_LEASE_MS + 1;
      expect(await successor.runOnce()).toBe(3);

      for (const [i, id] of ids.entries()) {
        expect(await bench.statusTrail(id), id).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
        expect(exchange.count('find', id), id).toBe(1);
        expect(exchange.count('place', id), id).toBe(1);
        expect(await bench.exchangeBid(id), id).toMatchObject({ quantity: 11 + i, status: 'LIVE', transmissions: 1 });
      }
      expect(await bench.openOutbox()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('does not send again an order that crashed after the exchange accepted it but before PENDING was committed', async () => {
    const orderId = await bench.placeOrder();
    const dying = bench.worker({
      exchange: new ObservedExchange(bench.exchange(), {
        after: (method) => (method === 'place' ? crash() : undefined),
      }),
    });
    void dying.runOnce();
    for (let i = 0; i < 200 && (await bench.exchangeBid(orderId)) === undefined; i += 1) await sleep(10);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ transmissions: 1 });
    expect(await bench.status(orderId)).toBe('EXXMITTED');

    bench.clock.now += DEFAULT_LEASE_MS + 1;
    const exchange = new ObservedExchange(bench.exchange());
    expect(await bench.worker({ exchange }).runOnce()).toBe(1);

    const bid = await bench.exchangeBid(orderId);
    expect(exchange.count('place')).toBe(0);
    expect(bid!.transmissions).toBe(1);
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: bid!.exchange_order_id });
    expect(await bench.statusTrail(orderId)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
  });

  it('with the exchange in its transaction: resumes orders a two-step worker left EXXMITTED, each sent once', async () => {
    const ids = [await bench.placeOrder({ quantity: 11 }), await bench.placeOrder({ quantity: 12 })];
    // The two-step worker dies as it is about to send, its admission (EXXMITTED) committed.
    let atPlace!: () => void;
    const reachedPlace = new Promise<void>((resolve) => (atPlace = resolve));
    const before = (method: string) => {
      if (method !== 'place') return undefined;
      atPlace();
      return crash();
    };
    void bench.worker({ exchange: new ObservedExchange(bench.exchange(), { before }) }).runOnce();
    await reachedPlace;
    for (const id of ids) expect(await bench.status(id)).toBe('EXXMITTED');

    bench.clock.now += DEFAULT_LEASE_MS + 1;
    // The simulated exchange itself: admission, placement and settlement in one transaction.
    expect(await bench.worker().runOnce()).toBe(2);
    for (const [i, id] of ids.entries()) {
      expect(await bench.statusTrail(id), id).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
      expect(await bench.exchangeBid(id), id).toMatchObject({ quantity: 11 + i, status: 'LIVE', transmissions: 1 });
    }
    expect(await bench.openOutbox()).toBe(0);
  });

  it('finishes a cancellation that crashed after the exchange cancelled the bid', async () => {
    const orderId = await bench.placeOrder();
    await bench.worker().runOnce();
    await bench.requestCancellation(orderId);
    const dying = bench.worker({
      exchange: new ObservedExchange(bench.exchange(), {
        after: (method) => (method === 'cancel' ? crash() : undefined),
      }),
    });
    void dying.runOnce();
    for (let i = 0; i < 200 && (await bench.exchangeBid(orderId))!.status !== 'CANCELLED'; i += 1) await sleep(10);
    expect(await bench.status(orderId)).toBe('PENDING');

    bench.clock.now += DEFAULT_LEASE_MS + 1;
    await bench.worker().runOnce();

    expect(await bench.status(orderId)).toBe('CANCELLED');
    expect((await bench.history(orderId)).at(-1)!.reason).toBe('Cancelled by the user');
  });

  it('stops cleanly mid-way: stop() waits for the pass under way, and a new worker takes the rest', async () => {
    const ids = [];
    for (let i = 0; i < 10; i += 1) ids.push(await bench.placeOrder({ quantity: i + 1 }));
    const slow = new ObservedExchange(bench.exchange(), { before: () => sleep(5) });
    const first = bench.worker({ exchange: slow, pollMs: 10, batchSize: 2 });
    first.start();
    await untilStatus(ids[0]!, 'PENDING');
    await first.stop();
    const afterStop = await Promise.all(ids.map((id) => bench.status(id)));
    // Whatever the first worker had started, it finished: nothing is left between two steps; and it did
    // not drain the backlog before stopping.
    expect(afterStop.every((status) => status === 'PENDING' || status === 'OMSXMITTED')).toBe(true);
    expect(afterStop).toContain('OMSXMITTED');

    await bench.worker().runOnce();
    for (const id of ids) {
      expect(await bench.statusTrail(id)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
      expect((await bench.exchangeBid(id))!.transmissions).toBe(1);
    }
  });
});

describe('several workers', () => {
  it('never lets two workers process the same outbox entry', async () => {
    const ids = [];
    for (let i = 0; i < 20; i += 1) ids.push(await bench.placeOrder({ quantity: i + 1 }));
    const exchange = new ObservedExchange(bench.exchange(), { before: () => sleep(2) });
    // Small batches, so that the workers take turns.
    const workers = [1, 2, 3].map(() => bench.worker({ exchange, batchSize: 3 }));

    const handled = await Promise.all(workers.map((worker) => worker.runOnce()));

    expect(handled.reduce((a, b) => a + b, 0)).toBe(20);
    for (const id of ids) {
      // Admitted and sent in one pass: the exchange's book is not read for a bid that cannot be there.
      expect(exchange.count('find', id), id).toBe(0);
      expect(exchange.count('place', id), id).toBe(1);
      expect((await bench.exchangeBid(id))!.transmissions).toBe(1);
      expect(await bench.statusTrail(id)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
    }
    const claimedBy = await bench.store.db.selectFrom('outbox').select('claimed_by').execute();
    expect(new Set(claimedBy.map((row) => row.claimed_by)).size).toBeGreaterThan(1);
  });

  /** `count` placed orders, their PLACE entries due now in a repository of the bench's store. */
  async function dueOutbox(count: number) {
    for (let i = 0; i < count; i += 1) await bench.placeOrder();
    const outbox = new OmsRepository(bench.store.db, bench.store.dialect);
    const now = bench.clock.now;
    const ids = (await outbox.dueEntries(now, [], 100)).map((entry) => entry.id);
    expect(ids).toHaveLength(count);
    return { outbox, now, ids };
  }

  it('leases an outbox entry to one worker at a time, until the lease runs out', async () => {
    const { outbox, now, ids } = await dueOutbox(3);
    const claim = (worker: string, at: number) =>
      outbox.claimDue(at, [], 10, Number.MAX_SAFE_INTEGER, worker, at + DEFAULT_LEASE_MS);

    expect((await claim('worker-a', now)).map((entry) => entry.id)).toEqual(ids);
    // Leased to worker-a: worker-b gets none of them, and none is due.
    expect(await claim('worker-b', now)).toEqual([]);
    expect(await outbox.dueEntries(now, [], 10)).toEqual([]);

    const later = now + DEFAULT_LEASE_MS + 1;
    expect((await outbox.dueEntries(later, [], 10)).map((entry) => entry.id)).toEqual(ids);
    expect((await claim('worker-b', later)).map((entry) => entry.id)).toEqual(ids);
    // worker-a's lease is gone: it can no longer mark the entries done.
    await outbox.completeAll(ids, 'worker-a', later);
    expect(await bench.openOutbox()).toBe(3);
  });

  it('gives workers that claim at the same moment different entries, each its own, in id order', async () => {
    const { outbox, now } = await dueOutbox(12);
    const taken = await Promise.all(
      ['worker-a', 'worker-b', 'worker-c'].map((worker) =>
        outbox.claimDue(now, [], 5, Number.MAX_SAFE_INTEGER, worker, now + DEFAULT_LEASE_MS),
      ),
    );
    const ids = taken.flat().map((entry) => entry.id);
    // No entry twice; together the 12, at most 5 each; and each worker's in id order.
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(12);
    for (const entries of taken) {
      expect(entries.length).toBeLessThanOrEqual(5);
      expect(entries.map((entry) => entry.id)).toEqual([...entries.map((entry) => entry.id)].sort((a, b) => a - b));
    }
    const owners = await bench.store.db.selectFrom('outbox').select(['id', 'claimed_by']).execute();
    for (const [index, entries] of taken.entries()) {
      for (const entry of entries)
        expect(owners.find((row) => Number(row.id) === entry.id)?.claimed_by).toBe(`worker-${'abc'[index]}`);
    }
    expect(await outbox.claimDue(now, [], 5, Number.MAX_SAFE_INTEGER, 'worker-d', now + DEFAULT_LEASE_MS)).toEqual([]);
  });

  it('keeps an order’s entries in commit order across workers: the modification reaches the exchange before the cancellation', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    await bench.worker().runOnce();
    await bench.requestModification(orderId, { quantity: 30, pricePaise: 10_200 });
    await bench.requestCancellation(orderId);
    // A slow modification: a worker free to take the cancellation meanwhile would overtake it.
    const exchange = new ObservedExchange(bench.exchange(), {
      before: (method) => (method === 'modify' ? sleep(50) : undefined),
    });

    await Promise.all([
      bench.worker({ exchange, batchSize: 1 }).runOnce(),
      bench.worker({ exchange, batchSize: 1 }).runOnce(),
    ]);

    expect(exchange.calls.filter((call) => call.orderId === orderId).map((call) => call.method)).toEqual([
      'modify',
      'cancel',
    ]);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ status: 'CANCELLED', quantity: 30, price_paise: 10_200 });
    expect((await bench.history(orderId)).slice(-2).map((e) => e.reason)).toEqual([
      'Modified at the exchange',
      'Cancelled by the user',
    ]);
  });
});

describe('errors', () => {
  it('logs an error, leaves the order where it was and retries it on the next pass', async () => {
    const orderId = await bench.placeOrder();
    let failures = 0;
    const exchange = new ObservedExchange(bench.exchange(), {
      before: (method) => {
        if (method === 'place' && ++failures === 1) throw new Error('exchange gateway timed out');
      },
    });
    const worker = bench.worker({ exchange });

    expect(await worker.runOnce()).toBe(0);
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    expect(bench.errors()).toEqual([
      expect.objectContaining({
        msg: 'OMS could not process an outbox entry; retrying next pass',
        orderId,
        action: 'PLACE',
        err: expect.objectContaining({ message: 'exchange gateway timed out' }),
      }),
    ]);

    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(orderId)).toBe('PENDING');
    expect((await bench.exchangeBid(orderId))!.transmissions).toBe(1);
  });

  it('with the exchange in its transaction: a placement that fails leaves nothing behind, and the next pass sends it once', async () => {
    const orderId = await bench.placeOrder();
    const simulated = bench.exchange();
    let failures = 0;
    // The exchange writes its book, then the transaction fails before it commits.
    const failing = Object.assign(Object.create(simulated) as SimulatedExchange, {
      async placeBidsInTransaction(tx: StoreTx, bids: readonly ExchangeBid[]) {
        const results = await simulated.placeBidsInTransaction(tx, bids);
        if (++failures === 1) throw new Error('the disk is full');
        return results;
      },
    });
    const worker = bench.worker({ exchange: failing });

    expect(await worker.runOnce()).toBe(0);
    expect(await bench.status(orderId)).toBe('OMSXMITTED');
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
    expect(await bench.history(orderId)).toHaveLength(1);
    expect(await bench.openOutbox()).toBe(1);
    expect(bench.errors()).toEqual([
      expect.objectContaining({
        msg: 'OMS could not process an outbox entry; retrying next pass',
        orderId,
        err: expect.objectContaining({ message: 'the disk is full' }),
      }),
    ]);

    expect(await worker.runOnce()).toBe(1);
    expect(await bench.statusTrail(orderId)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ status: 'LIVE', transmissions: 1 });
    expect(await bench.openOutbox()).toBe(0);
  });

  it('keeps the loop running through a failing pass', async () => {
    const orderId = await bench.placeOrder();
    let polls = 0;
    const exchange = new ObservedExchange(bench.exchange(), {
      before: (method) => {
        if (method === 'pollEvents' && ++polls === 1) throw new Error('event feed down');
      },
    });
    const worker = bench.worker({ exchange, pollMs: 10 });
    worker.start();
    try {
      await untilStatus(orderId, 'PENDING');
      for (let i = 0; i < 200 && exchange.count('pollEvents') < 3; i += 1) await sleep(10);
      expect(exchange.count('pollEvents')).toBeGreaterThanOrEqual(3);
    } finally {
      await worker.stop();
    }
    expect(bench.errors()).toEqual([
      expect.objectContaining({
        msg: 'OMS pass failed; retrying',
        err: expect.objectContaining({ message: 'event feed down' }),
      }),
    ]);
    // Stopped: an order placed now stays queued.
    const later = await bench.placeOrder();
    await sleep(50);
    expect(await bench.status(later)).toBe('OMSXMITTED');
  });

  it('a claim that committed while its answer was lost (the connection cut): the next pass takes its entries at once, not after the lease', async () => {
    const ids = [
      await bench.placeOrder({ quantity: 11 }),
      await bench.placeOrder({ quantity: 12 }),
      await bench.placeOrder({ quantity: 13 }),
    ];
    // Another worker's lease on the last one is not this worker's to give back.
    const outbox = new OmsRepository(bench.store.db, bench.store.dialect);
    const now = bench.clock.now;
    const [others] = await outbox.claimDue(now, [], 1, Number.MAX_SAFE_INTEGER, 'worker-b', now + DEFAULT_LEASE_MS);
    expect(others?.orderId).toBe(ids[0]);

    const claimDue = OmsRepository.prototype.claimDue;
    const lost = vi.spyOn(OmsRepository.prototype, 'claimDue').mockImplementationOnce(async function (
      this: OmsRepository,
      ...args
    ) {
      await claimDue.apply(this, args);
      throw new Error('Connection terminated unexpectedly');
    });
    try {
      const worker = bench.worker({ workerId: 'worker-a' });
      await expect(worker.runOnce()).rejects.toThrow('Connection terminated unexpectedly');
      const leases = await bench.store.db
        .selectFrom('outbox')
        .select(['order_id', 'claimed_by', 'claimed_until'])
        .where('done_at', 'is', null)
        .orderBy('id')
        .execute();
      expect(
        leases.map((row) => [
          row.order_id,
          row.claimed_by,
          row.claimed_until === null ? null : Number(row.claimed_until),
        ]),
      ).toEqual([
        [ids[0], 'worker-b', now + DEFAULT_LEASE_MS],
        [ids[1], 'worker-a', now + DEFAULT_LEASE_MS],
        [ids[2], 'worker-a', now + DEFAULT_LEASE_MS],
      ]);

      // The same moment: no lease has run out.
      expect(await worker.runOnce()).toBe(2);
      expect(await bench.statusTrail(ids[1]!)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
      expect(await bench.statusTrail(ids[2]!)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
      expect(await bench.status(ids[0]!)).toBe('OMSXMITTED');
      expect(
        await bench.store.db
          .selectFrom('outbox')
          .select('claimed_by')
          .where('order_id', '=', ids[0]!)
          .executeTakeFirstOrThrow(),
      ).toEqual({
        claimed_by: 'worker-b',
      });
      expect(
        bench.log.lines().filter((line) => line.msg === 'OMS gave back the outbox entries of a failed pass'),
      ).toEqual([expect.objectContaining({ workerId: 'worker-a', entries: 2 })]);
    } finally {
      lost.mockRestore();
    }
  });

  it('allocates in the loop soon after the close', async () => {
    const orderId = await bench.placeOrder({ quantity: 5 });
    const worker = bench.worker({ pollMs: 10 });
    worker.start();
    try {
      await untilStatus(orderId, 'PENDING');
      bench.clock.now += 2 * HOUR;
      await untilStatus(orderId, 'EXECUTED');
    } finally {
      await worker.stop();
    }
    expect(await bench.order(orderId)).toMatchObject({ traded_quantity: 5, traded_price_paise: 10_150 });
  });
});
