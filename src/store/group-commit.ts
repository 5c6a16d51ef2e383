/**
 * Group commit for the order-entry hot path. Each durable commit costs an fsync (SQLite with
 * synchronous=FULL) or a WAL flush and a round trip (PostgreSQL); one per request caps throughput. Here
 * the writes of all requests that arrive while a commit is in flight are queued, then run one after
 * another inside the next single transaction, and every caller is answered only after that transaction
 * has committed. Nothing is acknowledged before its commit.
 *
 * Contract for a unit of work: it may throw a business refusal (ApiError) only before it writes anything,
 * so that its refusal does not undo the others in its batch. Any other error fails the whole batch, and
 * every caller in it gets that error: none of them was acknowledged.
 */
import type { Kysely, Transaction } from 'kysely';
import { ApiError } from '../domain/errors.js';
import type { Database } from './tables.js';

export type UnitOfWork<T> = (trx: Transaction<Database>) => Promise<T>;

interface Pending {
  work: UnitOfWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommitter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: UnitOfWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        // better-sqlite3 is synchronous, so a batch started now would run to its commit before the other
        // requests that arrived in this same turn of the event loop were even parsed. setImmediate runs
        // after the poll phase: by then they are all queued, and share this commit.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.commitBatch(batch);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commitBatch(batch: Pending[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.db.transaction().execute(async (trx) => {
        const results: Outcome[] = [];
        for (const item of batch) {
          try {
            results.push({ ok: true, value: await item.work(trx) });
          } catch (error) {
            if (!(error instanceof ApiError)) throw error;
            results.push({ ok: false, error });
          }
        }
        return results;
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
