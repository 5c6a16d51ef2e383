/**
 * The SQLite connection reads rows as arrays and makes their objects itself (src/store/sql/sqlite-driver.ts):
 * the objects must be what better-sqlite3's own would be (names, order, a repeated name's last value, every
 * type), through Kysely and through the batch reads alike, and a statement is used only in its own way.
 */
import Database from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  jsonArrayOf,
  OrdergateSqliteDialect,
  type StatementCachingConnection,
} from '../../src/store/sql/sqlite-driver.js';

const QUERY = `select 1 as a, 'x' as b, null as c, 2.5 as d, x'00ff' as e, 3 as a, 9007199254740991 as big`;

describe('SQLite rows', () => {
  let sqlite: Database.Database;
  let plain: Database.Database;
  let connection: StatementCachingConnection;
  let db: Kysely<Record<string, never>>;

  beforeEach(() => {
    sqlite = new Database(':memory:');
    plain = new Database(':memory:');
    const dialect = new OrdergateSqliteDialect(sqlite);
    connection = dialect.connection;
    db = new Kysely({ dialect });
    for (const handle of [sqlite, plain]) {
      handle.exec('create table t (id integer primary key, name text not null, amount integer, note text)');
      handle.exec("insert into t (name, amount, note) values ('one', 10, null), ('two', 20, 'second')");
    }
  });

  afterEach(async () => {
    await db.destroy();
    plain.close();
  });

  it("makes each row's object as better-sqlite3 would: its names in order, a repeated name's last value, every type", async () => {
    const expected = plain.prepare(QUERY).all();
    expect(Object.keys(expected[0] as object)).toEqual(['a', 'b', 'c', 'd', 'e', 'big']);
    expect(connection.rows(QUERY)).toEqual(expected);
    expect(Object.keys(connection.rows(QUERY)[0] as object)).toEqual(['a', 'b', 'c', 'd', 'e', 'big']);
    expect(connection.row(QUERY)).toEqual(plain.prepare(QUERY).get());
    expect((await sql.raw(QUERY).execute(db)).rows).toEqual(expected);
  });

  it('reads tables with parameters, an empty answer included, through Kysely and the batch reads', async () => {
    const select = 'select * from t where id in (select value from json_each(?)) order by id';
    expect(connection.rows(select, '[1,2]')).toEqual(plain.prepare(select).all('[1,2]'));
    expect(connection.rows(select, '[]')).toEqual([]);
    expect(connection.row(select, '[3]')).toBeUndefined();
    const viaKysely = await sql<{ id: number; name: string }>`select id, name from t where amount > ${15}`.execute(db);
    expect(viaKysely.rows).toEqual([{ id: 2, name: 'two' }]);
  });

  it('reads what a write with RETURNING answers, and runs a plain write', async () => {
    connection.statement('update t set amount = amount + ? where id = ?').run(5, 1);
    expect(
      connection.rows<{ amount: number }>('update t set amount = amount + 1 where id = ? returning amount', 1),
    ).toEqual([{ amount: 16 }]);
    expect(connection.row('select amount, note from t where id = 1')).toEqual({ amount: 16, note: null });
  });

  it('reads a query that selects one JSON array per row as the objects of its columns (jsonRows)', () => {
    const columns = ['id', 'name', 'amount', 'note'];
    const select = `select ${jsonArrayOf(columns)} from t where id in (select value from json_each(?)) order by id`;
    connection
      .statement('insert into t (name, amount, note) values (?, ?, ?)')
      .run('a "quoted" \\ ₹ name', 9007199254740991, 'x\ny');
    const expected = plain
      .prepare('select id, name, amount, note from t where id in (select value from json_each(?)) order by id')
      .all('[1,2,3]');
    expect(expected).toHaveLength(2); // the plain database has no third row
    expect(connection.jsonRows(select, columns, '[1,2]')).toEqual(expected);
    expect(connection.jsonRows(select, columns, '[3]')).toEqual([
      { id: 3, name: 'a "quoted" \\ ₹ name', amount: 9007199254740991, note: 'x\ny' },
    ]);
    expect(connection.jsonRows(select, columns, '[]')).toEqual([]);
    expect(Object.keys(connection.jsonRows(select, columns, '[1]')[0] as object)).toEqual(columns);
  });

  it('refuses a statement used in the other way: a query run as a write, a write read as a query', () => {
    expect(() => connection.statement('select * from t')).toThrow(/read with rows\(\) or row\(\)/);
    expect(() => connection.rows('update t set amount = 0')).toThrow(/run with statement\(\)/);
    expect(() => connection.row('delete from t')).toThrow(/run with statement\(\)/);
    expect(plain.prepare('select count(*) as n from t').get()).toEqual({ n: 2 });
    expect(connection.row('select count(*) as n from t')).toEqual({ n: 2 });
  });
});
