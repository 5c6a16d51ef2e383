/** POST /transactional/v1/orders/regular: place an OFS bid (seed 4.1). */
import { Errors } from '../domain/errors.js';
import { OfsOrderRequest, PlaceOrderResponse } from '../schemas/orders.js';
import type { OrderEntryService } from '../services/order-entry.js';
import { callerOf, type App } from '../app.js';
import { BODY_ERRORS, errorResponses, ORDER_ENTRY_AUTH_ERRORS, success } from './responses.js';

export const ORDER_ENTRY_SECURITY = [{ bearerAuth: [], apiKey: [] }];

export function registerOrderRoutes(app: App, orderEntry: OrderEntryService): void {
  app.post(
    '/transactional/v1/orders/regular',
    {
      config: { auth: 'order-entry' },
      schema: {
        tags: ['orders'],
        summary: 'Place an OFS bid',
        description:
          'Accepts a BUY bid for a registered OFS issue and answers once the order is durably stored and queued for the OMS.',
        security: ORDER_ENTRY_SECURITY,
        body: OfsOrderRequest,
        response: {
          200: PlaceOrderResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            ...ORDER_ENTRY_AUTH_ERRORS,
            Errors.OFS_TRANSACTION_TYPE,
            Errors.OFS_PRODUCT_TYPE,
            Errors.OFS_ORDER_TYPE,
            Errors.OFS_PRICE_ORDER_TYPE,
            Errors.OFS_QUANTITY,
            Errors.OFS_PRICE,
            Errors.OFS_TRIGGER_PRICE,
            Errors.OFS_VALIDITY,
            Errors.OFS_AMO,
            Errors.OFS_DERIVATIVE_FIELDS,
            Errors.OFS_DISCLOSED_QUANTITY,
            Errors.OFS_FREEZE_QUANTITY,
            Errors.OFS_ORDER_IDENTIFIER,
            Errors.OFS_EXCHANGE,
            Errors.OFS_CLIENT_ID,
            Errors.OFS_ISSUE_NOT_FOUND,
            Errors.OFS_SCRIP_MISMATCH,
            Errors.OFS_PRICE_TICK,
          ),
        },
      },
    },
    async (request) => {
      const orderId = await orderEntry.placeOfsBid(callerOf(request), request.body, request.id);
      return success('Order Entry Sent to OMS', { orderId });
    },
  );
}
