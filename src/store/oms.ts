/**
 * The OMS's queries: claiming outbox entries under a lease, and locking an order row in a given status
 * before changing it. Both are conditional UPDATEs, which serialize concurrent workers the same way on
 * SQLite (one writer) and PostgreSQL (row locks, with the WHERE re-checked after the wait).
 */
import type { Kysely, Transaction } from 'kysely';
import type { OrderRow, OrderStatus } from './orders.js';
import type { Database } from './tables.js';

export type OutboxAction = 'PLACE' | 'MODIFY' | 'CANCEL';

export interface OutboxEntry {
  id: number;
  orderId: string;
  action: OutboxAction;
}

export interface OrderTerms {
  orderType: string;
  pricePaise: number;
  quantity: number;
}

export class OmsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The oldest entry that is not done, not leased to a live worker, and has no earlier entry of the same
   * order still open: an order's PLACE, MODIFY and CANCEL are processed one after another, in the order
   * they were committed, whichever worker takes them.
   */
  async nextDue(now: number, skipIds: readonly number[]): Promise<OutboxEntry | undefined> {
    let query = this.db
      .selectFrom('outbox')
      .select(['id', 'order_id', 'action'])
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('outbox as earlier')
              .select('earlier.id')
              .whereRef('earlier.order_id', '=', 'outbox.order_id')
              .whereRef('earlier.id', '<', 'outbox.id')
              .where('earlier.done_at', 'is', null),
          ),
        ),
      )
      .orderBy('id')
      .limit(1);
    if (skipIds.length > 0) query = query.where('id', 'not in', skipIds);
    const row = await query.executeTakeFirst();
    return row && { id: Number(row.id), orderId: row.order_id, action: row.action as OutboxAction };
  }

  /** Takes the entry for `workerId` until `until`; answers false when another worker holds it or it is done. */
  async claim(id: number, workerId: string, now: number, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable('outbox')
      .set({ claimed_by: workerId, claimed_until: until })
      .where('id', '=', id)
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async complete(id: number, workerId: string, now: number): Promise<void> {
    await this.db
      .updateTable('outbox')
      .set({ done_at: now, claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', workerId)
      .where('done_at', 'is', null)
      .execute();
  }

  /** Gives the entry back after a failure, so that the next pass retries it at once. */
  async release(id: number, workerId: string): Promise<void> {
    await this.db
      .updateTable('outbox')
      .set({ claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', workerId)
      .where('done_at', 'is', null)
      .execute();
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

  /**
   * Locks the order row for the rest of the transaction if its status is one of `statuses`, and answers
   * it; undefined when it is in another status (someone else moved it first).
   */
  async lockInStatus(trx: Transaction<Database>, orderId: string, statuses: readonly OrderStatus[]): Promise<OrderRow | undefined> {
    const result = await trx
      .updateTable('orders')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('order_id', '=', orderId)
      .where('status', 'in', statuses)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return trx.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  }

  /** Puts back the terms the exchange holds, after it refused a modification. */
  async restoreTerms(trx: Transaction<Database>, orderId: string, terms: OrderTerms, now: number): Promise<void> {
    await trx
      .updateTable('orders')
      .set((eb) => ({
        order_type: terms.orderType,
        price_paise: terms.pricePaise,
        quantity: terms.quantity,
        // The disclosed quantity is ours alone; it must still fit the quantity.
        disclosed_quantity: eb.case().when('disclosed_quantity', '>', terms.quantity).then(terms.quantity).else(eb.ref('disclosed_quantity')).end(),
        updated_at: now,
      }))
      .where('order_id', '=', orderId)
      .execute();
  }
}
