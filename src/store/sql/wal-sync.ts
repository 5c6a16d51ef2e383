/**
 * SQLite's commits made durable off the event loop. With `synchronous=FULL` in WAL mode, SQLite's COMMIT
 * writes the transaction's frames to the WAL and then fsyncs it, inside the call: better-sqlite3 is
 * synchronous, so every commit stopped the API's event loop for the disk's sync time (0.2-3 ms here,
 * several hundred times a second at a steady rate; docs/design/performance-log.md, "Commits synced off the
 * event loop"). The store's connections run `synchronous=NORMAL` instead, which is FULL less that one sync
 * after each commit (SQLite still syncs the WAL before a checkpoint, the database after it, and the WAL's
 * header when the WAL is reused), and the driver supplies the missing sync itself: after a commit it
 * awaits `durable()`, an fdatasync of the WAL file run on libuv's thread pool, before the commit is
 * answered. Whatever a commit wrote is on disk before it is acknowledged, as with FULL; the event loop
 * serves other requests while the disk works.
 *
 * What FULL also gave, and how it is kept:
 * - **Nothing is read before it is durable.** Under FULL a commit becomes visible to other connections
 *   only after its sync. Here it is visible as soon as its frames are written, so a reader on another
 *   connection of this process waits for the sync under way (`settled()`) before it reads: the order book
 *   and the event feed never show a row that a power cut could still take back; so does a statement on the
 *   write connection outside a transaction. A transaction does not wait: the write connection goes to the
 *   next transaction as soon as a COMMIT has run (commits pipelined, sqlite-driver.ts), which may read the
 *   rows still syncing, and is answered only after a sync begun after its own commit, which covers them.
 *   The one other exception is the credentials' read-only connection (Store.credentialsDb), which reads at
 *   once: a session or a key is handed out only after its commit's sync, so an earlier read of it lets
 *   nothing in.
 *   (Another process on the same file, the CLI, could read such a row in that window, and this process
 *   one of the CLI's commits before the CLI's own sync: both rare, and neither answers an order.)
 * - **A failed sync fails the commit, and every later one.** After a failed fdatasync Linux may drop the
 *   dirty pages and report success to the next one, so nothing written since can be known durable; and
 *   SQLite has already made the commit visible, so it cannot be rolled back. Like PostgreSQL (which stops
 *   on a failed fsync), the store then refuses every commit and every read with a DatabaseUnavailableError
 *   (503) until the process is restarted; at its start SQLite recovers what the disk holds.
 *
 * One file descriptor of the WAL is kept open: SQLite deletes the WAL only when the last connection to the
 * database closes, and the store's connections stay open as long as this does.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import { DatabaseUnavailableError } from '../../domain/errors.js';

/** Syncs a file's data (and its size) to the disk; fs.fdatasync on the thread pool unless a test says otherwise. */
export type DataSync = (fd: number) => Promise<void>;

const threadPoolDataSync: DataSync = (fd) =>
  new Promise((resolve, reject) => {
    fdatasync(fd, (error) => (error === null ? resolve() : reject(error)));
  });

function openWal(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
}

export class WalSync {
  private fd: number | null = null;
  /** The sync under way, if any. */
  private running: Promise<void> | null = null;
  /** The sync that starts when the running one ends: for commits made while it runs. */
  private queued: Promise<void> | null = null;
  private failure: DatabaseUnavailableError | null = null;

  constructor(
    private readonly walPath: string,
    private readonly dataSync: DataSync = threadPoolDataSync,
  ) {}

  /** Resolves once everything written to the WAL before this call is on disk (a sync that began after it has ended). */
  durable(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.running === null) return this.start();
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  /** Resolves once every commit made before this call is on disk: at once (null) when none waits for its sync. */
  settled(): Promise<void> | null {
    if (this.failure !== null) return Promise.reject(this.failure);
    return this.queued ?? this.running;
  }

  /** Throws the failure of an earlier sync, if one failed (see the file comment); else nothing. */
  throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private start(): Promise<void> {
    const running = this.sync().finally(() => {
      if (this.running === running) this.running = null;
    });
    this.running = running;
    return running;
  }

  private async sync(): Promise<void> {
    try {
      // Opened at the first commit: SQLite creates the WAL file at the first write (none yet: nothing to sync).
      this.fd ??= openWal(this.walPath);
      if (this.fd !== null) await this.dataSync(this.fd);
    } catch (error) {
      this.failure ??= new DatabaseUnavailableError(
        new Error(
          `the WAL of the database could not be synced to disk (restart the process): ${error instanceof Error ? error.message : String(error)}`,
          {
            cause: error,
          },
        ),
      );
      throw this.failure;
    }
  }
}
