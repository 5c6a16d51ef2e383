/**
 * The ordergate client: one method per operation of the API, typed by the server's OpenAPI document.
 * Order-entry calls carry an Idempotency-Key, so that their retries cannot enter an order twice.
 */
import { OrderEventStream, type OrderEventsOptions } from './events.js';
import { ERROR_CATALOG } from './generated/error-catalog.js';
import { Transport, type ApiCall, type Credentials, type RetryOptions } from './transport.js';
import type {
  Balance,
  CancelAnswer,
  CarryForwardAnswer,
  CarryForwardRevision,
  CartCreated,
  CartCreateRequest,
  CartDeleted,
  CartDetails,
  CartExecution,
  CartLine,
  CartList,
  CartListQuery,
  CartUpdated,
  CartUpdateRequest,
  Exchange,
  Holdings,
  OfsAllotmentAnswer,
  OfsIssueBook,
  OfsIssues,
  OfsOfferAnswer,
  OfsOfferBook,
  OfsOffers,
  LoginAnswer,
  LoginRequest,
  LogoutAnswer,
  ModifyAnswer,
  ModifyBid,
  OrderBook,
  OrderBookQuery,
  OfsOffersQuery,
  OrderHistory,
  PlaceAnswer,
  PlaceBid,
  Positions,
  PositionsQuery,
  PositionType,
  Profile,
  SessionCheck,
  TradeBook,
  TradeBookQuery,
} from './types.js';

export interface OrdergateClientOptions {
  /** Where the API is, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Retries after network errors and 503s (default: 4 attempts, at most 10 s of waiting in all). */
  retry?: RetryOptions;
  /** Send a fresh Idempotency-Key with every order-entry call that names none (default true). */
  idempotencyKeys?: boolean;
  /** How long one attempt of a call may take, in milliseconds (default 30000; the event stream has none). */
  timeoutMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface OrderEntryOptions extends CallOptions {
  /**
   * The key of this logical call, reused by its retries; give your own to retry it yourself later (after a
   * crash, say), or the `idempotencyKey` of the error a failed call threw (OrdergateError,
   * OrdergateTransportError) to retry that one. Default: a random UUID, unless the client was made with
   * `idempotencyKeys: false`.
   */
  idempotencyKey?: string;
}

export interface LoginOptions extends CallOptions {
  userId: string;
  password: string;
  /** Your API key: sent at login, and kept for the order-entry calls (`x-api-key`). */
  apiKey: string;
  /** The current TOTP code, for a user enrolled in TOTP. */
  totp?: string;
}

/** A cart to create: the wire body, whose `orders` may also be given as the array of lines (sent as its JSON). */
export type NewCart = Omit<CartCreateRequest, 'orders'> & { orders: string | readonly CartLine[] };
/** A cart's new contents: the wire body, whose `orders` may also be given as the array of lines. */
export type CartChange = Omit<CartUpdateRequest, 'orders'> & { orders: string | readonly CartLine[] };

/** The details of a cart and its `ETag`, to send back as `ifMatch` in a conditional update. */
export type CartDetailsWithEtag = CartDetails & { etag: string };
export type CartUpdatedWithEtag = CartUpdated & { etag: string };
/** A page of carts and the count of all of them (the `X-Total-Count` header). */
export type CartPage = CartList & { totalCount: number };

const DEFAULT_RETRY: Required<RetryOptions> = { attempts: 4, maxDelayMs: 10_000 };
const DEFAULT_TIMEOUT_MS = 30_000;

const path = (template: string, ...values: string[]) => {
  let index = 0;
  return template.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[index++]!));
};

export class OrdergateClient {
  private readonly transport: Transport;
  private readonly idempotencyKeys: boolean;

  constructor(
    private readonly options: OrdergateClientOptions,
    credentials: Credentials = {},
  ) {
    this.idempotencyKeys = options.idempotencyKeys ?? true;
    this.transport = new Transport(
      {
        baseUrl: options.baseUrl,
        fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
        retry: { ...DEFAULT_RETRY, ...options.retry },
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      },
      { ...credentials },
    );
  }

  /** The access token in use (from `login` or `withToken`). */
  get accessToken(): string | undefined {
    return this.transport.credentials.accessToken;
  }

  /** The API key in use. */
  get apiKey(): string | undefined {
    return this.transport.credentials.apiKey;
  }

  /** Another client with the same settings, calling with this token (and API key, for order entry). */
  withToken(accessToken: string, apiKey?: string): OrdergateClient {
    return new OrdergateClient(this.options, { accessToken, apiKey: apiKey ?? this.apiKey });
  }

  /**
   * Logs in (POST /authentication/v1/user/session) and keeps the token and the API key for later calls.
   *
   * A login is retried after a 503 (the server refused it before checking anything: too many logins at
   * once, or it is shutting down), but after a network error only when the request certainly did not reach
   * the server (the connection was refused, the host name did not resolve). An answer lost or timed out is
   * not retried: the first attempt may have spent its TOTP code (a repeat gets 401 `e-210`) and a refused
   * repeat counts as a failed login against the login limits. That throws `OrdergateTransportError`: log
   * in again, with the next TOTP code.
   */
  async login({ userId, password, apiKey, totp, signal }: LoginOptions): Promise<LoginAnswer> {
    const body: LoginRequest = {
      user_id: userId,
      login_type: 'PASSWORD',
      password,
      second_auth_type: totp === undefined ? '' : 'TOTP',
      second_auth: totp ?? '',
      api_key: apiKey,
      source: 'WEBAPI',
    };
    const answer = await this.call<LoginAnswer>({
      method: 'POST',
      path: '/authentication/v1/user/session',
      body,
      auth: 'none',
      signal,
      retryNetworkErrors: 'unsent',
    });
    this.transport.credentials.accessToken = answer.body.data.access_token;
    this.transport.credentials.apiKey = apiKey;
    return answer.body;
  }

  /** Checks that the token is still valid (PUT /authentication/v1/user/session). */
  async validate(options: CallOptions = {}): Promise<SessionCheck> {
    return (
      await this.call<SessionCheck>({
        method: 'PUT',
        path: '/authentication/v1/user/session',
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * Ends the session (DELETE /authentication/v1/user/session) and forgets its token.
   *
   * When an attempt's answer was lost (a network error or a timeout) and the retry answers 401 `e-204`
   * (the token is revoked), the lost attempt most likely logged out: the call then resolves as a success,
   * with the answer the server gives a logout. A 401 `e-204` to a first attempt, or to a retry after only
   * refused connections, is still thrown.
   */
  async logout(options: CallOptions = {}): Promise<LogoutAnswer> {
    const answer = await this.call<LogoutAnswer>({
      method: 'DELETE',
      path: '/authentication/v1/user/session',
      auth: 'token',
      signal: options.signal,
      alreadyDone: {
        codes: [ERROR_CATALOG.TOKEN_REVOKED.code],
        answer: () => ({
          status: 'success',
          code: 's-101',
          message: 'Logged out successfully',
          data: [{ message: 'success' }],
        }),
      },
    });
    this.transport.credentials.accessToken = undefined;
    return answer.body;
  }

  /** Your funds: cash, blocked, available, debited (GET /authentication/v1/user/balance). */
  async balance(options: CallOptions = {}): Promise<Balance> {
    return (
      await this.call<Balance>({
        method: 'GET',
        path: '/authentication/v1/user/balance',
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Places an OFS bid (POST /transactional/v1/orders/regular). */
  async place(bid: PlaceBid, options: OrderEntryOptions = {}): Promise<PlaceAnswer> {
    return this.orderEntry<PlaceAnswer>(
      { method: 'POST', path: '/transactional/v1/orders/regular', body: bid },
      options,
    );
  }

  /** Modifies a live bid (PUT /transactional/v1/orders/regular/{exchange}/{order_id}). */
  async modify(
    exchange: Exchange,
    orderId: string,
    changes: ModifyBid,
    options: OrderEntryOptions = {},
  ): Promise<ModifyAnswer> {
    return this.orderEntry<ModifyAnswer>(
      {
        method: 'PUT',
        path: path('/transactional/v1/orders/regular/{exchange}/{order_id}', exchange, orderId),
        body: changes,
      },
      options,
    );
  }

  /** Cancels a live bid (DELETE /transactional/v1/orders/regular/{exchange}/{order_id}). */
  async cancel(exchange: Exchange, orderId: string, options: OrderEntryOptions = {}): Promise<CancelAnswer> {
    return this.orderEntry<CancelAnswer>(
      { method: 'DELETE', path: path('/transactional/v1/orders/regular/{exchange}/{order_id}', exchange, orderId) },
      options,
    );
  }

  /**
   * Carries an unallotted non-retail bid in an offer forward to T+1 (POST
   * /transactional/v1/orders/regular/{exchange}/{order_id}/carry_forward): during T+1, after the T allocation,
   * at a price at or above the T-day cut-off: `revision` revises the bid as it is carried forward (`{ price:
   * 105 }`; a bid priced below the cut-off needs it). Refused with OrdergateError 422 `e-380` below the
   * cut-off (the message names it), 409 `e-378` otherwise (not T+1, not a non-retail bid, nothing
   * unallotted); carrying forward a bid already carried forward succeeds without change. The OMS blocks the
   * bid's funds again, and ends the bid when they lack (its history says why).
   */
  async carryForward(
    exchange: Exchange,
    orderId: string,
    options: OrderEntryOptions & { revision?: CarryForwardRevision } = {},
  ): Promise<CarryForwardAnswer> {
    const { revision, ...entry } = options;
    return this.orderEntry<CarryForwardAnswer>(
      {
        method: 'POST',
        path: path('/transactional/v1/orders/regular/{exchange}/{order_id}/carry_forward', exchange, orderId),
        ...(revision !== undefined && { body: revision }),
      },
      entry,
    );
  }

  /**
   * The OFS offers: terms, portions in shares, days and state, T day latest first, a page at a time (GET
   * /transactional/v1/ofs/offers): by default the first 50 current ones; `state` `all` or a state, `offset`
   * the 1-based page, `limit` up to 200. `offers({ signal })`, as the call read before it took a query,
   * still works: a `signal` in the first argument is the call's, not a query parameter.
   */
  async offers(query: OfsOffersQuery & CallOptions = {}, options: CallOptions = {}): Promise<OfsOffers> {
    const { signal, ...params } = query;
    return (
      await this.call<OfsOffers>({
        method: 'GET',
        path: '/transactional/v1/ofs/offers',
        query: params,
        auth: 'token',
        signal: options.signal ?? signal,
      })
    ).body;
  }

  /** One OFS offer (GET /transactional/v1/ofs/offers/{offer_id}); an unknown id is an OrdergateError e-368. */
  async offer(offerId: string, options: CallOptions = {}): Promise<OfsOfferAnswer> {
    return (
      await this.call<OfsOfferAnswer>({
        method: 'GET',
        path: path('/transactional/v1/ofs/offers/{offer_id}', offerId),
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * The allotment explained (GET /transactional/v1/ofs/offers/{offer_id}/allotment): each of your bids in
   * the offer, what each day allotted it and why, the price paid, the funds and the settlement; an unknown
   * id is an OrdergateError e-368.
   */
  async allotment(offerId: string, options: CallOptions = {}): Promise<OfsAllotmentAnswer> {
    return (
      await this.call<OfsAllotmentAnswer>({
        method: 'GET',
        path: path('/transactional/v1/ofs/offers/{offer_id}/allotment', offerId),
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * Who you are to the API (GET /authentication/v1/user/profile): your user id, your OFS categories (the
   * issues' and the offers'), your margin type and whether you are an operator (whose book calls answer).
   * An operator may change your category at any time: read it again rather than keep it.
   */
  async profile(options: CallOptions = {}): Promise<Profile> {
    return (
      await this.call<Profile>({
        method: 'GET',
        path: '/authentication/v1/user/profile',
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * The registered OFS issues (the one-listing model) and where their bidding windows stand, newest first,
   * with the server's clock to count down from (GET /transactional/v1/ofs/issues).
   */
  async ofsIssues(options: CallOptions = {}): Promise<OfsIssues> {
    return (
      await this.call<OfsIssues>({
        method: 'GET',
        path: '/transactional/v1/ofs/issues',
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * An OFS issue's book, for operators (GET /operator/v1/ofs/{exchange}/{scrip_token}/book): the live demand
   * by price, what each category's demand implies as if the windows closed now, and the allotments once the
   * allocation has run. Anyone but an operator gets OrdergateError 403 `e-214`.
   */
  async issueBook(exchange: Exchange, scripToken: number | string, options: CallOptions = {}): Promise<OfsIssueBook> {
    return (
      await this.call<OfsIssueBook>({
        method: 'GET',
        path: path('/operator/v1/ofs/{exchange}/{scrip_token}/book', exchange, String(scripToken)),
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /**
   * An OFS offer's book, for operators (GET /operator/v1/ofs/offers/{offer_id}/book): the offer, the
   * broker's bids and allotments per category and listing, and the open non-retail demand by price. Anyone
   * but an operator gets OrdergateError 403 `e-214`; an unknown id is an OrdergateError `e-368`.
   */
  async offerBook(offerId: string, options: CallOptions = {}): Promise<OfsOfferBook> {
    return (
      await this.call<OfsOfferBook>({
        method: 'GET',
        path: path('/operator/v1/ofs/offers/{offer_id}/book', offerId),
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Your orders (GET /transactional/v1/orders): `offset` is the 1-based page, `order_id` picks one. */
  async orderBook(query: OrderBookQuery = {}, options: CallOptions = {}): Promise<OrderBook> {
    return (
      await this.call<OrderBook>({
        method: 'GET',
        path: '/transactional/v1/orders',
        query,
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Every step of one order, oldest first (GET /transactional/v1/orders/{order_id}). */
  async orderHistory(orderId: string, options: CallOptions = {}): Promise<OrderHistory> {
    return (
      await this.call<OrderHistory>({
        method: 'GET',
        path: path('/transactional/v1/orders/{order_id}', orderId),
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Your trades (allotments), newest first (GET /transactional/v1/trades). */
  async tradeBook(query: TradeBookQuery = {}, options: CallOptions = {}): Promise<TradeBook> {
    return (
      await this.call<TradeBook>({
        method: 'GET',
        path: '/transactional/v1/trades',
        query,
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Allotted shares not yet settled (GET /transactional/v1/portfolio/positions/{type}). */
  async positions(
    type: PositionType = 'all',
    query: PositionsQuery = {},
    options: CallOptions = {},
  ): Promise<Positions> {
    return (
      await this.call<Positions>({
        method: 'GET',
        path: path('/transactional/v1/portfolio/positions/{type}', type),
        query,
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Settled shares (GET /transactional/v1/portfolio/holdings). */
  async holdings(options: CallOptions = {}): Promise<Holdings> {
    return (
      await this.call<Holdings>({
        method: 'GET',
        path: '/transactional/v1/portfolio/holdings',
        auth: 'token',
        signal: options.signal,
      })
    ).body;
  }

  /** Creates an order cart (POST /transactional/v1/ordercart). */
  async createCart(cart: NewCart, options: OrderEntryOptions = {}): Promise<CartCreated> {
    const body: CartCreateRequest = { ...cart, orders: ordersText(cart.orders) };
    return this.orderEntry<CartCreated>(
      { method: 'POST', path: '/transactional/v1/ordercart', body, auth: 'token' },
      options,
    );
  }

  /** A page of your carts (GET /transactional/v1/ordercart), with the count of all of them. */
  async listCarts(query: CartListQuery = {}, options: CallOptions = {}): Promise<CartPage> {
    const answer = await this.call<CartList>({
      method: 'GET',
      path: '/transactional/v1/ordercart',
      query,
      auth: 'token',
      signal: options.signal,
    });
    return { ...answer.body, totalCount: Number(answer.headers.get('x-total-count') ?? answer.body.data.length) };
  }

  /** One cart and its ETag (GET /transactional/v1/ordercart/{ordercartId}). */
  async cartDetails(ordercartId: string, options: CallOptions = {}): Promise<CartDetailsWithEtag> {
    const answer = await this.call<CartDetails>({
      method: 'GET',
      path: path('/transactional/v1/ordercart/{ordercartId}', ordercartId),
      auth: 'token',
      signal: options.signal,
    });
    return { ...answer.body, etag: answer.headers.get('etag') ?? '' };
  }

  /**
   * Replaces a cart's name and lines (PUT /transactional/v1/ordercart). With `ifMatch` (an ETag from
   * `cartDetails`), only if the cart is unchanged since: else OrdergateError 412 `e-410`.
   */
  async updateCart(
    cart: CartChange,
    options: OrderEntryOptions & { ifMatch?: string } = {},
  ): Promise<CartUpdatedWithEtag> {
    const body: CartUpdateRequest = { ...cart, orders: ordersText(cart.orders) };
    const headers: Record<string, string> = options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch };
    const answer = await this.orderEntryAnswer<CartUpdated>(
      { method: 'PUT', path: '/transactional/v1/ordercart', body, auth: 'token', headers },
      options,
    );
    return { ...answer.body, etag: answer.headers.get('etag') ?? '' };
  }

  /**
   * Deletes a cart (DELETE /transactional/v1/ordercart/{ordercartId}).
   *
   * When an attempt's answer was lost (a network error or a timeout) and the retry answers 404 `e-405`
   * (no such cart), the lost attempt most likely deleted it: the call then resolves as a success, with the
   * answer the server gives a delete. A 404 `e-405` to a first attempt, or to a retry after only refused
   * connections, is still thrown.
   */
  async deleteCart(ordercartId: string, options: CallOptions = {}): Promise<CartDeleted> {
    const answer = await this.call<CartDeleted>({
      method: 'DELETE',
      path: path('/transactional/v1/ordercart/{ordercartId}', ordercartId),
      auth: 'token',
      signal: options.signal,
      alreadyDone: {
        codes: [ERROR_CATALOG.CART_NOT_FOUND.code],
        answer: () => ({
          status: 'success',
          code: 's-101',
          message: 'Ordercart deleted successfully',
          data: [{ message: 'success' }],
        }),
      },
    });
    return answer.body;
  }

  /** Places each line of a cart as a bid, answered line by line (POST /transactional/v1/ordercart/{ordercartId}/execute). */
  async executeCart(ordercartId: string, options: OrderEntryOptions = {}): Promise<CartExecution> {
    return this.orderEntry<CartExecution>(
      { method: 'POST', path: path('/transactional/v1/ordercart/{ordercartId}/execute', ordercartId) },
      options,
    );
  }

  /**
   * Your order events (GET /transactional/v1/orders/events) as an async iterator that survives drops: it
   * reconnects with Last-Event-ID, so no event is lost or repeated. It connects at once: events after
   * `await stream.opened` are not missed. It ends with an OrdergateError when the session ends
   * (`stream_end`), and quietly when `signal` is aborted, the loop is left or `close()` is called.
   */
  events(options: OrderEventsOptions = {}): OrderEventStream {
    return new OrderEventStream(this.transport.options, this.transport.credentials, options);
  }

  private call<Body>(call: ApiCall<Body>) {
    return this.transport.call<Body>(call);
  }

  private async orderEntry<Body>(call: OrderEntryCall<Body>, options: OrderEntryOptions): Promise<Body> {
    return (await this.orderEntryAnswer<Body>(call, options)).body;
  }

  /** An order-entry call, under its Idempotency-Key: the key is also on its errors (`error.idempotencyKey`). */
  private orderEntryAnswer<Body>(call: OrderEntryCall<Body>, options: OrderEntryOptions) {
    const idempotencyKey = options.idempotencyKey ?? (this.idempotencyKeys ? newIdempotencyKey() : undefined);
    return this.call<Body>({
      auth: 'token and key',
      ...call,
      orderEntry: true,
      idempotencyKey,
      signal: options.signal,
    });
  }
}

type OrderEntryCall<Body> = Omit<ApiCall<Body>, 'auth' | 'signal' | 'idempotencyKey' | 'orderEntry'> & {
  auth?: ApiCall['auth'];
};

/**
 * A random (version 4) UUID. A browser offers crypto.randomUUID only to a secure context (https, localhost):
 * a page on plain http (a console on a LAN address) has getRandomValues alone.
 */
function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function ordersText(orders: string | readonly CartLine[]): string {
  return typeof orders === 'string' ? orders : JSON.stringify(orders);
}
