/**
 * SQLite's commits are synced off the event loop (src/store/sql/wal-sync.ts): the connections run
 * `synchronous=NORMAL` and the driver fdatasyncs the WAL after each commit. What FULL promised must still
 * hold: a commit is answered only after a sync of the WAL that began after it; nothing is read on the
 * other connection before it is on disk; a failed sync fails the commit and every later statement (503).
 * The disk is stood in for by a sync the test opens and closes (a gate), so the order is observed, not
 * timed.
 */
import { fstatSync, statSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';
import { WalSync } from '../../src/store/sql/wal-sync.js';
import { openTx } from '../../src/store/sql/write-tx.js';
import { createSqliteDatabase, testDialect, type TestDatabase } from '../support/databases.js';

/** A stand-in for the disk: each sync waits until the test lets it end (or fails it). */
class GatedDisk {
  readonly syncs: { fd: number; end: () => void; fail: (error: Error) => void }[] = [];

  readonly dataSync = (fd: number): Promise<void> =>
    new Promise((resolve, reject) => {
      this.syncs.push({ fd, end: resolve, fail: reject });
    });

  /** Ends every sync under way, and the ones they lead to, until none waits. */
  async drain(): Promise<void> {
    for (let turns = 0; turns < 100; turns++) {
      await new Promise((resolve) => setImmediate(resolve));
      const open = this.syncs.splice(0);
      if (open.length === 0) return;
      for (const sync of open) sync.end();
    }
  }
}

/** Whether `promise` has settled after the pending callbacks ran. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe.skipIf(testDialect() !== 'sqlite')('WalSync', () => {
  it('one sync at a time; the calls made while it runs share the one after it', async () => {
    const disk = new GatedDisk();
    const wal = new WalSync('/dev/null', disk.dataSync);
    expect(wal.settled()).toBeNull();
    const first = wal.durable();
    expect(disk.syncs).toHaveLength(1);
    const second = wal.durable();
    const third = wal.durable();
    expect(second).toBe(third);
    expect(disk.syncs).toHaveLength(1);
    expect(wal.settled()).toBe(second);

    disk.syncs.shift()!.end();
    await first;
    expect(await settledYet(second)).toBe(false);
    // The second began after the first ended.
    expect(disk.syncs).toHaveLength(1);
    disk.syncs.shift()!.end();
    await second;
    expect(wal.settled()).toBeNull();
    wal.close();
  });

  it('a failed sync fails every later call: the process has to be restarted', async () => {
    const disk = new GatedDisk();
    const wal = new WalSync('/dev/null', disk.dataSync);
    const first = wal.durable();
    const queued = wal.durable();
    disk.syncs.shift()!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(first).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(first).rejects.toThrow(/could not be synced to disk \(restart the process\): EIO/);
    await expect(queued).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(wal.durable()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(wal.settled()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(disk.syncs).toHaveLength(0);
    wal.close();
  });

  it('a WAL not created yet has nothing to sync', async () => {
    const disk = new GatedDisk();
    const wal = new WalSync('/nonexistent/ordergate.db-wal', disk.dataSync);
    await wal.durable();
    expect(disk.syncs).toHaveLength(0);
  });
});

describe.skipIf(testDialect() !== 'sqlite')('a SQLite store syncs each commit off the event loop', () => {
  let database: TestDatabase;
  let store: Store;
  let disk: GatedDisk;

  async function open(): Promise<void> {
    database = createSqliteDatabase();
    disk = new GatedDisk();
    store = openStore(database.databaseUrl, { sqliteDataSync: disk.dataSync });
    const migrated = migrateToLatest(store);
    while (!(await settledYet(migrated))) await disk.drain();
    await migrated;
  }

  afterEach(async () => {
    await disk.drain();
    await store.close();
    await database.dispose();
  });

  const path = () => database.databaseUrl.slice('sqlite:'.length);
  const insertIssue = (token: number) =>
    sql`insert into ofs_issues (exchange, scrip_token, symbol, series, floor_price_paise, tick_size_paise, offer_quantity, retail_reserve_pct,
      allocation, non_retail_opens_at, non_retail_closes_at, retail_opens_at, retail_closes_at, updated_at)
      values ('NSE_EQ', ${token}, 'SYM', 'EQ', 10000, 5, 1000, 10, 'PRICE_PRIORITY', 0, 1, 0, 1, 0)`;

  /** Waits, turn by turn of the event loop, until the condition holds; fails after 10,000 turns. */
  async function until(condition: () => boolean): Promise<void> {
    for (let turns = 0; !condition(); turns++) {
      if (turns === 10_000) throw new Error(`not reached: ${condition.toString()}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('runs synchronous=NORMAL, and answers a commit only after a sync of the WAL file that began after it', async () => {
    await open();
    for (const db of [store.db, store.readDb])
      expect((await sql`pragma synchronous`.execute(db)).rows).toEqual([{ synchronous: 1 }]);
    const committed = store.writeTransaction((tx) => insertIssue(1).execute(openTx(tx).trx));
    // The transaction's statements and its COMMIT have run: the sync is under way, the commit unanswered.
    await until(() => disk.syncs.length === 1);
    expect(await settledYet(committed)).toBe(false);
    // The sync is of the WAL file itself.
    expect(fstatSync(disk.syncs[0]!.fd).ino).toBe(statSync(`${path()}-wal`).ino);
    disk.syncs.shift()!.end();
    await committed;
    expect(disk.syncs).toHaveLength(0);
  });

  it('a write outside a transaction is answered after its sync too; a BEGIN or a read starts none', async () => {
    await open();
    const written = insertIssue(2).execute(store.db);
    await until(() => disk.syncs.length === 1);
    expect(await settledYet(written)).toBe(false);
    disk.syncs.shift()!.end();
    await written;
    await store.db.selectFrom('ofs_issues').selectAll().execute();
    await store.readDb.selectFrom('ofs_issues').selectAll().execute();
    const idle = store.writeTransaction(async (tx) => {
      await openTx(tx).trx.selectFrom('ofs_issues').selectAll().execute();
      // BEGIN has run, and a read: no sync was asked for.
      expect(disk.syncs).toHaveLength(0);
    });
    // Its COMMIT, like any, is synced.
    await until(() => disk.syncs.length === 1);
    disk.syncs.shift()!.end();
    await idle;
  });

  it('a row write outside a transaction that changed no row starts no sync; one that changed a row, or DDL, does', async () => {
    await open();
    // The OMS's claim when nothing is due (every pass): an UPDATE ... RETURNING of no row.
    const claimed = await sql`update outbox set claimed_by = 'w' where id < 0 returning id`.execute(store.db);
    expect(claimed.rows).toEqual([]);
    await sql`delete from ofs_issues where scrip_token = -1`.execute(store.db);
    await sql`insert into ofs_issues select * from ofs_issues where scrip_token = -1`.execute(store.db);
    expect(disk.syncs).toHaveLength(0);

    // An UPDATE of a row waits for its sync.
    const inserted = insertIssue(4).execute(store.db);
    await until(() => disk.syncs.length === 1);
    disk.syncs.shift()!.end();
    await inserted;
    const changed = sql`update ofs_issues set updated_at = 1 where scrip_token = 4 returning scrip_token`.execute(
      store.db,
    );
    await until(() => disk.syncs.length === 1);
    expect(await settledYet(changed)).toBe(false);
    disk.syncs.shift()!.end();
    expect((await changed).rows).toHaveLength(1);

    // DDL changes no row by SQLite's count, and is synced all the same.
    const created = sql`create table scratch (id integer)`.execute(store.db);
    await until(() => disk.syncs.length === 1);
    expect(await settledYet(created)).toBe(false);
    disk.syncs.shift()!.end();
    await created;
  });

  it('the other connection reads a commit only once it is on disk (SQLite itself would show it before)', async () => {
    await open();
    const committed = store.writeTransaction((tx) => insertIssue(3).execute(openTx(tx).trx));
    await until(() => disk.syncs.length === 1);
    // A connection that does not wait sees the row already: the wait below is what keeps it unread.
    const plain = new SqliteDatabase(path(), { readonly: true });
    expect(plain.prepare('select scrip_token from ofs_issues where scrip_token = 3').all()).toEqual([
      { scrip_token: 3 },
    ]);
    plain.close();
    const read = store.readDb.selectFrom('ofs_issues').select('scrip_token').where('scrip_token', '=', 3).execute();
    expect(await settledYet(read)).toBe(false);
    disk.syncs.shift()!.end();
    expect(await read).toEqual([{ scrip_token: 3 }]);
    await committed;
  });

  it("hands the write connection to the next transaction during a commit's sync, and answers each after a sync begun after its commit", async () => {
    await open();
    const first = store.writeTransaction((tx) => insertIssue(7).execute(openTx(tx).trx));
    await until(() => disk.syncs.length === 1);
    // The next transaction runs whole, its COMMIT included, while the first one's sync is under way: it
    // reads the first one's row, not yet on disk, and is answered after both syncs.
    let seen: unknown[] = [];
    const second = store.writeTransaction(async (tx) => {
      seen = await openTx(tx).trx.selectFrom('ofs_issues').select('scrip_token').where('scrip_token', '=', 7).execute();
      await insertIssue(8).execute(openTx(tx).trx);
    });
    await until(() => seen.length === 1);
    expect(await settledYet(first)).toBe(false);
    // A read outside any transaction, on either connection, still waits until the first commit is on disk.
    const outside = store.db.selectFrom('ofs_issues').select('scrip_token').where('scrip_token', '=', 8).execute();
    const elsewhere = store.readDb
      .selectFrom('ofs_issues')
      .select('scrip_token')
      .where('scrip_token', '=', 7)
      .execute();
    expect(await settledYet(outside)).toBe(false);
    expect(await settledYet(elsewhere)).toBe(false);
    disk.syncs.shift()!.end();
    await first;
    // The second commit ran during the first sync: the sync after it covers it.
    await until(() => disk.syncs.length === 1);
    expect(await settledYet(second)).toBe(false);
    disk.syncs.shift()!.end();
    await second;
    expect(await elsewhere).toEqual([{ scrip_token: 7 }]);
    expect(await outside).toEqual([{ scrip_token: 8 }]);
  });

  it('a sync that fails after the next transaction took the connection fails both, and rolls back neither on its behalf', async () => {
    await open();
    const first = store.writeTransaction((tx) => insertIssue(9).execute(openTx(tx).trx));
    await until(() => disk.syncs.length === 1);
    let secondRan = false;
    const second = store.writeTransaction(async (tx) => {
      await insertIssue(10).execute(openTx(tx).trx);
      secondRan = true;
    });
    await until(() => secondRan);
    disk.syncs.shift()!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(first).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(second).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(store.writeTransaction((tx) => insertIssue(11).execute(openTx(tx).trx))).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
  });

  it("the credentials' connection reads a commit without waiting for its sync, and cannot write", async () => {
    await open();
    const committed = store.writeTransaction((tx) => insertIssue(6).execute(openTx(tx).trx));
    await until(() => disk.syncs.length === 1);
    // Store.credentialsDb: a session reaches its holder only after its commit's sync, so reading it sooner lets nothing in.
    const early = await store.credentialsDb
      .selectFrom('ofs_issues')
      .select('scrip_token')
      .where('scrip_token', '=', 6)
      .execute();
    expect(early).toEqual([{ scrip_token: 6 }]);
    expect(await settledYet(committed)).toBe(false);
    // Read-only: a write on it, which would never wait for a sync, is refused by SQLite.
    await expect(sql`delete from ofs_issues where scrip_token = 6`.execute(store.credentialsDb)).rejects.toThrow(
      /readonly/i,
    );
    disk.syncs.shift()!.end();
    await committed;
    expect(
      (await store.readDb.selectFrom('ofs_issues').select('scrip_token').where('scrip_token', '=', 6).execute()).length,
    ).toBe(1);
  });

  it('a failed sync fails its commit (503) and every statement after it, reads included', async () => {
    await open();
    const committed = store.writeTransaction((tx) => insertIssue(4).execute(openTx(tx).trx));
    await until(() => disk.syncs.length === 1);
    disk.syncs.shift()!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(committed).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(store.writeTransaction((tx) => insertIssue(5).execute(openTx(tx).trx))).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
    await expect(store.readDb.selectFrom('ofs_issues').selectAll().execute()).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
    await expect(store.db.selectFrom('ofs_issues').selectAll().execute()).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
    await expect(store.credentialsDb.selectFrom('sessions').selectAll().execute()).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
    expect(disk.syncs).toHaveLength(0);
  });
});
