/**
 * The audit trail (docs/design/audit.md): the recorder that writes order-entry request records off the
 * response path, in batches, and the operator's view that merges them with the order state changes.
 */
import type { AuditedOrderChange, AuditRequest, NewAuditRequest } from '../domain/audit.js';
import type { AuditFilter, AuditRepository } from '../store/audit.js';
import { isDatabaseUnavailable } from '../store/database.js';

export interface AuditRecorderOptions {
  /** How long a record may wait for others to share its commit. */
  flushDelayMs?: number;
  /** Records that make a flush start at once. */
  maxBatch?: number;
  /** Records kept while the database cannot be written; beyond, the oldest are dropped (and logged). */
  maxPending?: number;
  /** The pause before a failed flush is tried again. */
  retryMs?: number;
}

interface FailureLog {
  error(details: object, message: string): void;
}

/**
 * Collects request records and appends them in one transaction per batch: a request never waits for its
 * record, and concurrent requests share one commit. A flush that fails keeps its records and is tried
 * again. What a crash loses: the records not yet flushed (at most flushDelayMs of requests, or those
 * waiting for the database to come back); close() flushes the rest.
 */
export class AuditRecorder {
  private pending: NewAuditRequest[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private log: FailureLog | undefined;
  private readonly flushDelayMs: number;
  private readonly maxBatch: number;
  private readonly maxPending: number;
  private readonly retryMs: number;

  constructor(
    private readonly repository: AuditRepository,
    /** The clock of the records' `at`: the same as the orders'. */
    readonly now: () => number,
    options: AuditRecorderOptions = {},
  ) {
    this.flushDelayMs = options.flushDelayMs ?? 20;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxPending = options.maxPending ?? 100_000;
    this.retryMs = options.retryMs ?? 1000;
  }

  /** Where failed flushes and dropped records are reported (the server's log). */
  reportFailuresTo(log: FailureLog): void {
    this.log = log;
  }

  /** Queues a record; it is written within flushDelayMs. */
  record(entry: NewAuditRequest): void {
    this.pending.push(entry);
    if (this.closed || this.pending.length >= this.maxBatch) void this.flush();
    else this.schedule(this.flushDelayMs);
  }

  /** Writes every queued record; resolves when they are committed, or the attempt failed (logged). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let failed = false;
    this.flushing = this.repository.appendRequests(batch).then(
      () => undefined,
      async (error: unknown) => {
        if (isDatabaseUnavailable(error)) {
          failed = true;
          this.keepForRetry(batch, error);
        } else {
          // Not an outage: some record is refused. Write them one by one, and drop (and log) only that one.
          failed = !(await this.appendOneByOne(batch));
        }
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
    if (this.pending.length > 0 && !this.closed) this.schedule(failed ? this.retryMs : this.flushDelayMs);
  }

  /** Flushes what is queued (once: what fails now is lost, and logged); a record that arrives later is written at once. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** False when the database went away meanwhile (the rest is kept for the retry). */
  private async appendOneByOne(batch: NewAuditRequest[]): Promise<boolean> {
    for (const [index, record] of batch.entries()) {
      try {
        await this.repository.appendRequests([record]);
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          this.keepForRetry(batch.slice(index), error);
          return false;
        }
        this.log?.error({ err: error, request_id: record.requestId }, 'audit record refused by the database; dropped');
      }
    }
    return true;
  }

  private keepForRetry(batch: NewAuditRequest[], error: unknown): void {
    if (this.closed) {
      this.log?.error({ err: error, records: batch.length }, 'audit records could not be written at shutdown; they are lost');
      return;
    }
    this.pending = [...batch, ...this.pending];
    const excess = this.pending.length - this.maxPending;
    if (excess > 0) {
      this.pending.splice(0, excess);
      this.log?.error({ dropped: excess }, 'audit records dropped: the database has been unwritable for too long');
    }
    this.log?.error({ err: error, records: this.pending.length }, 'audit records could not be written; retrying');
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined || this.flushing !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
    // A pending flush never keeps a process alive: close() does the last one.
    this.timer.unref();
  }
}

export type AuditEntry = ({ kind: 'request' } & AuditRequest) | ({ kind: 'order_change' } & AuditedOrderChange);

/** Oldest first; at the same instant a request comes before the changes, each kind in id order. */
function compareEntries(a: AuditEntry, b: AuditEntry): number {
  if (a.at !== b.at) return a.at - b.at;
  if (a.kind !== b.kind) return a.kind === 'request' ? -1 : 1;
  return a.id - b.id;
}

/** The operator's view of the trail (`ordergate audit`). */
export class AuditTrailService {
  constructor(private readonly repository: AuditRepository) {}

  /** The newest `filter.limit` entries of both kinds that match, merged oldest first. */
  async entries(filter: AuditFilter): Promise<AuditEntry[]> {
    const [requests, changes] = await Promise.all([this.repository.requests(filter), this.repository.orderChanges(filter)]);
    const merged: AuditEntry[] = [
      ...requests.map((request) => ({ kind: 'request' as const, ...request })),
      ...changes.map((change) => ({ kind: 'order_change' as const, ...change })),
    ];
    return merged.sort(compareEntries).slice(-filter.limit);
  }
}
