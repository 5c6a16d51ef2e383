/**
 * The OMS's outbox loop: passes every pollMs (at once after a backlog, backing off after failed ones), each
 * taking the due outbox entries in batches under a lease, then whatever else the pass does (the exchange's
 * events). What an entry's work is, is the worker's (worker.ts); this file knows only entries and leases.
 *
 * Idle. A loop that has handled nothing for IDLE_AFTER_MS passes every IDLE_POLL_MS (or pollMs, if longer)
 * instead, until a pass finds work or `wake()` is called (the server calls it when order entry commits): an
 * idle node no longer spends a tenth of a core on empty passes. Work committed by another process (a second
 * node, the CLI) waits at most IDLE_POLL_MS for an idle loop, and so do the events of the exchange's
 * allotments (it allots on its own step).
 *
 * Crash safety. An entry is claimed under a lease (30 s, OMS_LEASE_MS) and marked done only after its work has
 * committed: a worker that dies leaves its entry to be taken again when the lease runs out. A pass that fails
 * (a database outage) gives back at its next pass every entry still leased to this worker, so that nobody
 * waits out the lease: those of its batch, and those of a claim whose commit went through while its answer
 * was lost with the connection.
 */
import type { Logger } from 'pino';
import { DEFAULT_OMS_LEASE_MS, DEFAULT_OMS_POLL_MS } from '../config.js';
import type { OmsMetrics } from '../metrics/operator-metrics.js';
import type { OmsRepository, OutboxEntry } from '../store/orders/outbox.js';
import type { StoreTx } from '../store/sql/write-tx.js';

export const DEFAULT_POLL_MS = DEFAULT_OMS_POLL_MS;
export const DEFAULT_LEASE_MS = DEFAULT_OMS_LEASE_MS;
/**
 * Outbox entries taken at once: enough to share commits, few enough that one SQLite step of a batch holds
 * the event loop (and every request of the process) for a few milliseconds only.
 */
export const DEFAULT_BATCH_SIZE = 250;
/** The longest pause after failed passes: the worker resumes within this of the database's return. */
export const MAX_RETRY_DELAY_MS = 2_000;
/** A loop that has handled nothing for this long is idle (see the module comment). */
export const IDLE_AFTER_MS = 1_000;
/** The pause between an idle loop's passes. */
export const IDLE_POLL_MS = 250;

export interface OutboxLoopOptions {
  oms: Pick<
    OmsRepository,
    'latestEntryId' | 'claimDue' | 'completeAll' | 'releaseAll' | 'releaseLeasedTo' | 'deferAll'
  >;
  now: () => number;
  logger: Logger;
  /** Names the worker in outbox leases; one name per worker: after a failed pass it gives back every open lease under it. */
  workerId: string;
  /** The pause between two passes of the loop. */
  pollMs?: number;
  /** How long a claimed outbox entry stays with this worker before another may take it. */
  leaseMs?: number;
  /** Outbox entries claimed at once; their status changes share one commit. */
  batchSize?: number;
  /** Where failed passes are counted (the operator's metrics). */
  metrics?: Pick<OmsMetrics, 'passFailed'>;
}

/** What the work of a claimed batch tells the loop about its entries. */
export interface BatchLease {
  /** Marks the entries done, ending their lease; with `tx`, in the commit of their work. */
  complete(entryIds: readonly number[], tx?: StoreTx): Promise<void>;
  /** Logs the failure and gives the entries back at once: the next pass retries them (this one skips them). */
  fail(entries: readonly OutboxEntry[], error: unknown): Promise<void>;
  /** Keeps the entries for `delayMs` (the exchange did not answer them: its back-off), then a pass retries them. */
  defer(entries: readonly OutboxEntry[], delayMs: number, why: string): Promise<void>;
}

/** The work the loop runs. */
export interface OutboxWork {
  /**
   * Does the work of a claimed batch (at most one entry per order, in commit order), marking each entry
   * done or failed through `lease`; answers how many it finished.
   */
  processBatch(batch: readonly OutboxEntry[], lease: BatchLease): Promise<number>;
  /** The rest of a pass, after the outbox: answers how many things it handled; stops early once `stopping()`. */
  afterOutbox(stopping: () => boolean): Promise<number>;
  /** Whether this worker may take outbox entries now (its exchange link holds the session); absent: always. */
  mayClaim?(): Promise<boolean>;
}

export class OutboxLoop {
  readonly workerId: string;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private running = false;
  /** Set by stop(): the pass under way ends after the batch it is in. */
  private stopRequested = false;
  /** Bumped by every start(), so that a loop stopped and started again never runs twice. */
  private loop = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The pass under way, if any; passes never overlap. */
  private pass: Promise<number> = Promise.resolve(0);
  /** Passes failed in a row (a database outage, say); the loop backs off while it grows. */
  private failedPasses = 0;
  /** Whether a failed pass may have left outbox entries leased to this worker (see releaseHeld). */
  private mayHoldLeases = false;
  /** When a pass last handled something, or the loop started or was woken (performance.now()). */
  private lastWorkAt = 0;
  /** Whether the timer holds an idle pause (see wake). */
  private idlePause = false;

  constructor(
    private readonly options: OutboxLoopOptions,
    private readonly work: OutboxWork,
  ) {
    this.workerId = options.workerId;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  }

  /** Runs passes every pollMs until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopRequested = false;
    this.loop += 1;
    this.options.logger.info({ workerId: this.workerId, pollMs: this.pollMs }, 'OMS worker started');
    this.lastWorkAt = performance.now();
    this.schedule(this.loop, 0);
  }

  /**
   * Tells the loop that work may have arrived (order entry committed): an idle loop runs its next pass
   * within pollMs instead of its idle pause. Cheap to call at every commit: a busy loop ignores it.
   */
  wake(): void {
    this.lastWorkAt = performance.now();
    if (!this.running || !this.idlePause) return;
    clearTimeout(this.timer);
    this.schedule(this.loop, this.pollMs);
  }

  /** Stops the loop; resolves once the batch under way has finished (the rest waits for the next start). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopRequested = true;
    clearTimeout(this.timer);
    await this.pass.catch(() => undefined);
    this.options.logger.info({ workerId: this.workerId }, 'OMS worker stopped');
  }

  /**
   * Processes everything due now: the outbox, then `between` (when given), then the rest of the work (the
   * exchange's events). Answers how many outbox entries and events it handled. Runs after the pass under
   * way, never beside it.
   */
  runOnce(between?: () => Promise<void>): Promise<number> {
    const next = this.pass.catch(() => 0).then(() => this.processDue(between));
    this.pass = next;
    return next;
  }

  private schedule(loop: number, delayMs: number, idle = false): void {
    this.idlePause = idle;
    this.timer = setTimeout(() => {
      this.idlePause = false;
      // A pass that had a backlog (a full batch or more) took long enough for the next batch to fill: the
      // next pass starts at once; otherwise it waits pollMs, for what arrives meanwhile to share a batch.
      let backlog = false;
      this.runOnce()
        .then(
          (handled) => {
            this.failedPasses = 0;
            backlog = handled >= this.batchSize;
            if (handled > 0) this.lastWorkAt = performance.now();
          },
          (error: unknown) => {
            // The database may be out: back off (doubling, at most MAX_RETRY_DELAY_MS) and keep going.
            this.failedPasses += 1;
            this.options.metrics?.passFailed();
            this.options.logger.error(
              { err: error, workerId: this.workerId, failedPasses: this.failedPasses },
              'OMS pass failed; retrying',
            );
          },
        )
        .finally(() => {
          const idle =
            this.failedPasses === 0 &&
            !backlog &&
            performance.now() - this.lastWorkAt >= IDLE_AFTER_MS &&
            IDLE_POLL_MS > this.pollMs;
          const pause = backlog ? 0 : idle ? IDLE_POLL_MS : this.pollMs;
          const delay =
            this.failedPasses === 0
              ? pause
              : Math.min(this.pollMs * 2 ** this.failedPasses, Math.max(this.pollMs, MAX_RETRY_DELAY_MS));
          if (this.running && this.loop === loop) this.schedule(loop, delay, idle);
        });
    }, delayMs);
  }

  private async processDue(between?: () => Promise<void>): Promise<number> {
    // A worker whose link stands by (another node holds the exchange session) leaves the entries to that node.
    const sent = (await (this.work.mayClaim?.() ?? true)) ? await this.processOutbox() : 0;
    await between?.();
    return sent + (await this.work.afterOutbox(() => this.stopRequested));
  }

  /**
   * Takes the due outbox entries in batches (at most one entry per order in a batch, see
   * OmsRepository.dueEntries), so that the status changes of a whole batch share one commit. A pass takes
   * the entries committed before it began (and those they held back: an order's MODIFY after its PLACE);
   * what arrives meanwhile waits for the next pass (pollMs later, or at once after a backlog, see
   * schedule) to travel in a larger batch: a batch's commits cost nearly the same for one order as for a
   * hundred.
   */
  private async processOutbox(): Promise<number> {
    const { oms, now } = this.options;
    const failed: number[] = [];
    const lease = this.leaseOf(failed);
    let processed = 0;
    try {
      await this.releaseHeld();
      const horizon = await oms.latestEntryId();
      for (;;) {
        // SQLite calls are synchronous: without this, a backlog would hold the event loop (and every HTTP
        // request of this process) until it is drained.
        await yieldToEventLoop();
        if (this.stopRequested) return processed;
        const claimedAt = now();
        // Entries another worker takes meanwhile are left to it.
        const due = await oms.claimDue(
          claimedAt,
          failed,
          this.batchSize,
          horizon,
          this.workerId,
          claimedAt + this.leaseMs,
        );
        if (due.length === 0) return processed;
        processed += await this.work.processBatch(due, lease);
      }
    } catch (error) {
      // The database failed (an outage): this worker may still hold leases, which nobody could take for the
      // lease's length: those of the batch under way, and those of a claim that committed while its answer
      // was lost with the connection (so their ids are unknown here). It gives them back at its next pass.
      this.mayHoldLeases = true;
      throw error;
    }
  }

  /** The lease of this pass's batches: entries it fails are added to `failed`, which the pass skips. */
  private leaseOf(failed: number[]): BatchLease {
    const { oms, now, logger } = this.options;
    return {
      complete: (entryIds, tx) => oms.completeAll(entryIds, this.workerId, now(), tx),
      fail: async (entries, error) => {
        for (const entry of entries) {
          logger.error(
            { err: error, workerId: this.workerId, outboxId: entry.id, orderId: entry.orderId, action: entry.action },
            'OMS could not process an outbox entry; retrying next pass',
          );
          failed.push(entry.id);
        }
        await oms.releaseAll(
          entries.map((entry) => entry.id),
          this.workerId,
        );
      },
      defer: async (entries, delayMs, why) => {
        if (entries.length === 0) return;
        logger.warn(
          { workerId: this.workerId, orderIds: entries.map((entry) => entry.orderId), delayMs, why },
          'the exchange did not answer; trying again later',
        );
        for (const entry of entries) failed.push(entry.id);
        await oms.deferAll(
          entries.map((entry) => entry.id),
          this.workerId,
          now() + delayMs,
        );
      },
    };
  }

  /**
   * Gives back the entries a failed pass may have left leased to this worker (all its open leases: passes
   * never overlap); entries it did finish are untouched, and the rest are taken again at once: each step
   * is safe to repeat. Throws while the database is still out, and the pass fails again.
   */
  private async releaseHeld(): Promise<void> {
    if (!this.mayHoldLeases) return;
    const entries = await this.options.oms.releaseLeasedTo(this.workerId);
    this.mayHoldLeases = false;
    this.options.logger.info({ workerId: this.workerId, entries }, 'OMS gave back the outbox entries of a failed pass');
  }
}

/** Lets the event loop run what waits (requests, timers) before the next step. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
