/**
 * The OMS's queries: claiming outbox entries under a lease, and locking an order row in a given status
 * before changing it. Both are conditional UPDATEs, which serialize concurrent workers the same way on
 * SQLite (one writer) and PostgreSQL (row locks, with the WHERE re-checked after the wait).
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import { inList } from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import type { OutboxAction } from '../../domain/orders/order.js';
import { prepareQuery } from '../sql/prepared.js';
import type { Database } from '../schema/tables.js';
import { executorOf, openTx, sendAhead, type StoreTx } from '../sql/write-tx.js';

export interface OutboxEntry {
  id: number;
  orderId: string;
  action: OutboxAction;
}

/** Not leased, or its lease has run out. */
const claimable = (now: number) => (eb: ExpressionBuilder<Database, 'outbox'>) =>
  eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]);

export class OmsRepository {
  // Every OMS pass asks these (every 50 ms while there is work, every 250 ms at rest): built and compiled
  // once (see prepared.ts).
  private readonly latestQuery;
  /** claimDue's statement when no entry is skipped (nearly every pass). */
  private readonly claimQuery;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {
    this.latestQuery = prepareQuery(() => db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('id')));
    this.claimQuery = prepareQuery(
      (p: { now: number; limit: number; maxId: number; workerId: string; until: number }) =>
        this.claimStatement(p.now, [], p.limit, p.maxId, p.workerId, p.until),
    );
  }

  /** The newest outbox entry's id (0 when there is none). */
  async latestEntryId(): Promise<number> {
    const [row] = await this.latestQuery.execute(this.db, {});
    return row?.id == null ? 0 : Number(row.id);
  }

  /**
   * The oldest entries (up to `limit`) that are not done, not leased to a live worker, and have no earlier
   * entry of the same order still open: an order's PLACE, MODIFY and CANCEL are processed one after
   * another, in the order they were committed, whichever worker takes them; and no two entries of one
   * order are ever due at once. A PLACE is an order's first entry, so only the others are looked back
   * for. Entries after `maxId` are left out.
   */
  async dueEntries(
    now: number,
    skipIds: readonly number[],
    limit: number,
    maxId = Number.MAX_SAFE_INTEGER,
  ): Promise<OutboxEntry[]> {
    const rows = await this.dueQuery(now, skipIds, limit, maxId).execute();
    return rows.map((row) => ({ id: Number(row.id), orderId: row.order_id, action: row.action as OutboxAction }));
  }

  /**
   * The due entries (as dueEntries) taken for `workerId` until `until`, in id order, in one statement: the
   * claim updates the rows its subquery reads as due. On PostgreSQL that subquery locks them as it reads
   * them and skips those another worker is taking at that moment (`FOR UPDATE SKIP LOCKED`), so that workers
   * on several nodes take different entries instead of waiting on each other's; on SQLite the statement
   * holds the one write lock.
   */
  async claimDue(
    now: number,
    skipIds: readonly number[],
    limit: number,
    maxId: number,
    workerId: string,
    until: number,
  ): Promise<OutboxEntry[]> {
    const rows =
      skipIds.length === 0
        ? await this.claimQuery.execute(this.db, { now, limit, maxId, workerId, until })
        : await this.claimStatement(now, skipIds, limit, maxId, workerId, until).execute();
    // RETURNING promises no order.
    return rows
      .map((row) => ({ id: Number(row.id), orderId: row.order_id, action: row.action as OutboxAction }))
      .sort((a, b) => a.id - b.id);
  }

  private claimStatement(
    now: number,
    skipIds: readonly number[],
    limit: number,
    maxId: number,
    workerId: string,
    until: number,
  ) {
    const due = this.dueQuery(now, skipIds, limit, maxId).clearSelect().select('id');
    return this.db
      .updateTable('outbox')
      .set({ claimed_by: workerId, claimed_until: until })
      .where('id', 'in', this.dialect === 'postgres' ? due.forUpdate().skipLocked() : due)
      .returning(['id', 'order_id', 'action']);
  }

  private dueQuery(now: number, skipIds: readonly number[], limit: number, maxId: number) {
    let query = this.db
      .selectFrom('outbox')
      .select(['id', 'order_id', 'action'])
      .where('done_at', 'is', null)
      .where('id', '<=', maxId)
      .where(claimable(now))
      .where(({ or, eb, not, exists, selectFrom }) =>
        or([
          eb('action', '=', 'PLACE'),
          not(
            exists(
              selectFrom('outbox as earlier')
                .select('earlier.id')
                .whereRef('earlier.order_id', '=', 'outbox.order_id')
                .whereRef('earlier.id', '<', 'outbox.id')
                .where('earlier.done_at', 'is', null),
            ),
          ),
        ]),
      )
      .orderBy('id')
      .limit(limit);
    if (skipIds.length > 0) query = query.where('id', 'not in', skipIds);
    return query;
  }

  /** Marks the entries done (those still leased to `workerId`); `trx` to do it in the transaction of their work. */
  async completeAll(ids: readonly number[], workerId: string, now: number, storeTx?: StoreTx): Promise<void> {
    if (ids.length === 0) return;
    const done = executorOf(this.db, storeTx)
      .updateTable('outbox')
      .set({ done_at: now, claimed_until: null })
      .where(inList(this.dialect, 'id', ids, 'int8'))
      .where('claimed_by', '=', workerId)
      .where('done_at', 'is', null);
    // In a transaction, sent ahead with its commit (WriteTx.ahead).
    if (storeTx === undefined) await done.execute();
    else await sendAhead(openTx(storeTx), done.compile());
  }

  /** Gives entries back after a failure, so that the next pass retries them at once. */
  async releaseAll(ids: readonly number[], workerId: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('outbox')
      .set({ claimed_until: null })
      .where(inList(this.dialect, 'id', ids, 'int8'))
      .where('claimed_by', '=', workerId)
      .where('done_at', 'is', null)
      .execute();
  }

  /**
   * Keeps entries leased to `workerId` until `until` (epoch ms), so that no pass takes them before: the
   * back-off of work the exchange did not answer (src/oms/worker.ts). They are held under a name of their
   * own (`<workerId>:deferred`), so that a worker giving back its leases after a failed pass
   * (releaseLeasedTo) does not cut a back-off short: a lost answer's wait is what lets a bid still on its
   * way reach the exchange's book before the book is read. Whoever passes after `until` takes them.
   */
  async deferAll(ids: readonly number[], workerId: string, until: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('outbox')
      .set({ claimed_until: until, claimed_by: `${workerId}:deferred` })
      .where(inList(this.dialect, 'id', ids, 'int8'))
      .where('claimed_by', '=', workerId)
      .where('done_at', 'is', null)
      .execute();
  }

  /**
   * Gives back every open entry leased to `workerId`, answering how many: after a failed pass, whose claim
   * may have committed with its answer lost (the connection cut between the two), the worker cannot know
   * which entries it holds. Its passes never overlap, so at the start of the next one whatever it still
   * holds is left over from the failed one. Reads only open entries (outbox_pending: done_at, id).
   */
  async releaseLeasedTo(workerId: string): Promise<number> {
    const result = await this.db
      .updateTable('outbox')
      .set({ claimed_until: null })
      .where('done_at', 'is', null)
      .where('claimed_by', '=', workerId)
      .where('claimed_until', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Whether the order has a MODIFY entry after `afterId` still to be processed. */
  async hasLaterModify(orderId: string, afterId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('outbox')
      .select('id')
      .where('order_id', '=', orderId)
      .where('action', '=', 'MODIFY')
      .where('id', '>', afterId)
      .where('done_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }
}
