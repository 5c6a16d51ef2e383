/**
 * The one catalog of error codes. Every failure the API can answer is listed here with its HTTP status;
 * the docs (docs/errors.md) and the OpenAPI document are generated from this table, and the codes are a
 * stable contract: never renumber, only add.
 */
export interface ErrorKind {
  readonly code: string;
  readonly status: number;
  /** What the code means, for the error catalog. */
  readonly title: string;
}

function kind(code: string, status: number, title: string): ErrorKind {
  return { code, status, title };
}

export const Errors = {
  // 1xx: the request itself (wire format, routing, generic schema failures)
  MALFORMED_JSON: kind('e-101', 400, 'The body is not valid JSON.'),
  BODY_REQUIRED: kind('e-102', 400, 'The call needs a JSON object body and none was sent.'),
  FIELD_REQUIRED: kind('e-103', 400, 'A required field is missing.'),
  WRONG_TYPE: kind('e-104', 400, 'A field has the wrong JSON type; nothing is coerced.'),
  UNKNOWN_FIELD: kind('e-105', 400, 'The body carries a field the contract does not define.'),
  INVALID_VALUE: kind('e-106', 400, 'A field has a value outside its allowed set or range.'),
  BODY_TOO_LARGE: kind('e-107', 413, 'The body exceeds the 64 KiB limit.'),
  UNSUPPORTED_MEDIA_TYPE: kind('e-108', 415, 'The body is not sent as application/json.'),
  ROUTE_NOT_FOUND: kind('e-109', 404, 'No endpoint has this method and path.'),
  INVALID_QUERY: kind('e-110', 400, 'A query-string parameter is missing or invalid.'),
  INVALID_HEADER: kind('e-111', 400, 'A request header has an invalid value.'),
  BAD_REQUEST: kind('e-112', 400, 'The request is malformed (for example a bad URL encoding).'),
  METHOD_NOT_ALLOWED: kind('e-113', 405, 'The path exists but does not accept this method; see the Allow header.'),
  IDEMPOTENCY_KEY_INVALID: kind(
    'e-114',
    400,
    'The Idempotency-Key header must hold 1 to 255 printable ASCII characters.',
  ),
  IDEMPOTENCY_KEY_REUSED: kind(
    'e-115',
    422,
    'This Idempotency-Key was used within the last 24 hours for another request (another body, method or path).',
  ),
  IDEMPOTENCY_KEY_RUNNING: kind(
    'e-116',
    409,
    'A request with this Idempotency-Key is still running; retry after Retry-After seconds.',
  ),
  PROTOTYPE_KEY: kind(
    'e-117',
    400,
    'The body holds a "__proto__" key, or a "constructor" object with a "prototype" key; such bodies are refused (prototype pollution).',
  ),
  BODY_TOO_DEEP: kind(
    'e-118',
    400,
    'The body nests objects and arrays more than 32 levels deep; no call of this API needs more than a few.',
  ),
  REQUEST_TIMEOUT: kind(
    'e-119',
    408,
    'The request did not arrive whole within REQUEST_TIMEOUT_MS; the connection is closed.',
  ),
  HEADERS_TOO_LARGE: kind(
    'e-120',
    431,
    'The request headers are larger than the server takes; the connection is closed.',
  ),
  DUPLICATE_HEADER: kind(
    'e-121',
    400,
    'A header that names the caller or the request (Authorization, x-api-key, Idempotency-Key, Last-Event-ID, If-Match, Content-Type) is sent more than once: a proxy reading the other one would disagree about the request.',
  ),
  BODY_NOT_UTF8: kind('e-122', 400, 'The body is not valid UTF-8.'),
  BODY_CHARSET: kind(
    'e-123',
    400,
    'The Content-Type names a charset other than UTF-8; JSON bodies are UTF-8 only (RFC 8259).',
  ),
  STRING_NOT_STORABLE: kind(
    'e-125',
    400,
    'A string of the request (in its body, path or query) holds a character no store keeps as sent: NUL (U+0000), or a lone UTF-16 surrogate. field names where.',
  ),
  EVENT_ID_AHEAD: kind(
    'e-124',
    400,
    'Last-Event-ID names an event after your last one. Event ids count your own order events (1, 2, 3, ...); an id kept from before they did (a global id) is larger: reconnect without Last-Event-ID once, and read the order book for the state.',
  ),

  // 2xx: authentication and authorization
  TOKEN_MISSING: kind('e-201', 401, 'The Authorization header with a Bearer access token is missing.'),
  TOKEN_INVALID: kind('e-202', 401, 'The access token is not known.'),
  TOKEN_EXPIRED: kind('e-203', 401, 'The access token has expired; log in again.'),
  TOKEN_REVOKED: kind(
    'e-204',
    401,
    "The access token was revoked (a logout, or the operator ended the user's sessions or disabled the user); log in again.",
  ),
  API_KEY_MISSING: kind('e-205', 401, 'The x-api-key header is missing.'),
  API_KEY_INVALID: kind('e-206', 401, 'The API key is not known or was revoked.'),
  API_KEY_OTHER_USER: kind('e-207', 403, 'The API key belongs to another user than the access token.'),
  LOGIN_FAILED: kind('e-208', 401, 'Unknown user id or wrong password.'),
  SECOND_FACTOR_REQUIRED: kind('e-209', 401, 'The user is enrolled in TOTP and second_auth carries no code.'),
  SECOND_FACTOR_INVALID: kind('e-210', 401, 'The TOTP code in second_auth is wrong or expired.'),
  LOGIN_API_KEY_INVALID: kind('e-211', 401, 'The api_key sent at login is not an active key of this user.'),
  USER_DISABLED: kind('e-212', 403, 'The user is disabled by the operator; no login is accepted.'),
  LOGIN_API_KEY_REQUIRED: kind(
    'e-213',
    401,
    'This server takes a login only with an active api_key of the user (LOGIN_REQUIRES_API_KEY).',
  ),
  OPERATOR_REQUIRED: kind('e-214', 403, "This call is for operators: the caller's user is not an operator."),
  API_KEY_ADDRESS: kind(
    'e-215',
    403,
    "The API key is sent from an IP address it is not registered for (SEBI's static IP rule), or has no registered address while the server requires one (STATIC_IP_REQUIRED).",
  ),
  SECOND_FACTOR_NOT_ENROLLED: kind(
    'e-216',
    403,
    'This server takes a login only with a second factor (LOGIN_SECOND_FACTOR_REQUIRED) and the user is not enrolled in TOTP; the operator enrols the user or exempts it.',
  ),
  SECOND_FACTOR_LOCKED: kind(
    'e-217',
    403,
    "The user's second factor is locked after LOGIN_SECOND_FACTOR_LOCKOUT_AFTER wrong TOTP codes in a row, whatever the address or API key; the operator unlocks it (`ordergate users totp-unlock`).",
  ),

  // 3xx: OFS orders, request-alone rules (400) then rules against stored data (403/404/409/422)
  OFS_TRANSACTION_TYPE: kind('e-301', 400, 'OFS bids are BUY only: transaction_type must be BUY.'),
  OFS_PRODUCT_TYPE: kind('e-302', 400, 'product_type must be OFS on this endpoint.'),
  OFS_ORDER_TYPE: kind('e-303', 400, 'order_type must be RL (limit) or RL-MKT (cut-off).'),
  OFS_PRICE_ORDER_TYPE: kind('e-304', 400, 'RL needs a price above 0; RL-MKT (cut-off) needs price 0.'),
  OFS_QUANTITY: kind(
    'e-305',
    400,
    'quantity must be a string of digits holding a whole number from 1 to 999999999999999.',
  ),
  OFS_PRICE: kind('e-306', 400, 'price must be a number between 0 and 1,000,000,000.'),
  OFS_TRIGGER_PRICE: kind('e-307', 400, 'trigger_price must be absent or null for OFS bids.'),
  OFS_VALIDITY: kind('e-308', 400, 'validity must be absent or empty, and validity_days absent, null or 0.'),
  OFS_AMO: kind('e-309', 400, 'is_amo must be absent or false for OFS bids.'),
  OFS_DERIVATIVE_FIELDS: kind('e-310', 400, 'expiry_date, strike_price and option_type must be absent or empty.'),
  OFS_DISCLOSED_QUANTITY: kind('e-311', 400, 'disclosed_quantity must be between 0 and quantity.'),
  OFS_FREEZE_QUANTITY: kind('e-312', 400, 'quantity exceeds freeze_quantity.'),
  OFS_ORDER_IDENTIFIER: kind('e-313', 400, 'order_identifier has at most 10 characters and no control characters.'),
  OFS_EXCHANGE: kind('e-314', 400, 'exchange must be NSE_EQ or BSE_EQ.'),
  OFS_CLIENT_ID: kind('e-315', 403, "client_id must be empty or the caller's own user id."),
  OFS_ISSUE_NOT_FOUND: kind('e-351', 422, 'The instrument is not a registered OFS issue.'),
  OFS_SCRIP_MISMATCH: kind('e-352', 422, 'symbol or series does not match the registered OFS issue.'),
  OFS_PRICE_TICK: kind('e-353', 422, "price is not a multiple of the issue's tick size."),
  OFS_WINDOW_NOT_OPEN: kind(
    'e-354',
    422,
    "The bidding window of the caller's category (retail or non-retail) has not opened yet.",
  ),
  OFS_WINDOW_CLOSED: kind(
    'e-355',
    422,
    "The bidding window of the caller's category (retail or non-retail) has closed.",
  ),
  OFS_BELOW_FLOOR: kind('e-356', 422, "price is below the issue's floor price."),
  OFS_CUTOFF_NOT_RETAIL: kind('e-357', 422, 'Only retail users may bid at the cut-off price (RL-MKT, price 0).'),
  OFS_CUTOFF_PRICE_UNKNOWN: kind(
    'e-358',
    422,
    "Cut-off bids are taken only once the issue's retail cut-off price is set.",
  ),
  OFS_BELOW_RETAIL_CUTOFF: kind('e-359', 422, "A retail price bid may not be below the issue's retail cut-off price."),
  OFS_RETAIL_LIMIT: kind(
    'e-360',
    422,
    "The live retail bids under the caller's PAN (its own and its other accounts') in this OFS, across exchanges, would total more than Rs 2,00,000.",
  ),
  OFS_ISSUE_UNKNOWN: kind('e-361', 404, 'No registered OFS issue has this exchange and scrip token.'),
  // The offer framework (shared/spec/ofs-framework.md, docs/design/ofs.md): categories, days, carry-forward.
  OFS_SERIES_CATEGORY: kind(
    'e-362',
    422,
    "The bid's series is not the series of the caller's category on this listing (NSE: RS retail, IS non-retail, ES employees).",
  ),
  OFS_EMPLOYEE_NOT_ELIGIBLE: kind(
    'e-363',
    422,
    "An employee bid (the listing's employee series) from a user the operator has not registered as an eligible employee of the offer.",
  ),
  OFS_EMPLOYEE_CUTOFF_ONLY: kind(
    'e-364',
    422,
    'Employee bids are cut-off bids only: order_type RL-MKT with price 0, valued at the T-day cut-off price.',
  ),
  OFS_EMPLOYEE_LIMIT: kind(
    'e-365',
    422,
    "The caller's employee bids in the offer, valued at the T-day cut-off price, would total more than Rs 5,00,000.",
  ),
  OFS_NON_RETAIL_ON_T1: kind(
    'e-366',
    422,
    'Fresh non-retail bids are taken on T only; on T+1 a non-retail bidder may only carry forward and revise its unallotted bid.',
  ),
  OFS_OFFER_CANCELLED: kind(
    'e-367',
    409,
    'The offer was cancelled by the operator (non-retail demand fell short): it takes no bids, modifications or cancellations.',
  ),
  OFS_OFFER_NOT_FOUND: kind('e-368', 404, 'No OFS offer has this offer_id.'),
  ORDER_NOT_FOUND: kind('e-371', 404, 'No order with this id and exchange belongs to the caller.'),
  ORDER_NOT_LIVE: kind(
    'e-372',
    409,
    'The order is finished (executed, cancelled or rejected): it can no longer be modified or cancelled.',
  ),
  ORDER_CANCEL_PENDING: kind(
    'e-373',
    409,
    'A cancellation of the order is already under way: it can no longer be modified or cancelled.',
  ),
  ORDER_TRADED_QUANTITY_STALE: kind(
    'e-374',
    409,
    "traded_quantity differs from the order's current traded quantity: read the order again.",
  ),
  ORDER_PATH_MISMATCH: kind(
    'e-375',
    400,
    "exchange or order_id in a modify body differs from the path; send the path's values or leave them out.",
  ),
  OFS_MARGIN_T_UPWARD_ONLY: kind(
    'e-376',
    422,
    'A 0 %-margin (settlement type T) bid may only be revised upward: neither its price nor its quantity may fall.',
  ),
  OFS_MARGIN_T_NO_CANCEL: kind('e-377', 422, 'A 0 %-margin (settlement type T) bid may not be cancelled.'),
  OFS_CARRY_FORWARD_NOT_ALLOWED: kind(
    'e-378',
    409,
    'Only a live non-retail bid with an unallotted quantity may be carried forward, and only during T+1 once the T allocation has run; a bid already carried forward is revised by a modification, not a second carry-forward with other terms.',
  ),
  OFS_NOT_CARRIED_FORWARD: kind(
    'e-379',
    409,
    'On T+1 a non-retail bid may be modified or cancelled only once it is carried forward (POST .../carry_forward).',
  ),
  OFS_BELOW_T_CUTOFF: kind(
    'e-380',
    422,
    'A carried-forward bid stands at or above the T-day cut-off price: a bid below it is carried forward only with a revised price of at least the cut-off (the message names it), and never revised below it.',
  ),
  OFS_QUANTITY_OVER_OFFER: kind(
    'e-382',
    422,
    'A bid is for at most the shares the offer sells (base, green shoe and employee portion together) or, in a one-listing issue, its offer quantity.',
  ),
  OFS_ORDER_VALUE_LIMIT: kind(
    'e-383',
    422,
    "A bid's value (quantity times price; a cut-off bid at the cut-off price) is at most the series' order value upper limit, as the exchange sets it for the offer or issue (orderValueUpperLimit).",
  ),
  OFS_ZERO_MARGIN_LIMIT: kind(
    'e-384',
    422,
    "A client's live 0 %-margin bids, valued at their prices, total at most the limit the operator sets with the custodian arrangement (none set: no 0 %-margin bid is taken).",
  ),
  MEMBER_DATA_MISSING: kind(
    'e-385',
    422,
    'The client lacks member data the exchange needs for the bid (its UCC and PAN, and for an MF, IC or OTHS bid or a 0 %-margin bid its custodian code): the broker records it (ordergate users set-member); the fields are listed.',
  ),
  OFS_QUANTITY_BELOW_ALLOTTED: kind(
    'e-369',
    422,
    "A partly allotted bid's quantity (allotted plus carried forward) must stay above what it was allotted on T.",
  ),

  // 4xx: trades and the portfolio
  POSITION_TYPE: kind('e-381', 400, 'The positions type must be all, daily or expiry.'),

  // 4xx: order carts
  CART_ORDERS_NOT_JSON: kind('e-401', 400, 'orders is not a string holding valid JSON.'),
  CART_ORDERS_NOT_ARRAY: kind('e-402', 400, 'orders must hold a JSON array of 1 to 50 order objects.'),
  CART_LINE_INVALID: kind('e-403', 400, 'An order line of the cart breaks the order schema; field names the line.'),
  CART_VERSION: kind('e-404', 400, 'version must be "1", the only ordercart schema version.'),
  CART_NOT_FOUND: kind('e-405', 404, 'No order cart with this id belongs to the caller.'),
  CART_USER_MISMATCH: kind('e-406', 403, "createdBy and modifiedBy must be the caller's user id."),
  CART_CREATOR_MISMATCH: kind('e-407', 403, 'createdBy is not the creator of this cart.'),
  CART_EXECUTED_STALE: kind(
    'e-408',
    409,
    'executedNoTime differs from the stored count: the cart was executed since it was read.',
  ),
  CART_EXECUTED_ON_CREATE: kind('e-409', 400, 'executedNoTime must be 0 when a cart is created.'),
  CART_PRECONDITION_FAILED: kind('e-410', 412, "If-Match does not match the cart's current ETag."),
  CART_NAME: kind(
    'e-411',
    400,
    'ordercartName must hold 1 to 100 characters, not all of them white space, none of them a control character.',
  ),
  CART_NOTHING_PLACED: kind(
    'e-412',
    422,
    'No line of the cart could be placed; errors names the faults of each line as orders[i].Field.',
  ),
  CART_PRODUCT_NOT_ROUTABLE: kind(
    'e-413',
    422,
    "The line's ProductType cannot be routed yet: this OMS places OFS bids only (a failed line of an execution).",
  ),
  CART_LINE_ISSUE_NOT_FOUND: kind(
    'e-414',
    422,
    "No registered OFS issue has the line's exchange, symbol and series (a failed line of an execution).",
  ),
  CART_LINE_ISSUE_AMBIGUOUS: kind(
    'e-415',
    422,
    "Several registered OFS issues have the line's exchange, symbol and series; scripDetail.scripToken must name one (a failed line of an execution).",
  ),
  CART_LINE_SCRIP_TOKEN_MISMATCH: kind(
    'e-416',
    422,
    'scripDetail.scripToken is not the scrip_token of the OFS issue the line names (a failed line of an execution).',
  ),
  CART_LIMIT: kind('e-417', 422, 'The caller already keeps MAX_CARTS_PER_USER order carts; delete one first.'),

  // 6xx: SEBI's rules for API and algo orders (docs/design/sebi-algo.md)
  ALGO_ID_UNKNOWN: kind(
    'e-601',
    422,
    "algo_id is neither the exchange's generic algo ID nor an algo ID registered for the caller on the order's exchange (ordergate algos register).",
  ),
  ALGO_DISABLED: kind(
    'e-602',
    422,
    "The order's algo ID is stopped by the kill switch (ordergate algos disable): its orders are refused and its live orders cancelled until it is enabled again.",
  ),
  ALGO_THRESHOLD: kind(
    'e-603',
    429,
    "Past the threshold of orders a second in one exchange segment (ALGO_THRESHOLD_ORDERS_PER_SECOND, SEBI's 10), only orders with a registered algo ID are taken: this one is refused, not queued.",
  ),

  // 429: call limits, a client error. Unlike the others its code is named after its HTTP status (codes are
  // never renumbered).
  RATE_LIMITED: kind('e-429', 429, 'Too many requests; retry after Retry-After seconds.'),

  // 5xx: the service
  INTERNAL: kind('e-501', 500, 'An unexpected error; the request id identifies it in the logs.'),
  UNAVAILABLE: kind(
    'e-503',
    503,
    'The service cannot take the call now (its database is unreachable, it is shutting down, or it sheds load); retry after Retry-After seconds.',
  ),
} as const satisfies Record<string, ErrorKind>;

export type ErrorName = keyof typeof Errors;

/** One field-level cause, as carried in the envelope's `errors` array. */
export interface FieldError {
  field: string;
  message: string;
}

/** A rule broken by the request, found by a pure domain function: the route turns it into an ApiError. */
export interface Violation extends FieldError {
  kind: ErrorKind;
}

/** The one error type that reaches the client: a catalog entry, a message and the field-level causes. */
export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly errors: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    kind: ErrorKind,
    message: string = kind.title,
    errors: FieldError[] = [],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.errors = errors;
    this.headers = headers;
  }

  /** Throws the ApiError of these violations, if there are any. */
  static throwIfAny(violations: readonly Violation[]): void {
    if (violations.length > 0) throw ApiError.fromViolations(violations);
  }

  /** The first violation names the code and message; all of them are listed. */
  static fromViolations(violations: readonly Violation[]): ApiError {
    const first = violations[0];
    if (first === undefined) throw new RangeError('fromViolations needs at least one violation');
    return new ApiError(
      first.kind,
      first.message,
      violations.map(({ field, message }) => ({ field, message })),
    );
  }
}

/**
 * The database cannot be used right now (a lost or refused connection, a server starting up or in
 * recovery, a locked or full SQLite file): the one error the store lets out for it (src/store/sql/unavailable.ts
 * makes it from the driver's error, its cause). Every layer asks `instanceof` and never reads a driver's
 * codes; the HTTP error handler answers it 503 e-503 with Retry-After. Here, below every layer, so that
 * each may ask without importing the store.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';

  constructor(cause: unknown) {
    super(`the database cannot be used now: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * An operator's command refused (the CLI, docs/operations.md): its message says why, in the operator's
 * words (a user that does not exist, an import file's problem with its entry and field). The CLI prints it
 * on one line and exits 1; nothing is changed.
 */
export class AdminError extends Error {
  override name = 'AdminError';
}
