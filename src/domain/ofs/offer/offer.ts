/**
 * An OFS offer as the exchanges run it under SEBI's 2023/2024 framework (shared/spec/ofs-framework.md,
 * docs/design/ofs.md): one offer by a seller, listed on NSE and/or BSE, every listing's bids in one pool;
 * a base quantity and a green shoe; five bidder categories; non-retail bids on T, retail, employee and
 * carried-forward bids on T+1. Plain data and plain functions: its portions in shares, the prices its
 * discounts give, where it stands against the clock.
 */
import { formatPrice, type AllocationMethod, type OfsExchange } from '../issue/issue.js';
import { IST_OFFSET_MS, type BidderCategory } from '../rules.js';
import { istDate, nextTradingDay, whyNotTradingDay, type TradingCalendar } from '../trading-calendar.js';

/** The categories a bid is placed in. EMPLOYEE is a bid, not a user: an eligible employee bids in it. */
export const OFFER_CATEGORIES = ['RETAIL', 'EMPLOYEE', 'NII', 'MF', 'IC', 'OTHS'] as const;
export type OfferCategory = (typeof OFFER_CATEGORIES)[number];

/** What the operator sets on a user: RETAIL individuals and the four non-retail kinds. */
export const USER_CATEGORIES = ['RETAIL', 'NII', 'MF', 'IC', 'OTHS'] as const;
export type UserCategory = (typeof USER_CATEGORIES)[number];

/** The non-retail categories: they bid on T, at or above the floor. */
export const NON_RETAIL_CATEGORIES = ['NII', 'MF', 'IC', 'OTHS'] as const;
export type NonRetailCategory = (typeof NON_RETAIL_CATEGORIES)[number];

export function isNonRetailCategory(category: string): category is NonRetailCategory {
  return (NON_RETAIL_CATEGORIES as readonly string[]).includes(category);
}

/** Mutual funds and insurance companies: the 25 % reservation is theirs, and the single-bidder cap spares them. */
export function isMfIc(category: string): boolean {
  return category === 'MF' || category === 'IC';
}

/** A bid's margin: H, 100 % blocked; T, 0 % (an institution whose custodian confirms by 07:30 the next day). */
export const MARGIN_TYPES = ['H', 'T'] as const;
export type MarginType = (typeof MARGIN_TYPES)[number];

/** The categories whose users may bid at 0 % margin (T): the institutions, whose custodians confirm. */
export const ZERO_MARGIN_CATEGORIES: readonly UserCategory[] = ['MF', 'IC', 'OTHS'];

/** Why a user of `category` may not bid at `marginType`, or null: T is for ZERO_MARGIN_CATEGORIES only. */
export function marginTypeProblem(category: string, marginType: MarginType): string | null {
  if (marginType !== 'T' || (ZERO_MARGIN_CATEGORIES as readonly string[]).includes(category)) return null;
  return `margin type T (0 % margin) is for ${ZERO_MARGIN_CATEGORIES.slice(0, -1).join(', ')} and ${ZERO_MARGIN_CATEGORIES.at(-1)} users only; a ${category} user bids with 100 % margin (H)`;
}

/** The series of each category on one listing: the key names are the import's (NSE uses RS, IS and ES). */
export interface ListingSeries {
  RETAIL: string;
  NON_RETAIL: string;
  EMPLOYEE: string | null;
}

/**
 * Each series' order value upper limit in paise, as the exchange sets it for the offer (NSE's
 * `orderValueUpperLimit`; imported until the exchange link reads it); null: none.
 */
export interface SeriesValueLimits {
  RETAIL: number | null;
  NON_RETAIL: number | null;
  EMPLOYEE: number | null;
}

export const NO_VALUE_LIMITS: SeriesValueLimits = { RETAIL: null, NON_RETAIL: null, EMPLOYEE: null };

export interface OfferListing {
  exchange: OfsExchange;
  scripToken: number;
  series: ListingSeries;
  /** Absent: none (the listings of the tests' fixtures, and of offers imported without them). */
  valueLimitsPaise?: SeriesValueLimits;
}

/** Which of a listing's series a bid of `category` is sent in. */
export function seriesKeyOf(category: OfferCategory): keyof ListingSeries {
  return category === 'RETAIL' ? 'RETAIL' : category === 'EMPLOYEE' ? 'EMPLOYEE' : 'NON_RETAIL';
}

/** A retail or employee discount: so many rupees off (in paise here), or so many percent (in basis points), or none. */
export type Discount = { paise: number } | { basisPoints: number } | null;

export const RETAIL_ALLOCATION_PRICES = ['UNIFORM', 'BID'] as const;
export type RetailAllocationPrice = (typeof RETAIL_ALLOCATION_PRICES)[number];

/** A trading session: bids are taken while `opensAt <= now < closesAt` (epoch ms). */
export interface Session {
  opensAt: number;
  closesAt: number;
}

export interface Offer {
  offerId: string;
  symbol: string;
  listings: OfferListing[];
  floorPricePaise: number;
  tickSizePaise: number;
  baseQuantity: number;
  greenShoeQuantity: number;
  /**
   * Shares of the green shoe exercised, 0 to greenShoeQuantity: the seller's decision once the operator has
   * recorded it (greenShoeDecidedAt), else the import's default, which stands at greenShoeDecisionBy.
   */
  greenShoeExercised: number;
  /** When the operator recorded the seller's decision; null: not yet. */
  greenShoeDecidedAt: number | null;
  /** The decision's deadline (17:00 IST on T unless the import says): the T allocation waits for it until then. */
  greenShoeDecisionBy: number;
  /** At least 10; whole or fractional percent (12.5 occurs). */
  retailReservePct: number;
  retailDiscount: Discount;
  retailAllocationPrice: RetailAllocationPrice;
  /** On top of the total; 0: no employee portion. */
  employeeQuantity: number;
  /** The employees' part of the green shoe, exercised in the offer's proportion (NHPC 2026: 45,20,265 more). */
  employeeGreenShoeQuantity: number;
  employeeDiscount: Discount;
  /** The portions as the notice prints them; they win over the computed ones while their green shoe is the decision. */
  printedPortions: PrintedPortions | null;
  allocation: AllocationMethod;
  tDay: Session;
  t1Day: Session;
  /** How long after an allotment its trade settles; null: by day (T-day trades on T+1, T+1 trades on T+2). */
  settlementDelayMs: number | null;
}

/**
 * The portions as an exchange's notice prints them. Notices do not all round alike (several 2026 notices
 * print ceil of the base part plus ceil of the green-shoe part, one share more than ceil of the whole), and
 * the exchange allots what it printed: these win over the computed portions, for the green shoe they were
 * printed for.
 */
export interface PrintedPortions {
  /** The green shoe exercised (shares) that the notice printed them for. */
  greenShoe: number;
  retailReserved: number;
  nonRetail: number;
  /** Null: the notice prints none ("at least 25 %"), and it is computed. */
  mfIcReserved: number | null;
  /** Null: computed. */
  employee: number | null;
}

/** The offer in shares, as the exchanges' notices print it. */
export interface OfferPortions {
  /** Base plus the green shoe when exercised. */
  total: number;
  /** ceil(retail_reserve_pct x total / 100). */
  retailReserved: number;
  /** total - retailReserved: allotted on T. */
  nonRetail: number;
  /** ceil(25 % of total), out of the non-retail portion, for mutual funds and insurers first. */
  mfIcReserved: number;
  /** On top of the total. */
  employee: number;
  /** floor(25 % of total): the most any bidder other than an MF or IC may be allotted. */
  singleBidderCap: number;
  /** Whether the figures are the notice's (printed) or computed here. */
  source: 'notice' | 'computed';
}

export type OfferTerms = Pick<
  Offer,
  | 'baseQuantity'
  | 'greenShoeQuantity'
  | 'greenShoeExercised'
  | 'retailReservePct'
  | 'employeeQuantity'
  | 'employeeGreenShoeQuantity'
  | 'printedPortions'
  | 'allocation'
  | 'floorPricePaise'
  | 'retailDiscount'
  | 'retailAllocationPrice'
  | 'employeeDiscount'
>;

/** The MF/IC reservation and the single-bidder cap, in percent of the total. */
export const MF_IC_RESERVE_PCT = 25;
export const SINGLE_BIDDER_CAP_PCT = 25;

/** ceil(n x pct / 100) for a percent with up to two decimals, exactly (BigInt). */
function percentOf(n: number, pct: number, round: 'ceil' | 'floor'): number {
  const hundredths = BigInt(Math.round(pct * 100));
  const numerator = BigInt(n) * hundredths;
  const whole = numerator / 10_000n;
  return Number(round === 'ceil' && numerator % 10_000n !== 0n ? whole + 1n : whole);
}

/** The terms the portions follow from. */
export type PortionTerms = Pick<
  OfferTerms,
  | 'baseQuantity'
  | 'greenShoeQuantity'
  | 'greenShoeExercised'
  | 'retailReservePct'
  | 'employeeQuantity'
  | 'employeeGreenShoeQuantity'
  | 'printedPortions'
>;

/** The most shares the offer can sell: the base, the whole green shoe and the employees' portion with its part of it. */
export function offeredQuantity(
  offer: Pick<Offer, 'baseQuantity' | 'greenShoeQuantity' | 'employeeQuantity' | 'employeeGreenShoeQuantity'>,
): number {
  return offer.baseQuantity + offer.greenShoeQuantity + offer.employeeQuantity + offer.employeeGreenShoeQuantity;
}

/**
 * The employees' portion: their quantity plus their part of the green shoe, exercised in the proportion
 * the offer's green shoe is (rounded up, as the reservations are; Decision).
 */
export function employeePortion(
  offer: Pick<
    PortionTerms,
    'employeeQuantity' | 'employeeGreenShoeQuantity' | 'greenShoeQuantity' | 'greenShoeExercised'
  >,
): number {
  if (offer.greenShoeQuantity === 0 || offer.employeeGreenShoeQuantity === 0) return offer.employeeQuantity;
  const numerator = BigInt(offer.employeeGreenShoeQuantity) * BigInt(offer.greenShoeExercised);
  const denominator = BigInt(offer.greenShoeQuantity);
  return offer.employeeQuantity + Number((numerator + denominator - 1n) / denominator);
}

/**
 * The portions. The retail reservation rounds up (it matches the notices' published figures), so does
 * the MF/IC reservation (Decision); the single-bidder cap rounds down (Decision): a cap never lets a
 * bidder past 25 %. When the MF/IC reservation would be more than the non-retail portion (a retail
 * reservation above 75 %, which no seller has made), it is the non-retail portion. The notice's printed
 * portions win while the green shoe is the one they were printed for.
 */
export function offerPortions(offer: PortionTerms): OfferPortions {
  const total = offer.baseQuantity + offer.greenShoeExercised;
  const singleBidderCap = percentOf(total, SINGLE_BIDDER_CAP_PCT, 'floor');
  const printed = offer.printedPortions;
  if (printed !== null && printed.greenShoe === offer.greenShoeExercised) {
    const { retailReserved, nonRetail } = printed;
    const mfIcReserved = printed.mfIcReserved ?? Math.min(nonRetail, percentOf(total, MF_IC_RESERVE_PCT, 'ceil'));
    return {
      total,
      retailReserved,
      nonRetail,
      mfIcReserved,
      employee: printed.employee ?? employeePortion(offer),
      singleBidderCap,
      source: 'notice',
    };
  }
  const retailReserved = percentOf(total, offer.retailReservePct, 'ceil');
  const nonRetail = total - retailReserved;
  return {
    total,
    retailReserved,
    nonRetail,
    mfIcReserved: Math.min(nonRetail, percentOf(total, MF_IC_RESERVE_PCT, 'ceil')),
    employee: employeePortion(offer),
    singleBidderCap,
    source: 'computed',
  };
}

/**
 * What printed portions must hold against the terms (the import refuses them otherwise): retail and
 * non-retail add up to the total they were printed for, the MF/IC reservation (when printed) is at least
 * 25 % of the total and fits the non-retail portion, the retail reservation is at least 10 % of the total.
 */
export function printedPortionsProblems(offer: PortionTerms): string[] {
  const printed = offer.printedPortions;
  if (printed === null) return [];
  const problems: string[] = [];
  const total = offer.baseQuantity + printed.greenShoe;
  if (printed.retailReserved + printed.nonRetail !== total) {
    problems.push(
      `portions: retail_reserved ${printed.retailReserved} + non_retail ${printed.nonRetail} = ${printed.retailReserved + printed.nonRetail}, not the total ${total} (base ${offer.baseQuantity} + green shoe ${printed.greenShoe})`,
    );
  }
  if (printed.mfIcReserved !== null) {
    // SEBI reserves at least 25 % of the total for MF and IC: a notice cannot print less.
    const least = Math.min(printed.nonRetail, percentOf(total, MF_IC_RESERVE_PCT, 'ceil'));
    if (printed.mfIcReserved > printed.nonRetail)
      problems.push(`portions: mf_ic_reserved ${printed.mfIcReserved} is more than non_retail ${printed.nonRetail}`);
    else if (printed.mfIcReserved < least)
      problems.push(
        `portions: mf_ic_reserved ${printed.mfIcReserved} is less than 25 % of the total ${total} (${least})`,
      );
  }
  if (printed.retailReserved < percentOf(total, 10, 'ceil')) {
    problems.push(`portions: retail_reserved ${printed.retailReserved} is less than 10 % of the total ${total}`);
  }
  return problems;
}

/**
 * A price less a discount, in paise. A percentage rounds down to a whole paisa (Decision: in the
 * bidder's favour, never more than the announced discount implies). The result may fall below the floor
 * (the framework allows it) but never below one paisa: the import refuses a discount that could take it
 * there (discountViolations).
 */
export function discountedPricePaise(pricePaise: number, discount: Discount): number {
  if (discount === null) return pricePaise;
  if ('paise' in discount) return Math.max(1, pricePaise - discount.paise);
  const discounted = (BigInt(pricePaise) * BigInt(10_000 - discount.basisPoints)) / 10_000n;
  return Math.max(1, Number(discounted));
}

/** "Rs 10.00 off", "5 % off", "none": how the notices state a discount. */
export function formatDiscount(discount: Discount): string {
  if (discount === null) return 'none';
  if ('paise' in discount) return `Rs ${formatPrice(discount.paise)} off`;
  return `${discount.basisPoints / 100} % off`;
}

/** Where the offer stands; the allocation stages come from the store (what has run), the rest from the clock. */
export const OFFER_STATES = ['ANNOUNCED', 'T_OPEN', 'T_ALLOCATED', 'T1_OPEN', 'ALLOCATED', 'CANCELLED'] as const;
export type OfferState = (typeof OFFER_STATES)[number];

/** What has happened to an offer that the clock does not tell. */
export interface OfferProgress {
  /** When the T allocation ran; null: not yet. */
  tAllocatedAt: number | null;
  /** When the T+1 allocation ran; null: not yet. */
  t1AllocatedAt: number | null;
  /** When the operator cancelled the offer; null: it stands. */
  cancelledAt: number | null;
}

/** An offer as stored: its terms and how far its days have run. */
export interface OfferRegistration {
  offer: Offer;
  progress: OfferProgress;
  /** The T-day cut-off price, once the T allocation has found it. */
  tCutoffPricePaise: number | null;
  /** Shares of the non-retail portion the T allocation left. */
  tUnallotted: number | null;
  /** When the operator told an under-subscribed T day to be allotted anyway. */
  tProceedAt: number | null;
  /** When the exchange held the T allocation for the operator (tAllocationWait), or null. */
  tHeldAt: number | null;
  /** The retail cut-off the T+1 allocation found. */
  t1RetailCutoffPricePaise: number | null;
}

/**
 * The offer's state. ANNOUNCED until T opens; T_OPEN through the T session and until the T allocation
 * has run (it waits for the operator when non-retail demand is short); T_ALLOCATED from then until T+1
 * opens; T1_OPEN through T+1 until the final allocation; ALLOCATED after it. CANCELLED wins.
 */
export function offerState(offer: Pick<Offer, 'tDay' | 't1Day'>, progress: OfferProgress, now: number): OfferState {
  if (progress.cancelledAt !== null) return 'CANCELLED';
  if (progress.t1AllocatedAt !== null) return 'ALLOCATED';
  if (progress.tAllocatedAt === null) return now < offer.tDay.opensAt ? 'ANNOUNCED' : 'T_OPEN';
  return now < offer.t1Day.opensAt ? 'T_ALLOCATED' : 'T1_OPEN';
}

/**
 * What the T allocation waits for once T has closed (null: nothing, it runs): the seller's green-shoe
 * decision, until its deadline (the default decision stands then); then, when the valid non-retail demand
 * the allocation would take (after the single-bidder cap: tDayDemand) is short of the non-retail portion
 * the decision gives, the operator (go on, or cancel the offer).
 */
export type TAllocationWait = { for: 'green-shoe'; until: number } | { for: 'operator' } | null;

type WaitTerms = Pick<Offer, 'greenShoeQuantity' | 'greenShoeDecidedAt' | 'greenShoeDecisionBy'> & PortionTerms;

function greenShoeWait(offer: WaitTerms, now: number): TAllocationWait {
  return offer.greenShoeQuantity > 0 && offer.greenShoeDecidedAt === null && now < offer.greenShoeDecisionBy
    ? { for: 'green-shoe', until: offer.greenShoeDecisionBy }
    : null;
}

/** The exchange's decision, on the demand after the cap (issue 47 row 3: not the raw total, which a bidder over the cap inflates). */
export function tAllocationWait(
  offer: WaitTerms,
  tProceedAt: number | null,
  nonRetailDemandAfterCap: bigint,
  now: number,
): TAllocationWait {
  const greenShoe = greenShoeWait(offer, now);
  if (greenShoe !== null) return greenShoe;
  if (tProceedAt === null && nonRetailDemandAfterCap < BigInt(offerPortions(offer).nonRetail))
    return { for: 'operator' };
  return null;
}

/**
 * The wait as the offer's read calls show it: the green-shoe decision as above, then the operator once the
 * exchange has held the allocation for it (`tHeldAt`) and until the operator goes on.
 */
export function tAllocationWaitAsHeld(
  offer: WaitTerms,
  tProceedAt: number | null,
  tHeldAt: number | null,
  now: number,
): TAllocationWait {
  return greenShoeWait(offer, now) ?? (tHeldAt !== null && tProceedAt === null ? { for: 'operator' } : null);
}

/** Which day a category bids on: non-retail on T; retail and employees on T+1. */
export function biddingDay(category: OfferCategory): 'T' | 'T1' {
  return isNonRetailCategory(category) ? 'T' : 'T1';
}

/** The listing of the offer on an exchange with a scrip token; undefined: the offer is not listed so. */
export function listingOf(
  offer: Pick<Offer, 'listings'>,
  exchange: string,
  scripToken: number,
): OfferListing | undefined {
  return offer.listings.find((l) => l.exchange === exchange && l.scripToken === scripToken);
}

/** The indicative figures of one kind of bid: the volume-weighted average price and the quantity bid. */
export interface IndicativeFigures {
  /** Rounded to the nearest paisa (half up); null when nothing is bid. */
  pricePaise: number | null;
  /** Shares bid, summed exactly (issue 47 row 3: a sum may pass 2^53). */
  quantity: bigint;
}

/** What the offer publishes through T: all valid non-retail bids, and apart the 100 %- and 0 %-margin ones. */
export interface IndicativePrice {
  all: IndicativeFigures;
  margin100: IndicativeFigures;
  margin0: IndicativeFigures;
}

/** A live bid as the indicative price reads it. */
export interface IndicativeBid {
  category: OfferCategory;
  marginType: MarginType;
  pricePaise: number;
  quantity: number;
}

/**
 * The indicative price: the volume-weighted average price of the valid non-retail bids (at or above the
 * floor), with the cumulative quantity bid, for all of them and separately by margin type. No figure is
 * published for retail or employee bids.
 */
export function indicativePrice(bids: readonly IndicativeBid[], floorPricePaise: number): IndicativePrice {
  const sums = { all: { value: 0n, quantity: 0n }, H: { value: 0n, quantity: 0n }, T: { value: 0n, quantity: 0n } };
  for (const bid of bids) {
    if (!isNonRetailCategory(bid.category) || bid.pricePaise < floorPricePaise) continue;
    const quantity = BigInt(bid.quantity);
    const value = quantity * BigInt(bid.pricePaise);
    for (const sum of [sums.all, sums[bid.marginType]]) {
      sum.value += value;
      sum.quantity += quantity;
    }
  }
  const figures = ({ value, quantity }: { value: bigint; quantity: bigint }): IndicativeFigures => ({
    pricePaise: quantity === 0n ? null : Number((value * 2n + quantity) / (2n * quantity)),
    quantity,
  });
  return { all: figures(sums.all), margin100: figures(sums.H), margin0: figures(sums.T) };
}

export function isUserCategory(value: string): value is UserCategory {
  return (USER_CATEGORIES as readonly string[]).includes(value);
}

/**
 * A user's category as the operator may name it: one of USER_CATEGORIES, or NON_RETAIL, the old model's
 * name, which is NII (migration 0013). Undefined: no category.
 */
export function userCategoryOf(value: string): UserCategory | undefined {
  if (value === 'NON_RETAIL') return 'NII';
  return isUserCategory(value) ? value : undefined;
}

/** What an issue of the old one-listing model sees of a user: RETAIL, or NON_RETAIL for the four non-retail kinds. */
export function issueCategoryOf(category: string): BidderCategory {
  return category === 'RETAIL' ? 'RETAIL' : 'NON_RETAIL';
}

/**
 * What an offer's terms must hold beyond each field's own range (the import's schema checks those): the
 * floor on the tick, discounts that leave a price, the days in order, one listing per exchange and
 * distinct series. Messages name the field, as the import reports them.
 */
export function offerTermsProblems(offer: Offer): string[] {
  const problems: string[] = [];
  if (offer.floorPricePaise % offer.tickSizePaise !== 0) {
    problems.push(
      `floor_price: ${formatPrice(offer.floorPricePaise)} is not a multiple of tick_size ${formatPrice(offer.tickSizePaise)}`,
    );
  }
  for (const [field, discount] of [
    ['retail_discount', offer.retailDiscount],
    ['employee_discount', offer.employeeDiscount],
  ] as const) {
    // The discounted prices start from a cut-off at or above the floor: a discount below the floor leaves a price.
    if (discount !== null && 'paise' in discount && discount.paise >= offer.floorPricePaise) {
      problems.push(
        `${field}: Rs ${formatPrice(discount.paise)} off would leave no price at the floor price ${formatPrice(offer.floorPricePaise)}`,
      );
    }
  }
  if (offer.tDay.closesAt <= offer.tDay.opensAt) problems.push('t_day: closes_at must be after opens_at');
  if (offer.t1Day.opensAt < offer.tDay.closesAt) problems.push('t1_day: opens_at must not be before t_day.closes_at');
  if (offer.t1Day.closesAt <= offer.t1Day.opensAt) problems.push('t1_day: closes_at must be after opens_at');
  const exchanges = new Set<string>();
  offer.listings.forEach((listing, i) => {
    if (exchanges.has(listing.exchange))
      problems.push(`listings[${i}].exchange: the offer is listed on ${listing.exchange} twice`);
    exchanges.add(listing.exchange);
    const { RETAIL, NON_RETAIL, EMPLOYEE } = listing.series;
    if (EMPLOYEE !== null && (EMPLOYEE === RETAIL || EMPLOYEE === NON_RETAIL)) {
      problems.push(
        `listings[${i}].series.EMPLOYEE: "${EMPLOYEE}" is also the retail or non-retail series; employee bids need a series of their own`,
      );
    }
  });
  if (offer.employeeQuantity > 0 && offer.listings.every((listing) => listing.series.EMPLOYEE === null)) {
    problems.push('employee_quantity: no listing has an EMPLOYEE series for the employees to bid in');
  }
  problems.push(...greenShoeProblems(offer));
  if (offer.retailAllocationPrice === 'BID' && offer.allocation === 'PROPORTIONATE') {
    // Proportionate allocation has one clearing price: every allottee pays it (exchange notices).
    problems.push(
      'retail_allocation_price: BID (each retail bid at its own price) needs allocation PRICE_PRIORITY; a proportionate allocation has one price',
    );
  }
  problems.push(...printedPortionsProblems(offer));
  return problems;
}

/**
 * The green shoe's terms: what is exercised fits the option, the employees' part needs an option and an
 * employee portion, and the decision's deadline lies after T closes and before T+1 opens (the T-day cut-off
 * the T allocation finds is what T+1's bids are judged on).
 */
function greenShoeProblems(offer: Offer): string[] {
  const problems: string[] = [];
  if (offer.greenShoeExercised > offer.greenShoeQuantity) {
    problems.push(
      `green_shoe_exercised: ${offer.greenShoeExercised} shares is more than the green shoe of ${offer.greenShoeQuantity}`,
    );
  }
  if (offer.employeeGreenShoeQuantity > 0 && (offer.greenShoeQuantity === 0 || offer.employeeQuantity === 0)) {
    problems.push('employee_green_shoe_quantity: needs a green_shoe_quantity and an employee_quantity');
  }
  if (offer.greenShoeQuantity > 0) {
    if (offer.greenShoeDecisionBy < offer.tDay.closesAt)
      problems.push('green_shoe_decision_by: must not be before t_day.closes_at');
    if (offer.greenShoeDecisionBy >= offer.t1Day.opensAt)
      problems.push('green_shoe_decision_by: must be before t1_day.opens_at');
  }
  return problems;
}

/**
 * The offer's days against the exchanges' trading calendar: T on a trading day, T+1 on the first trading
 * day after it (a notice's T+1 is the next trading day), each session within its day. A drill offer
 * (settlement_delay_seconds: the demo's and the tests' minutes-long days) is exempt.
 */
export function offerCalendarProblems(
  offer: Pick<Offer, 'tDay' | 't1Day' | 'settlementDelayMs'>,
  calendar: TradingCalendar,
): string[] {
  if (offer.settlementDelayMs !== null) return [];
  const problems: string[] = [];
  const tDate = istDate(offer.tDay.opensAt);
  const t1Date = istDate(offer.t1Day.opensAt);
  const tNot = whyNotTradingDay(calendar, tDate);
  if (tNot !== null) problems.push(`t_day: ${tNot}, not a trading day`);
  if (istDate(offer.tDay.closesAt) !== tDate)
    problems.push(`t_day: the session must open and close on one day (${tDate} India time)`);
  const t1Not = whyNotTradingDay(calendar, t1Date);
  if (t1Not !== null) problems.push(`t1_day: ${t1Not}, not a trading day`);
  else if (tNot === null && t1Date !== nextTradingDay(calendar, tDate)) {
    problems.push(
      `t1_day: ${t1Date} is not the first trading day after T (${tDate}); that is ${nextTradingDay(calendar, tDate)}`,
    );
  }
  if (istDate(offer.t1Day.closesAt) !== t1Date)
    problems.push(`t1_day: the session must open and close on one day (${t1Date} India time)`);
  return problems;
}

/**
 * The seller's green-shoe decision by default: 17:00 India time on T (the day T closes), or T's close when
 * that is later; T's close when that would not come before T+1 opens (a drill's minutes-long days).
 */
export function defaultGreenShoeDecisionBy(tDay: Session, t1Day: Session): number {
  const istMidnight = Math.floor((tDay.closesAt + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
  const at = Math.max(tDay.closesAt, istMidnight + GREEN_SHOE_DECISION_HOUR_IST * 60 * 60 * 1000);
  return at < t1Day.opensAt ? at : tDay.closesAt;
}

/** The hour (India time) on T by which the seller announces the green-shoe decision. */
export const GREEN_SHOE_DECISION_HOUR_IST = 17;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Indicative figures as the exchange published them, at `at`. */
export interface PublishedIndicative extends IndicativePrice {
  at: number;
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
