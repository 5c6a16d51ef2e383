/**
 * ordergate's own orders of an offer as the operator's forecast reads them (src/domain/ofs/offer/forecast.ts):
 * those at the exchange or waiting to be (the live statuses) and those allotted (their T allotments count
 * against the single-bidder cap on T+1), over the offer's orders alone (the partial index orders_offer,
 * migration 0014), both listings.
 */
import type { Kysely } from 'kysely';
import type { ForecastOrder } from '../../domain/ofs/offer/forecast.js';
import { LIVE_STATUSES, OrderStatus } from '../../domain/orders/status.js';
import type { Database } from '../schema/tables.js';

export class OfferOrderReads {
  constructor(private readonly db: Kysely<Database>) {}

  async forecastOrders(offerId: string): Promise<ForecastOrder[]> {
    const rows = await this.db
      .selectFrom('orders')
      .select([
        'order_id',
        'user_id',
        'exchange',
        'scrip_token',
        'offer_category',
        'status',
        'price_paise',
        'quantity',
        'traded_quantity',
        'carried_forward_at',
        'created_at',
      ])
      .where('offer_id', '=', offerId)
      .where('status', 'in', [...LIVE_STATUSES, OrderStatus.EXECUTED])
      .orderBy('created_at')
      .orderBy('order_id')
      .execute();
    // PostgreSQL answers bigints as strings.
    return rows.map((row) => ({
      orderId: row.order_id,
      userId: row.user_id,
      exchange: row.exchange,
      scripToken: Number(row.scrip_token),
      category: row.offer_category ?? '',
      status: row.status,
      pricePaise: Number(row.price_paise),
      quantity: Number(row.quantity),
      tradedQuantity: Number(row.traded_quantity),
      carriedForward: row.carried_forward_at !== null,
      placedAt: Number(row.created_at),
    }));
  }
}
