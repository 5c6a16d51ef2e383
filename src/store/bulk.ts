/**
 * Set-based statements for the batch paths, one SQL text per statement built once, for both dialects:
 *
 * - SQLite: one prepared statement run once per row, synchronously, on the transaction's connection
 *   (write-tx.ts). Without a network in between, a row costs a microsecond or two.
 * - PostgreSQL: one statement for the whole batch, whose rows arrive as one array per column and are
 *   spread by `unnest` (`insert ... select * from unnest($1::text[], $2::int8[], ...)`): a round trip per
 *   batch instead of one per row, and a fixed text that the server plans once.
 *
 * Kysely builds the rest of the store's SQL; it has no builder for unnest, and building a query object per
 * row would cost more than running it.
 */
import { CompiledQuery } from 'kysely';
import type { WriteTx } from './write-tx.js';

export type PgType = 'text' | 'int8' | 'float8';

export interface BulkColumn<R> {
  name: string;
  type: PgType;
  value: (row: R) => string | number | null;
}

/** `$1::text[], $2::int8[], ...` for the columns. */
function unnestArguments(columns: readonly { type: PgType }[], first = 1): string {
  return columns.map((column, i) => `$${i + first}::${column.type}[]`).join(', ');
}

function columnArrays<R>(columns: readonly BulkColumn<R>[], rows: readonly R[]): unknown[][] {
  const arrays: unknown[][] = columns.map(() => new Array<unknown>(rows.length));
  rows.forEach((row, r) => columns.forEach((column, c) => (arrays[c]![r] = column.value(row))));
  return arrays;
}

/** `insert into table (columns) values ...` for many rows; `conflict` is an optional `on conflict ...` clause. */
export class BulkInsert<R> {
  private readonly sqliteSql: string;
  private readonly postgresSql: string;

  constructor(
    table: string,
    private readonly columns: readonly BulkColumn<R>[],
    conflict = '',
  ) {
    const names = columns.map((column) => column.name).join(', ');
    this.sqliteSql = `insert into ${table} (${names}) values (${columns.map(() => '?').join(', ')}) ${conflict}`;
    this.postgresSql = `insert into ${table} (${names}) select * from unnest(${unnestArguments(columns)}) ${conflict}`;
  }

  async run(tx: WriteTx, rows: readonly R[]): Promise<void> {
    if (rows.length === 0) return;
    if (tx.sqlite) {
      const statement = tx.sqlite.statement(this.sqliteSql);
      for (const row of rows) statement.run(this.columns.map((column) => column.value(row)));
      return;
    }
    await tx.trx.executeQuery(CompiledQuery.raw(this.postgresSql, columnArrays(this.columns, rows)));
  }
}

/** `update table set columns where key = ...` for many rows, each with its own values. */
export class BulkUpdate<R> {
  private readonly sqliteSql: string;
  private readonly postgresSql: string;
  private readonly all: readonly BulkColumn<R>[];

  constructor(table: string, key: BulkColumn<R>, columns: readonly BulkColumn<R>[]) {
    this.all = [...columns, key];
    this.sqliteSql = `update ${table} set ${columns.map((column) => `${column.name} = ?`).join(', ')} where ${key.name} = ?`;
    const alias = this.all.map((column) => column.name).join(', ');
    this.postgresSql =
      `update ${table} as t set ${columns.map((column) => `${column.name} = v.${column.name}`).join(', ')} ` +
      `from unnest(${unnestArguments(this.all)}) as v(${alias}) where t.${key.name} = v.${key.name}`;
  }

  async run(tx: WriteTx, rows: readonly R[]): Promise<void> {
    if (rows.length === 0) return;
    if (tx.sqlite) {
      const statement = tx.sqlite.statement(this.sqliteSql);
      for (const row of rows) statement.run(this.all.map((column) => column.value(row)));
      return;
    }
    await tx.trx.executeQuery(CompiledQuery.raw(this.postgresSql, columnArrays(this.all, rows)));
  }
}

/**
 * Runs a query with one list parameter: SQLite receives the list as a JSON array text (read with
 * `json_each(?)`), PostgreSQL as an array. `sql` gives the text for each.
 */
export async function queryWithList<T>(tx: WriteTx, sql: { sqlite: string; postgres: string }, list: readonly (string | number)[], ...rest: unknown[]): Promise<T[]> {
  if (tx.sqlite) return tx.sqlite.statement(sql.sqlite).all(JSON.stringify(list), ...rest) as T[];
  const result = await tx.trx.executeQuery<T>(CompiledQuery.raw(sql.postgres, [list, ...rest]));
  return [...result.rows];
}
