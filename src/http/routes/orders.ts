/**
 * /transactional/v1/orders: place an OFS bid (POST /regular), modify and cancel it (PUT / DELETE
 * /regular/{exchange}/{order_id}), the order book (GET) and an order's history (GET /{order_id}), as in ODIN.
 * Order entry needs the token and the API key; reading needs the token.
 */
import { ApiError, Errors } from '../../domain/errors.js';
import {
  CancelOrderResponse,
  CarryForwardRequest,
  CarryForwardResponse,
  ModifyOrderRequest,
  ModifyOrderResponse,
  OfsOrderRequest,
  OrderBookQuery,
  OrderBookResponse,
  OrderHistoryResponse,
  OrderIdParams,
  OrderPathParams,
  PlaceOrderResponse,
} from '../../schemas/orders.js';
import type { OrderBookService } from '../../services/order-book.js';
import type { OrderEntryService } from '../../services/order-entry.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { answerInTransaction, IDEMPOTENCY_ERRORS, IdempotencyKeyHeaders } from '../plugins/idempotency.js';
import {
  BODY_ERRORS,
  errorResponses,
  ORDER_ENTRY_AUTH_ERRORS,
  page,
  success,
  TOKEN_ERRORS,
  UNWANTED_BODY_ERRORS,
} from '../responses.js';

export const ORDER_ENTRY_SECURITY = [{ bearerAuth: [], apiKey: [] }];
const READ_SECURITY = [{ bearerAuth: [] }];

const ORDERS = '/transactional/v1/orders';
const PLACE_ORDER = `${ORDERS}/regular`;
const ORDER_PATH = `${PLACE_ORDER}/:exchange/:order_id`;

/** The rules of a bid's terms that need only the request (400), for a bid and a modification alike. */
const TERMS_ERRORS = [
  Errors.OFS_ORDER_TYPE,
  Errors.OFS_PRICE_ORDER_TYPE,
  Errors.OFS_QUANTITY,
  Errors.OFS_PRICE,
  Errors.OFS_TRIGGER_PRICE,
  Errors.OFS_VALIDITY,
  Errors.OFS_DISCLOSED_QUANTITY,
];

/** The pre-trade checks (422): the caller's window, the price rules and the retail limit. */
const PRE_TRADE_ERRORS = [
  Errors.OFS_WINDOW_NOT_OPEN,
  Errors.OFS_WINDOW_CLOSED,
  Errors.OFS_BELOW_FLOOR,
  Errors.OFS_CUTOFF_NOT_RETAIL,
  Errors.OFS_CUTOFF_PRICE_UNKNOWN,
  Errors.OFS_BELOW_RETAIL_CUTOFF,
  Errors.OFS_RETAIL_LIMIT,
  Errors.OFS_QUANTITY_OVER_OFFER,
];

/** The rules of a bid in an offer (docs/design/ofs.md): its category, its day, its price, its limits. */
const OFFER_ERRORS = [
  Errors.OFS_SERIES_CATEGORY,
  Errors.OFS_EMPLOYEE_NOT_ELIGIBLE,
  Errors.OFS_EMPLOYEE_CUTOFF_ONLY,
  Errors.OFS_EMPLOYEE_LIMIT,
  Errors.OFS_NON_RETAIL_ON_T1,
  Errors.OFS_OFFER_CANCELLED,
  Errors.OFS_BELOW_T_CUTOFF,
  Errors.OFS_ORDER_VALUE_LIMIT,
  Errors.OFS_ZERO_MARGIN_LIMIT,
];

/** Changing a bid in an offer: its margin, whether it is carried forward, its offer still registered. */
const OFFER_CHANGE_ERRORS = [Errors.OFS_OFFER_NOT_FOUND, Errors.OFS_OFFER_CANCELLED, Errors.OFS_NOT_CARRIED_FORWARD];

/**
 * Modify and cancel: the order must be one of the caller's, and live. (A path parameter beyond the
 * router's length limit answers e-109, as on every route.)
 */
const LIVE_ORDER_ERRORS = [
  Errors.ROUTE_NOT_FOUND,
  Errors.ORDER_NOT_FOUND,
  Errors.ORDER_NOT_LIVE,
  Errors.ORDER_CANCEL_PENDING,
];

export function registerOrderRoutes(app: App, orderEntry: OrderEntryService, orderBook: OrderBookService): void {
  app.post(
    PLACE_ORDER,
    {
      config: { auth: 'order-entry', idempotent: true },
      schema: {
        tags: ['orders'],
        summary: 'Place an OFS bid',
        description:
          'Accepts a BUY bid for a registered OFS issue and answers once the order is durably stored and queued for the OMS.',
        security: ORDER_ENTRY_SECURITY,
        headers: IdempotencyKeyHeaders,
        body: OfsOrderRequest,
        response: {
          200: PlaceOrderResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            ...IDEMPOTENCY_ERRORS,
            Errors.OFS_TRANSACTION_TYPE,
            Errors.OFS_PRODUCT_TYPE,
            ...TERMS_ERRORS,
            Errors.OFS_AMO,
            Errors.OFS_DERIVATIVE_FIELDS,
            Errors.OFS_FREEZE_QUANTITY,
            Errors.OFS_ORDER_IDENTIFIER,
            Errors.OFS_EXCHANGE,
            Errors.OFS_CLIENT_ID,
            Errors.OFS_ISSUE_NOT_FOUND,
            Errors.OFS_SCRIP_MISMATCH,
            Errors.OFS_PRICE_TICK,
            ...PRE_TRADE_ERRORS,
            ...OFFER_ERRORS,
            Errors.ALGO_ID_UNKNOWN,
            Errors.ALGO_DISABLED,
            Errors.ALGO_THRESHOLD,
          ),
        },
      },
    },
    async (request, reply) => {
      const placed = (orderId: string) => success('Order Entry Sent to OMS', { orderId });
      const orderId = await orderEntry.placeOfsBid(
        callerOf(request),
        request.body,
        request.id,
        answerInTransaction(request, reply, placed),
      );
      return placed(orderId);
    },
  );

  app.put(
    ORDER_PATH,
    {
      config: { auth: 'order-entry', idempotent: true },
      schema: {
        tags: ['orders'],
        summary: 'Modify a live OFS bid',
        description:
          'Replaces the order type, quantity, price and disclosed quantity of one of your live orders while your bidding window is open. The new terms keep every rule of a new bid; the retail limit counts them instead of the current ones.',
        security: ORDER_ENTRY_SECURITY,
        headers: IdempotencyKeyHeaders,
        params: OrderPathParams,
        body: ModifyOrderRequest,
        response: {
          200: ModifyOrderResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            ...IDEMPOTENCY_ERRORS,
            ...TERMS_ERRORS,
            ...LIVE_ORDER_ERRORS,
            Errors.ORDER_TRADED_QUANTITY_STALE,
            Errors.OFS_ISSUE_NOT_FOUND,
            Errors.OFS_PRICE_TICK,
            ...PRE_TRADE_ERRORS,
            ...OFFER_ERRORS,
            ...OFFER_CHANGE_ERRORS,
            Errors.OFS_MARGIN_T_UPWARD_ONLY,
            Errors.OFS_QUANTITY_BELOW_ALLOTTED,
            Errors.ALGO_DISABLED,
            Errors.ALGO_THRESHOLD,
          ),
        },
      },
    },
    async (request, reply) => {
      const { exchange, order_id } = request.params;
      const modified = () => success('Order Modification Sent to OMS', { orderId: order_id });
      await orderEntry.modifyOrder(
        callerOf(request),
        exchange,
        order_id,
        request.body,
        request.id,
        answerInTransaction(request, reply, modified),
      );
      return modified();
    },
  );

  app.delete(
    ORDER_PATH,
    {
      config: { auth: 'order-entry', idempotent: true },
      schema: {
        tags: ['orders'],
        summary: 'Cancel a live OFS bid',
        description: 'Asks the OMS to cancel one of your live orders while your bidding window is open. No body.',
        security: ORDER_ENTRY_SECURITY,
        headers: IdempotencyKeyHeaders,
        params: OrderPathParams,
        response: {
          200: CancelOrderResponse,
          ...errorResponses(
            ...UNWANTED_BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            ...IDEMPOTENCY_ERRORS,
            ...LIVE_ORDER_ERRORS,
            Errors.OFS_ISSUE_NOT_FOUND,
            Errors.OFS_WINDOW_NOT_OPEN,
            Errors.OFS_WINDOW_CLOSED,
            ...OFFER_CHANGE_ERRORS,
            Errors.OFS_MARGIN_T_NO_CANCEL,
          ),
        },
      },
    },
    async (request, reply) => {
      const { exchange, order_id } = request.params;
      const cancelled = () => success('Order Cancellation Sent to OMS', { orderId: order_id });
      await orderEntry.cancelOrder(
        callerOf(request),
        exchange,
        order_id,
        request.id,
        answerInTransaction(request, reply, cancelled),
      );
      return cancelled();
    },
  );

  app.post(
    `${ORDER_PATH}/carry_forward`,
    {
      config: { auth: 'order-entry', idempotent: true },
      schema: {
        tags: ['orders'],
        summary: 'Carry an unallotted non-retail bid in an offer forward to T+1',
        description:
          'During T+1, once the T allocation has run, carries the unallotted quantity of one of your live non-retail bids in an offer forward to the T+1 allocation, where unsubscribed retail shares go to carried-forward bids by price. A carried-forward bid stands at or above the T-day cut-off: a bid priced below it is refused (e-380, naming the cut-off) unless the body revises its price to at least the cut-off. Carrying forward blocks the funds of what it carries forward again (the T allocation released them); the OMS refuses it for good when they lack (the order then ends, its history says why). A bid not carried forward is cancelled at the close of T+1. Once carried forward, the bid may be revised (at or above the T-day cut-off; a 0 %-margin bid upward only). Again for a bid already carried forward: no change. Body optional: `{"price": 105}`, `{"price": 105, "quantity": "500"}` or none.',
        security: ORDER_ENTRY_SECURITY,
        headers: IdempotencyKeyHeaders,
        params: OrderPathParams,
        body: CarryForwardRequest,
        response: {
          200: CarryForwardResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            ...IDEMPOTENCY_ERRORS,
            ...LIVE_ORDER_ERRORS,
            Errors.OFS_CARRY_FORWARD_NOT_ALLOWED,
            Errors.OFS_BELOW_T_CUTOFF,
            Errors.OFS_PRICE_TICK,
            Errors.OFS_BELOW_FLOOR,
            Errors.OFS_MARGIN_T_UPWARD_ONLY,
            Errors.OFS_QUANTITY_BELOW_ALLOTTED,
            Errors.OFS_QUANTITY_OVER_OFFER,
            Errors.OFS_ORDER_VALUE_LIMIT,
            Errors.OFS_ZERO_MARGIN_LIMIT,
            Errors.OFS_OFFER_NOT_FOUND,
            Errors.OFS_OFFER_CANCELLED,
            Errors.ALGO_DISABLED,
            Errors.ALGO_THRESHOLD,
          ),
        },
      },
      // The body is optional: none is read as `{}` (carry the bid forward as it is).
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request, reply) => {
      const { exchange, order_id } = request.params;
      const { price, quantity } = request.body;
      const revision = {
        ...(price !== undefined && { price }),
        ...(quantity !== undefined && { quantity: Number(quantity) }),
      };
      const carried = () => success('Order Carry-Forward Sent to OMS', { orderId: order_id });
      await orderEntry.carryForward(
        callerOf(request),
        exchange,
        order_id,
        request.id,
        answerInTransaction(request, reply, carried),
        revision,
      );
      return carried();
    },
  );

  app.get(
    ORDERS,
    {
      config: { auth: 'token' },
      schema: {
        tags: ['orders'],
        summary: 'The order book: your orders with their current state, newest first',
        description:
          '`offset` is the page number (from 1, default 1) and `limit` the page size (1 to 1000, default 20). `data` is the list of orders; `metadata.total_records` counts the orders that match the filters on all pages. Prices are strings with two decimals and times are India time, as ODIN answers them.',
        security: READ_SECURITY,
        querystring: OrderBookQuery,
        response: { 200: OrderBookResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) =>
      page('Order book fetched successfully', await orderBook.orderBook(callerOf(request), request.query)),
  );

  app.get(
    `${ORDERS}/:order_id`,
    {
      config: { auth: 'token' },
      schema: {
        tags: ['orders'],
        summary: "An order's history: every change, oldest first",
        security: READ_SECURITY,
        params: OrderIdParams,
        response: {
          200: OrderHistoryResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.ROUTE_NOT_FOUND, Errors.ORDER_NOT_FOUND, Errors.METHOD_NOT_ALLOWED),
        },
      },
    },
    async (request) => {
      const { order_id } = request.params;
      // The place-order path matches this route's pattern too; a GET there is a wrong method, not an order id.
      if (order_id === 'regular') {
        throw new ApiError(Errors.METHOD_NOT_ALLOWED, `${PLACE_ORDER} does not accept GET; it accepts POST`, [], {
          Allow: 'POST',
        });
      }
      return success('Order history fetched successfully', await orderBook.history(callerOf(request), order_id));
    },
  );
}
