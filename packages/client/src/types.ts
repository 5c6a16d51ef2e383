/**
 * The wire shapes of the API, taken from the types generated from the server's OpenAPI document
 * (src/generated/openapi.ts): nothing here is a hand-written copy, so a change of the API changes them.
 */
import type { paths } from './generated/openapi.js';

type Method = 'get' | 'put' | 'post' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON body of an operation's 200 answer. */
export type SuccessBody<P extends keyof paths, M extends Method> = JsonContent<Operation<P, M>['responses'][200]>;
/** The JSON request body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody: infer Body } ? JsonContent<Body> : never;
/**
 * The query parameters of an operation. They are strings on the wire (ODIN's paging is `offset=1`); a number
 * is accepted where a string is, and sent as its digits.
 */
export type Query<P extends keyof paths, M extends Method> = {
  [Name in keyof NonNullable<Operation<P, M>['parameters']['query']>]?:
    NonNullable<Operation<P, M>['parameters']['query']>[Name] | number;
};

type Session = '/authentication/v1/user/session';
type OrderById = '/transactional/v1/orders/regular/{exchange}/{order_id}';
type Cart = '/transactional/v1/ordercart';
type CartById = '/transactional/v1/ordercart/{ordercartId}';

export type LoginRequest = RequestBody<Session, 'post'>;
export type LoginAnswer = SuccessBody<Session, 'post'>;
export type SessionCheck = SuccessBody<Session, 'put'>;
export type LogoutAnswer = SuccessBody<Session, 'delete'>;
export type Balance = SuccessBody<'/authentication/v1/user/balance', 'get'>;
/** Who you are to the API: your user id, OFS categories, margin type and whether you are an operator. */
export type Profile = SuccessBody<'/authentication/v1/user/profile', 'get'>;

export type PlaceBid = RequestBody<'/transactional/v1/orders/regular', 'post'>;
export type PlaceAnswer = SuccessBody<'/transactional/v1/orders/regular', 'post'>;
export type Exchange = Operation<OrderById, 'put'>['parameters']['path']['exchange'];
export type ModifyBid = RequestBody<OrderById, 'put'>;
export type ModifyAnswer = SuccessBody<OrderById, 'put'>;
export type CancelAnswer = SuccessBody<OrderById, 'delete'>;
/** New terms to carry a bid forward at: its price (at least the T-day cut-off) and/or the whole bid's quantity. */
export type CarryForwardRevision = RequestBody<
  '/transactional/v1/orders/regular/{exchange}/{order_id}/carry_forward',
  'post'
>;
export type CarryForwardAnswer = SuccessBody<
  '/transactional/v1/orders/regular/{exchange}/{order_id}/carry_forward',
  'post'
>;

export type OrderBookQuery = Query<'/transactional/v1/orders', 'get'>;
export type OfsOffersQuery = Query<'/transactional/v1/ofs/offers', 'get'>;
export type OrderBook = SuccessBody<'/transactional/v1/orders', 'get'>;
export type Order = OrderBook['data'][number];
export type OrderStatus = Order['status'];
export type OrderHistory = SuccessBody<'/transactional/v1/orders/{order_id}', 'get'>;
export type TradeBookQuery = Query<'/transactional/v1/trades', 'get'>;
export type TradeBook = SuccessBody<'/transactional/v1/trades', 'get'>;
export type PositionType = Operation<
  '/transactional/v1/portfolio/positions/{type}',
  'get'
>['parameters']['path']['type'];
export type PositionsQuery = Query<'/transactional/v1/portfolio/positions/{type}', 'get'>;
export type Positions = SuccessBody<'/transactional/v1/portfolio/positions/{type}', 'get'>;
export type Holdings = SuccessBody<'/transactional/v1/portfolio/holdings', 'get'>;
export type OfsOffers = SuccessBody<'/transactional/v1/ofs/offers', 'get'>;
export type OfsOfferAnswer = SuccessBody<'/transactional/v1/ofs/offers/{offer_id}', 'get'>;
/** The allotment explained: your bids in one offer, what each day allotted them and why (`allotment(offerId)`). */
export type OfsAllotmentAnswer = SuccessBody<'/transactional/v1/ofs/offers/{offer_id}/allotment', 'get'>;
/** The registered OFS issues (the one-listing model), where their windows stand, and the server's clock. */
export type OfsIssues = SuccessBody<'/transactional/v1/ofs/issues', 'get'>;
/** One registered OFS issue and its two bidding windows. */
export type OfsIssue = OfsIssues['data']['issues'][number];
/** An OFS issue's book, for operators: demand by price, clearing as if the windows closed now, allotments. */
export type OfsIssueBook = SuccessBody<'/operator/v1/ofs/{exchange}/{scrip_token}/book', 'get'>;
/** An OFS offer's book, for operators: the offer, the bids per category and listing, the non-retail demand. */
export type OfsOfferBook = SuccessBody<'/operator/v1/ofs/offers/{offer_id}/book', 'get'>;
/** One of your bids as `allotment(offerId)` explains it. */
export type AllotmentBid = OfsAllotmentAnswer['data']['bids'][number];
/** An OFS offer: its terms, portions in shares, days and state. */
export type OfsOffer = OfsOffers['data']['offers'][number];
/** The indicative price of an offer's non-retail bids as the exchange last published it through T. */
export type IndicativePrice = NonNullable<OfsOffer['indicative']>;
/** One published indicative price of an offer's T session, as `offer(offerId)` lists them (oldest first). */
export type IndicativePoint = OfsOfferAnswer['data']['indicative_history'][number];

/** A cart as the create call takes it on the wire (`orders` is a string holding a JSON array). */
export type CartCreateRequest = RequestBody<Cart, 'post'>;
/** A cart as the update call takes it on the wire. */
export type CartUpdateRequest = RequestBody<Cart, 'put'>;
export type CartCreated = SuccessBody<Cart, 'post'>;
export type CartUpdated = SuccessBody<Cart, 'put'>;
export type CartListQuery = Query<Cart, 'get'>;
export type CartList = SuccessBody<Cart, 'get'>;
export type CartDetails = SuccessBody<CartById, 'get'>;
export type CartDeleted = SuccessBody<CartById, 'delete'>;
export type CartExecution = SuccessBody<'/transactional/v1/ordercart/{ordercartId}/execute', 'post'>;
/** One order line of a cart, as the details answer shows it. */
export type CartLine = CartDetails['data']['orders'][number];

/** One change of one of your orders, the `data:` of an `order_update` event of the stream and a webhook's body. */
export type OrderEvent = Operation<
  '/transactional/v1/orders/events',
  'get'
>['responses'][200]['content']['text/event-stream'];

/** The body of every failure. */
export type ErrorEnvelope = JsonContent<Operation<'/transactional/v1/orders/regular', 'post'>['responses'][400]>;
export type FieldError = ErrorEnvelope['errors'][number];
