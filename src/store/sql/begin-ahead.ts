/**
 * PostgreSQL: a write transaction's BEGIN sent without waiting for its answer, so that it travels with the
 * transaction's first read (order entry's issue, the OMS's orders): one round trip fewer per transaction.
 *
 * The connection pipelines (database.ts), so the server runs BEGIN first and the rest after it, in the
 * order sent. What BEGIN's answer guards is the rest's atomicity: were BEGIN to fail, every statement
 * behind it would run and commit on its own. So, until BEGIN has answered, only reads go out (a read alone
 * changes nothing: at worst it is answered outside the transaction, whose failure then surfaces below);
 * the first statement that is not a read, and everything after it (a read behind a lock must stay behind
 * it), is held and sent once BEGIN has answered, in the order asked. If BEGIN failed, the held statements
 * are never sent: each fails with BEGIN's error, the transaction's COMMIT included (it is held like any
 * write), so the failure always reaches the caller.
 */
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

/** A statement that only reads (Kysely's SELECTs, a lock taken with a SELECT): safe to send before BEGIN's answer. */
const READ = /^\s*select\s/i;

/** One transaction's BEGIN and the statements held for its answer. */
interface Gate {
  begun: Promise<unknown>;
  answered: boolean;
  /** The last statement held: it resolves once that statement has been sent (rejects if BEGIN failed). */
  lastHeld: Promise<void> | null;
  /** Statements held and not yet sent. */
  holding: number;
}

export class BeginAheadConnection implements DatabaseConnection {
  /** The gate of the transaction under way, until closeGate(); null: every statement goes out at once. */
  private gate: Gate | null = null;

  constructor(private readonly inner: DatabaseConnection) {}

  /** Sends `begin` now, without waiting: the statements after it go out as described above, until closeGate(). */
  beginAhead(begin: CompiledQuery): Promise<QueryResult<unknown>> {
    const begun = this.inner.executeQuery(begin);
    const gate: Gate = { begun, answered: false, lastHeld: null, holding: 0 };
    begun.then(
      () => (gate.answered = true),
      () => undefined,
    );
    this.gate = gate;
    return begun;
  }

  /** After the transaction's last statement (COMMIT or ROLLBACK) has been answered: the connection is plain again. */
  closeGate(): void {
    this.gate = null;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const gate = this.gate;
    if (gate === null || (gate.holding === 0 && (gate.answered || READ.test(query.sql))))
      return this.inner.executeQuery<R>(query);
    gate.holding += 1;
    const after = gate.lastHeld ?? gate.begun.then(() => undefined);
    let answer!: Promise<QueryResult<R>>;
    const sent = after.then(() => {
      gate.holding -= 1;
      answer = this.inner.executeQuery<R>(query);
    });
    gate.lastHeld = sent;
    return sent.then(() => answer);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
