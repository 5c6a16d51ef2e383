/**
 * Funds through the OMS (docs/design/funds.md): the risk step blocks what a bid needs out of its bidder's
 * available funds or rejects it naming the amounts; a modification blocks for its new terms before they go
 * to the exchange; a finished bid releases its block; an allotment debits its cost. Available funds never
 * go below zero, also with workers on several nodes judging one bidder's bids at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FundsAccount } from '../../src/domain/funds/funds.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { HOUR, OmsBench, T0 } from './fixture.js';

let bench: OmsBench;
let funds: FundsRepository;
beforeEach(async () => {
  bench = await OmsBench.open();
  funds = new FundsRepository(bench.store.db, bench.store.dialect);
});
afterEach(async () => {
  expect(bench.errors()).toEqual([]);
  await bench.close();
});

async function deposit(userId: string, paise: number): Promise<void> {
  const result = await bench.store.writeTransaction((tx) => funds.deposit(tx, userId, paise, bench.clock.now));
  expect(result).not.toBe('would-exceed-max');
}

async function account(userId: string): Promise<Pick<FundsAccount, 'cashPaise' | 'blockedPaise' | 'debitedPaise'>> {
  const found = await funds.find(userId);
  if (found === undefined) throw new Error(`no funds account for ${userId}`);
  return { cashPaise: found.cashPaise, blockedPaise: found.blockedPaise, debitedPaise: found.debitedPaise };
}

/** The ledger's order entries of a user, oldest first, as [kind, amount, order]. */
async function orderLedger(userId: string) {
  const rows = await bench.store.db
    .selectFrom('funds_ledger')
    .select(['kind', 'amount_paise', 'order_id'])
    .where('user_id', '=', userId)
    .where('order_id', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map((row) => [row.kind, Number(row.amount_paise), row.order_id]);
}

/** The store, with every write transaction kept open 20 ms after its work, before it commits. */
function slowCommits(store: Store): Store {
  return {
    ...store,
    writeTransaction: (work) =>
      store.writeTransaction(async (tx) => {
        const result = await work(tx);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return result;
      }),
  };
}

const blocked = async (orderId: string) => {
  const value = (await bench.order(orderId)).funds_blocked_paise;
  return value === null ? null : Number(value);
};

describe('the risk step', () => {
  it('leaves a bidder without a funds account unchecked: the bid goes on, nothing blocked', async () => {
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 1_000, pricePaise: 10_150 });
    await bench.worker().runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(await blocked(orderId)).toBeNull();
    expect(await funds.find('retail1')).toBeUndefined();
  });

  it('blocks quantity x price out of the available funds, and says so in the history', async () => {
    await deposit('retail1', 1_000_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    await bench.worker().runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(await blocked(orderId)).toBe(101_500);
    expect(await account('retail1')).toEqual({ cashPaise: 1_000_000, blockedPaise: 101_500, debitedPaise: 0 });
    expect((await bench.history(orderId)).map((entry) => entry.reason)).toContain(
      'Funds of Rs 1,015.00 blocked; sent to the exchange',
    );
    expect(await orderLedger('retail1')).toEqual([['BLOCK', 101_500, orderId]]);
  });

  it('a bid the exchange refuses in the commit that admitted it: its block released in the same commit, no ledger row', async () => {
    await deposit('retail1', 1_000_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    // The issue is re-imported with a higher floor after the order was accepted: the exchange refuses it.
    await bench.registerIssue({ floorPricePaise: 10_200 });
    await bench.worker().runOnce();
    expect(await bench.status(orderId)).toBe('ORDERERROR');
    expect((await bench.history(orderId)).map((entry) => entry.reason)).toEqual([
      'Order entry accepted and queued for the OMS',
      'Funds of Rs 1,015.00 blocked; sent to the exchange',
      'Rejected by the exchange: Price 101.50 is below the floor price 102.00',
    ]);
    expect(await blocked(orderId)).toBe(0);
    expect(await account('retail1')).toEqual({ cashPaise: 1_000_000, blockedPaise: 0, debitedPaise: 0 });
    // The account is the sum of its ledger: it never changed, so the ledger has nothing of the bid.
    expect(await orderLedger('retail1')).toEqual([]);
  });

  it("blocks a cut-off bid at the issue's retail cut-off price", async () => {
    await deposit('retail1', 1_000_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', orderType: 'RL-MKT', quantity: 20, pricePaise: 0 });
    await bench.worker().runOnce();
    expect(await blocked(orderId)).toBe(20 * 10_100);
  });

  it('rejects (OMSREJECT) a bid that needs more than the available funds, naming the amounts; it never reaches the exchange', async () => {
    await deposit('retail1', 100_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    await bench.worker().runOnce();
    const order = await bench.order(orderId);
    expect(order.status).toBe('OMSREJECT');
    expect(order.error_reason).toBe('Rejected by the OMS: the bid needs Rs 1,015.00 of funds; Rs 1,000.00 available');
    expect(order.funds_blocked_paise).toBeNull();
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
    expect(await account('retail1')).toEqual({ cashPaise: 100_000, blockedPaise: 0, debitedPaise: 0 });
    expect(await orderLedger('retail1')).toEqual([]);
  });

  it('judges the bids of one batch in order: each sees the funds the ones before it blocked', async () => {
    await deposit('retail1', 250_000);
    const ids = [];
    for (let i = 0; i < 3; i += 1)
      ids.push(await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 }));
    await bench.worker().runOnce();
    expect(await Promise.all(ids.map((id) => bench.status(id)))).toEqual(['PENDING', 'PENDING', 'OMSREJECT']);
    expect(await account('retail1')).toEqual({ cashPaise: 250_000, blockedPaise: 203_000, debitedPaise: 0 });
  });
});

describe('releases and debits', () => {
  it('releases the block of a cancelled bid', async () => {
    await deposit('retail1', 1_000_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestCancellation(orderId);
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('CANCELLED');
    expect(await blocked(orderId)).toBe(0);
    expect(await account('retail1')).toEqual({ cashPaise: 1_000_000, blockedPaise: 0, debitedPaise: 0 });
    expect(await orderLedger('retail1')).toEqual([
      ['BLOCK', 101_500, orderId],
      ['RELEASE', 101_500, orderId],
    ]);
  });

  it('at allotment debits allotted x price and releases the block; a bid not allotted only releases', async () => {
    await deposit('retail1', 1_000_000);
    await deposit('inst1', 100_000_000);
    // Retail demand 60 of a 100-share retail portion (all allotted); non-retail 1,000 at 101.50 and 50 at
    // 100.00 for 900 shares: the clearing price is 101.50, the bid at 100.00 gets nothing.
    const retail = await bench.placeOrder({ userId: 'retail1', quantity: 60, pricePaise: 10_150 });
    const big = await bench.placeOrder({ userId: 'inst1', quantity: 1_000, pricePaise: 10_150 });
    const low = await bench.placeOrder({ userId: 'inst1', quantity: 50, pricePaise: 10_000 });
    const worker = bench.worker();
    await worker.runOnce();
    expect(await account('inst1')).toMatchObject({ blockedPaise: 1_000 * 10_150 + 50 * 10_000 });

    bench.clock.now = T0 + 2 * HOUR;
    await worker.runOnce();

    const allotted = await bench.order(big);
    expect(allotted).toMatchObject({ status: 'EXECUTED' });
    const cost = Number(allotted.traded_quantity) * Number(allotted.traded_price_paise);
    expect(cost).toBeGreaterThan(0);
    expect(await bench.status(low)).toBe('CANCELLED');
    expect(await account('inst1')).toEqual({ cashPaise: 100_000_000 - cost, blockedPaise: 0, debitedPaise: cost });
    const ledger = await orderLedger('inst1');
    expect(ledger.slice(0, 2)).toEqual([
      ['BLOCK', 1_000 * 10_150, big],
      ['BLOCK', 50 * 10_000, low],
    ]);
    // The allocation's entries come in the order of its events.
    expect(ledger.slice(2)).toHaveLength(3);
    expect(ledger.slice(2)).toEqual(
      expect.arrayContaining([
        ['RELEASE', 1_000 * 10_150, big],
        ['DEBIT', cost, big],
        ['RELEASE', 50 * 10_000, low],
      ]),
    );
    const retailOrder = await bench.order(retail);
    const retailCost = Number(retailOrder.traded_quantity) * Number(retailOrder.traded_price_paise);
    expect(await account('retail1')).toEqual({
      cashPaise: 1_000_000 - retailCost,
      blockedPaise: 0,
      debitedPaise: retailCost,
    });
  });
});

describe('modifications', () => {
  it('blocks more before a larger modification goes to the exchange, and releases the difference after a smaller one', async () => {
    await deposit('retail1', 1_000_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    const worker = bench.worker();
    await worker.runOnce();

    await bench.requestModification(orderId, { quantity: 30, pricePaise: 10_200 });
    await worker.runOnce();
    expect(await bench.exchangeBid(orderId)).toMatchObject({ quantity: 30, price_paise: 10_200 });
    expect(await blocked(orderId)).toBe(306_000);
    expect(await account('retail1')).toMatchObject({ blockedPaise: 306_000 });
    expect((await bench.history(orderId)).map((entry) => entry.reason).slice(-2)).toEqual([
      'Funds of Rs 2,045.00 more blocked for the new terms',
      'Modified at the exchange',
    ]);

    await bench.requestModification(orderId, { quantity: 5, pricePaise: 10_150 });
    await worker.runOnce();
    expect(await blocked(orderId)).toBe(50_750);
    expect(await account('retail1')).toMatchObject({ cashPaise: 1_000_000, blockedPaise: 50_750 });
    expect(await orderLedger('retail1')).toEqual([
      ['BLOCK', 101_500, orderId],
      ['BLOCK', 204_500, orderId],
      ['RELEASE', 255_250, orderId],
    ]);
  });

  it('refuses in the OMS a modification the funds cannot cover: the order keeps the terms the exchange holds and its block', async () => {
    await deposit('retail1', 200_000);
    const orderId = await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 });
    const worker = bench.worker();
    await worker.runOnce();

    await bench.requestModification(orderId, { quantity: 20, pricePaise: 10_150 });
    await worker.runOnce();

    expect(await bench.exchangeBid(orderId)).toMatchObject({ quantity: 10, price_paise: 10_150 });
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 10, price_paise: 10_150 });
    expect(await blocked(orderId)).toBe(101_500);
    expect((await bench.history(orderId)).at(-1)!.reason).toBe(
      'Modification refused by the OMS: the new terms need Rs 1,015.00 more funds (Rs 2,030.00 in all); Rs 985.00 available; the order keeps its terms at the exchange',
    );
    expect(await account('retail1')).toEqual({ cashPaise: 200_000, blockedPaise: 101_500, debitedPaise: 0 });
  });
});

describe('several nodes', () => {
  it("never blocks more than there is when workers on three nodes judge one bidder's bids at once", async () => {
    const cost = 10 * 10_150;
    await deposit('retail1', 7 * cost + 5);
    const ids = [];
    for (let i = 0; i < 30; i += 1)
      ids.push(await bench.placeOrder({ userId: 'retail1', quantity: 10, pricePaise: 10_150 }));
    // On PostgreSQL each node holds its transactions open a while after their work, as a loaded node would:
    // nodes that judged on what they read without locking the account would each block the same funds.
    // (SQLite has one writer at a time; its connections in one process must not hold it across a timer, as
    // better-sqlite3 waits for a busy database synchronously.)
    const node = (store: Store) => (store.dialect === 'postgres' ? slowCommits(store) : store);
    const stores = [0, 1, 2].map(() => node(openStore(bench.databaseUrl)));
    try {
      // Small batches, so that the nodes' transactions interleave.
      const workers = stores.map((store) => bench.worker({ store, batchSize: 2 }));
      for (let pass = 0; pass < 20 && (await bench.openOutbox()) > 0; pass += 1)
        await Promise.all(workers.map((worker) => worker.runOnce()));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    const statuses = await Promise.all(ids.map((id) => bench.status(id)));
    expect(statuses.filter((status) => status === 'PENDING')).toHaveLength(7);
    expect(statuses.filter((status) => status === 'OMSREJECT')).toHaveLength(23);
    expect(await account('retail1')).toEqual({ cashPaise: 7 * cost + 5, blockedPaise: 7 * cost, debitedPaise: 0 });
    const blocks = await Promise.all(ids.map((id) => blocked(id)));
    expect(blocks.reduce<number>((sum, value) => sum + (value ?? 0), 0)).toBe(7 * cost);
  });
});
