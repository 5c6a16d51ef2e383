/**
 * The store of the audit trail: the order-entry request records (`audit_requests`, append-only) and,
 * read beside them, the order state changes (`order_history`, with its actor and request id). Nothing here
 * updates or deletes a row; the database refuses it anyway (migration 0005).
 */
import type { Insertable, Kysely, Selectable } from 'kysely';
import { BulkInsert, intColumn, textColumn } from './bulk.js';
import type { Store } from './database.js';
import { openTx } from './write-tx.js';
import type { AuditRequestsTable, Database } from './tables.js';

export type AuditRequestRow = Selectable<AuditRequestsTable>;
export type NewAuditRequest = Insertable<AuditRequestsTable>;

/** An order state change, as the trail shows it. */
export interface OrderChangeRow {
  id: number;
  at: number;
  order_id: string;
  /** The order's owner. */
  user_id: string;
  status: string;
  reason: string;
  quantity: number;
  price_paise: number;
  traded_quantity: number;
  /** The user, "oms" or "exchange"; null for changes recorded before the audit trail existed. */
  actor: string | null;
  request_id: string | null;
}

/** What to show; every given filter must hold. Times are epoch ms, `until` exclusive. */
export interface AuditFilter {
  userId?: string | undefined;
  orderId?: string | undefined;
  requestId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  /** At most this many of each kind, the newest. */
  limit: number;
}

const text = (name: keyof NewAuditRequest) => textColumn<NewAuditRequest>(name, (r) => (r[name] ?? null) as string | null);
const int = (name: keyof NewAuditRequest) => intColumn<NewAuditRequest>(name, (r) => (r[name] ?? null) as number | null);

const insertRequests = new BulkInsert<NewAuditRequest>('audit_requests', [
  int('at'),
  text('request_id'),
  text('user_id'),
  text('client_address'),
  text('method'),
  text('route'),
  text('path'),
  int('status_code'),
  text('code'),
  text('order_id'),
  text('ordercart_id'),
  text('body'),
]);

export class AuditRepository {
  private readonly db: Kysely<Database>;

  constructor(private readonly store: Pick<Store, 'db' | 'writeTransaction'>) {
    this.db = store.db;
  }

  /** Appends request records, all in one transaction. */
  async appendRequests(records: readonly NewAuditRequest[]): Promise<void> {
    if (records.length === 0) return;
    await this.store.writeTransaction((tx) => insertRequests.run(openTx(tx), records));
  }

  /** The newest request records that match, newest first. */
  async requests(filter: AuditFilter): Promise<AuditRequestRow[]> {
    let query = this.db.selectFrom('audit_requests').selectAll();
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    if (filter.requestId !== undefined) query = query.where('request_id', '=', filter.requestId);
    if (filter.orderId !== undefined) {
      const orderId = filter.orderId;
      // The requests that named the order, and those that changed it (a cart execution placed it, say).
      query = query.where((eb) =>
        eb.or([
          eb('order_id', '=', orderId),
          eb('request_id', 'in', eb.selectFrom('order_history').select('request_id').where('order_id', '=', orderId).where('request_id', 'is not', null)),
        ]),
      );
    }
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  }

  /** The newest order state changes that match, newest first. `userId` is the order's owner. */
  async orderChanges(filter: AuditFilter): Promise<OrderChangeRow[]> {
    let query = this.db
      .selectFrom('order_history')
      .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
      .select([
        'order_history.id',
        'order_history.at',
        'order_history.order_id',
        'orders.user_id',
        'order_history.status',
        'order_history.reason',
        'order_history.quantity',
        'order_history.price_paise',
        'order_history.traded_quantity',
        'order_history.actor',
        'order_history.request_id',
      ]);
    if (filter.userId !== undefined) query = query.where('orders.user_id', '=', filter.userId);
    if (filter.orderId !== undefined) query = query.where('order_history.order_id', '=', filter.orderId);
    if (filter.requestId !== undefined) query = query.where('order_history.request_id', '=', filter.requestId);
    if (filter.since !== undefined) query = query.where('order_history.at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('order_history.at', '<', filter.until);
    const rows = await query.orderBy('order_history.at', 'desc').orderBy('order_history.id', 'desc').limit(filter.limit).execute();
    return rows.map((row) => ({
      ...row,
      id: Number(row.id),
      at: Number(row.at),
      quantity: Number(row.quantity),
      price_paise: Number(row.price_paise),
      traded_quantity: Number(row.traded_quantity),
    }));
  }
}
