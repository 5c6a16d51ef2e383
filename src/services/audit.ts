/**
 * The audit trail (docs/design/audit.md): the recorder that writes order-entry request records off the
 * response path, in batches, the operator's view that merges them with the order state changes, and the
 * archive that moves old request records to a file and removes exactly those.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import {
  AuditArchiveError,
  AuditArchiveReader,
  auditArchiveHeader,
  auditArchiveLine,
  auditArchiveTrailer,
  type AuditArchiveRecord,
  type AuditedOrderChange,
  type AuditRequest,
  type NewAuditRequest,
} from '../domain/access/audit.js';
import type { AuditFilter, AuditRepository } from '../store/access/audit.js';
import { DatabaseUnavailableError } from '../domain/errors.js';

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
        if (error instanceof DatabaseUnavailableError) {
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
        if (error instanceof DatabaseUnavailableError) {
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
      this.log?.error(
        { err: error, records: batch.length },
        'audit records could not be written at shutdown; they are lost',
      );
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
    const [requests, changes] = await Promise.all([
      this.repository.requests(filter),
      this.repository.orderChanges(filter),
    ]);
    const merged: AuditEntry[] = [
      ...requests.map((request) => ({ kind: 'request' as const, ...request })),
      ...changes.map((change) => ({ kind: 'order_change' as const, ...change })),
    ];
    return merged.sort(compareEntries).slice(-filter.limit);
  }
}

/** Records read and written per page of an archive. */
const ARCHIVE_PAGE = 1000;

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The retention path of the request records (`ordergate audit archive` and `verify-archive`): the records
 * that arrived before an instant go to a new file, which is synced, and then, in one transaction, the
 * database records the archive (its file's SHA-256) and removes exactly those records, the one deletion
 * its trigger allows. A failure before the commit removes the file and leaves the trail as it was.
 */
export class AuditArchiveService {
  constructor(
    private readonly repository: AuditRepository,
    private readonly now: () => number,
  ) {}

  /** The archive made, or null when no record arrived before `before` (no file is left then). */
  async archive(before: number, file: string): Promise<AuditArchiveRecord | null> {
    const digestFile = `${file}.sha256`;
    let handle: FileHandle | undefined;
    const made: string[] = [];
    try {
      handle = await open(file, 'wx').catch((error: NodeJS.ErrnoException) => {
        throw new AuditArchiveError(
          error.code === 'EEXIST'
            ? `${file} exists; an archive never overwrites a file`
            : `cannot create ${file}: ${reason(error)}`,
        );
      });
      made.push(file);
      const hash = createHash('sha256');
      const write = async (text: string) => {
        hash.update(text);
        await handle!.write(text);
      };
      await write(auditArchiveHeader(before));
      const ids: number[] = [];
      for (let afterId = 0; ;) {
        const page = await this.repository.requestsToArchive(before, afterId, ARCHIVE_PAGE);
        if (page.length === 0) break;
        await write(page.map(auditArchiveLine).join(''));
        for (const record of page) ids.push(record.id);
        afterId = page.at(-1)!.id;
      }
      if (ids.length === 0) {
        await handle.close();
        handle = undefined;
        await rm(file);
        return null;
      }
      await write(auditArchiveTrailer({ rows: ids.length, firstId: ids[0]!, lastId: ids.at(-1)! }));
      await handle.sync();
      await handle.close();
      handle = undefined;
      const sha256 = hash.digest('hex');
      // The `sha256sum -c` format, beside the file.
      await writeFile(digestFile, `${sha256}  ${basename(file)}\n`, { flag: 'wx' }).catch((error: unknown) => {
        throw new AuditArchiveError(`cannot create ${digestFile}: ${reason(error)}`);
      });
      made.push(digestFile);
      return await this.repository.removeArchived({ archivedAt: this.now(), before, ids, sha256, file: resolve(file) });
    } catch (error) {
      await handle?.close().catch(() => undefined);
      for (const path of made) await rm(path, { force: true });
      throw error;
    }
  }

  /**
   * The archive the file is, as the database recorded it; else an AuditArchiveError saying why not: the
   * file is cut short, added to or malformed, or no archive of this database has its SHA-256 (it was
   * changed, or comes from another database).
   */
  async verify(file: string): Promise<AuditArchiveRecord> {
    const hash = createHash('sha256');
    const reader = new AuditArchiveReader();
    let lastByte: number | undefined;
    try {
      const stream = createReadStream(file);
      stream.on('data', (chunk: Buffer | string) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        hash.update(bytes);
        if (bytes.length > 0) lastByte = bytes[bytes.length - 1];
      });
      for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) reader.line(line);
    } catch (error) {
      throw new AuditArchiveError(`cannot read ${file}: ${reason(error)}`);
    }
    const reading = reader.end(lastByte === 0x0a);
    if (!reading.ok) throw new AuditArchiveError(`${file} is not a whole archive: ${reading.problem}`);
    const sha256 = hash.digest('hex');
    const recorded = await this.repository.archiveWithDigest(sha256);
    const { summary } = reading;
    if (
      recorded === undefined ||
      recorded.rows !== summary.rows ||
      recorded.before !== summary.before ||
      recorded.lastId !== summary.lastId
    ) {
      throw new AuditArchiveError(
        `${file} is not an archive this database made: none has its SHA-256 ${sha256} (the file was changed, or comes from another database)`,
      );
    }
    return recorded;
  }
}
