/**
 * Group commit for the order-entry hot path. Each durable commit costs an fsync (SQLite with
 * synchronous=FULL) or a WAL flush and a round trip (PostgreSQL); one per request caps throughput. Here
 * the commands of all requests that arrive while a batch is in flight are queued, then handed together to
 * `runBatch`, which judges and writes them in one transaction; every caller is answered only after that
 * transaction has committed. Nothing is acknowledged before its commit.
 *
 * `runBatch` answers one outcome per command, in order: a value, or the error that refuses that command
 * alone (a business refusal, which wrote nothing). If it throws, the whole batch failed and every caller
 * gets that error: none of them was acknowledged.
 *
 * `maxInFlight` batches may run at once, each in its own transaction: 1 on SQLite (one writer), a few on
 * PostgreSQL, where a batch spends most of its time waiting for round trips and the commit's WAL flush.
 */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<C, R> {
  command: C;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

export class GroupCommitter<C, R> {
  private queue: Pending<C, R>[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly runBatch: (commands: C[]) => Promise<Outcome<R>[]>,
    private readonly options: { maxBatch?: number; maxInFlight?: number } = {},
  ) {}

  run(command: C): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= (this.options.maxInFlight ?? 1)) return;
    this.scheduled = true;
    // A batch started now would run before the other requests that arrived in this same turn of the event
    // loop were even parsed. setImmediate runs after the poll phase: by then they are all queued, and share
    // this commit.
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.queue.splice(0, this.options.maxBatch ?? 512);
      if (batch.length === 0) return;
      this.inFlight += 1;
      void this.commitBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
      this.schedule();
    });
  }

  private async commitBatch(batch: Pending<C, R>[]): Promise<void> {
    let outcomes: Outcome<R>[];
    try {
      outcomes = await this.runBatch(batch.map((item) => item.command));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined) item.reject(new Error('the batch answered fewer outcomes than it had commands'));
      else if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
