/**
 * Hot-path queries built and compiled by Kysely once, then run with each call's values. Building and
 * compiling a query costs far more CPU than SQLite takes to run it; the SQL itself still comes from
 * Kysely for the store's dialect, so the same repository code serves SQLite and PostgreSQL.
 *
 * A query is built once with named stand-ins for its values (`p.tokenHash`); the compiled parameters
 * that are stand-ins are replaced by the call's values, the others (constants of the query) are kept.
 */
import { createQueryId, type CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

const STAND_IN = '\u0000ordergate-value:';

export class PreparedQuery<P, R> {
  /** For each compiled parameter, the name of the call value that fills it, or undefined for a constant. */
  private readonly slots: (keyof P | undefined)[];

  constructor(private readonly compiled: CompiledQuery<R>) {
    this.slots = compiled.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(STAND_IN) ? (value.slice(STAND_IN.length) as keyof P) : undefined,
    );
  }

  /** Runs the query with these values on `db` (a transaction, to run inside it); answers its rows. */
  async execute(db: Kysely<Database>, values: P): Promise<R[]> {
    const parameters = this.compiled.parameters.map((constant, i) => {
      const slot = this.slots[i];
      return slot === undefined ? constant : values[slot];
    });
    const result = await db.executeQuery<R>({
      query: this.compiled.query,
      queryId: createQueryId(),
      sql: this.compiled.sql,
      parameters,
    });
    return result.rows;
  }
}

/** Builds and compiles `build`'s query once; `p` hands out a stand-in for each named value. */
export function prepareQuery<P, R>(build: (p: P) => { compile(): CompiledQuery<R> }): PreparedQuery<P, R> {
  const standIns = new Proxy({}, { get: (_target, name) => `${STAND_IN}${String(name)}` }) as P;
  return new PreparedQuery<P, R>(build(standIns).compile());
}
