/**
 * The store of the audit trail: the order-entry request records (`audit_requests`, append-only) and,
 * read beside them, the order state changes (`order_history`, with its actor and request id). Nothing here
 * updates a row; the one deletion is `removeArchived`, of request records an archive file holds, which the
 * database allows for those rows alone (migrations 0005 and 0011).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import {
  AuditArchiveError,
  type AuditArchiveRecord,
  type AuditedOrderChange,
  type AuditRequest,
  type CutValue,
  type NewAuditRequest,
} from '../../domain/access/audit.js';
import type { OrderStatus } from '../../domain/orders/status.js';
import { BulkInsert, intColumn as int, textColumn as text } from '../sql/bulk.js';
import type { Store } from '../sql/database.js';
import { openTx } from '../sql/write-tx.js';
import type { AuditArchivesTable, AuditRequestsTable, Database } from '../schema/tables.js';

type AuditRequestRow = Selectable<AuditRequestsTable>;

const cutOf = (bytes: number | string | null, sha256: string | null): CutValue | null =>
  bytes === null || sha256 === null ? null : { bytes: Number(bytes), sha256 };

function auditArchiveFromRow(row: Selectable<AuditArchivesTable>): AuditArchiveRecord {
  return {
    id: Number(row.id),
    archivedAt: Number(row.archived_at),
    before: Number(row.before_at),
    rows: Number(row.row_count),
    firstId: Number(row.first_id),
    lastId: Number(row.last_id),
    sha256: row.sha256,
    file: row.file,
  };
}

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
    pathCut: cutOf(row.path_bytes, row.path_sha256),
    statusCode: Number(row.status_code),
    code: row.code,
    orderId: row.order_id,
    ordercartId: row.ordercart_id,
    body: row.body,
    bodyCut: cutOf(row.body_bytes, row.body_sha256),
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
  int('path_bytes', (r) => r.pathCut?.bytes ?? null),
  text('path_sha256', (r) => r.pathCut?.sha256 ?? null),
  int('status_code', (r) => r.statusCode),
  text('code', (r) => r.code),
  text('order_id', (r) => r.orderId),
  text('ordercart_id', (r) => r.ordercartId),
  text('body', (r) => r.body),
  int('body_bytes', (r) => r.bodyCut?.bytes ?? null),
  text('body_sha256', (r) => r.bodyCut?.sha256 ?? null),
]);

/** What an archive removes: the records it wrote to its file, all that arrived before `before`. */
export interface ArchivedRequests {
  archivedAt: number;
  before: number;
  /** The ids of the records in the file, increasing. */
  ids: readonly number[];
  sha256: string;
  file: string;
}

export class AuditRepository {
  private readonly db: Kysely<Database>;

  constructor(private readonly store: Pick<Store, 'db' | 'dialect' | 'writeTransaction'>) {
    this.db = store.db;
  }

  /** Appends request records, all in one transaction. */
  async appendRequests(records: readonly NewAuditRequest[]): Promise<void> {
    if (records.length === 0) return;
    await this.store.writeTransaction((tx) => insertRequests.run(openTx(tx), records));
  }

  /** Up to `limit` records that arrived before `before`, with ids above `afterId`, in id order: an archive's pages. */
  async requestsToArchive(before: number, afterId: number, limit: number): Promise<AuditRequest[]> {
    const rows = await this.db
      .selectFrom('audit_requests')
      .selectAll()
      .where('at', '<', before)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(auditRequestFromRow);
  }

  /**
   * Removes the archived records and records the archive, in one transaction, or changes nothing. New
   * records are held off meanwhile (SQLite: the write lock; PostgreSQL: an EXCLUSIVE table lock, which also
   * waits for inserts already under way), so that the rows the archive row covers (arrived before `before`,
   * id up to the last archived) are exactly the archived ones; if they are not (a record arrived late, or
   * another archive ran), nothing is removed. Any later record has a higher id, so the database's delete
   * trigger covers no row left behind.
   */
  async removeArchived(archive: ArchivedRequests): Promise<AuditArchiveRecord> {
    const firstId = archive.ids[0];
    const lastId = archive.ids.at(-1);
    if (firstId === undefined || lastId === undefined)
      throw new AuditArchiveError('an archive without records removes nothing');
    return this.store.writeTransaction(async (tx) => {
      const { trx } = openTx(tx);
      if (this.store.dialect === 'postgres') await sql`lock table audit_requests in exclusive mode`.execute(trx);
      const covered = await trx
        .selectFrom('audit_requests')
        .select('id')
        .where('at', '<', archive.before)
        .where('id', '<=', lastId)
        .orderBy('id')
        .execute();
      if (
        covered.length !== archive.ids.length ||
        covered.some((row, index) => Number(row.id) !== archive.ids[index])
      ) {
        throw new AuditArchiveError(
          'the records before that instant changed while the file was written (a late record, or another archive); nothing was removed: run it again',
        );
      }
      const row = await trx
        .insertInto('audit_archives')
        .values({
          archived_at: archive.archivedAt,
          before_at: archive.before,
          row_count: archive.ids.length,
          first_id: firstId,
          last_id: lastId,
          sha256: archive.sha256,
          file: archive.file,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const removed = await trx
        .deleteFrom('audit_requests')
        .where('at', '<', archive.before)
        .where('id', '<=', lastId)
        .executeTakeFirst();
      if (Number(removed.numDeletedRows) !== archive.ids.length)
        throw new AuditArchiveError(
          'the database removed another number of records than archived; nothing was removed',
        );
      return auditArchiveFromRow(row);
    });
  }

  /** The archive whose file has this SHA-256, if this database made it. */
  async archiveWithDigest(sha256: string): Promise<AuditArchiveRecord | undefined> {
    const row = await this.db.selectFrom('audit_archives').selectAll().where('sha256', '=', sha256).executeTakeFirst();
    return row === undefined ? undefined : auditArchiveFromRow(row);
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
          eb(
            'request_id',
            'in',
            eb
              .selectFrom('order_history')
              .select('request_id')
              .where('order_id', '=', orderId)
              .where('request_id', 'is not', null),
          ),
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
        'order_history.traded_price_paise',
        'order_history.actor',
        'order_history.request_id',
      ]);
    if (filter.userId !== undefined) query = query.where('orders.user_id', '=', filter.userId);
    if (filter.orderId !== undefined) query = query.where('order_history.order_id', '=', filter.orderId);
    if (filter.requestId !== undefined) query = query.where('order_history.request_id', '=', filter.requestId);
    if (filter.since !== undefined) query = query.where('order_history.at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('order_history.at', '<', filter.until);
    const rows = await query
      .orderBy('order_history.at', 'desc')
      .orderBy('order_history.id', 'desc')
      .limit(filter.limit)
      .execute();
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
      tradedPricePaise: row.traded_price_paise === null ? null : Number(row.traded_price_paise),
      actor: row.actor,
      requestId: row.request_id,
    }));
  }
}
