/** @ordergate/client: a typed client of the ordergate API (OFS bids, order carts, order events, webhooks). */
export {
  OrdergateClient,
  type CallOptions,
  type CartChange,
  type CartDetailsWithEtag,
  type CartPage,
  type CartUpdatedWithEtag,
  type LoginOptions,
  type NewCart,
  type OrderEntryOptions,
  type OrdergateClientOptions,
} from './client.js';
export { OrdergateError, OrdergateTransportError } from './errors.js';
export { OrderEventStream, type OrderEventsOptions } from './events.js';
export { ERROR_CATALOG, type ErrorCode, type ErrorName } from './generated/error-catalog.js';
export type { paths } from './generated/openapi.js';
export type { RetryOptions } from './transport.js';
export type * from './types.js';
export { verifyWebhook, WEBHOOK_HEADERS, WEBHOOK_TOLERANCE_SECONDS, type WebhookHeaders } from './webhooks.js';
