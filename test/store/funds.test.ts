/**
 * The funds store on the run's database (SQLite, or PostgreSQL in the postgres project): deposits open and
 * add to an account, a withdrawal never takes available funds below zero, also when many run at once on two
 * nodes beside the OMS's blocks, and the ledger is append-only in the database itself.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availablePaise, MAX_CASH_PAISE, type FundsAccount } from '../../src/domain/funds/funds.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { UserRepository } from '../../src/store/access/users.js';
import { openTx } from '../../src/store/sql/write-tx.js';
import { createMigratedTestDatabase, testDialect, type TestDatabase } from '../support/databases.js';

const T0 = Date.parse('2026-11-23T05:00:00Z');

let database: TestDatabase;
let store: Store;
let funds: FundsRepository;
let userCount = 0;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  await migrateToLatest(store);
  funds = new FundsRepository(store.db, store.dialect);
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

/** A new user of its own. */
async function newUser(): Promise<string> {
  const userId = `user${++userCount}`;
  await new UserRepository(store.db, store.dialect).create({
    userId,
    passwordHash: 'x',
    category: 'RETAIL',
    totpSecret: null,
    now: T0,
  });
  return userId;
}

const deposit = (userId: string, paise: number, at = T0, on: Store = store) =>
  on.writeTransaction((tx) => new FundsRepository(on.db, on.dialect).deposit(tx, userId, paise, at));
const withdraw = (userId: string, paise: number, at = T0, on: Store = store) =>
  on.writeTransaction((tx) => new FundsRepository(on.db, on.dialect).withdraw(tx, userId, paise, at));

async function ledgerRows(userId: string) {
  return (await funds.ledger(userId, 1000)).map(({ kind, amountPaise, orderId }) => ({ kind, amountPaise, orderId }));
}

describe('deposit', () => {
  it('opens the account with the first deposit and adds to cash after it, one DEPOSIT row each', async () => {
    const userId = await newUser();
    expect(await funds.find(userId)).toBeUndefined();
    expect(await deposit(userId, 250_000_00, T0)).toEqual({
      userId,
      cashPaise: 250_000_00,
      blockedPaise: 0,
      debitedPaise: 0,
      createdAt: T0,
      updatedAt: T0,
    });
    expect(await deposit(userId, 50, T0 + 1000)).toEqual({
      userId,
      cashPaise: 250_000_50,
      blockedPaise: 0,
      debitedPaise: 0,
      createdAt: T0,
      updatedAt: T0 + 1000,
    });
    expect(await funds.find(userId)).toMatchObject({ cashPaise: 250_000_50 });
    expect(await ledgerRows(userId)).toEqual([
      { kind: 'DEPOSIT', amountPaise: 50, orderId: null },
      { kind: 'DEPOSIT', amountPaise: 250_000_00, orderId: null },
    ]);
  });

  it('refuses, changing nothing, a deposit that would take cash past MAX_CASH_PAISE, and accepts one up to it', async () => {
    const userId = await newUser();
    await deposit(userId, MAX_CASH_PAISE - 100);
    expect(await deposit(userId, 101)).toBe('would-exceed-max');
    expect(await deposit(userId, MAX_CASH_PAISE + 1)).toBe('would-exceed-max');
    expect(await funds.find(userId)).toMatchObject({ cashPaise: MAX_CASH_PAISE - 100 });
    expect(await deposit(userId, 100)).toMatchObject({ cashPaise: MAX_CASH_PAISE });
    expect((await funds.find(userId))!.cashPaise).toBe(9_000_000_000_000_000);
    expect(await ledgerRows(userId)).toHaveLength(2);
  });
});

describe('withdraw', () => {
  it('takes cash out of what is available', async () => {
    const userId = await newUser();
    await deposit(userId, 1_000_00);
    expect(await withdraw(userId, 400_00, T0 + 5)).toMatchObject({
      cashPaise: 600_00,
      blockedPaise: 0,
      updatedAt: T0 + 5,
    });
    expect(await withdraw(userId, 600_00)).toMatchObject({ cashPaise: 0 });
    expect(await ledgerRows(userId)).toEqual([
      { kind: 'WITHDRAW', amountPaise: 600_00, orderId: null },
      { kind: 'WITHDRAW', amountPaise: 400_00, orderId: null },
      { kind: 'DEPOSIT', amountPaise: 1_000_00, orderId: null },
    ]);
  });

  it('refuses, changing nothing, a withdrawal beyond the available funds (cash less what bids block)', async () => {
    const userId = await newUser();
    await deposit(userId, 1_000_00);
    await store.db.updateTable('funds_accounts').set({ blocked_paise: 700_00 }).where('user_id', '=', userId).execute();
    const before = await funds.find(userId);
    const refused = await withdraw(userId, 300_01, T0 + 9);
    expect(refused).toEqual({ insufficient: before });
    expect(await funds.find(userId)).toEqual(before);
    expect(await ledgerRows(userId)).toEqual([{ kind: 'DEPOSIT', amountPaise: 1_000_00, orderId: null }]);
    expect(await withdraw(userId, 300_00)).toMatchObject({ cashPaise: 700_00, blockedPaise: 700_00 });
  });

  it('answers no-account for a user without one, creating none', async () => {
    const userId = await newUser();
    expect(await withdraw(userId, 1)).toBe('no-account');
    expect(await funds.find(userId)).toBeUndefined();
  });
});

describe('at once', () => {
  let nodeB: Store;
  beforeAll(() => {
    // PostgreSQL: a second node, with its own connections to the same database. SQLite has one writer per
    // file, and a second connection in this process would wait for it synchronously, holding up the first.
    nodeB = testDialect() === 'postgres' ? openStore(database.databaseUrl) : store;
  });
  afterAll(async () => {
    if (nodeB !== store) await nodeB.close();
  });

  it('20 withdrawals of which only 5 fit, each in its own transaction on two nodes: exactly 5 succeed, available never below zero', async () => {
    const userId = await newUser();
    await deposit(userId, 1_000_00);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => withdraw(userId, 200_00, T0 + i, i % 2 === 0 ? store : nodeB)),
    );
    const accepted = results.filter((r): r is FundsAccount => typeof r === 'object' && 'cashPaise' in r);
    expect(accepted).toHaveLength(5);
    expect(results.filter((r) => typeof r === 'object' && 'insufficient' in r)).toHaveLength(15);
    // Each accepted withdrawal saw the one before it: cash fell 200 at a time.
    expect(accepted.map((a) => a.cashPaise).sort((a, b) => a - b)).toEqual([0, 200_00, 400_00, 600_00, 800_00]);
    expect(await funds.find(userId)).toMatchObject({ cashPaise: 0, blockedPaise: 0 });
    expect((await ledgerRows(userId)).filter((row) => row.kind === 'WITHDRAW')).toHaveLength(5);
  });

  it('withdrawals beside blocks taken as the OMS takes them (lock, check, add) never take available below zero', async () => {
    const userId = await newUser();
    await deposit(userId, 1_000_00);
    /** A bid's block as the OMS risk step takes it: the account locked, then blocked only when available. */
    const block = (on: Store, paise: number) =>
      on.writeTransaction(async (tx) => {
        const repository = new FundsRepository(on.db, on.dialect);
        const account = (await repository.lockAccounts(tx, [userId])).get(userId)!;
        // Give the other transactions time to interleave while the lock is held.
        await new Promise((resolve) => setTimeout(resolve, 2));
        if (availablePaise(account) < paise) return false;
        await sql`update funds_accounts set blocked_paise = blocked_paise + ${paise} where user_id = ${userId}`.execute(
          openTx(tx).trx,
        );
        return true;
      });
    const work = Array.from({ length: 24 }, (_, i) => {
      const on = i % 2 === 0 ? store : nodeB;
      return i % 3 === 0
        ? block(on, 150_00).then((ok) => ({ kind: 'block' as const, ok }))
        : withdraw(userId, 100_00, T0, on).then((r) => ({
            kind: 'withdraw' as const,
            ok: typeof r === 'object' && 'cashPaise' in r,
          }));
    });
    const outcomes = await Promise.all(work);
    const blocked = outcomes.filter((o) => o.kind === 'block' && o.ok).length * 150_00;
    const withdrawn = outcomes.filter((o) => o.kind === 'withdraw' && o.ok).length * 100_00;
    const account = (await funds.find(userId))!;
    expect(account).toMatchObject({ cashPaise: 1_000_00 - withdrawn, blockedPaise: blocked });
    expect(availablePaise(account)).toBeGreaterThanOrEqual(0);
    // 8 blocks of 150 and 16 withdrawals of 100 ask for 2,800 of 1,000: some were refused.
    expect(blocked + withdrawn).toBeLessThanOrEqual(1_000_00);
    expect(blocked + withdrawn).toBeGreaterThan(1_000_00 - 150_00);
  });
});

describe('lockAccounts', () => {
  it('answers the accounts of the users who have one, in a transaction', async () => {
    const [a, b, none] = [await newUser(), await newUser(), await newUser()];
    await deposit(a, 1_00);
    await deposit(b, 2_00);
    const locked = await store.writeTransaction((tx) => funds.lockAccounts(tx, [b, none, a, 'nobody']));
    expect([...locked.keys()].sort()).toEqual([a, b].sort());
    expect(locked.get(a)).toMatchObject({ userId: a, cashPaise: 1_00, blockedPaise: 0, debitedPaise: 0 });
    expect(locked.get(b)).toMatchObject({ userId: b, cashPaise: 2_00 });
    expect(await store.writeTransaction((tx) => funds.lockAccounts(tx, []))).toEqual(new Map());
  });
});

describe('the ledger', () => {
  it("lists a user's entries newest first, at most `limit`, and no other user's", async () => {
    const [userId, other] = [await newUser(), await newUser()];
    for (let i = 1; i <= 5; i++) await deposit(userId, i, T0 + i);
    await deposit(other, 99);
    const entries = await funds.ledger(userId, 3);
    expect(entries.map((e) => [e.kind, e.amountPaise, e.at, e.userId])).toEqual([
      ['DEPOSIT', 5, T0 + 5, userId],
      ['DEPOSIT', 4, T0 + 4, userId],
      ['DEPOSIT', 3, T0 + 3, userId],
    ]);
    expect(entries[0]!.id).toBeGreaterThan(entries[1]!.id);
  });

  it('is append-only: the database refuses UPDATE and DELETE of its rows, whoever asks', async () => {
    const userId = await newUser();
    await deposit(userId, 1_00);
    const [entry] = await funds.ledger(userId, 1);
    await expect(
      store.db.updateTable('funds_ledger').set({ amount_paise: 1_000_000_00 }).where('id', '=', entry!.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(store.db.updateTable('funds_ledger').set({ user_id: 'mallory' }).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(store.db.deleteFrom('funds_ledger').where('id', '=', entry!.id).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(store.db.deleteFrom('funds_ledger').execute()).rejects.toThrow(/append-only/);
    if (testDialect() === 'postgres')
      await expect(sql`truncate funds_ledger`.execute(store.db)).rejects.toThrow(/append-only/);
    expect(await funds.ledger(userId, 10)).toEqual([entry]);
  });

  it('takes only the five kinds, and amounts above zero', async () => {
    const userId = await newUser();
    const row = { user_id: userId, at: T0, order_id: null };
    await expect(
      store.db
        .insertInto('funds_ledger')
        .values({ ...row, kind: 'GIFT', amount_paise: 1 })
        .execute(),
    ).rejects.toThrow();
    await expect(
      store.db
        .insertInto('funds_ledger')
        .values({ ...row, kind: 'DEPOSIT', amount_paise: 0 })
        .execute(),
    ).rejects.toThrow();
    await expect(
      store.db
        .insertInto('funds_ledger')
        .values({ ...row, kind: 'DEBIT', amount_paise: -5 })
        .execute(),
    ).rejects.toThrow();
    expect(await funds.ledger(userId, 10)).toEqual([]);
  });
});

describe('orders.funds_blocked_paise', () => {
  it('exists and is nullable: an order that is not funds-checked has none', async () => {
    const columns = await store.db.introspection.getTables();
    const column = columns.find((t) => t.name === 'orders')!.columns.find((c) => c.name === 'funds_blocked_paise');
    expect(column).toMatchObject({ isNullable: true });
  });
});
