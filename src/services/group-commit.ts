/**
 * Group commit for the order-entry hot path. Each durable commit costs an fsync (SQLite: the WAL's sync,
 * wal-sync.ts) or a WAL flush and a round trip (PostgreSQL); one per request caps throughput. Here
 * the commands of all requests that arrive while a batch is in flight are queued, then run together in one
 * transaction; every caller is answered only after that transaction has committed. Nothing is
 * acknowledged before its commit.
 *
 * The invariant that makes sharing a transaction safe: **a refused command leaves no write behind.** It
 * is kept by the shape of a batch's work (BatchWork), not by a comment asking for care:
 * 1. `read` loads (and locks) what the commands are judged on; it may not write;
 * 2. `judge` decides each command in order, synchronously, against that state, with no transaction in
 *    reach: it accepts the command with its change, or refuses it;
 * 3. `write` writes the accepted changes together. It cannot refuse one command: a refusal (an ApiError)
 *    thrown from it, which would otherwise commit a refused command's rows with the rest of the batch or
 *    answer the others with its refusal, is turned into a failure of the batch: the transaction is rolled
 *    back, and no caller gets a 200 from it.
 *
 * A batch that fails (but for a database that cannot be used: store/sql/unavailable.ts) is run again in
 * halves, and each failing half again, down to each command whose data made it fail, which alone gets the
 * error (an internal error: a bug, logged as one) once it has failed alone twice; every other command
 * commits in its half. One client's bad input never costs another a bid, however many bad commands a batch
 * holds (see `isolate`: one bad command costs 2 + 2 log2(n) transactions, a batch every command of which
 * fails 3n - 1).
 *
 * `maxInFlight` batches may run at once, each in its own transaction: as many as the store has write lanes
 * (Store.writeLanes: 1 on SQLite, one writer; a few on PostgreSQL, where a batch spends most of its time
 * waiting for round trips and the commit's WAL flush).
 */
import { ApiError, DatabaseUnavailableError } from '../domain/errors.js';
import type { OrderEntryMetrics } from '../metrics/operator-metrics.js';
import type { Store } from '../store/sql/database.js';
import type { StoreTx } from '../store/sql/write-tx.js';

/** One command's outcome: accepted with its change and the caller's answer, or refused. */
export type Judgment<R, Change> = { accepted: true; change: Change; value: R } | { accepted: false; error: ApiError };

/** The three phases of a batch; see the module comment for why they are apart. */
export interface BatchWork<C, S, R, Change> {
  read(tx: StoreTx, commands: readonly C[]): Promise<S>;
  judge(command: C, state: S): Judgment<R, Change>;
  write(tx: StoreTx, accepted: readonly { command: C; change: Change; value: R }[], state: S): Promise<void>;
}

/** Thrown to every caller of a batch whose `write` refused something: the invariant above was broken. */
export class RefusalAfterWriteError extends Error {
  constructor(readonly refusal: ApiError) {
    super(
      `a refusal after the batch's writes (${refusal.kind.code}: ${refusal.message}): the whole batch was rolled back`,
    );
    this.name = 'RefusalAfterWriteError';
  }
}

/** The most commands one transaction takes; the rest wait for the next. */
const MAX_BATCH = 512;

interface Pending<C, R> {
  command: C;
  /** When the command arrived (performance.now()): the load shedder reads the oldest one's wait. */
  queuedAt: number;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

export class GroupCommitter<C, S, R, Change> {
  private queue: Pending<C, R>[] = [];
  private scheduled = false;
  private inFlight = 0;
  /**
   * When a batch last finished or a transaction last committed (each half that commits while a failed batch
   * is halved counts: that batch is making progress), or the first batch of a busy spell started
   * (performance.now()).
   */
  private lastProgressAt = performance.now();

  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly work: BatchWork<C, S, R, Change>,
    private readonly options: { maxInFlight?: number; metrics?: OrderEntryMetrics; onCommitted?: () => void } = {},
  ) {}

  run(command: C): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ command, queuedAt: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  /**
   * Whether the database falls behind, one of:
   * - stalled: every lane holds a batch, and none has finished for longer than `maxWaitMs` (a lock, a slow
   *   disk, a database that stopped answering): a new command would wait at least that long, however few
   *   wait before it;
   * - overflowing: more commands wait than the next batch takes, the oldest for longer than `maxWaitMs`:
   *   commits finish, but not fast enough.
   * Commands that wait while batches keep finishing (an event loop busy with other requests) are not the
   * database's doing: the load shedder's event-loop measure sees that case, so that a flood it refuses never
   * stops the orders already let in from being committed.
   */
  fallsBehind(maxWaitMs: number): { behind: boolean; oldestWaitMs: number } {
    const now = performance.now();
    const stalledMs = this.inFlight >= (this.options.maxInFlight ?? 1) ? now - this.lastProgressAt : 0;
    const oldest = this.queue[0];
    const oldestWaitMs = oldest === undefined ? 0 : now - oldest.queuedAt;
    const overflowing = this.queue.length >= MAX_BATCH && oldestWaitMs > maxWaitMs;
    return { behind: stalledMs > maxWaitMs || overflowing, oldestWaitMs: Math.max(oldestWaitMs, stalledMs) };
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= (this.options.maxInFlight ?? 1)) return;
    this.scheduled = true;
    // A batch started now would run before the other requests that arrived in this same turn of the event
    // loop were even parsed. setImmediate runs after the poll phase: by then they are all queued, and share
    // this commit.
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.queue.splice(0, MAX_BATCH);
      if (batch.length === 0) return;
      if (this.inFlight === 0) this.lastProgressAt = performance.now();
      this.inFlight += 1;
      void this.commitBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.lastProgressAt = performance.now();
        this.schedule();
      });
      this.schedule();
    });
  }

  /**
   * Commits a batch in one transaction; when that fails (but for a database that cannot be used), the
   * batch is run again in halves (`isolate`). A database that cannot be used fails every command alike,
   * and none is tried again.
   *
   * Metrics, one rule: each transaction that commits reports its size and time as committed (a half that
   * commits while a batch is halved too); a batch that fails reports once, as failed, with its size and its
   * first transaction's time, however many of its halves fail after it. So the failed count is that of
   * batches taken from the queue that failed, not of the transactions spent on finding why.
   */
  private async commitBatch(batch: Pending<C, R>[]): Promise<void> {
    const failure = await this.attempt(batch, { reportFailure: true });
    if (failure === undefined) return;
    if (batch.length > 1 && !(failure.error instanceof DatabaseUnavailableError)) await this.isolate(batch);
    else for (const item of batch) item.reject(failure.error);
  }

  /**
   * `batch` failed for a reason that may be one of its commands' (a value the database would not take, a
   * bug its data met): no one's bad input is anyone else's failure, so it is run again in halves, and each
   * half that fails again in halves, until each command at fault is alone and gets its own error; every
   * other command commits without them.
   *
   * One bad command is in one half: at each split one half fails and the other commits, and alone it is
   * tried once more (lastTry): 2 + 2·log2(n) transactions. k bad ones cost about 2k·log2(n/k); a batch in
   * which every command fails, 3n - 1, each failing at its first write. A failure of the database itself (a lost connection, a locked or full file,
   * a server in recovery) is a DatabaseUnavailableError, never halved: it fails every command not yet
   * answered, at once. Halving stops at nothing else: a rule such as "both halves failed, so it is the
   * batch's fault" would let two bad commands sent together fail the good ones beside them.
   *
   * The halves run one after the other in the lane of the batch, first half first; each that commits
   * answers its callers at once and counts as progress for fallsBehind.
   */
  private async isolate(failed: Pending<C, R>[]): Promise<void> {
    // The sub-batches still to run, the next last.
    const waiting: Pending<C, R>[][] = [failed];
    for (let batch = waiting.pop(); batch !== undefined; batch = waiting.pop()) {
      const half = Math.ceil(batch.length / 2);
      const halves = [batch.slice(0, half), batch.slice(half)];
      const failing: Pending<C, R>[][] = [];
      for (const [i, part] of halves.entries()) {
        const failure = await this.attempt(part, { reportFailure: false });
        if (failure === undefined) continue;
        if (failure.error instanceof DatabaseUnavailableError) {
          // Every command not answered yet fails with it: this half, the one after it, those waiting.
          for (const item of [...halves.slice(i), ...failing, ...waiting].flat()) item.reject(failure.error);
          return;
        }
        if (part.length > 1) failing.push(part);
        else await this.lastTry(part[0]!, failure.error);
      }
      // The first failing half is the next to run.
      waiting.push(...failing.reverse());
    }
  }

  /**
   * A command that failed alone is tried once more before it is blamed: a failure that comes and goes (a
   * deadlock, a serialization failure) would otherwise fall on whichever command happened to be alone
   * when it came. Failing again, it gets the error of its last try.
   */
  private async lastTry(item: Pending<C, R>, error: unknown): Promise<void> {
    const again = await this.attempt([item], { reportFailure: false });
    if (again !== undefined) item.reject(again.error ?? error);
  }

  /**
   * One transaction of `batch`. Committed: its callers are answered, and undefined returned. Failed: no
   * one is answered, and the error is returned for the caller to decide what the commands get.
   */
  private async attempt(
    batch: Pending<C, R>[],
    { reportFailure }: { reportFailure: boolean },
  ): Promise<{ error: unknown } | undefined> {
    let judgments: Judgment<R, Change>[];
    const started = performance.now();
    try {
      judgments = await this.store.writeTransaction((tx) =>
        this.runBatch(
          tx,
          batch.map((item) => item.command),
        ),
      );
    } catch (error) {
      if (reportFailure) this.options.metrics?.batchDone(batch.length, (performance.now() - started) / 1000, false);
      return { error };
    }
    this.lastProgressAt = performance.now();
    this.options.metrics?.batchDone(batch.length, (this.lastProgressAt - started) / 1000, true);
    this.options.onCommitted?.();
    batch.forEach((item, i) => {
      const judgment = judgments[i]!;
      if (judgment.accepted) item.resolve(judgment.value);
      else item.reject(judgment.error);
    });
    return undefined;
  }

  private async runBatch(tx: StoreTx, commands: C[]): Promise<Judgment<R, Change>[]> {
    const state = await this.work.read(tx, commands);
    const judgments = commands.map((command) => this.work.judge(command, state));
    const accepted = judgments.flatMap((judgment, i) =>
      judgment.accepted ? [{ command: commands[i]!, change: judgment.change, value: judgment.value }] : [],
    );
    try {
      await this.work.write(tx, accepted, state);
    } catch (error) {
      throw error instanceof ApiError ? new RefusalAfterWriteError(error) : error;
    }
    return judgments;
  }
}
