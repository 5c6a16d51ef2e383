/**
 * The offers' read calls (docs/design/ofs.md, "What users and operators see"): every offer's terms with its
 * portions in shares, its days and where it stands, for any logged-in user.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { discountedPricePaise, offerPortions, offerState, type Discount, type IndicativeFigures, type Offer } from '../domain/ofs-offer.js';
import type { OfsOfferData, OfsOfferEntry, OfsOffersData } from '../schemas/ofs-offer.js';
import type { OfferRegistration, OfsOfferRepository, PublishedIndicative } from '../store/ofs-offers.js';

const rupees = (paise: number) => paise / 100;
/** The indicative prices one offer's read answers, the latest: enough for the console's chart of a T session. */
export const INDICATIVE_POINTS = 500;
const instant = (ms: number) => new Date(ms).toISOString();

function discountOut(discount: Discount): OfsOfferEntry['retail_discount'] {
  if (discount === null) return null;
  return 'paise' in discount ? { rupees: rupees(discount.paise) } : { pct: discount.basisPoints / 100 };
}

/** Which day it is: T-1 before T opens, T until T+1 opens, T+1 until it closes, CLOSED after. */
export function currentDay(offer: Pick<Offer, 'tDay' | 't1Day'>, now: number): OfsOfferEntry['current_day'] {
  if (now < offer.tDay.opensAt) return 'T-1';
  if (now < offer.t1Day.opensAt) return 'T';
  return now < offer.t1Day.closesAt ? 'T+1' : 'CLOSED';
}

function indicativeOut(published: PublishedIndicative | undefined): OfsOfferEntry['indicative'] {
  if (published === undefined) return null;
  const figures = (f: IndicativeFigures) => ({ price: f.pricePaise === null ? null : rupees(f.pricePaise), quantity: f.quantity });
  return { at: instant(published.at), ...figures(published.all), margin_100: figures(published.margin100), margin_0: figures(published.margin0) };
}

/**
 * Whether the offer waits for the operator: T has closed, the T allocation has not run, and the valid
 * non-retail demand the exchange published is short of the non-retail portion (cancel, or go on).
 */
export function awaitingOperator(registration: OfferRegistration, latest: PublishedIndicative | undefined, now: number): boolean {
  const { offer, progress } = registration;
  if (offerState(offer, progress, now) !== 'T_OPEN' || now < offer.tDay.closesAt || registration.tProceedAt !== null) return false;
  return (latest?.all.quantity ?? 0) < offerPortions(offer).nonRetail;
}

export function toOfferEntry(registration: OfferRegistration, now: number, latest?: PublishedIndicative): OfsOfferEntry {
  const { offer, progress, tCutoffPricePaise, t1RetailCutoffPricePaise } = registration;
  const portions = offerPortions(offer);
  return {
    offer_id: offer.offerId,
    symbol: offer.symbol,
    listings: offer.listings.map((l) => ({ exchange: l.exchange, scrip_token: l.scripToken, series: { ...l.series } })),
    floor_price: rupees(offer.floorPricePaise),
    tick_size: rupees(offer.tickSizePaise),
    base_quantity: offer.baseQuantity,
    green_shoe_quantity: offer.greenShoeQuantity,
    green_shoe_exercised: offer.greenShoeExercised,
    retail_reserve_pct: offer.retailReservePct,
    portions: {
      total: portions.total,
      retail_reserved: portions.retailReserved,
      non_retail: portions.nonRetail,
      mf_ic_reserved: portions.mfIcReserved,
      employee: portions.employee,
      single_bidder_cap: portions.singleBidderCap,
    },
    retail_discount: discountOut(offer.retailDiscount),
    retail_allocation_price: offer.retailAllocationPrice,
    employee_discount: discountOut(offer.employeeDiscount),
    allocation: offer.allocation,
    t_day: { opens_at: instant(offer.tDay.opensAt), closes_at: instant(offer.tDay.closesAt) },
    t1_day: { opens_at: instant(offer.t1Day.opensAt), closes_at: instant(offer.t1Day.closesAt) },
    current_day: currentDay(offer, now),
    state: offerState(offer, progress, now),
    t_cutoff_price: tCutoffPricePaise === null ? null : rupees(tCutoffPricePaise),
    employee_price: tCutoffPricePaise === null ? null : rupees(discountedPricePaise(tCutoffPricePaise, offer.employeeDiscount)),
    retail_cutoff_price: t1RetailCutoffPricePaise === null ? null : rupees(t1RetailCutoffPricePaise),
    retail_price:
      t1RetailCutoffPricePaise === null || offer.retailAllocationPrice !== 'UNIFORM'
        ? null
        : rupees(discountedPricePaise(t1RetailCutoffPricePaise, offer.retailDiscount)),
    indicative: indicativeOut(latest),
    awaiting_operator: awaitingOperator(registration, latest, now),
    settlement: offer.settlementDelayMs === null ? 'by-day' : `${offer.settlementDelayMs / 1000}s`,
  };
}

export class OfsOfferService {
  constructor(
    private readonly offers: OfsOfferRepository,
    private readonly now: () => number,
  ) {}

  /** Every offer, T day latest first. */
  async list(): Promise<OfsOffersData> {
    const now = this.now();
    const offers: OfsOfferEntry[] = [];
    for (const registration of await this.offers.list()) {
      const [latest] = await this.offers.indicativeHistory(registration.offer.offerId, 1);
      offers.push(toOfferEntry(registration, now, latest));
    }
    return { server_time: instant(now), offers };
  }

  async get(offerId: string): Promise<OfsOfferData> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) {
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `No OFS offer has offer_id ${JSON.stringify(offerId)}`, [{ field: 'offer_id', message: 'no such offer' }]);
    }
    const now = this.now();
    const history = await this.offers.indicativeHistory(offerId, INDICATIVE_POINTS);
    return {
      server_time: instant(now),
      offer: toOfferEntry(registration, now, history.at(-1)),
      indicative_history: history.map((point) => ({
        at: instant(point.at),
        price: point.all.pricePaise === null ? null : rupees(point.all.pricePaise),
        quantity: point.all.quantity,
      })),
    };
  }
}
