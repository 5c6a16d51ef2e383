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
}

export const ACCEPTED_STATUS = 'OMSXMITTED';

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
