/**
 * The operator's forecast of an offer's allocation (issue 50, item 2; docs/operations.md, "Forecast and the
 * exchange's terms"): with a real exchange linked, the designated exchange's allotment is what settles, and
 * ordergate's own allocation (allocation.ts, the simulator's) becomes a forecast. This runs that allocation,
 * unchanged, over ordergate's **own** orders of the offer (both listings pooled, as the offer is one pool)
 * that are at the exchange or waiting to be (the live statuses, src/domain/orders/status.ts), as if they
 * were the whole book, and sums it per category. No I/O, no clock: `at` is the caller's.
 *
 * - T: the live non-retail orders, each for what it still bids (quantity less what was allotted), by
 *   allocateTDay.
 * - T+1: the live retail and employee orders and the carried-forward non-retail ones (their unallotted
 *   quantity), by allocateT1Day, at the T-day cut-off the offer recorded (the floor when none is, with a
 *   note); the single-bidder cap counts what the bidders' own orders were allotted on T. A non-retail order
 *   not carried forward is left out, with why.
 */
import { formatPrice } from '../issue/issue.js';
import { isLiveStatus } from '../../orders/status.js';
import { allocateT1Day, allocateTDay, type OfferAllotment, type OfferBid, type StepSummary } from './allocation.js';
import {
  isNonRetailCategory,
  NON_RETAIL_CATEGORIES,
  OFFER_CATEGORIES,
  offerPortions,
  type OfferCategory,
  type OfferPortions,
  type OfferRegistration,
} from './offer.js';

/** What the forecast says of itself, first, wherever it is shown. */
export const FORECAST_LABEL =
  "FORECAST — ordergate's own computation over its own orders; the exchange's allocation file / messages settle";

export const FORECAST_DAYS = ['T', 'T+1'] as const;
export type ForecastDay = (typeof FORECAST_DAYS)[number];

/** One of ordergate's orders of the offer, as the store reads it (live or allotted). */
export interface ForecastOrder {
  orderId: string;
  userId: string;
  exchange: string;
  scripToken: number;
  /** The bid's category in the offer (the order's offer_category). */
  category: string;
  status: string;
  /** Paise; 0: a cut-off bid. */
  pricePaise: number;
  quantity: number;
  tradedQuantity: number;
  carriedForward: boolean;
  /** When it was placed (epoch ms): the allocation's placement order. */
  placedAt: number;
}

/** One order's forecast allotment. */
export interface ForecastBid {
  orderId: string;
  userId: string;
  exchange: string;
  scripToken: number;
  category: OfferCategory;
  status: string;
  pricePaise: number;
  /** The shares the allocation takes of it (its open quantity). */
  quantity: number;
  allottedQuantity: number;
  allottedPricePaise: number | null;
  reason: string;
}

/** The forecast of one category. */
export interface ForecastCategory {
  category: OfferCategory;
  /** The portion its bids are allotted from (`non-retail`, `retail`, `employee`, `unsubscribed retail`). */
  portion: string;
  /** That portion's shares (a portion shared by several categories is each one's to compete for). */
  sharesOnOffer: number;
  /** The portion's cut-off (clearing) price; null when it allotted nothing. */
  cutoffPricePaise: number | null;
  /** Shares bid by the category's orders taken (exact: a sum may pass 2^53). */
  demand: bigint;
  allotted: number;
  /** What the allotments would cost, in paise. */
  allottedValuePaise: bigint;
  /** The lowest and highest trade prices; null when nothing is allotted. */
  lowestPricePaise: number | null;
  highestPricePaise: number | null;
  bids: { allotted: number; partly: number; not: number };
}

/** An allocation step: the portion it had, what was bid for it, what it would allot, and its clearing price. */
export interface ForecastStep extends Omit<StepSummary, 'clearingPricePaise'> {
  name: string;
  clearingPricePaise: number | null;
}

export interface OfferForecast {
  label: typeof FORECAST_LABEL;
  offerId: string;
  symbol: string;
  day: ForecastDay;
  at: number;
  portions: OfferPortions;
  /** T: the T-day cut-off; T+1: the retail cut-off. */
  cutoffPricePaise: number;
  /** The T-day cut-off the day is judged on (T+1: the recorded one, or the floor when none is). */
  tCutoffPricePaise: number;
  steps: ForecastStep[];
  categories: ForecastCategory[];
  /** Every order taken, in placement order. */
  bids: ForecastBid[];
  /** The live orders left out of the day's allocation, with why. */
  leftOut: { orderId: string; category: string; status: string; why: string }[];
  /** What the operator should know to read it. */
  notes: string[];
}

/** The day an offer's forecast is of by default: T until T+1 opens, then T+1. */
export function defaultForecastDay(registration: Pick<OfferRegistration, 'offer'>, now: number): ForecastDay {
  return now < registration.offer.t1Day.opensAt ? 'T' : 'T+1';
}

/** The forecast of the day's allocation over the offer's orders given (any status: only the live ones are bid). */
export function offerForecast(
  registration: OfferRegistration,
  orders: readonly ForecastOrder[],
  day: ForecastDay,
  at: number,
): OfferForecast {
  const { offer, progress } = registration;
  const portions = offerPortions(offer);
  const notes: string[] = [];
  const leftOut: OfferForecast['leftOut'] = [];
  const taken: ForecastOrder[] = [];
  const open = (order: ForecastOrder) => order.quantity - order.tradedQuantity;
  for (const order of [...orders].sort((a, b) => a.placedAt - b.placedAt || (a.orderId < b.orderId ? -1 : 1))) {
    if (!isLiveStatus(order.status)) continue;
    const why = leftOutWhy(order, day);
    if (why !== null) leftOut.push({ orderId: order.orderId, category: order.category, status: order.status, why });
    else if (open(order) > 0) taken.push(order);
  }
  const bidOf = (order: ForecastOrder): OfferBid => ({
    orderId: order.orderId,
    bidderId: order.userId,
    category: order.category as OfferCategory,
    pricePaise: order.pricePaise,
    quantity: open(order),
    placedSeq: order.placedAt,
  });
  const bids = taken.map(bidOf);
  if (offer.greenShoeQuantity > 0 && offer.greenShoeDecidedAt === null) {
    notes.push(
      `the seller's green-shoe decision is not recorded: the forecast takes the default, ${offer.greenShoeExercised} of ${offer.greenShoeQuantity} shares exercised`,
    );
  }
  if (progress.cancelledAt !== null) notes.push('the offer is cancelled: nothing will be allotted');

  let steps: ForecastStep[];
  let allotments: OfferAllotment[];
  let cutoffPricePaise: number;
  let tCutoffPricePaise: number;
  let portionOf: (category: OfferCategory) => Pick<ForecastCategory, 'portion' | 'sharesOnOffer' | 'cutoffPricePaise'>;
  if (day === 'T') {
    if (progress.tAllocatedAt !== null) {
      notes.push(
        `the T allocation has run${registration.tCutoffPricePaise === null ? '' : ` (T-day cut-off ${formatPrice(registration.tCutoffPricePaise)})`}: this is over what the orders still bid`,
      );
    }
    const result = allocateTDay(offer, bids);
    if (result.nonRetail.demand < BigInt(portions.nonRetail)) {
      notes.push(
        `non-retail demand after the single-bidder cap (${result.nonRetail.demand}) is short of the non-retail portion (${portions.nonRetail}): the T allocation waits for the operator (ofs proceed or ofs cancel), and the T-day cut-off is the floor price`,
      );
    }
    steps = [
      { name: 'MF/IC reserved', ...result.mfIc },
      { name: 'non-retail', ...result.nonRetail },
    ];
    allotments = result.allotments;
    cutoffPricePaise = tCutoffPricePaise = result.cutoffPricePaise;
    portionOf = () => ({
      portion: 'non-retail',
      sharesOnOffer: portions.nonRetail,
      cutoffPricePaise: result.cutoffPricePaise,
    });
  } else {
    tCutoffPricePaise = registration.tCutoffPricePaise ?? offer.floorPricePaise;
    if (registration.tCutoffPricePaise === null) {
      notes.push(
        `no T-day cut-off is recorded: cut-off bids are valued at the floor price ${formatPrice(offer.floorPricePaise)}`,
      );
    }
    if (registration.tUnallotted === null) {
      notes.push('what the T allocation left of the non-retail portion is not recorded: the retail portion is its own');
    }
    const tAllottedByBidder = new Map<string, number>();
    for (const order of orders) {
      if (isNonRetailCategory(order.category) && order.tradedQuantity > 0)
        tAllottedByBidder.set(order.userId, (tAllottedByBidder.get(order.userId) ?? 0) + order.tradedQuantity);
    }
    const result = allocateT1Day(
      offer,
      {
        cutoffPricePaise: tCutoffPricePaise,
        nonRetailUnallotted: registration.tUnallotted ?? 0,
        tAllottedByBidder,
      },
      bids,
    );
    steps = [
      { name: 'retail', ...result.retail, clearingPricePaise: result.retailCutoffPricePaise },
      { name: 'employee', ...result.employee },
      { name: 'unsubscribed retail to carried-forward', ...result.carriedForward },
    ];
    if (result.returnedToSeller > 0) notes.push(`${result.returnedToSeller} shares would return to the seller`);
    allotments = result.allotments;
    cutoffPricePaise = result.retailCutoffPricePaise;
    portionOf = (category) =>
      category === 'RETAIL'
        ? {
            portion: 'retail',
            sharesOnOffer: result.retail.portion,
            cutoffPricePaise: result.retailCutoffPricePaise,
          }
        : category === 'EMPLOYEE'
          ? { portion: 'employee', sharesOnOffer: result.employee.portion, cutoffPricePaise: result.employeePricePaise }
          : {
              portion: 'unsubscribed retail',
              sharesOnOffer: result.carriedForward.portion,
              cutoffPricePaise: result.carriedForward.clearingPricePaise,
            };
  }

  const byOrder = new Map(allotments.map((a) => [a.orderId, a]));
  const forecastBids = taken.map((order): ForecastBid => {
    const allotment = byOrder.get(order.orderId)!;
    return {
      orderId: order.orderId,
      userId: order.userId,
      exchange: order.exchange,
      scripToken: order.scripToken,
      category: order.category as OfferCategory,
      status: order.status,
      pricePaise: order.pricePaise,
      quantity: open(order),
      allottedQuantity: allotment.allottedQuantity,
      allottedPricePaise: allotment.pricePaise,
      reason: allotment.reason,
    };
  });
  const categories = (day === 'T' ? NON_RETAIL_CATEGORIES : OFFER_CATEGORIES).map((category): ForecastCategory => {
    const entry: ForecastCategory = {
      category,
      ...portionOf(category),
      demand: 0n,
      allotted: 0,
      allottedValuePaise: 0n,
      lowestPricePaise: null,
      highestPricePaise: null,
      bids: { allotted: 0, partly: 0, not: 0 },
    };
    for (const bid of forecastBids) {
      if (bid.category !== category) continue;
      entry.demand += BigInt(bid.quantity);
      if (bid.allottedQuantity === 0 || bid.allottedPricePaise === null) {
        entry.bids.not += 1;
        continue;
      }
      entry.bids[bid.allottedQuantity === bid.quantity ? 'allotted' : 'partly'] += 1;
      entry.allotted += bid.allottedQuantity;
      entry.allottedValuePaise += BigInt(bid.allottedQuantity) * BigInt(bid.allottedPricePaise);
      entry.lowestPricePaise = Math.min(entry.lowestPricePaise ?? Infinity, bid.allottedPricePaise);
      entry.highestPricePaise = Math.max(entry.highestPricePaise ?? -Infinity, bid.allottedPricePaise);
    }
    return entry;
  });
  return {
    label: FORECAST_LABEL,
    offerId: offer.offerId,
    symbol: offer.symbol,
    day,
    at,
    portions,
    cutoffPricePaise,
    tCutoffPricePaise,
    steps,
    categories,
    bids: forecastBids,
    leftOut,
    notes,
  };
}

/** Why a live order takes no part in the day's allocation (null: it does). */
function leftOutWhy(order: ForecastOrder, day: ForecastDay): string | null {
  if (!(OFFER_CATEGORIES as readonly string[]).includes(order.category))
    return `category ${JSON.stringify(order.category)} is not a bid category of an offer`;
  const nonRetail = isNonRetailCategory(order.category);
  if (day === 'T') return nonRetail ? null : `a ${order.category} bid is allotted on T+1`;
  if (nonRetail && !order.carriedForward)
    return 'not carried forward: not in the T+1 allocation (cancelled at the close of T+1 unless carried forward)';
  return null;
}
