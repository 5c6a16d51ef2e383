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
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, sql, type Kysely, type SqlBool } from 'kysely';
import type { DialectName } from './database.js';
import type { Database } from '../schema/tables.js';
import { sendAhead, type WriteTx } from './write-tx.js';

export type PgType = 'text' | 'int8' | 'float8';

export interface BulkColumn<R> {
  name: string;
  type: PgType;
  value: (row: R) => string | number | null;
}

/** A text column of the rows. */
export const textColumn = <R>(name: string, value: (row: R) => string | null): BulkColumn<R> => ({
  name,
  type: 'text',
  value,
});
/** A whole-number column of the rows. */
export const intColumn = <R>(name: string, value: (row: R) => number | null): BulkColumn<R> => ({
  name,
  type: 'int8',
  value,
});

/** `$1::text[], $2::int8[], ...` for the columns. */
export function unnestArguments(columns: readonly { type: PgType }[], first = 1): string {
  return columns.map((column, i) => `$${i + first}::${column.type}[]`).join(', ');
}

/** PostgreSQL: one array literal per column (see arrayLiteral), the rows' values in the rows' order. */
export function columnArrays<R>(columns: readonly BulkColumn<R>[], rows: readonly R[]): string[] {
  const arrays = columns.map(() => new Array<string | number | null>(rows.length));
  rows.forEach((row, r) => columns.forEach((column, c) => (arrays[c]![r] = column.value(row))));
  return arrays.map(arrayLiteral);
}

/**
 * PostgreSQL: a list as the text of an array (`{"a","b"}`, `{1,2}`), which is what pg sends for a JS
 * array, for a parameter cast to an array type (`$1::text[]`). pg builds that text with two regular
 * expressions' replacements for every element, numbers included: 5.3 % of a PostgreSQL node's CPU at
 * saturation (CPU profile, 2026-11-28). Here a number is written as it is, and a string is quoted, with a
 * backslash before each quote and backslash it holds (pg's escaping), the replacement made only when it
 * holds one. The server reads the same values. The checks and replacements are plain string searches: a
 * regular expression's test cost about 400 instructions a value, and a replacement by the pattern `$&`
 * about 40k for an audited request's JSON body, more than the rest of the bid's literals together
 * (docs/design/performance-log.md).
 */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ',';
    const value = values[i];
    if (value === null || value === undefined) literal += 'NULL';
    else if (typeof value === 'number') literal += String(value);
    else
      literal +=
        value.includes('"') || value.includes('\\')
          ? `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
          : `"${value}"`;
  }
  return literal + '}';
}

/**
 * PostgreSQL: one write of a batch as SQL text whose parameters start at `$first` (so that several can
 * share one statement, see combinedWrites) and its parameters.
 */
export interface PostgresWrite {
  sql(first: number): string;
  parameters: unknown[];
  /** The CTE's name in a combined statement, for a later write that reads what this one returns. */
  name?: string;
}

/**
 * PostgreSQL: several writes in one statement, each a data-modifying CTE, so that a batch's writes cost one
 * round trip. They run on one snapshot and do not see each other's rows; foreign keys are checked at the
 * end of the statement. Sent ahead (WriteTx.ahead): nothing waits for its answer, so the commit or the
 * next statement goes out with it.
 */
export async function combinedWrites(tx: WriteTx, writes: readonly PostgresWrite[]): Promise<void> {
  if (writes.length === 0) return;
  let next = 1;
  const parts = writes.map((write, i) => {
    const part = `${write.name ?? `w${i}`} as (${write.sql(next)})`;
    next += write.parameters.length;
    return part;
  });
  await sendAhead(
    tx,
    CompiledQuery.raw(
      `with ${parts.join(', ')} select 1`,
      writes.flatMap((write) => write.parameters),
    ),
  );
}

/** SQLite: runs a prepared statement once with a row's column values (see rowRunner). */
type RowRunner<R> = (statement: BetterSqlite3.Statement, row: R) => void;

/**
 * SQLite: a function that runs a statement with a row's values, one argument per column, compiled once per
 * write: `(statement, row) => statement.run(v0(row), v1(row), ...)`. better-sqlite3 takes the values of its
 * call's arguments directly, but reads an array's elements one by one through V8's API (`Object::Get` by
 * index, about 400 instructions each: 4.5 % of a bid's instructions for its ~130 values,
 * docs/design/performance-log.md); and each column's value function is called at a call site of its own, which
 * V8 inlines, where one shared call site sees them all. The values are the columns' own functions', never a
 * request's text: the code compiled is the column count's.
 */
function rowRunner<R>(columns: readonly BulkColumn<R>[]): RowRunner<R> {
  const names = columns.map((_column, i) => `v${i}`);
  const body = `return (statement, row) => { statement.run(${names.map((name) => `${name}(row)`).join(', ')}); };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled on purpose (above); never a request's text
  return new Function(...names, body)(...columns.map((column) => column.value)) as RowRunner<R>;
}

/** A write of many rows: on SQLite one statement run per row with `sqliteColumns`' values, on PostgreSQL one. */
abstract class BulkWrite<R> {
  protected abstract readonly sqliteSql: string;
  protected abstract readonly sqliteColumns: readonly BulkColumn<R>[];
  private runner: RowRunner<R> | undefined;

  /** The write as one PostgreSQL statement (or CTE of one, see combinedWrites). */
  abstract postgres(rows: readonly R[]): PostgresWrite;

  async run(tx: WriteTx, rows: readonly R[]): Promise<void> {
    if (rows.length === 0) return;
    if (tx.sqlite) {
      const statement = tx.sqlite.statement(this.sqliteSql);
      const runRow = (this.runner ??= rowRunner(this.sqliteColumns));
      for (const row of rows) runRow(statement, row);
      return;
    }
    const write = this.postgres(rows);
    // Nothing waits for its answer: sent ahead (WriteTx.ahead).
    await sendAhead(tx, CompiledQuery.raw(write.sql(1), write.parameters));
  }
}

/** `insert into table (columns) values ...` for many rows; `conflict` is an optional `on conflict ...` clause. */
export class BulkInsert<R> extends BulkWrite<R> {
  protected readonly sqliteSql: string;
  protected readonly sqliteColumns: readonly BulkColumn<R>[];

  constructor(
    private readonly table: string,
    private readonly columns: readonly BulkColumn<R>[],
    private readonly conflict = '',
  ) {
    super();
    const names = columns.map((column) => column.name).join(', ');
    this.sqliteSql = `insert into ${table} (${names}) values (${columns.map(() => '?').join(', ')}) ${conflict}`;
    this.sqliteColumns = columns;
  }

  /** The insert as one PostgreSQL write (see combinedWrites); `where`, a condition on the rows (without the keyword). */
  override postgres(rows: readonly R[], where = ''): PostgresWrite {
    const names = this.columns.map((column) => column.name).join(', ');
    const filter = where === '' ? '' : `where ${where}`;
    return {
      sql: (first) =>
        `insert into ${this.table} (${names}) select * from unnest(${unnestArguments(this.columns, first)}) ${filter} ${this.conflict}`,
      parameters: columnArrays(this.columns, rows),
    };
  }
}

/** `update table set columns where key = ...` for many rows, each with its own values. */
export class BulkUpdate<R> extends BulkWrite<R> {
  protected readonly sqliteSql: string;
  protected readonly sqliteColumns: readonly BulkColumn<R>[];
  private readonly all: readonly BulkColumn<R>[];

  constructor(
    private readonly table: string,
    private readonly key: BulkColumn<R>,
    private readonly columns: readonly BulkColumn<R>[],
  ) {
    super();
    this.all = [...columns, key];
    this.sqliteColumns = this.all;
    this.sqliteSql = `update ${table} set ${columns.map((column) => `${column.name} = ?`).join(', ')} where ${key.name} = ?`;
  }

  /** The update as one PostgreSQL write (see combinedWrites). */
  override postgres(rows: readonly R[]): PostgresWrite {
    const alias = this.all.map((column) => column.name).join(', ');
    const set = this.columns.map((column) => `${column.name} = v.${column.name}`).join(', ');
    return {
      sql: (first) =>
        `update ${this.table} as t set ${set} from unnest(${unnestArguments(this.all, first)}) as v(${alias}) where t.${this.key.name} = v.${this.key.name}`,
      parameters: columnArrays(this.all, rows),
    };
  }
}

/**
 * A list as one query parameter, so that the query's text is the same whatever the list's length (one
 * prepared statement, one plan): SQLite reads it as a JSON array text (`in (select value from
 * json_each(?))`), PostgreSQL as an array (`= any($1::text[])`).
 */
export function listParameter(dialect: DialectName, list: readonly (string | number)[]): string {
  return dialect === 'postgres' ? arrayLiteral(list) : JSON.stringify(list);
}

/** A list query as the two dialects spell it (see listParameter). */
export interface ListQuery {
  sqlite: string;
  postgres: string;
}

/** Runs a list query in the transaction: its list as the first parameter. */
export async function queryWithList<T>(
  tx: WriteTx,
  query: ListQuery,
  list: readonly (string | number)[],
): Promise<T[]> {
  if (tx.sqlite) return tx.sqlite.rows<T>(query.sqlite, listParameter('sqlite', list));
  const result = await tx.trx.executeQuery<T>(CompiledQuery.raw(query.postgres, [listParameter('postgres', list)]));
  return [...result.rows];
}

/** Runs a list query outside any transaction, on `db`. */
export async function selectWithList<T>(
  db: Kysely<Database>,
  dialect: DialectName,
  query: ListQuery,
  list: readonly (string | number)[],
): Promise<T[]> {
  const result = await db.executeQuery<T>(CompiledQuery.raw(query[dialect], [listParameter(dialect, list)]));
  return [...result.rows];
}

/** `column in (the list)` as a Kysely condition whose text does not change with the list's length. */
export function inList(
  dialect: DialectName,
  column: string,
  list: readonly (string | number)[],
  type: PgType = 'text',
) {
  return dialect === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = any(${listParameter(dialect, list)}::${sql.raw(type)}[])`
    : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${listParameter(dialect, list)}))`;
}
