/**
 * An offer on the wire (OfsOfferEntry): its terms with its portions in shares, its days and where it
 * stands, its latest indicative figures, from the domain's registration.
 */
import {
  discountedPricePaise,
  NO_VALUE_LIMITS,
  offerPortions,
  offerState,
  tWait,
  type Discount,
  type IndicativeFigures,
  type Offer,
  type OfferRegistration,
  type PublishedIndicative,
  type SeriesValueLimits,
} from '../../domain/ofs/offer/offer.js';
import { NO_HOLIDAYS, settlementInstant, type TradingCalendar } from '../../domain/ofs/trading-calendar.js';
import type { OfsOfferEntry } from '../ofs-offer.js';

const rupees = (paise: number) => paise / 100;
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
  const figures = (f: IndicativeFigures) => ({
    price: f.pricePaise === null ? null : rupees(f.pricePaise),
    quantity: f.quantity,
  });
  return {
    at: instant(published.at),
    ...figures(published.all),
    margin_100: figures(published.margin100),
    margin_0: figures(published.margin0),
  };
}

/** When an offer's allotments settle: the pay-out on the trading day after T and after T+1; null for a drill offer. */
function settlementDates(offer: Offer, calendar: TradingCalendar): OfsOfferEntry['settlement_dates'] {
  if (offer.settlementDelayMs !== null) return null;
  return {
    t_day: instant(settlementInstant(calendar, offer.tDay.closesAt)),
    t1_day: instant(settlementInstant(calendar, offer.t1Day.closesAt)),
  };
}

function valueLimitsInRupees(limits: SeriesValueLimits): OfsOfferEntry['listings'][number]['order_value_upper_limit'] {
  const of = (paise: number | null) => (paise === null ? null : rupees(paise));
  return { RETAIL: of(limits.RETAIL), NON_RETAIL: of(limits.NON_RETAIL), EMPLOYEE: of(limits.EMPLOYEE) };
}

export function toOfferEntry(
  registration: OfferRegistration,
  now: number,
  latest?: PublishedIndicative,
  calendar: TradingCalendar = NO_HOLIDAYS,
): OfsOfferEntry {
  const { offer, progress, tCutoffPricePaise, t1RetailCutoffPricePaise } = registration;
  const portions = offerPortions(offer);
  const wait = tWait(registration, now);
  return {
    offer_id: offer.offerId,
    symbol: offer.symbol,
    listings: offer.listings.map((l) => ({
      exchange: l.exchange,
      scrip_token: l.scripToken,
      series: { ...l.series },
      order_value_upper_limit: valueLimitsInRupees(l.valueLimitsPaise ?? NO_VALUE_LIMITS),
    })),
    floor_price: rupees(offer.floorPricePaise),
    tick_size: rupees(offer.tickSizePaise),
    base_quantity: offer.baseQuantity,
    green_shoe_quantity: offer.greenShoeQuantity,
    green_shoe_exercised: offer.greenShoeExercised,
    green_shoe_decided_at: offer.greenShoeDecidedAt === null ? null : instant(offer.greenShoeDecidedAt),
    green_shoe_decision_by: instant(offer.greenShoeDecisionBy),
    retail_reserve_pct: offer.retailReservePct,
    portions: {
      total: portions.total,
      retail_reserved: portions.retailReserved,
      non_retail: portions.nonRetail,
      mf_ic_reserved: portions.mfIcReserved,
      employee: portions.employee,
      single_bidder_cap: portions.singleBidderCap,
      source: portions.source,
    },
    employee_quantity: offer.employeeQuantity,
    employee_green_shoe_quantity: offer.employeeGreenShoeQuantity,
    retail_discount: discountOut(offer.retailDiscount),
    retail_allocation_price: offer.retailAllocationPrice,
    employee_discount: discountOut(offer.employeeDiscount),
    allocation: offer.allocation,
    t_day: { opens_at: instant(offer.tDay.opensAt), closes_at: instant(offer.tDay.closesAt) },
    t1_day: { opens_at: instant(offer.t1Day.opensAt), closes_at: instant(offer.t1Day.closesAt) },
    current_day: currentDay(offer, now),
    state: offerState(offer, progress, now),
    t_cutoff_price: tCutoffPricePaise === null ? null : rupees(tCutoffPricePaise),
    employee_price:
      tCutoffPricePaise === null ? null : rupees(discountedPricePaise(tCutoffPricePaise, offer.employeeDiscount)),
    retail_cutoff_price: t1RetailCutoffPricePaise === null ? null : rupees(t1RetailCutoffPricePaise),
    retail_price:
      tCutoffPricePaise === null || offer.retailAllocationPrice !== 'UNIFORM'
        ? null
        : rupees(discountedPricePaise(tCutoffPricePaise, offer.retailDiscount)),
    indicative: indicativeOut(latest),
    awaiting_operator: wait?.for === 'operator',
    awaiting_green_shoe_until: wait?.for === 'green-shoe' ? instant(wait.until) : null,
    settlement: offer.settlementDelayMs === null ? 'by-day' : `${offer.settlementDelayMs / 1000}s`,
    settlement_dates: settlementDates(offer, calendar),
  };
}
