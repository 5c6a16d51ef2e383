/**
 * The store of the audit trail: the order-entry request records (`audit_requests`, append-only) and,
 * read beside them, the order state changes (`order_history`, with its actor and request id). Nothing here
 * updates or deletes a row; the database refuses it anyway (migration 0005).
 */
import type { Kysely, Selectable } from 'kysely';
import type { AuditedOrderChange, AuditRequest, NewAuditRequest } from '../domain/audit.js';
import type { OrderStatus } from '../domain/order-status.js';
import { BulkInsert, intColumn as int, textColumn as text } from './bulk.js';
import type { Store } from './database.js';
import { openTx } from './write-tx.js';
import type { AuditRequestsTable, Database } from './tables.js';

type AuditRequestRow = Selectable<AuditRequestsTable>;

/** The request record a row holds. Integer columns come back from PostgreSQL as strings (int8). */
function auditRequestFromRow(row: AuditRequestRow): AuditRequest {
  return {
    id: Number(row.id),
    at: Number(row.at),
    requestId: row.request_id,
    userId: row.user_id,
    clientAddress: row.client_address,
    method: row.method,
    route: row.route,
    path: row.path,
    statusCode: Number(row.status_code),
    code: row.code,
    orderId: row.order_id,
    ordercartId: row.ordercart_id,
    body: row.body,
  };
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

const insertRequests = new BulkInsert<NewAuditRequest>('audit_requests', [
  int('at', (r) => r.at),
  text('request_id', (r) => r.requestId),
  text('user_id', (r) => r.userId),
  text('client_address', (r) => r.clientAddress),
  text('method', (r) => r.method),
  text('route', (r) => r.route),
  text('path', (r) => r.path),
  int('status_code', (r) => r.statusCode),
  text('code', (r) => r.code),
  text('order_id', (r) => r.orderId),
  text('ordercart_id', (r) => r.ordercartId),
  text('body', (r) => r.body),
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
  async requests(filter: AuditFilter): Promise<AuditRequest[]> {
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
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map(auditRequestFromRow);
  }

  /** The newest order state changes that match, newest first. `userId` is the order's owner. */
  async orderChanges(filter: AuditFilter): Promise<AuditedOrderChange[]> {
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
    // The status is written by order entry and the OMS alone, from OrderStatus.
    return rows.map((row) => ({
      id: Number(row.id),
      at: Number(row.at),
      orderId: row.order_id,
      userId: row.user_id,
      status: row.status as OrderStatus,
      reason: row.reason,
      quantity: Number(row.quantity),
      pricePaise: Number(row.price_paise),
      tradedQuantity: Number(row.traded_quantity),
      actor: row.actor,
      requestId: row.request_id,
    }));
  }
}
