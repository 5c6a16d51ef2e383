/**
 * @ordergate/client: a typed client of the ordergate API (sessions, OFS bids, order carts, order events), for
 * Node.js and browsers alike: nothing in this entry's graph imports a `node:` module (the package's build
 * refuses one). The webhook signature check needs `node:crypto` and has its own, Node-only entry,
 * `@ordergate/client/webhooks` (src/webhooks.ts).
 */
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
