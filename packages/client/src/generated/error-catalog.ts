/**
 * This file was generated from docs/errors.md by `npx tsx packages/client/scripts/generate.ts`.
 * Do not make direct changes to the file.
 */

/** Every error code of the server's catalog, by name, with its HTTP status. */
export const ERROR_CATALOG = {
  /** The body is not valid JSON. */
  MALFORMED_JSON: { code: 'e-101', status: 400 },
  /** The call needs a JSON object body and none was sent. */
  BODY_REQUIRED: { code: 'e-102', status: 400 },
  /** A required field is missing. */
  FIELD_REQUIRED: { code: 'e-103', status: 400 },
  /** A field has the wrong JSON type; nothing is coerced. */
  WRONG_TYPE: { code: 'e-104', status: 400 },
  /** The body carries a field the contract does not define. */
  UNKNOWN_FIELD: { code: 'e-105', status: 400 },
  /** A field has a value outside its allowed set or range. */
  INVALID_VALUE: { code: 'e-106', status: 400 },
  /** The body exceeds the 64 KiB limit. */
  BODY_TOO_LARGE: { code: 'e-107', status: 413 },
  /** The body is not sent as application/json. */
  UNSUPPORTED_MEDIA_TYPE: { code: 'e-108', status: 415 },
  /** No endpoint has this method and path. */
  ROUTE_NOT_FOUND: { code: 'e-109', status: 404 },
  /** A query-string parameter is missing or invalid. */
  INVALID_QUERY: { code: 'e-110', status: 400 },
  /** A request header has an invalid value. */
  INVALID_HEADER: { code: 'e-111', status: 400 },
  /** The request is malformed (for example a bad URL encoding). */
  BAD_REQUEST: { code: 'e-112', status: 400 },
  /** The path exists but does not accept this method; see the Allow header. */
  METHOD_NOT_ALLOWED: { code: 'e-113', status: 405 },
  /** The Idempotency-Key header must hold 1 to 255 printable ASCII characters. */
  IDEMPOTENCY_KEY_INVALID: { code: 'e-114', status: 400 },
  /** This Idempotency-Key was used within the last 24 hours for another request (another body, method or path). */
  IDEMPOTENCY_KEY_REUSED: { code: 'e-115', status: 422 },
  /** A request with this Idempotency-Key is still running; retry after Retry-After seconds. */
  IDEMPOTENCY_KEY_RUNNING: { code: 'e-116', status: 409 },
  /** The body holds a "__proto__" key, or a "constructor" object with a "prototype" key; such bodies are refused (prototype pollution). */
  PROTOTYPE_KEY: { code: 'e-117', status: 400 },
  /** The body nests objects and arrays more than 32 levels deep; no call of this API needs more than a few. */
  BODY_TOO_DEEP: { code: 'e-118', status: 400 },
  /** The request did not arrive whole within REQUEST_TIMEOUT_MS; the connection is closed. */
  REQUEST_TIMEOUT: { code: 'e-119', status: 408 },
  /** The request headers are larger than the server takes; the connection is closed. */
  HEADERS_TOO_LARGE: { code: 'e-120', status: 431 },
  /** A header that names the caller or the request (Authorization, x-api-key, Idempotency-Key, Last-Event-ID, If-Match, Content-Type) is sent more than once: a proxy reading the other one would disagree about the request. */
  DUPLICATE_HEADER: { code: 'e-121', status: 400 },
  /** The body is not valid UTF-8. */
  BODY_NOT_UTF8: { code: 'e-122', status: 400 },
  /** The Content-Type names a charset other than UTF-8; JSON bodies are UTF-8 only (RFC 8259). */
  BODY_CHARSET: { code: 'e-123', status: 400 },
  /** A string of the request (in its body, path or query) holds a character no store keeps as sent: NUL (U+0000), or a lone UTF-16 surrogate. field names where. */
  STRING_NOT_STORABLE: { code: 'e-125', status: 400 },
  /** Last-Event-ID names an event after your last one. Event ids count your own order events (1, 2, 3, ...); an id kept from before they did (a global id) is larger: reconnect without Last-Event-ID once, and read the order book for the state. */
  EVENT_ID_AHEAD: { code: 'e-124', status: 400 },
  /** The Authorization header with a Bearer access token is missing. */
  TOKEN_MISSING: { code: 'e-201', status: 401 },
  /** The access token is not known. */
  TOKEN_INVALID: { code: 'e-202', status: 401 },
  /** The access token has expired; log in again. */
  TOKEN_EXPIRED: { code: 'e-203', status: 401 },
  /** The access token was revoked (a logout, or the operator ended the user's sessions or disabled the user); log in again. */
  TOKEN_REVOKED: { code: 'e-204', status: 401 },
  /** The x-api-key header is missing. */
  API_KEY_MISSING: { code: 'e-205', status: 401 },
  /** The API key is not known or was revoked. */
  API_KEY_INVALID: { code: 'e-206', status: 401 },
  /** The API key belongs to another user than the access token. */
  API_KEY_OTHER_USER: { code: 'e-207', status: 403 },
  /** Unknown user id or wrong password. */
  LOGIN_FAILED: { code: 'e-208', status: 401 },
  /** The user is enrolled in TOTP and second_auth carries no code. */
  SECOND_FACTOR_REQUIRED: { code: 'e-209', status: 401 },
  /** The TOTP code in second_auth is wrong or expired. */
  SECOND_FACTOR_INVALID: { code: 'e-210', status: 401 },
  /** The api_key sent at login is not an active key of this user. */
  LOGIN_API_KEY_INVALID: { code: 'e-211', status: 401 },
  /** The user is disabled by the operator; no login is accepted. */
  USER_DISABLED: { code: 'e-212', status: 403 },
  /** This server takes a login only with an active api_key of the user (LOGIN_REQUIRES_API_KEY). */
  LOGIN_API_KEY_REQUIRED: { code: 'e-213', status: 401 },
  /** This call is for operators: the caller's user is not an operator. */
  OPERATOR_REQUIRED: { code: 'e-214', status: 403 },
  /** The API key is sent from an IP address it is not registered for (SEBI's static IP rule), or has no registered address while the server requires one (STATIC_IP_REQUIRED). */
  API_KEY_ADDRESS: { code: 'e-215', status: 403 },
  /** This server takes a login only with a second factor (LOGIN_SECOND_FACTOR_REQUIRED) and the user is not enrolled in TOTP; the operator enrols the user or exempts it. */
  SECOND_FACTOR_NOT_ENROLLED: { code: 'e-216', status: 403 },
  /** The user's second factor is locked after LOGIN_SECOND_FACTOR_LOCKOUT_AFTER wrong TOTP codes in a row, whatever the address or API key; the operator unlocks it (`ordergate users totp-unlock`). */
  SECOND_FACTOR_LOCKED: { code: 'e-217', status: 403 },
  /** OFS bids are BUY only: transaction_type must be BUY. */
  OFS_TRANSACTION_TYPE: { code: 'e-301', status: 400 },
  /** product_type must be OFS on this endpoint. */
  OFS_PRODUCT_TYPE: { code: 'e-302', status: 400 },
  /** order_type must be RL (limit) or RL-MKT (cut-off). */
  OFS_ORDER_TYPE: { code: 'e-303', status: 400 },
  /** RL needs a price above 0; RL-MKT (cut-off) needs price 0. */
  OFS_PRICE_ORDER_TYPE: { code: 'e-304', status: 400 },
  /** quantity must be a string of digits holding a whole number from 1 to 999999999999999. */
  OFS_QUANTITY: { code: 'e-305', status: 400 },
  /** price must be a number between 0 and 1,000,000,000. */
  OFS_PRICE: { code: 'e-306', status: 400 },
  /** trigger_price must be absent or null for OFS bids. */
  OFS_TRIGGER_PRICE: { code: 'e-307', status: 400 },
  /** validity must be absent or empty, and validity_days absent, null or 0. */
  OFS_VALIDITY: { code: 'e-308', status: 400 },
  /** is_amo must be absent or false for OFS bids. */
  OFS_AMO: { code: 'e-309', status: 400 },
  /** expiry_date, strike_price and option_type must be absent or empty. */
  OFS_DERIVATIVE_FIELDS: { code: 'e-310', status: 400 },
  /** disclosed_quantity must be between 0 and quantity. */
  OFS_DISCLOSED_QUANTITY: { code: 'e-311', status: 400 },
  /** quantity exceeds freeze_quantity. */
  OFS_FREEZE_QUANTITY: { code: 'e-312', status: 400 },
  /** order_identifier has at most 10 characters and no control characters. */
  OFS_ORDER_IDENTIFIER: { code: 'e-313', status: 400 },
  /** exchange must be NSE_EQ or BSE_EQ. */
  OFS_EXCHANGE: { code: 'e-314', status: 400 },
  /** client_id must be empty or the caller's own user id. */
  OFS_CLIENT_ID: { code: 'e-315', status: 403 },
  /** The instrument is not a registered OFS issue. */
  OFS_ISSUE_NOT_FOUND: { code: 'e-351', status: 422 },
  /** symbol or series does not match the registered OFS issue. */
  OFS_SCRIP_MISMATCH: { code: 'e-352', status: 422 },
  /** price is not a multiple of the issue's tick size. */
  OFS_PRICE_TICK: { code: 'e-353', status: 422 },
  /** The bidding window of the caller's category (retail or non-retail) has not opened yet. */
  OFS_WINDOW_NOT_OPEN: { code: 'e-354', status: 422 },
  /** The bidding window of the caller's category (retail or non-retail) has closed. */
  OFS_WINDOW_CLOSED: { code: 'e-355', status: 422 },
  /** price is below the issue's floor price. */
  OFS_BELOW_FLOOR: { code: 'e-356', status: 422 },
  /** Only retail users may bid at the cut-off price (RL-MKT, price 0). */
  OFS_CUTOFF_NOT_RETAIL: { code: 'e-357', status: 422 },
  /** Cut-off bids are taken only once the issue's retail cut-off price is set. */
  OFS_CUTOFF_PRICE_UNKNOWN: { code: 'e-358', status: 422 },
  /** A retail price bid may not be below the issue's retail cut-off price. */
  OFS_BELOW_RETAIL_CUTOFF: { code: 'e-359', status: 422 },
  /** The live retail bids under the caller's PAN (its own and its other accounts') in this OFS, across exchanges, would total more than Rs 2,00,000. */
  OFS_RETAIL_LIMIT: { code: 'e-360', status: 422 },
  /** No registered OFS issue has this exchange and scrip token. */
  OFS_ISSUE_UNKNOWN: { code: 'e-361', status: 404 },
  /** The bid's series is not the series of the caller's category on this listing (NSE: RS retail, IS non-retail, ES employees). */
  OFS_SERIES_CATEGORY: { code: 'e-362', status: 422 },
  /** An employee bid (the listing's employee series) from a user the operator has not registered as an eligible employee of the offer. */
  OFS_EMPLOYEE_NOT_ELIGIBLE: { code: 'e-363', status: 422 },
  /** Employee bids are cut-off bids only: order_type RL-MKT with price 0, valued at the T-day cut-off price. */
  OFS_EMPLOYEE_CUTOFF_ONLY: { code: 'e-364', status: 422 },
  /** The caller's employee bids in the offer, valued at the T-day cut-off price, would total more than Rs 5,00,000. */
  OFS_EMPLOYEE_LIMIT: { code: 'e-365', status: 422 },
  /** Fresh non-retail bids are taken on T only; on T+1 a non-retail bidder may only carry forward and revise its unallotted bid. */
  OFS_NON_RETAIL_ON_T1: { code: 'e-366', status: 422 },
  /** The offer was cancelled by the operator (non-retail demand fell short): it takes no bids, modifications or cancellations. */
  OFS_OFFER_CANCELLED: { code: 'e-367', status: 409 },
  /** No OFS offer has this offer_id. */
  OFS_OFFER_NOT_FOUND: { code: 'e-368', status: 404 },
  /** No order with this id and exchange belongs to the caller. */
  ORDER_NOT_FOUND: { code: 'e-371', status: 404 },
  /** The order is finished (executed, cancelled or rejected): it can no longer be modified or cancelled. */
  ORDER_NOT_LIVE: { code: 'e-372', status: 409 },
  /** A cancellation of the order is already under way: it can no longer be modified or cancelled. */
  ORDER_CANCEL_PENDING: { code: 'e-373', status: 409 },
  /** traded_quantity differs from the order's current traded quantity: read the order again. */
  ORDER_TRADED_QUANTITY_STALE: { code: 'e-374', status: 409 },
  /** exchange or order_id in a modify body differs from the path; send the path's values or leave them out. */
  ORDER_PATH_MISMATCH: { code: 'e-375', status: 400 },
  /** A 0 %-margin (settlement type T) bid may only be revised upward: neither its price nor its quantity may fall. */
  OFS_MARGIN_T_UPWARD_ONLY: { code: 'e-376', status: 422 },
  /** A 0 %-margin (settlement type T) bid may not be cancelled. */
  OFS_MARGIN_T_NO_CANCEL: { code: 'e-377', status: 422 },
  /** Only a live non-retail bid with an unallotted quantity may be carried forward, and only during T+1 once the T allocation has run; a bid already carried forward is revised by a modification, not a second carry-forward with other terms. */
  OFS_CARRY_FORWARD_NOT_ALLOWED: { code: 'e-378', status: 409 },
  /** On T+1 a non-retail bid may be modified or cancelled only once it is carried forward (POST .../carry_forward). */
  OFS_NOT_CARRIED_FORWARD: { code: 'e-379', status: 409 },
  /** A carried-forward bid stands at or above the T-day cut-off price: a bid below it is carried forward only with a revised price of at least the cut-off (the message names it), and never revised below it. */
  OFS_BELOW_T_CUTOFF: { code: 'e-380', status: 422 },
  /** A bid is for at most the shares the offer sells (base, green shoe and employee portion together) or, in a one-listing issue, its offer quantity. */
  OFS_QUANTITY_OVER_OFFER: { code: 'e-382', status: 422 },
  /** A bid's value (quantity times price; a cut-off bid at the cut-off price) is at most the series' order value upper limit, as the exchange sets it for the offer or issue (orderValueUpperLimit). */
  OFS_ORDER_VALUE_LIMIT: { code: 'e-383', status: 422 },
  /** A client's live 0 %-margin bids, valued at their prices, total at most the limit the operator sets with the custodian arrangement (none set: no 0 %-margin bid is taken). */
  OFS_ZERO_MARGIN_LIMIT: { code: 'e-384', status: 422 },
  /** The client lacks member data the exchange needs for the bid (its UCC and PAN, and for an MF, IC or OTHS bid or a 0 %-margin bid its custodian code): the broker records it (ordergate users set-member); the fields are listed. */
  MEMBER_DATA_MISSING: { code: 'e-385', status: 422 },
  /** A partly allotted bid's quantity (allotted plus carried forward) must stay above what it was allotted on T. */
  OFS_QUANTITY_BELOW_ALLOTTED: { code: 'e-369', status: 422 },
  /** The positions type must be all, daily or expiry. */
  POSITION_TYPE: { code: 'e-381', status: 400 },
  /** orders is not a string holding valid JSON. */
  CART_ORDERS_NOT_JSON: { code: 'e-401', status: 400 },
  /** orders must hold a JSON array of 1 to 50 order objects. */
  CART_ORDERS_NOT_ARRAY: { code: 'e-402', status: 400 },
  /** An order line of the cart breaks the order schema; field names the line. */
  CART_LINE_INVALID: { code: 'e-403', status: 400 },
  /** version must be "1", the only ordercart schema version. */
  CART_VERSION: { code: 'e-404', status: 400 },
  /** No order cart with this id belongs to the caller. */
  CART_NOT_FOUND: { code: 'e-405', status: 404 },
  /** createdBy and modifiedBy must be the caller's user id. */
  CART_USER_MISMATCH: { code: 'e-406', status: 403 },
  /** createdBy is not the creator of this cart. */
  CART_CREATOR_MISMATCH: { code: 'e-407', status: 403 },
  /** executedNoTime differs from the stored count: the cart was executed since it was read. */
  CART_EXECUTED_STALE: { code: 'e-408', status: 409 },
  /** executedNoTime must be 0 when a cart is created. */
  CART_EXECUTED_ON_CREATE: { code: 'e-409', status: 400 },
  /** If-Match does not match the cart's current ETag. */
  CART_PRECONDITION_FAILED: { code: 'e-410', status: 412 },
  /** ordercartName must hold 1 to 100 characters, not all of them white space, none of them a control character. */
  CART_NAME: { code: 'e-411', status: 400 },
  /** No line of the cart could be placed; errors names the faults of each line as orders[i].Field. */
  CART_NOTHING_PLACED: { code: 'e-412', status: 422 },
  /** The line's ProductType cannot be routed yet: this OMS places OFS bids only (a failed line of an execution). */
  CART_PRODUCT_NOT_ROUTABLE: { code: 'e-413', status: 422 },
  /** No registered OFS issue has the line's exchange, symbol and series (a failed line of an execution). */
  CART_LINE_ISSUE_NOT_FOUND: { code: 'e-414', status: 422 },
  /** Several registered OFS issues have the line's exchange, symbol and series; scripDetail.scripToken must name one (a failed line of an execution). */
  CART_LINE_ISSUE_AMBIGUOUS: { code: 'e-415', status: 422 },
  /** scripDetail.scripToken is not the scrip_token of the OFS issue the line names (a failed line of an execution). */
  CART_LINE_SCRIP_TOKEN_MISMATCH: { code: 'e-416', status: 422 },
  /** The caller already keeps MAX_CARTS_PER_USER order carts; delete one first. */
  CART_LIMIT: { code: 'e-417', status: 422 },
  /** algo_id is neither the exchange's generic algo ID nor an algo ID registered for the caller on the order's exchange (ordergate algos register). */
  ALGO_ID_UNKNOWN: { code: 'e-601', status: 422 },
  /** The order's algo ID is stopped by the kill switch (ordergate algos disable): its orders are refused and its live orders cancelled until it is enabled again. */
  ALGO_DISABLED: { code: 'e-602', status: 422 },
  /** Past the threshold of orders a second in one exchange segment (ALGO_THRESHOLD_ORDERS_PER_SECOND, SEBI's 10), only orders with a registered algo ID are taken: this one is refused, not queued. */
  ALGO_THRESHOLD: { code: 'e-603', status: 429 },
  /** Too many requests; retry after Retry-After seconds. */
  RATE_LIMITED: { code: 'e-429', status: 429 },
  /** An unexpected error; the request id identifies it in the logs. */
  INTERNAL: { code: 'e-501', status: 500 },
  /** The service cannot take the call now (its database is unreachable, it is shutting down, or it sheds load); retry after Retry-After seconds. */
  UNAVAILABLE: { code: 'e-503', status: 503 },
} as const;

export type ErrorName = keyof typeof ERROR_CATALOG;

/** A stable `e-NNN` code of the catalog: a client may branch on it. */
export type ErrorCode = (typeof ERROR_CATALOG)[ErrorName]['code'];
