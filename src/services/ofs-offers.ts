/**
 * The offers' read calls (docs/design/ofs.md, "What users and operators see"): every offer's terms with its
 * portions in shares, its days and where it stands, for any logged-in user.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { explainAllotment, type ExplainedBidInput } from '../domain/ofs/offer/allotment-explained.js';
import { offerState } from '../domain/ofs/offer/offer.js';
import type { OfsAllotmentData } from '../schemas/ofs-offer.js';
import type { OfferBidRecords, OrderBookReads } from '../store/orders/order-book.js';
import type { Caller } from './auth.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import {
  CURRENT_OFFER_DAYS,
  DEFAULT_OFFERS_PAGE_SIZE,
  type OfferListState,
  type OfsOfferData,
  type OfsOffersData,
  type OfsOffersQuery,
} from '../schemas/ofs-offer.js';
import type { OfferListFilter, OfferRegistration, OfsOfferRepository } from '../store/ofs/offers.js';
import { toOfferEntry } from '../schemas/mappers/ofs-offer.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';

const rupees = (paise: number) => paise / 100;
const instant = (ms: number) => new Date(ms).toISOString();
/** The indicative prices one offer's read answers, the latest: enough for the console's chart of a T session. */
export const INDICATIVE_POINTS = 500;

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
    /** The callers' bids in an offer, for the allotment explained (absent: that call is not served). */
    private readonly bids?: Pick<OrderBookReads, 'offerBids'>,
  ) {}

  private async found(offerId: string): Promise<OfferRegistration> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) {
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `No OFS offer has offer_id ${JSON.stringify(offerId)}`, [
        { field: 'offer_id', message: 'no such offer' },
      ]);
    }
    return registration;
  }

  /**
   * The allotment explained (issue 51): each of the caller's bids in the offer, on every listing, with what
   * each day allotted it and why, its price, its funds and its settlement. Another user's bids are never
   * read. Four reads of the bids in one snapshot (OrderBookReads.offerBids), the offer and the calendar.
   */
  async allotment(caller: Caller, offerId: string): Promise<OfsAllotmentData> {
    if (this.bids === undefined) throw new Error('OfsOfferService: the allotment needs the order reads');
    const registration = await this.found(offerId);
    const [records, calendar] = await Promise.all([
      this.bids.offerBids(caller.userId, offerId),
      this.holidays.calendar(),
    ]);
    return explainAllotment(registration, bidInputs(records), calendar, this.now());
  }

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
    const registration = await this.found(offerId);
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

/** The store's records of a user's bids as the allotment explained reads them, grouped by order. */
export function bidInputs(records: OfferBidRecords): ExplainedBidInput[] {
  const byOrder = <T extends { orderId: string }>(rows: readonly T[]) => {
    const map = new Map<string, T[]>();
    for (const row of rows) map.set(row.orderId, [...(map.get(row.orderId) ?? []), row]);
    return map;
  };
  const trades = byOrder(records.trades);
  const changes = byOrder(records.changes);
  const funds = byOrder(records.funds);
  return records.orders.map((order) => ({
    orderId: order.orderId,
    exchange: order.exchange,
    symbol: order.symbol,
    series: order.series,
    category: order.offerCategory ?? 'NII',
    marginType: order.marginType ?? 'H',
    status: order.status,
    pricePaise: order.pricePaise,
    quantity: order.quantity,
    carriedForward: order.carriedForwardAt !== null,
    cancelRequested: order.cancelRequestedAt !== null,
    errorReason: order.errorReason,
    createdAt: order.createdAt,
    updatedAt: order.updatedAt,
    fundsBlockedPaise: order.fundsBlockedPaise,
    allotments: (trades.get(order.orderId) ?? []).map((t) => ({
      quantity: t.quantity,
      pricePaise: t.pricePaise,
      at: t.tradedAt,
      settlesAt: t.settlesAt,
    })),
    changes: (changes.get(order.orderId) ?? []).map((c) => ({
      at: c.at,
      status: c.status,
      quantity: c.quantity,
      pricePaise: c.pricePaise,
      actor: c.actor,
    })),
    funds: (funds.get(order.orderId) ?? []).map((f) => ({ kind: f.kind, amountPaise: f.amountPaise, at: f.at })),
  }));
}
