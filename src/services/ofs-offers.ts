/**
 * The offers' read calls (docs/design/ofs.md, "What users and operators see"): every offer's terms with its
 * portions in shares, its days and where it stands, for any logged-in user.
 */
import { ApiError, Errors } from '../domain/errors.js';
import {
  discountedPricePaise,
  NO_VALUE_LIMITS,
  offerPortions,
  offerState,
  tAllocationWaitAsHeld,
  type Discount,
  type IndicativeFigures,
  type Offer,
  type SeriesValueLimits,
  type TAllocationWait,
} from '../domain/ofs/offer/offer.js';
import { NO_HOLIDAYS, settlementInstant, type TradingCalendar } from '../domain/ofs/trading-calendar.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import {
  CURRENT_OFFER_DAYS,
  DEFAULT_OFFERS_PAGE_SIZE,
  type OfferListState,
  type OfsOfferData,
  type OfsOfferEntry,
  type OfsOffersData,
  type OfsOffersQuery,
} from '../schemas/ofs-offer.js';
import type {
  OfferListFilter,
  OfferRegistration,
  OfsOfferRepository,
  PublishedIndicative,
} from '../store/ofs/offers.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';

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

/**
 * What the T allocation waits for (tAllocationWaitAsHeld): nothing before T closes or once it has run; after
 * T's close the seller's green-shoe decision (until its deadline), then the operator once the exchange has
 * held the allocation for it, the valid non-retail demand after the single-bidder cap being short of the
 * non-retail portion (cancel, or go on).
 */
export function tWait(registration: OfferRegistration, now: number): TAllocationWait {
  const { offer, progress } = registration;
  if (offerState(offer, progress, now) !== 'T_OPEN' || now < offer.tDay.closesAt) return null;
  return tAllocationWaitAsHeld(offer, registration.tProceedAt, registration.tHeldAt, now);
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

const CURRENT_OFFER_MS = CURRENT_OFFER_DAYS * 24 * 60 * 60 * 1000;

/**
 * Whether the offers list shows the offer by default (`state=current`): a trader's offers are those still
 * running (ANNOUNCED, T_OPEN, T_ALLOCATED, T1_OPEN by offerState) and, for CURRENT_OFFER_DAYS, those that
 * finished (ALLOCATED, CANCELLED), counted from the latest of their T+1 close, their T+1 allocation and their
 * cancellation: their allotments and prices stay in view through the settlement (the pay-out on the trading
 * day after T+1). The store keeps the same offers in SQL (currentCondition in store/ofs/offers.ts).
 */
export function isCurrentOffer(registration: Pick<OfferRegistration, 'offer' | 'progress'>, now: number): boolean {
  const { offer, progress } = registration;
  const state = offerState(offer, progress, now);
  if (state !== 'ALLOCATED' && state !== 'CANCELLED') return true;
  const finished = Math.max(
    offer.t1Day.closesAt,
    progress.t1AllocatedAt ?? -Infinity,
    progress.cancelledAt ?? -Infinity,
  );
  return finished > now - CURRENT_OFFER_MS;
}

/** The store's filter for the list's `state`. */
export function listFilter(state: OfferListState, now: number): OfferListFilter {
  if (state === 'all') return { kind: 'all' };
  if (state === 'current') return { kind: 'current', finishedAfter: now - CURRENT_OFFER_MS };
  return { kind: 'state', state, now };
}

export class OfsOfferService {
  constructor(
    private readonly offers: OfsOfferRepository,
    private readonly holidays: Pick<TradingHolidayRepository, 'calendar'>,
    private readonly now: () => number,
  ) {}

  /**
   * One page of the offers `query.state` keeps (the current ones by default), T day latest first, then by
   * id, and how many it keeps on all pages. A fixed number of reads whatever the offers stored: the
   * calendar once, then the page with its listings and latest indicative figures (OfsOfferRepository.listPage).
   */
  async list(query: OfsOffersQuery = {}): Promise<{ data: OfsOffersData; metadata: PageMetadata }> {
    const now = this.now();
    const page = query.offset === undefined ? 1 : Number(query.offset);
    const pageSize = query.limit === undefined ? DEFAULT_OFFERS_PAGE_SIZE : Number(query.limit);
    const calendar = await this.holidays.calendar();
    const { offers, totalCount } = await this.offers.listPage({
      filter: listFilter(query.state ?? 'current', now),
      page,
      pageSize,
    });
    return {
      data: {
        server_time: instant(now),
        offers: offers.map(({ registration, latest }) => toOfferEntry(registration, now, latest, calendar)),
      },
      metadata: { total_records: totalCount, offset: page, limit: pageSize },
    };
  }

  async get(offerId: string): Promise<OfsOfferData> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) {
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `No OFS offer has offer_id ${JSON.stringify(offerId)}`, [
        { field: 'offer_id', message: 'no such offer' },
      ]);
    }
    const now = this.now();
    const history = await this.offers.indicativeHistory(offerId, INDICATIVE_POINTS);
    return {
      server_time: instant(now),
      offer: toOfferEntry(registration, now, history.at(-1), await this.holidays.calendar()),
      indicative_history: history.map((point) => ({
        at: instant(point.at),
        price: point.all.pricePaise === null ? null : rupees(point.all.pricePaise),
        quantity: point.all.quantity,
      })),
    };
  }
}
