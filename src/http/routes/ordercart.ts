/**
 * /transactional/v1/ordercart: create (POST), list (GET), details (GET /{ordercartId}), update (PUT) and
 * delete (DELETE /{ordercartId}). Bearer token only: keeping a cart enters no order. Executing a cart
 * (POST /{ordercartId}/execute, ours) enters orders, so it needs the API key too.
 */
import Type from 'typebox';
import { Errors } from '../../domain/errors.js';
import {
  CART_CREATED,
  CART_DELETED,
  CART_DETAILS,
  CART_EXECUTED,
  CART_LISTED,
  CART_PARTLY_EXECUTED,
  CART_UPDATED,
  CreateOrderCartRequest,
  CreateOrderCartResponse,
  DeleteOrderCartResponse,
  ExecuteOrderCartResponse,
  IfMatchHeaders,
  OrderCartDetailsResponse,
  OrderCartListQuery,
  OrderCartListResponse,
  OrderCartParams,
  UpdateOrderCartRequest,
  UpdateOrderCartResponse,
} from '../../schemas/ordercart.js';
import type { OrderCartService } from '../../services/order-carts.js';
import { PARTIAL_SUCCESS_CODE, SUCCESS_CODE } from '../../schemas/common.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { IDEMPOTENCY_ERRORS, IdempotencyKeyHeaders, keptSteps } from '../plugins/idempotency.js';
import { ORDER_ENTRY_SECURITY } from './orders.js';
import {
  BODY_ERRORS,
  errorResponses,
  ORDER_ENTRY_AUTH_ERRORS,
  success,
  TOKEN_ERRORS,
  UNWANTED_BODY_ERRORS,
} from '../responses.js';

const PATH = '/transactional/v1/ordercart';
/** The cart list's count of all the caller's carts, on every page. */
export const TOTAL_COUNT_HEADER = 'X-Total-Count';
const tags = ['ordercart'];
const security = [{ bearerAuth: [] }];
const SUCCESS_MESSAGE_LIST = [{ message: 'success' }];
const UpdateHeaders = Type.Object({ ...IfMatchHeaders.properties, ...IdempotencyKeyHeaders.properties });
const ORDERS_ERRORS = [
  Errors.CART_ORDERS_NOT_JSON,
  Errors.CART_ORDERS_NOT_ARRAY,
  Errors.CART_LINE_INVALID,
  Errors.CART_VERSION,
  Errors.CART_NAME,
];
/** An OFS line of a registered issue whose price is off the tick or below its floor (422, checked at save). */
const LINE_PRICE_ERRORS = [Errors.OFS_PRICE_TICK, Errors.OFS_BELOW_FLOOR];

export function registerOrderCartRoutes(app: App, carts: OrderCartService): void {
  app.post(
    PATH,
    {
      config: { auth: 'token', rateLimited: 'cart-writes', idempotent: true },
      schema: {
        tags,
        summary: 'Create an order cart',
        description:
          "Stores a new cart owned by the caller; `data.ordercartId` is its identifier. `ordercartName` may not be blank (spaces only: 400 e-411). An OFS line of a registered issue whose Price is off the issue's tick (e-353) or below its floor (e-356) is refused (422, the field naming the line: `orders[i].Price`); other lines are kept as sent and answered when the cart is executed. A user keeps at most MAX_CARTS_PER_USER carts (100 by default): beyond, 422 e-417 and nothing is created. Creates, updates and deletes of one user count together against RATE_LIMIT_CART_WRITES_PER_SECOND (10 by default; one more: 429 e-429 with Retry-After).",
        security,
        headers: IdempotencyKeyHeaders,
        body: CreateOrderCartRequest,
        response: {
          200: CreateOrderCartResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...TOKEN_ERRORS,
            Errors.RATE_LIMITED,
            ...IDEMPOTENCY_ERRORS,
            ...ORDERS_ERRORS,
            Errors.CART_EXECUTED_ON_CREATE,
            Errors.CART_USER_MISMATCH,
            ...LINE_PRICE_ERRORS,
            Errors.CART_LIMIT,
          ),
        },
      },
    },
    async (request) => {
      const ordercartId = await carts.create(callerOf(request), request.body);
      return success(CART_CREATED, { ordercartId });
    },
  );

  app.get(
    PATH,
    {
      config: { auth: 'token' },
      schema: {
        tags,
        summary: "List the caller's order carts, newest first",
        description:
          '`offset` is the page number (from 1, default 1) and `limit` the page size (1 to 100, default 100), as in the order book. `data` is the page of carts; the `X-Total-Count` header counts all your carts (the body keeps the four fields of every success).',
        security,
        querystring: OrderCartListQuery,
        response: { 200: OrderCartListResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request, reply) => {
      const { data, metadata } = await carts.list(callerOf(request), request.query);
      reply.header(TOTAL_COUNT_HEADER, metadata.total_records);
      return success(CART_LISTED, data);
    },
  );

  app.get(
    `${PATH}/:ordercartId`,
    {
      config: { auth: 'token' },
      schema: {
        tags,
        summary: 'Order cart details, with an ETag for a later conditional update',
        security,
        params: OrderCartParams,
        response: {
          200: OrderCartDetailsResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.ROUTE_NOT_FOUND, Errors.CART_NOT_FOUND),
        },
      },
    },
    async (request, reply) => {
      const { cart, etag } = await carts.details(callerOf(request), request.params.ordercartId);
      reply.header('ETag', etag);
      return success(CART_DETAILS, cart);
    },
  );

  app.put(
    PATH,
    {
      config: { auth: 'token', rateLimited: 'cart-writes', idempotent: true },
      schema: {
        tags,
        summary: 'Update an order cart',
        description:
          'Replaces the name and the orders of one of your carts. With If-Match, the update happens only if the cart still has that ETag (else 412); the answer carries the new ETag. The name and the lines are checked as on create: a blank name is 400 e-411, and an OFS line of a registered issue off its tick (e-353) or below its floor (e-356) is 422, named `orders[i].Price`.',
        security,
        headers: UpdateHeaders,
        body: UpdateOrderCartRequest,
        response: {
          200: UpdateOrderCartResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...TOKEN_ERRORS,
            Errors.RATE_LIMITED,
            ...IDEMPOTENCY_ERRORS,
            ...ORDERS_ERRORS,
            Errors.CART_NOT_FOUND,
            Errors.CART_USER_MISMATCH,
            Errors.CART_CREATOR_MISMATCH,
            Errors.CART_PRECONDITION_FAILED,
            Errors.CART_EXECUTED_STALE,
            ...LINE_PRICE_ERRORS,
          ),
        },
      },
    },
    async (request, reply) => {
      const etag = await carts.update(callerOf(request), request.body, request.headers['if-match']);
      reply.header('ETag', etag);
      return success(CART_UPDATED, SUCCESS_MESSAGE_LIST);
    },
  );

  app.post(
    `${PATH}/:ordercartId/execute`,
    {
      config: { auth: 'order-entry', idempotent: true },
      schema: {
        tags,
        summary: 'Execute an order cart: place each line as an order',
        description:
          'Places the lines of one of your carts, in order, each under the same checks as a single bid (POST /transactional/v1/orders/regular), at your order-entry rate: the call counts as one order-entry call, and each order it places takes one more slot of the same per-user limit (RATE_LIMIT_ORDERS_PER_SECOND), waiting for a free one, so a cart of 50 lines at 10 a second answers after about 5 s. It answers one result per line in `data`: `{index, status:"success", orderId}` or `{index, status:"error", code, message, errors}`, where `code` is what a single bid with the line\'s values gets and each field is named `orders[i].Field`. Lines of a product other than OFS are reported as failed (e-413); so is a line past SEBI\'s threshold of orders a second without a registered algo ID (e-603): refused, not queued. Every line placed: s-101; some: s-102; none: 422 e-412, whose errors list the faults of every line. An execution that placed an order adds 1 to executedNoTime and changes the ETag. An execution runs to its end even if you disconnect; at most MAX_CART_EXECUTIONS_PER_USER (2) of yours run at once on a server, and one more answers 429 e-429 with Retry-After, placing nothing. No body is needed.',
        security: ORDER_ENTRY_SECURITY,
        headers: IdempotencyKeyHeaders,
        params: OrderCartParams,
        response: {
          200: ExecuteOrderCartResponse,
          ...errorResponses(
            ...UNWANTED_BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            ...IDEMPOTENCY_ERRORS,
            Errors.ROUTE_NOT_FOUND,
            Errors.CART_NOT_FOUND,
            Errors.CART_NOTHING_PLACED,
          ),
        },
      },
    },
    async (request) => {
      const { allPlaced, lines } = await carts.execute(
        callerOf(request),
        request.params.ordercartId,
        request.id,
        keptSteps(request),
        request.orderSlots ?? undefined,
      );
      return allPlaced
        ? success(CART_EXECUTED, lines, SUCCESS_CODE)
        : success(CART_PARTLY_EXECUTED, lines, PARTIAL_SUCCESS_CODE);
    },
  );

  app.delete(
    `${PATH}/:ordercartId`,
    {
      config: { auth: 'token', rateLimited: 'cart-writes' },
      schema: {
        tags,
        summary: 'Delete an order cart',
        security,
        params: OrderCartParams,
        response: {
          200: DeleteOrderCartResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.RATE_LIMITED, Errors.ROUTE_NOT_FOUND, Errors.CART_NOT_FOUND),
        },
      },
    },
    async (request) => {
      await carts.delete(callerOf(request), request.params.ordercartId);
      return success(CART_DELETED, SUCCESS_MESSAGE_LIST);
    },
  );
}
