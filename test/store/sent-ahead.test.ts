/**
 * Statements sent ahead in a write transaction (WriteTx.ahead, store/sql/write-tx.ts): on PostgreSQL they go
 * out without waiting for their answer, and the statements after them, or the commit, go out behind them.
 * Whatever the dialect: the server runs them in the order sent, a failure of one fails the transaction
 * with its own error (not the "transaction is aborted" of the statements after it), and a failed
 * transaction keeps nothing.
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { openTx, sendAhead } from '../../src/store/sql/write-tx.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/databases.js';

let database: TestDatabase;
let store: Store;

beforeAll(async () => {
  database = await createTestDatabase();
  store = openStore(database.databaseUrl);
  await sql`create table ahead_probe (id integer primary key, note text not null)`.execute(store.db);
  await sql`create table ahead_parent (id integer primary key)`.execute(store.db);
  // Checked at the commit: a child without its parent fails the COMMIT itself.
  await sql`create table ahead_child (id integer primary key, parent integer not null references ahead_parent (id) deferrable initially deferred)`.execute(
    store.db,
  );
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

const insert = (id: number, note: string) =>
  CompiledQuery.raw(`insert into ahead_probe (id, note) values (${id}, '${note}')`);
const notes = async () =>
  (await sql<{ id: number; note: string }>`select id, note from ahead_probe order by id`.execute(store.db)).rows.map(
    (r) => [Number(r.id), r.note],
  );
const DUPLICATE = /duplicate key|UNIQUE constraint/;

describe('a statement sent ahead', () => {
  it('is pipelined on PostgreSQL and awaited elsewhere', () =>
    store.writeTransaction(async (storeTx) => {
      expect(openTx(storeTx).ahead !== null).toBe(testDialect() === 'postgres');
    }));

  it('runs before the statements after it, and the commit keeps it', async () => {
    const seen = await store.writeTransaction(async (storeTx) => {
      const tx = openTx(storeTx);
      await sendAhead(tx, insert(1, 'first'));
      await sendAhead(tx, CompiledQuery.raw(`update ahead_probe set note = note || ', then updated' where id = 1`));
      return (
        await tx.trx.executeQuery<{ note: string }>(CompiledQuery.raw('select note from ahead_probe where id = 1'))
      ).rows;
    });
    expect(seen).toEqual([{ note: 'first, then updated' }]);
    expect(await notes()).toEqual([[1, 'first, then updated']]);
  });

  it('that fails fails the transaction with its own error, not that of the statements after it, and nothing is kept', async () => {
    let after: unknown = 'not run';
    const failed = store.writeTransaction(async (storeTx) => {
      const tx = openTx(storeTx);
      await sendAhead(tx, insert(2, 'kept only if the transaction commits'));
      await sendAhead(tx, insert(1, 'a duplicate'));
      try {
        await tx.trx.executeQuery(insert(3, 'after the failure'));
        after = 'answered';
      } catch (error) {
        after = error;
        throw error;
      }
    });
    await expect(failed).rejects.toThrow(DUPLICATE);
    // On PostgreSQL the statement after it was refused for the aborted transaction; on SQLite it never ran.
    if (testDialect() === 'postgres') expect(String(after)).toMatch(/current transaction is aborted/);
    else expect(after).toBe('not run');
    expect(await notes()).toEqual([[1, 'first, then updated']]);
  });

  it('that fails as the last statement makes the commit roll back, and its error is thrown', async () => {
    const failed = store.writeTransaction(async (storeTx) => {
      const tx = openTx(storeTx);
      await tx.trx.executeQuery(insert(4, 'written and awaited'));
      await sendAhead(tx, insert(1, 'a duplicate, sent last'));
      return 'the work ended';
    });
    await expect(failed).rejects.toThrow(DUPLICATE);
    expect(await notes()).toEqual([[1, 'first, then updated']]);
  });

  it('that passes, in a transaction whose COMMIT fails: the error of the commit is thrown, and nothing is kept', async () => {
    const failed = store.writeTransaction(async (storeTx) => {
      const tx = openTx(storeTx);
      await sendAhead(tx, insert(5, 'kept only if the commit passes'));
      await sendAhead(tx, CompiledQuery.raw('insert into ahead_child (id, parent) values (1, 404)'));
    });
    await expect(failed).rejects.toThrow(/foreign key/i);
    expect(await notes()).toEqual([[1, 'first, then updated']]);
    expect((await sql`select id from ahead_child`.execute(store.db)).rows).toEqual([]);
  });

  it('leaves the connection fit for the next transaction', async () => {
    // The pool's connections have been through failed transactions above; each of them takes a new one.
    for (let i = 0; i < 12; i++)
      await store.writeTransaction(async (storeTx) => sendAhead(openTx(storeTx), insert(10 + i, `row ${i}`)));
    expect((await notes()).length).toBe(13);
  });
});
