/**
 * The operator's forecast of an offer's allocation (src/domain/ofs/offer/forecast.ts): the offer and
 * ordergate's own orders of it read, the day's allocation run over them. Nothing is written.
 */
import { AdminError } from '../domain/errors.js';
import {
  defaultForecastDay,
  offerForecast,
  type ForecastDay,
  type OfferForecast,
} from '../domain/ofs/offer/forecast.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { OfferOrderReads } from '../store/ofs/offer-orders.js';

export class OfferForecastService {
  constructor(
    private readonly offers: Pick<OfsOfferRepository, 'find'>,
    private readonly orders: Pick<OfferOrderReads, 'forecastOrders'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The forecast of `day` (by default T until T+1 opens, then T+1); an AdminError for an offer not registered. */
  async forecast(offerId: string, day?: ForecastDay): Promise<OfferForecast> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) throw new AdminError(`no OFS offer has offer_id ${JSON.stringify(offerId)}`);
    // Read after the offer, so that an allocation recorded in between shows in the orders too.
    const orders = await this.orders.forecastOrders(offerId);
    const now = this.now();
    return offerForecast(registration, orders, day ?? defaultForecastDay(registration, now), now);
  }
}
