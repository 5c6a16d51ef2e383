/** Orders, their status history and the OMS outbox. */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, OrdersTable } from './tables.js';

export type OrderRow = Selectable<OrdersTable>;

/** An order as accepted by the API, before the OMS has seen it. */
export interface NewOrder {
  orderId: string;
  userId: string;
  exchange: string;
  scripToken: number;
  symbol: string;
  series: string;
  transactionType: string;
  productType: string;
  orderType: string;
  quantity: number;
  pricePaise: number;
  disclosedQuantity: number;
  orderIdentifier: string | null;
  algoId: string | null;
  strategyId: string | null;
  partCode: string | null;
  venderCode: string | null;
  requestId: string | null;
  category: string;
}

/** The order statuses (ODIN vocabulary, product.md). */
export const OrderStatus = {
  /** Accepted and queued for the OMS. */
  OMSXMITTED: 'OMSXMITTED',
  /** Sent to the exchange. */
  EXXMITTED: 'EXXMITTED',
  /** Live at the exchange. */
  PENDING: 'PENDING',
  /** Rejected by the OMS. */
  OMSREJECT: 'OMSREJECT',
  /** Rejected by the exchange. */
  ORDERERROR: 'ORDERERROR',
  /** Cancelled by the user, or not allotted at close. */
  CANCELLED: 'CANCELLED',
  /** Allotted: traded quantity = allotted quantity. */
  EXECUTED: 'EXECUTED',
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** Statuses of an order that is still working: it may be modified or cancelled, and counts in limits. */
export const LIVE_STATUSES: readonly OrderStatus[] = [OrderStatus.OMSXMITTED, OrderStatus.EXXMITTED, OrderStatus.PENDING];

const ACCEPTED_STATUS = OrderStatus.OMSXMITTED;

/** What a status change may also set on the order. */
export interface TransitionFields {
  tradedQuantity?: number;
  tradedPricePaise?: number | null;
  errorReason?: string | null;
  exchangeOrderId?: string | null;
}

export class OrderRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Writes an accepted order with its first history entry and its outbox entry for the OMS. Call inside
   * a transaction: the three rows are one fact.
   */
  async insertAccepted(trx: Transaction<Database>, order: NewOrder, now: number): Promise<void> {
    await trx
      .insertInto('orders')
      .values({
        order_id: order.orderId,
        user_id: order.userId,
        exchange: order.exchange,
        scrip_token: order.scripToken,
        symbol: order.symbol,
        series: order.series,
        transaction_type: order.transactionType,
        product_type: order.productType,
        order_type: order.orderType,
        quantity: order.quantity,
        price_paise: order.pricePaise,
        disclosed_quantity: order.disclosedQuantity,
        traded_quantity: 0,
        status: ACCEPTED_STATUS,
        error_reason: null,
        order_identifier: order.orderIdentifier,
        algo_id: order.algoId,
        strategy_id: order.strategyId,
        part_code: order.partCode,
        vender_code: order.venderCode,
        request_id: order.requestId,
        category: order.category,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx
      .insertInto('order_history')
      .values({
        order_id: order.orderId,
        status: ACCEPTED_STATUS,
        reason: 'Order entry accepted and queued for the OMS',
        quantity: order.quantity,
        price_paise: order.pricePaise,
        traded_quantity: 0,
        at: now,
      })
      .execute();
    await trx.insertInto('outbox').values({ order_id: order.orderId, action: 'PLACE', created_at: now }).execute();
  }

  /**
   * Moves an order to a status and appends the change to its history (with the order's quantities and
   * price after the change), in the caller's transaction. The history is the order's event log: every
   * status change goes through here.
   */
  async transition(
    trx: Transaction<Database>,
    orderId: string,
    status: OrderStatus,
    reason: string,
    now: number,
    fields: TransitionFields = {},
  ): Promise<void> {
    await trx
      .updateTable('orders')
      .set({
        status,
        updated_at: now,
        ...(fields.tradedQuantity !== undefined && { traded_quantity: fields.tradedQuantity }),
        ...(fields.tradedPricePaise !== undefined && { traded_price_paise: fields.tradedPricePaise }),
        ...(fields.errorReason !== undefined && { error_reason: fields.errorReason }),
        ...(fields.exchangeOrderId !== undefined && { exchange_order_id: fields.exchangeOrderId }),
      })
      .where('order_id', '=', orderId)
      .execute();
    await this.appendHistory(trx, orderId, reason, now);
  }

  /** Appends the order's current state to its history with a reason (a change that keeps the status). */
  async appendHistory(trx: Transaction<Database>, orderId: string, reason: string, now: number): Promise<void> {
    await trx
      .insertInto('order_history')
      .columns(['order_id', 'status', 'reason', 'quantity', 'price_paise', 'traded_quantity', 'at'])
      .expression((eb) =>
        eb
          .selectFrom('orders')
          .select((s) => [
            'order_id',
            'status',
            s.val(reason).as('reason'),
            'quantity',
            'price_paise',
            'traded_quantity',
            s.val(now).as('at'),
          ])
          .where('order_id', '=', orderId),
      )
      .execute();
  }

  async find(orderId: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  }

  async pendingOutbox(): Promise<{ id: number; order_id: string; action: string }[]> {
    return this.db
      .selectFrom('outbox')
      .select(['id', 'order_id', 'action'])
      .where('done_at', 'is', null)
      .orderBy('id')
      .execute();
  }
}
