/**
 * The audit trail (docs/design/audit.md) as the services, the HTTP hooks and the CLI see it: the records of
 * order-entry requests and, beside them, the order state changes. The store maps them from its tables
 * (snake_case columns, PostgreSQL's int8 as strings); nothing above the store sees a row.
 */
import type { RecordedChange } from './order.js';

/** One order-entry request as the trail keeps it, before the store has numbered it. */
export interface NewAuditRequest {
  /** When the request arrived, epoch ms. */
  at: number;
  /** The Request-Id header of the answer. */
  requestId: string;
  /** The authenticated caller; null when authentication failed. */
  userId: string | null;
  /** The peer address of the connection (no proxy header is trusted). */
  clientAddress: string;
  method: string;
  /** The route pattern, e.g. /transactional/v1/orders/regular/:exchange/:order_id. */
  route: string;
  /** The path as requested, with its query string. */
  path: string;
  statusCode: number;
  /** The answer's code: e-NNN for a refusal, s-NNN for a success; null when the answer had none. */
  code: string | null;
  /** The order the request named or created. */
  orderId: string | null;
  /** The order cart the request named. */
  ordercartId: string | null;
  /** The JSON body as received, secrets redacted; null when there was none. */
  body: string | null;
}

/** A request record as read back from the trail, with its id (the order of appending). */
export interface AuditRequest extends NewAuditRequest {
  id: number;
}

/** An order state change as the trail shows it: its history entry, with its id and the order's owner. */
export interface AuditedOrderChange extends RecordedChange {
  id: number;
  /** The order's owner. */
  userId: string;
}
