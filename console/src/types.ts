/**
 * The wire shapes the console reads. Every answer's shape is the client package's, generated from
 * docs/openapi.json (type-only imports, which the bundle drops), so that they cannot drift from the API:
 * the console calls the API through the package's OrdergateClient (api.ts), whose methods answer these.
 */
import type {
  ErrorEnvelope as GeneratedErrorEnvelope,
  OrderEvent as GeneratedOrderEvent,
  SuccessBody,
} from '../../packages/client/src/types.js';

/** The bodies of order entry as the client package types them (the console builds them from its forms). */
export type { CartChange, Exchange, ModifyBid, NewCart, PlaceBid } from '../../packages/client/src/index.js';

/** The body of every failure (the client package takes it from one operation's 400: all failures share it). */
export type ErrorEnvelope = GeneratedErrorEnvelope;
export type FieldError = ErrorEnvelope['errors'][number];

export type LoginAnswer = SuccessBody<'/authentication/v1/user/session', 'post'>['data'];
export type Profile = SuccessBody<'/authentication/v1/user/profile', 'get'>['data'];

export type OfsIssues = SuccessBody<'/transactional/v1/ofs/issues', 'get'>['data'];
export type OfsIssue = OfsIssues['issues'][number];
export type WindowState = OfsIssue['retail_window'];

export type OfsOffers = SuccessBody<'/transactional/v1/ofs/offers', 'get'>['data'];
export type OfsOffer = OfsOffers['offers'][number];
export type OfsListing = OfsOffer['listings'][number];
/** One offer as its own read answers it: the offer, and its indicative prices through T (oldest first). */
export type OfsOfferDetails = SuccessBody<'/transactional/v1/ofs/offers/{offer_id}', 'get'>['data'];
export type IndicativePoint = OfsOfferDetails['indicative_history'][number];
/** The caller's bids in an offer with their allotment explained: per day, why, the funds and the pay-out. */
export type OfsAllotment = SuccessBody<'/transactional/v1/ofs/offers/{offer_id}/allotment', 'get'>['data'];
export type OfsAllottedBid = OfsAllotment['bids'][number];

export type Order = SuccessBody<'/transactional/v1/orders', 'get'>['data'][number];
export type OrderStatus = Order['status'];
export type OrderHistoryEntry = SuccessBody<'/transactional/v1/orders/{order_id}', 'get'>['data'][number];
/**
 * One change of one of the caller's orders: the `data:` of an `order_update` event of the stream (the
 * generated type of the operation's text/event-stream content, as the client package takes it).
 */
export type OrderEvent = GeneratedOrderEvent;

/** A stored cart, as its details and the list answer it. */
export type Cart = SuccessBody<'/transactional/v1/ordercart/{ordercartId}', 'get'>['data'];
/**
 * One order line of a cart. The console writes lines in this shape too: the create and update calls take
 * them as a JSON string (`orders`), whose content the OpenAPI document describes only in the answers.
 */
export type CartLine = Cart['orders'][number];
export type ScripDetail = CartLine['scripDetail'];
/** The answer of one line of a cart's execution. */
export type CartLineResult = SuccessBody<'/transactional/v1/ordercart/{ordercartId}/execute', 'post'>['data'][number];

export type Balance = SuccessBody<'/authentication/v1/user/balance', 'get'>['data'];
export type Position = SuccessBody<'/transactional/v1/portfolio/positions/{type}', 'get'>['data'][number];
export type Holding = SuccessBody<'/transactional/v1/portfolio/holdings', 'get'>['data'][number];
/** One trade of the trade book: an allotment of one of the caller's bids. */
export type Trade = SuccessBody<'/transactional/v1/trades', 'get'>['data'][number];

export type OfsBook = SuccessBody<'/operator/v1/ofs/{exchange}/{scrip_token}/book', 'get'>['data'];
export type DemandLevel = OfsBook['demand'][number];
/** What one category's demand implies, by the allocation's rules, as if the windows closed now. */
export type CategoryClearing = OfsBook['clearing']['retail'];
export type AllottedLevel = NonNullable<OfsBook['allotted']>['by_price'][number];

/** An offer's book (operators only): the offer, the broker's bids per category and listing, and the open non-retail demand by price. */
export type OfsOfferBook = SuccessBody<'/operator/v1/ofs/offers/{offer_id}/book', 'get'>['data'];
export type OfferBookCategory = OfsOfferBook['categories'][number];
export type OfferBookListing = OfferBookCategory['by_listing'][number];
export type OfferDemandLevel = OfsOfferBook['non_retail_demand'][number];
