/**
 * The exchange simulator's side of the e-OFS wire (src/oms/links/nse-eofs/mapping.ts is the contract): an
 * order request read and checked field by field, then translated to the simulated exchange's bid
 * (ExchangeBid) against the registry's listing of its symbol; the book by reference; the open listings.
 * Input that cannot be a bid answers 400 with what is wrong; a bid the exchange refuses answers 422 in the
 * exchange's words (the markets' own reasons, src/oms/sim/).
 */
import { OFS_EXCHANGES, type OfsExchange } from '../domain/ofs/issue/issue.js';
import { offerSplit } from '../domain/ofs/issue/book.js';
import {
  marginTypeProblem,
  offerPortions,
  offerState,
  type ListingSeries,
  type OfferCategory,
  type OfferRegistration,
} from '../domain/ofs/offer/offer.js';
import { offerDayViolations } from '../domain/ofs/offer/rules.js';
import {
  CUTOFF_ORDER_TYPE,
  IST_OFFSET_MS,
  LIMIT_ORDER_TYPE,
  windowViolations,
  type BidTerms,
} from '../domain/ofs/rules.js';
import type { ExchangeBid } from '../oms/exchange.js';
import {
  BOOK_QUERY_LIMIT,
  NSE_SERIES,
  orderIdOfReference,
  paiseOf,
  referenceOf,
  seriesOf,
  type NseActiveSecurity,
  type NseActiveSeries,
  type NseBookEntry,
  type NseBookStatus,
  type NseInvestorCategory,
  type OperationType,
} from '../oms/links/nse-eofs/mapping.js';
import type { SimulatedExchange } from '../oms/simulated-exchange.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { SimBookEntry, SimExchangeRepository, SimListing } from '../store/ofs/sim-exchange.js';

/** The exchange segments the simulator serves, each under `/<exchange>/api`. */
export const SIM_EXCHANGES: readonly OfsExchange[] = OFS_EXCHANGES;

const OPERATION_TYPES: readonly OperationType[] = ['E', 'M', 'C', 'CF'];
const INVESTOR_CATEGORIES: readonly NseInvestorCategory[] = ['NII', 'MF', 'IC', 'OTHS'];
/** [secondary] A UCC is at most 10 characters. */
const CLIENT_ID_MAX = 10;

/** An order request as the wire sent it, checked: our units (paise), our order id from its reference. */
export interface WireOrder {
  operationType: OperationType;
  /** As sent: the answer echoes it. */
  apiEchoBack: string;
  /** ordergate's order id the reference names. */
  ourOrderId: string;
  /** The exchange's number as sent; '' when blank. */
  orderId: string;
  symbol: string;
  /** The rest is absent (null) on a cancellation, which names the bid alone. */
  terms: {
    series: string;
    clientType: 'CLI' | 'PRO';
    clientId: string;
    participantId: string | null;
    marginType: 0 | 1;
    isMarketOrder: boolean;
    quantity: number;
    pricePaise: number;
    investorCategory: NseInvestorCategory | null;
  } | null;
}

/** One bid's answer: taken (with the exchange's number) or refused (400: not a bid; 422: the exchange's refusal). */
export type ItemAnswer =
  | { status: 200; orderId: string; apiEchoBack: string }
  | { status: 400 | 422; apiEchoBack: string | null; message: string };

const bad = (apiEchoBack: string | null, message: string): ItemAnswer => ({ status: 400, apiEchoBack, message });
const refused = (apiEchoBack: string | null, message: string): ItemAnswer => ({ status: 422, apiEchoBack, message });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An order request read and checked, or the 400 that says what is wrong with it (the first problem). */
export function parseOrder(
  item: unknown,
  expected: readonly OperationType[] = OPERATION_TYPES,
): WireOrder | ItemAnswer {
  if (!isObject(item)) return bad(null, 'an order request is a JSON object');
  const echo = typeof item.apiEchoBack === 'string' ? item.apiEchoBack : null;
  const problem = (text: string) => bad(echo, text);
  if (echo === null || echo === '') return problem("apiEchoBack: required, the member's reference of the bid");
  const ourOrderId = orderIdOfReference(echo);
  if (ourOrderId === null) return problem(`apiEchoBack: "${echo}" is not a reference of 32 hexadecimal characters`);
  const operationType = item.operationType;
  if (typeof operationType !== 'string' || !(OPERATION_TYPES as readonly string[]).includes(operationType))
    return problem('operationType: must be E, M, C or CF');
  if (!(expected as readonly string[]).includes(operationType))
    return problem(`operationType: ${operationType} is not taken on this call (${expected.join(' or ')})`);
  const op = operationType as OperationType;
  if (typeof item.symbol !== 'string' || item.symbol.trim() === '') return problem('symbol: required, a string');
  const orderId = item.orderId ?? '';
  if (typeof orderId !== 'string') return problem('orderId: must be a string (blank for a new bid)');
  if (op === 'E' && orderId !== '') return problem('orderId: must be blank for a new bid (operationType E)');
  const order = { operationType: op, apiEchoBack: echo, ourOrderId, orderId, symbol: item.symbol };
  if (op === 'C') return { ...order, terms: null };

  if (typeof item.series !== 'string' || item.series === '') return problem('series: required, a string');
  if (item.clientType !== 'CLI' && item.clientType !== 'PRO') return problem('clientType: must be CLI or PRO');
  if (typeof item.clientId !== 'string' || item.clientId === '' || item.clientId.length > CLIENT_ID_MAX)
    return problem(`clientId: required, the client's UCC of at most ${CLIENT_ID_MAX} characters`);
  const participant = item.participantId ?? '';
  if (typeof participant !== 'string') return problem('participantId: must be a string');
  if (item.marginType !== 0 && item.marginType !== 1) return problem('marginType: must be 1 (100 %) or 0 (0 %)');
  if (typeof item.isMarketOrder !== 'boolean') return problem('isMarketOrder: required, true or false');
  const quantity = item.quantity;
  if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity < 1)
    return problem('quantity: must be a whole number of shares, at least 1');
  let pricePaise: number;
  if (item.isMarketOrder) {
    // A cut-off bid: its price is blank; it is valued at the cut-off (price 0 in the book, as order entry stores it).
    if (item.price !== '' && item.price !== 0 && item.price !== undefined)
      return problem('price: must be blank for a cut-off bid (isMarketOrder true)');
    pricePaise = 0;
  } else {
    const price = item.price;
    if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0)
      return problem('price: required, rupees above 0 (blank only for a cut-off bid)');
    pricePaise = paiseOf(price);
    if (!Number.isSafeInteger(pricePaise) || pricePaise / 100 !== price)
      return problem(`price: ${price} is not a whole number of paise`);
  }
  const investor = item.investorCategory ?? null;
  if (investor !== null && !(INVESTOR_CATEGORIES as readonly unknown[]).includes(investor))
    return problem(`investorCategory: must be one of ${INVESTOR_CATEGORIES.join(', ')}`);
  return {
    ...order,
    terms: {
      series: item.series,
      clientType: item.clientType,
      clientId: item.clientId,
      participantId: participant === '' ? null : participant,
      marginType: item.marginType,
      isMarketOrder: item.isMarketOrder,
      quantity,
      pricePaise,
      investorCategory: investor as NseInvestorCategory | null,
    },
  };
}

export const isAnswer = (value: WireOrder | ItemAnswer): value is ItemAnswer => 'status' in value;

/** A bid's terms as the markets read them: a cut-off bid is RL-MKT at price 0. */
export function termsOf(terms: NonNullable<WireOrder['terms']>): BidTerms {
  return {
    orderType: terms.isMarketOrder ? CUTOFF_ORDER_TYPE : LIMIT_ORDER_TYPE,
    quantity: terms.quantity,
    pricePaise: terms.pricePaise,
  };
}

/**
 * Of the listings of one symbol, the one a bid names: one still taking part (not allocated, not cancelled)
 * before one done with, then the one whose bidding closes last.
 */
export function currentListing(listings: readonly SimListing[]): SimListing | undefined {
  return [...listings].sort((a, b) => Number(a.finished) - Number(b.finished) || b.closesAt - a.closesAt)[0];
}

/** NSE's series codes (mapping.ts's NSE_SERIES), the wire's names of an offer's categories on every listing. */
const SERIES_KEYS: Record<string, keyof ListingSeries> = {
  [NSE_SERIES.RETAIL]: 'RETAIL',
  [NSE_SERIES.NON_RETAIL]: 'NON_RETAIL',
  [NSE_SERIES.EMPLOYEE]: 'EMPLOYEE',
};

/** The series key a wire series names on an offer's listing: NSE's code, or the listing's own name when it names one. */
function seriesKeyOfWire(series: string, listingSeries: ListingSeries): keyof ListingSeries | null {
  const standard = SERIES_KEYS[series];
  if (standard !== undefined) return standard;
  const named = (Object.keys(listingSeries) as (keyof ListingSeries)[]).filter((key) => listingSeries[key] === series);
  return named.length === 1 ? named[0]! : null;
}

const STATUS_OF: Record<string, NseBookStatus> = {
  LIVE: 'OPEN',
  CANCELLED: 'CANCELLED',
  ALLOTTED: 'ALLOTTED',
  NOT_ALLOTTED: 'NOT_ALLOTTED',
};

/** A bid of the book as the book query answers it. */
export function bookEntryOf(bid: SimBookEntry): NseBookEntry {
  const cutoff = bid.orderType === CUTOFF_ORDER_TYPE;
  return {
    orderId: bid.exchangeOrderId,
    apiEchoBack: referenceOf(bid.orderId),
    symbol: bid.symbol ?? '',
    series: seriesOf(bid.category),
    quantity: bid.quantity,
    price: cutoff ? '' : bid.pricePaise / 100,
    isMarketOrder: cutoff,
    orderStatus: STATUS_OF[bid.status] ?? 'OPEN',
    ...(bid.userId !== null && { clientId: bid.userId }),
    carriedForward: bid.carriedForward,
  };
}

/** What a book query asks: the bids of these references, or the member's whole book of one security. */
export type BookQuery = readonly string[] | { symbol: string };

/**
 * What a book query asks (`?apiEchoBack=a,b`: those references; `?symbol=S`: the whole book of S, the
 * mapping's bookBySymbolPath), or the 400's text.
 */
export function bookReferences(query: unknown): BookQuery | string {
  const raw = isObject(query) ? query.apiEchoBack : undefined;
  const symbol = isObject(query) ? query.symbol : undefined;
  if (raw === undefined && symbol !== undefined) {
    if (typeof symbol !== 'string' || symbol.trim() === '') return 'symbol: the security whose book to read';
    return { symbol };
  }
  if (typeof raw !== 'string' || raw.trim() === '')
    return "apiEchoBack: required, the references of the bids to read, separated by commas (or symbol: a security's whole book)";
  const references = raw.split(',').map((reference) => reference.trim());
  if (references.length > BOOK_QUERY_LIMIT) return `apiEchoBack: at most ${BOOK_QUERY_LIMIT} references per query`;
  const wrong = references.find((reference) => orderIdOfReference(reference) === null);
  if (wrong !== undefined) return `apiEchoBack: "${wrong}" is not a reference of 32 hexadecimal characters`;
  return references;
}

/** The fields of `activeSecurities` (mapping.ts): what the simulator answers of its registry. */
export type ActiveSecurity = NseActiveSecurity;
export type ActiveSeries = NseActiveSeries;

const iso = (ms: number) => new Date(ms).toISOString();
const istDate = (ms: number) => new Date(ms + IST_OFFSET_MS).toISOString().slice(0, 10);
const rupees = (paise: number | null | undefined) => (paise === null || paise === undefined ? null : paise / 100);

function seriesEntry(
  series: string,
  session: { opensAt: number; closesAt: number },
  issueSize: number,
  floorPaise: number,
  allowed: { place: boolean; modify: boolean; cancel: boolean },
  valueLimitPaise: number | null | undefined,
): ActiveSeries {
  return {
    series,
    issueSize,
    basePrice: floorPaise / 100,
    openOnDate: istDate(session.opensAt),
    mktOpenTime: iso(session.opensAt),
    mktCloseTime: iso(session.closesAt),
    mktModCxlOpenTime: iso(session.opensAt),
    mktModCxlCloseTime: iso(session.closesAt),
    isNewOrderAllowed: allowed.place,
    isModificationAllowed: allowed.modify,
    isCancellationAllowed: allowed.cancel,
    orderValueUpperLimit: rupees(valueLimitPaise),
  };
}

function offerSeries(
  registration: OfferRegistration,
  listingSeries: ListingSeries,
  limits: SimListingLimits,
  now: number,
) {
  const { offer, progress } = registration;
  const state = offerState(offer, progress, now);
  const portions = offerPortions(offer);
  const allowed = (category: OfferCategory) => {
    const open = (action: 'place' | 'modify' | 'cancel') =>
      offerDayViolations(offer, state, category, action, false, now).length === 0;
    return { place: open('place'), modify: open('modify'), cancel: open('cancel') };
  };
  const entries = [
    seriesEntry(
      NSE_SERIES.NON_RETAIL,
      offer.tDay,
      portions.nonRetail,
      offer.floorPricePaise,
      allowed('NII'),
      limits?.NON_RETAIL,
    ),
    seriesEntry(
      NSE_SERIES.RETAIL,
      offer.t1Day,
      portions.retailReserved,
      offer.floorPricePaise,
      allowed('RETAIL'),
      limits?.RETAIL,
    ),
  ];
  if (listingSeries.EMPLOYEE !== null && portions.employee > 0) {
    entries.push(
      seriesEntry(
        NSE_SERIES.EMPLOYEE,
        offer.t1Day,
        portions.employee,
        offer.floorPricePaise,
        allowed('EMPLOYEE'),
        limits?.EMPLOYEE,
      ),
    );
  }
  return entries;
}

type SimListingLimits = { RETAIL: number | null; NON_RETAIL: number | null; EMPLOYEE: number | null } | undefined;

/** The simulator's dealings with its markets for the wire: bids in and out, the book, the open listings. */
export class SimWire {
  constructor(
    private readonly exchange: SimulatedExchange,
    private readonly book: SimExchangeRepository,
    private readonly issues: OfsIssueRepository,
    private readonly offers: OfsOfferRepository,
    private readonly now: () => number,
  ) {}

  /**
   * New bids (operationType E) of one call, placed together (one transaction of the simulated exchange);
   * each answered apart: a bid that cannot be translated is refused alone.
   */
  async place(exchange: string, orders: readonly WireOrder[]): Promise<ItemAnswer[]> {
    const answers: (ItemAnswer | null)[] = [];
    const bids: ExchangeBid[] = [];
    const slots: { index: number; apiEchoBack: string }[] = [];
    // Each symbol's listing and each offer are read once per call, however many of its bids the call holds.
    const listingsOf = new Map<string, Promise<SimListing | undefined>>();
    const offersOf = new Map<string, Promise<OfferRegistration | undefined>>();
    const offerOf = (offerId: string) => {
      let offer = offersOf.get(offerId);
      if (offer === undefined) offersOf.set(offerId, (offer = this.offers.find(offerId)));
      return offer;
    };
    const references = new Set<string>();
    for (const order of orders) {
      // One bid per reference in a call: a repeat is refused alone (the first stands).
      if (references.has(order.apiEchoBack)) {
        answers.push(refused(order.apiEchoBack, 'apiEchoBack repeats a bid of the same batch'));
        continue;
      }
      references.add(order.apiEchoBack);
      let listing = listingsOf.get(order.symbol);
      if (listing === undefined) {
        listing = this.book.listings(exchange, order.symbol).then(currentListing);
        listingsOf.set(order.symbol, listing);
      }
      const bid = await this.bidOf(exchange, order, await listing, offerOf);
      if ('status' in bid) {
        answers.push(bid);
        continue;
      }
      slots.push({ index: answers.length, apiEchoBack: order.apiEchoBack });
      answers.push(null);
      bids.push(bid);
    }
    const results = await this.exchange.placeBids(bids);
    results.forEach((result, i) => {
      const { index, apiEchoBack } = slots[i]!;
      if (result.accepted === true) answers[index] = { status: 200, orderId: result.exchangeOrderId, apiEchoBack };
      else if (result.accepted === false) answers[index] = refused(apiEchoBack, result.reason);
      // An exchange of this process always answers; any other result is not a refusal (the bid may stand).
      else throw new Error('the simulated exchange gave no answer to a placement');
    });
    return answers.map((answer) => answer!);
  }

  /** A modification, cancellation or carry-forward of a bid of the book (by our reference). */
  async change(exchange: string, order: WireOrder): Promise<ItemAnswer> {
    const echo = order.apiEchoBack;
    const [bid] = await this.book.findBookEntries([order.ourOrderId]);
    if (bid === undefined || bid.exchange !== exchange) return refused(echo, 'The exchange has no bid for this order');
    if (order.orderId !== '' && order.orderId !== bid.exchangeOrderId)
      return refused(
        echo,
        `Order ${order.orderId} is not the exchange's number of the bid ${echo} (${bid.exchangeOrderId})`,
      );
    if (bid.symbol !== null && bid.symbol !== order.symbol)
      return refused(echo, `The bid ${echo} is a bid in ${bid.symbol}, not ${order.symbol}`);
    let result;
    if (order.operationType === 'C') result = await this.exchange.cancelBid(order.ourOrderId);
    else if (order.operationType === 'M')
      result = await this.exchange.modifyBid(order.ourOrderId, termsOf(order.terms!));
    else result = await this.exchange.carryBidForward(order.ourOrderId, termsOf(order.terms!));
    if (result.done === true) return { status: 200, orderId: bid.exchangeOrderId, apiEchoBack: echo };
    if (result.done === false) return refused(echo, result.reason);
    throw new Error('the simulated exchange gave no answer to a change');
  }

  /**
   * The bids the exchange holds for these references, on this exchange (a reference it does not hold is left
   * out); or, asked for a symbol, every bid of that security on this exchange, whoever placed it.
   */
  async bookOf(exchange: string, query: BookQuery): Promise<NseBookEntry[]> {
    if (!Array.isArray(query)) {
      const { symbol } = query as { symbol: string };
      return (await this.book.bookOfSymbol(exchange, symbol)).map(bookEntryOf);
    }
    const references = query as readonly string[];
    const orderIds = [...new Set(references.map((reference) => orderIdOfReference(reference)!))];
    const bids = await this.book.findBookEntries(orderIds);
    return bids.filter((bid) => bid.exchange === exchange).map(bookEntryOf);
  }

  /** The listings of the exchange whose bidding is not over, each with its series. */
  async activeSecurities(exchange: string): Promise<ActiveSecurity[]> {
    const now = this.now();
    const listings = (await this.book.listings(exchange, null))
      .filter((listing) => !listing.finished && now < listing.closesAt)
      .sort((a, b) => a.symbol.localeCompare(b.symbol) || a.scripToken - b.scripToken);
    const securities: ActiveSecurity[] = [];
    for (const listing of listings) {
      if (listing.offerId === null) {
        const issue = await this.issues.find(listing.exchange, listing.scripToken);
        if (issue === undefined) continue;
        const split = offerSplit(issue);
        const allowed = (category: 'RETAIL' | 'NON_RETAIL') => {
          const open = windowViolations(issue, category, now).length === 0;
          return { place: open, modify: open, cancel: open };
        };
        const window = (category: 'RETAIL' | 'NON_RETAIL') =>
          category === 'RETAIL'
            ? { opensAt: issue.retailOpensAt, closesAt: issue.retailClosesAt }
            : { opensAt: issue.nonRetailOpensAt, closesAt: issue.nonRetailClosesAt };
        securities.push({
          symbol: issue.symbol,
          tickSize: issue.tickSizePaise / 100,
          regularLotSize: 1,
          series: [
            seriesEntry(
              NSE_SERIES.NON_RETAIL,
              window('NON_RETAIL'),
              Number(split.nonRetail),
              issue.floorPricePaise,
              allowed('NON_RETAIL'),
              issue.valueLimitPaise,
            ),
            seriesEntry(
              NSE_SERIES.RETAIL,
              window('RETAIL'),
              Number(split.retail),
              issue.floorPricePaise,
              allowed('RETAIL'),
              issue.valueLimitPaise,
            ),
          ],
        });
        continue;
      }
      const registration = await this.offers.find(listing.offerId);
      const offerListing = registration?.offer.listings.find(
        (l) => l.exchange === listing.exchange && l.scripToken === listing.scripToken,
      );
      if (registration === undefined || offerListing === undefined) continue;
      securities.push({
        symbol: registration.offer.symbol,
        tickSize: registration.offer.tickSizePaise / 100,
        regularLotSize: 1,
        series: offerSeries(registration, offerListing.series, offerListing.valueLimitsPaise, now),
      });
    }
    return securities;
  }

  /** The simulated exchange's bid for a new bid of the wire, or the answer that refuses it. */
  private async bidOf(
    exchange: string,
    order: WireOrder,
    listing: SimListing | undefined,
    offerOf: (offerId: string) => Promise<OfferRegistration | undefined>,
  ): Promise<ExchangeBid | ItemAnswer> {
    const echo = order.apiEchoBack;
    const terms = order.terms!;
    if (listing === undefined) return refused(echo, `The exchange does not list ${order.symbol} for an offer for sale`);
    const base = {
      orderId: order.ourOrderId,
      exchange,
      scripToken: listing.scripToken,
      symbol: order.symbol,
      exchangeOrderId: null,
      member: { ucc: terms.clientId, clientType: terms.clientType, custodianCode: terms.participantId },
      ...termsOf(terms),
    };
    const investorOnly = () =>
      terms.investorCategory === null
        ? null
        : bad(echo, `investorCategory: only a bid in series ${NSE_SERIES.NON_RETAIL} carries one`);
    if (listing.offerId === null) {
      // An issue of the one-listing model: RS retail, IS non-retail (its investor category, if any, is non-retail).
      const category =
        terms.series === NSE_SERIES.RETAIL ? 'RETAIL' : terms.series === NSE_SERIES.NON_RETAIL ? 'NON_RETAIL' : null;
      if (category === null)
        return refused(
          echo,
          `Series ${terms.series} is not open in ${order.symbol}: bid in ${NSE_SERIES.RETAIL} (retail) or ${NSE_SERIES.NON_RETAIL} (non-retail)`,
        );
      if (category === 'RETAIL' && investorOnly() !== null) return investorOnly()!;
      return { ...base, category, offer: null };
    }
    const registration = await offerOf(listing.offerId);
    const offerListing = registration?.offer.listings.find(
      (l) => l.exchange === exchange && l.scripToken === listing.scripToken,
    );
    if (offerListing === undefined)
      return refused(echo, `The exchange does not list ${order.symbol} for an offer for sale`);
    const key = seriesKeyOfWire(terms.series, offerListing.series);
    if (key === null || (key === 'EMPLOYEE' && offerListing.series.EMPLOYEE === null)) {
      const open = [
        NSE_SERIES.NON_RETAIL,
        NSE_SERIES.RETAIL,
        ...(offerListing.series.EMPLOYEE === null ? [] : [NSE_SERIES.EMPLOYEE]),
      ];
      return refused(echo, `Series ${terms.series} is not a series of ${order.symbol}: bid in ${open.join(', ')}`);
    }
    if (key !== 'NON_RETAIL' && investorOnly() !== null) return investorOnly()!;
    const category: OfferCategory = key === 'NON_RETAIL' ? (terms.investorCategory ?? 'NII') : key;
    const marginType = terms.marginType === 0 ? 'T' : 'H';
    const marginProblem = marginTypeProblem(category, marginType);
    if (marginProblem !== null) return refused(echo, marginProblem.charAt(0).toUpperCase() + marginProblem.slice(1));
    if (marginType === 'T' && terms.participantId === null)
      return refused(echo, 'A 0 % margin bid names the custodian who confirms it (participantId)');
    return {
      ...base,
      category: category === 'RETAIL' ? 'RETAIL' : 'NON_RETAIL',
      offer: { offerId: listing.offerId, userId: terms.clientId, category, marginType },
    };
  }
}

/** Whether a path segment names an exchange the simulator serves. */
export function isSimExchange(value: string): value is OfsExchange {
  return (SIM_EXCHANGES as readonly string[]).includes(value);
}
