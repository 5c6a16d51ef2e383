/**
 * NSE's e-OFS Web API as ordergate speaks it: every path, field name and code of the wire, and nothing else.
 * Pinning the link against the member document ("Offer for Sale System WEB API Protocol", v1.3.4, May
 * 2026) is an edit of this file alone (docs/design/exchange-links.md). Each fact is marked as
 * ../shared/spec/exchange-links.md marks it:
 *
 * - [official] an exchange's or SEBI's own public page or notice;
 * - [transcript] a public copy of the protocol document (v1.2.1, August 2019);
 * - [secondary] third-party code or notes quoting the member documents, not checked against them;
 * - Decision: not public; the most plausible shape, ours until the member document says otherwise.
 */

/** The API's paths, below the base URL (production https://eofs.nseindia.com/api/ [secondary]). */
export const NSE_PATHS = {
  /** [secondary] POST: logs the API user in; answers an access token. */
  token: '/auth/token',
  /** [secondary] POST, since v1.2.6: a fresh token for a live one. */
  refreshToken: '/auth/refreshToken',
  /** [secondary] GET: the offers open for bidding, per security and series. */
  activeSecurities: '/query/activeSecurities',
  /** [secondary] POST a new bid, PUT a modification, DELETE a cancellation; operationType says which. */
  order: '/order',
  /** [secondary] POST: several bids in one call. */
  orderBatch: '/order/batch',
  /** [transcript] v1.2: market open/close and order messages by server push. */
  messageStream: '/messaging/message-stream',
  /**
   * Decision: GET the exchange's book of the member's bids by reference, `?apiEchoBack=<ref>,<ref>` (at most
   * BOOK_QUERY_LIMIT). The member document's order-book query is not public; a link needs one to tell a
   * bid whose answer was lost from one that never arrived.
   *
   * Decision: the same path with `?symbol=<symbol>` (no apiEchoBack) answers the member's whole book of that
   * security, every series, whoever placed the bids (another front end of the member, a bid entered at the
   * exchange's own terminal): what reconciliation compares with ordergate's orders (bookBySymbolPath).
   */
  orderBook: '/query/orderBook',
} as const;

/** Decision: the query of the member's whole book of one security (NSE_PATHS.orderBook). */
export function bookBySymbolPath(symbol: string): string {
  return `${NSE_PATHS.orderBook}?symbol=${encodeURIComponent(symbol)}`;
}

/** Decision: references per book query (the URL stays well under 8 KB). */
export const BOOK_QUERY_LIMIT = 100;
/** Decision: bids per `/order/batch` call. */
export const BATCH_LIMIT = 100;

/** [secondary] What a bid asks: E new, M modify, C cancel, CF carry forward (T+1). */
export type OperationType = 'E' | 'M' | 'C' | 'CF';

/** [official, NSE Clearing] The series of each bid category on an NSE listing. */
export const NSE_SERIES = { NON_RETAIL: 'IS', RETAIL: 'RS', EMPLOYEE: 'ES' } as const;

/**
 * Decision: the investor category of an `IS` bid (the exchange knows it from the UCC's registration; the
 * BSE file carries it in a column). Absent on `RS` and `ES` bids, whose series says it.
 */
export type NseInvestorCategory = 'NII' | 'MF' | 'IC' | 'OTHS';

/** A bid as ordergate hands it to the link: our names and units. */
export interface MemberBid {
  /** ordergate's own reference (its order id): sent as apiEchoBack, and how the exchange's book is read back. */
  orderId: string;
  /** The exchange's order number; null for a new bid. */
  exchangeOrderId: string | null;
  symbol: string;
  series: string;
  /** The client's Unique Client Code. */
  ucc: string;
  clientType: 'CLI' | 'PRO';
  /** The custodian (participant) code of an institutional bid; null: none. */
  custodian: string | null;
  /** A 0 %-margin bid (settlement type T; its custodian confirms). */
  zeroMargin: boolean;
  /** A bid at the cut-off price (its price is left blank). */
  cutoff: boolean;
  quantity: number;
  pricePaise: number;
  /** An IS bid's investor category; null on RS and ES bids. */
  investorCategory: NseInvestorCategory | null;
}

/** [secondary] The bid's fields on the wire, as the place, modify, cancel and batch calls take them. */
export interface NseOrderRequest {
  symbol: string;
  series: string;
  /** [secondary] CLI or PRO. */
  clientType: 'CLI' | 'PRO';
  /** [secondary] The client's UCC, at most 10 characters. */
  clientId: string;
  /** [secondary] The custodian, for institutions. */
  participantId?: string;
  /** [secondary] 1 = 100 % margin, 0 = 0 % margin (the reverse of BSE's flag). */
  marginType: 0 | 1;
  /** [secondary] true: a cut-off bid, its price left blank. */
  isMarketOrder: boolean;
  quantity: number;
  /** [secondary] Rupees; blank for a cut-off bid. */
  price: number | '';
  operationType: OperationType;
  /** [secondary] The exchange's order number; blank when new. */
  orderId: string;
  /** [transcript] v1.2.1: the member's own reference, echoed in the answer. */
  apiEchoBack: string;
  /** Decision: see NseInvestorCategory. */
  investorCategory?: NseInvestorCategory;
}

/**
 * ordergate's reference on the wire: its order id (a time-ordered UUID) without its dashes, 32 hexadecimal
 * characters. Decision: apiEchoBack's length is not public; 32 is the shortest form that keeps every bit.
 */
export function referenceOf(orderId: string): string {
  return orderId.replace(/-/g, '');
}

/** The order id a reference names (the inverse of referenceOf), or null for one ordergate did not make. */
export function orderIdOfReference(reference: string): string | null {
  if (!/^[0-9a-f]{32}$/i.test(reference)) return null;
  const r = reference.toLowerCase();
  return `${r.slice(0, 8)}-${r.slice(8, 12)}-${r.slice(12, 16)}-${r.slice(16, 20)}-${r.slice(20)}`;
}

export function toNseOrder(bid: MemberBid, operationType: OperationType): NseOrderRequest {
  return {
    symbol: bid.symbol,
    series: bid.series,
    clientType: bid.clientType,
    clientId: bid.ucc,
    ...(bid.custodian !== null && { participantId: bid.custodian }),
    marginType: bid.zeroMargin ? 0 : 1,
    isMarketOrder: bid.cutoff,
    quantity: bid.quantity,
    price: bid.cutoff ? '' : bid.pricePaise / 100,
    operationType,
    orderId: bid.exchangeOrderId ?? '',
    apiEchoBack: referenceOf(bid.orderId),
    ...(bid.investorCategory !== null && { investorCategory: bid.investorCategory }),
  };
}

/** [official, NSE Clearing] The series of a bid: RS retail, ES employee, IS every other category. */
export function seriesOf(category: string): string {
  if (category === 'RETAIL') return NSE_SERIES.RETAIL;
  if (category === 'EMPLOYEE') return NSE_SERIES.EMPLOYEE;
  return NSE_SERIES.NON_RETAIL;
}

/** The investor category an IS bid carries (Decision: NII for a bid of the one-listing model's NON_RETAIL). */
export function investorCategoryOf(category: string): NseInvestorCategory | null {
  if (category === 'MF' || category === 'IC' || category === 'OTHS' || category === 'NII') return category;
  return category === 'NON_RETAIL' ? 'NII' : null;
}

/** Decision: a bid's state in the exchange's book. */
export type NseBookStatus = 'OPEN' | 'CANCELLED' | 'ALLOTTED' | 'NOT_ALLOTTED';

/**
 * Decision: one bid of the book query's answer, `{"code": 200, "data": [NseBookEntry, ...]}`; a reference
 * the exchange does not hold is left out.
 */
export interface NseBookEntry {
  orderId: string;
  apiEchoBack: string;
  symbol: string;
  series: string;
  quantity: number;
  price: number | '';
  isMarketOrder: boolean;
  orderStatus: NseBookStatus;
  /** Decision: the client's UCC, as the bid carries it; absent: the book does not say. */
  clientId?: string;
  /** Decision: whether the bid was carried forward to T+1 (operationType CF taken); absent: the book does not say. */
  carriedForward?: boolean;
}

/**
 * Decision: the message stream is newline-delimited JSON over a chunked GET, replayed from `?from=<seq>`
 * (the messages after that sequence number) and kept open; a `HEARTBEAT` line every few seconds says the
 * stream is alive and how far it has gone. An ORDER message reports the end of a bid at allocation, or (T)
 * what it was allotted while it stays live.
 */
export type NseStreamMessage =
  | { type: 'HEARTBEAT'; seq: number }
  | {
      type: 'ORDER';
      seq: number;
      event: 'ALLOTTED' | 'NOT_ALLOTTED' | 'PART_ALLOTTED' | 'NOTE';
      orderId: string;
      apiEchoBack: string;
      allottedQuantity: number;
      /** Rupees; null when nothing was allotted. */
      allottedPrice: number | null;
      /** An offer's allocation day; null for the one-listing model. */
      day: 'T' | 'T+1' | null;
      text: string;
    }
  | { type: 'MARKET'; seq: number; symbol: string; series: string; status: 'OPEN' | 'CLOSED' };

/** One series of a security open for bidding ([secondary] the fields of `activeSecurities`, those the registry has). */
export interface NseActiveSeries {
  series: string;
  issueSize: number;
  /** Rupees: the floor price. */
  basePrice: number;
  /** Decision: the session's day in India, YYYY-MM-DD. */
  openOnDate: string;
  /** Decision: instants in ISO 8601 (UTC), not times of day, so that a session across midnight reads right. */
  mktOpenTime: string;
  mktCloseTime: string;
  mktModCxlOpenTime: string;
  mktModCxlCloseTime: string;
  isNewOrderAllowed: boolean;
  isModificationAllowed: boolean;
  isCancellationAllowed: boolean;
  /** Rupees; null: none. */
  orderValueUpperLimit: number | null;
}

/**
 * [secondary] A security open for bidding, in `{"code": 200, "data": [NseActiveSecurity, ...]}`. The
 * simulator's registry holds no security name, ISIN or face value, and leaves them out (optional here).
 */
export interface NseActiveSecurity {
  symbol: string;
  securityName?: string;
  isinCode?: string;
  faceValue?: number;
  tickSize: number;
  regularLotSize: number;
  series: NseActiveSeries[];
}

/** Rupees on the wire to paise (prices have at most two decimals). */
export function paiseOf(rupees: number): number {
  return Math.round(rupees * 100);
}

/**
 * [secondary] The body of a login. Decision: the member code, the API user's login id and its password;
 * the member portal names the API user.
 */
export function tokenRequest(credentials: NseCredentials): Record<string, string> {
  return { memberCode: credentials.memberCode, loginId: credentials.loginId, password: credentials.password };
}

export interface NseCredentials {
  memberCode: string;
  loginId: string;
  password: string;
}

/** A login's answer: the token and, when the answer says, when it expires (epoch ms). */
export interface NseToken {
  token: string;
  expiresAt: number | null;
}

/**
 * Decision: a login answers `{"code": 200, "data": {"token": "...", "expiresIn": <seconds>}}`; `expiresIn`
 * may be absent. null: not a token answer.
 */
export function tokenOf(body: unknown, now: number): NseToken | null {
  const data = (body as { data?: { token?: unknown; expiresIn?: unknown } } | null)?.data;
  if (typeof data?.token !== 'string' || data.token === '') return null;
  const seconds = typeof data.expiresIn === 'number' && data.expiresIn > 0 ? data.expiresIn : null;
  return { token: data.token, expiresAt: seconds === null ? null : now + seconds * 1000 };
}

/** [secondary] How a token is sent on every later call. */
export const authorizationHeader = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * What the exchange answered one bid: accepted with its number, rejected in words, or unreadable (an answer
 * of neither shape: what became of the bid is not known).
 */
export type NseOrderAnswer =
  | { kind: 'accepted'; reference: string; exchangeOrderId: string }
  | { kind: 'rejected'; reference: string | null; reason: string }
  | { kind: 'unreadable'; reference: string | null };

/**
 * Decision: an order call answers `{"code": 200, "data": {"orderId", "apiEchoBack"}}` for one bid, and a
 * batch `{"code": 200, "data": [{"orderId", "apiEchoBack"} | {"apiEchoBack", "code", "messages"}]}`.
 */
export function orderAnswerOf(item: unknown): NseOrderAnswer {
  const answer = (item ?? {}) as { orderId?: unknown; apiEchoBack?: unknown; code?: unknown; messages?: unknown };
  const reference = typeof answer.apiEchoBack === 'string' ? answer.apiEchoBack : null;
  // An item naming the exchange's order with no error code (none, or 200) is taken: its messages, if any,
  // are remarks. A refusal says so: an error code or its messages without an order. Anything else that
  // names no order is unreadable.
  const errorCode = answer.code !== undefined && answer.code !== 200 && answer.code !== '200';
  if (typeof answer.orderId === 'string' && answer.orderId !== '' && reference !== null && !errorCode) {
    return { kind: 'accepted', reference, exchangeOrderId: answer.orderId };
  }
  if (answer.code !== undefined || answer.messages !== undefined) {
    return { kind: 'rejected', reference, reason: messagesOf(answer.messages) ?? 'the exchange refused the bid' };
  }
  if (typeof answer.orderId === 'string' && answer.orderId !== '' && reference !== null) {
    return { kind: 'accepted', reference, exchangeOrderId: answer.orderId };
  }
  return { kind: 'unreadable', reference };
}

/**
 * [secondary, from NSE's sibling web APIs] An error answers `{"code": <http status>, "messages": [text or
 * {"field", "msg"}]}`: the messages in one line, or null when there are none.
 */
export function messagesOf(messages: unknown): string | null {
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const texts = messages.map((m: unknown) => {
    if (typeof m === 'string') return m;
    const { field, msg } = (m ?? {}) as { field?: unknown; msg?: unknown };
    return [typeof field === 'string' ? field : null, typeof msg === 'string' ? msg : null].filter(Boolean).join(': ');
  });
  const line = texts.filter((text) => text !== '').join('; ');
  return line === '' ? null : line;
}
