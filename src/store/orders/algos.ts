/**
 * The algo registry (migration 0018; docs/design/sebi-algo.md): the algos registered with an exchange, who
 * may use each, every registration, stop and start of them, and the live orders that carry one (what the
 * kill switch cancels). Rows become AlgoRegistration here; nothing above the store sees one.
 */
import type { Kysely } from 'kysely';
import type { AlgoRegistration, AlgoSegment } from '../../domain/orders/algo-rules.js';
import { LIVE_STATUSES } from '../../domain/orders/status.js';
import type { BidderCategory } from '../../domain/ofs/rules.js';
import type { DialectName } from '../sql/database.js';
import type { AlgosTable, Database } from '../schema/tables.js';
import { executorOf, type StoreTx } from '../sql/write-tx.js';

/** One registration, stop or start of an algo, as the audit reads it. */
export interface AlgoChange {
  at: number;
  action: 'register' | 'add-users' | 'disable' | 'cancel-orders' | 'enable';
  actor: string;
  reason: string | null;
  detail: string;
}

/** A live order carrying an algo, and what cancelling it on its owner's behalf needs. */
export interface AlgoOrder {
  orderId: string;
  userId: string;
  exchange: string;
  category: BidderCategory;
}

/** PostgreSQL's int8 comes back as a string. */
const epoch = (value: number | string | null): number | null => (value === null ? null : Number(value));

function registrationOf(row: AlgosTable, userIds: readonly string[]): AlgoRegistration {
  return {
    algoId: row.algo_id,
    exchange: row.exchange as AlgoSegment,
    approvalRef: row.approval_ref,
    name: row.name,
    userIds,
    registeredAt: Number(row.registered_at),
    disabledAt: epoch(row.disabled_at),
    disabledReason: row.disabled_reason,
  };
}

export class AlgoRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** The algos with these ids (absent ones left out), with their users. */
  private async registrations(
    db: Kysely<Database>,
    algoIds: readonly string[],
    lock: 'share' | 'update' | null,
  ): Promise<Map<string, AlgoRegistration>> {
    if (algoIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('algos')
      .selectAll()
      .where('algo_id', 'in', [...new Set(algoIds)])
      .orderBy('algo_id')
      .$if(this.dialect === 'postgres' && lock === 'share', (qb) => qb.forShare())
      .$if(this.dialect === 'postgres' && lock === 'update', (qb) => qb.forUpdate())
      .execute();
    if (rows.length === 0) return new Map();
    const users = await db
      .selectFrom('algo_users')
      .select(['algo_id', 'user_id'])
      .where(
        'algo_id',
        'in',
        rows.map((row) => row.algo_id),
      )
      .orderBy('added_at')
      .orderBy('user_id')
      .execute();
    return new Map(
      rows.map((row) => [
        row.algo_id,
        registrationOf(
          row,
          users.filter((u) => u.algo_id === row.algo_id).map((u) => u.user_id),
        ),
      ]),
    );
  }

  /** The algo registered under this ID, or undefined. */
  async find(algoId: string, tx?: StoreTx): Promise<AlgoRegistration | undefined> {
    return (await this.registrations(executorOf(this.db, tx), [algoId], null)).get(algoId);
  }

  /**
   * The algos of the orders a batch places or modifies, read inside its transaction; on PostgreSQL share-
   * locked to its end, so that the kill switch's stop (which updates the row) waits for the batch, and a
   * batch that starts after the stop reads it. Taken after the users and the orders (the lock order).
   */
  async lockForOrders(tx: StoreTx, algoIds: readonly string[]): Promise<Map<string, AlgoRegistration>> {
    return this.registrations(executorOf(this.db, tx), algoIds, 'share');
  }

  /** The algo, locked for a change to the end of the transaction (PostgreSQL). */
  async lockForChange(tx: StoreTx, algoId: string): Promise<AlgoRegistration | undefined> {
    return (await this.registrations(executorOf(this.db, tx), [algoId], 'update')).get(algoId);
  }

  /** Every registered algo, by ID. */
  async list(): Promise<AlgoRegistration[]> {
    const ids = await this.db.selectFrom('algos').select('algo_id').orderBy('algo_id').execute();
    return [
      ...(
        await this.registrations(
          this.db,
          ids.map((row) => row.algo_id),
          null,
        )
      ).values(),
    ];
  }

  async insert(
    tx: StoreTx,
    registration: Omit<AlgoRegistration, 'userIds' | 'disabledAt' | 'disabledReason'>,
  ): Promise<void> {
    await executorOf(this.db, tx)
      .insertInto('algos')
      .values({
        algo_id: registration.algoId,
        exchange: registration.exchange,
        approval_ref: registration.approvalRef,
        name: registration.name,
        registered_at: registration.registeredAt,
        disabled_at: null,
        disabled_reason: null,
      })
      .execute();
  }

  async addUsers(tx: StoreTx, algoId: string, userIds: readonly string[], at: number): Promise<void> {
    if (userIds.length === 0) return;
    await executorOf(this.db, tx)
      .insertInto('algo_users')
      .values(userIds.map((userId) => ({ algo_id: algoId, user_id: userId, added_at: at })))
      .execute();
  }

  /** Stops the algo (`at` and `reason`) or starts it again (null, null). */
  async setDisabled(tx: StoreTx, algoId: string, at: number | null, reason: string | null): Promise<void> {
    await executorOf(this.db, tx)
      .updateTable('algos')
      .set({ disabled_at: at, disabled_reason: reason })
      .where('algo_id', '=', algoId)
      .execute();
  }

  async recordChange(tx: StoreTx, algoId: string, change: AlgoChange): Promise<void> {
    await executorOf(this.db, tx)
      .insertInto('algo_changes')
      .values({
        algo_id: algoId,
        at: change.at,
        action: change.action,
        actor: change.actor,
        reason: change.reason,
        detail: change.detail,
      })
      .execute();
  }

  /** The algo's registrations, stops and starts, oldest first. */
  async changes(algoId: string): Promise<AlgoChange[]> {
    const rows = await this.db
      .selectFrom('algo_changes')
      .selectAll()
      .where('algo_id', '=', algoId)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      at: Number(row.at),
      action: row.action as AlgoChange['action'],
      actor: row.actor,
      reason: row.reason,
      detail: row.detail,
    }));
  }

  /**
   * The live orders carrying the algo with no cancellation under way, oldest first (index orders_algo), with
   * the category each was placed under: what the kill switch asks to cancel.
   */
  async liveOrders(algoId: string): Promise<AlgoOrder[]> {
    const rows = await this.db
      .selectFrom('orders')
      .select(['order_id', 'user_id', 'exchange', 'category'])
      .where('algo_id', '=', algoId)
      .where('status', 'in', [...LIVE_STATUSES])
      .where('cancel_requested_at', 'is', null)
      .orderBy('created_at')
      .orderBy('order_id')
      .execute();
    return rows.map((row) => ({
      orderId: row.order_id,
      userId: row.user_id,
      exchange: row.exchange,
      category: row.category as BidderCategory,
    }));
  }
}
