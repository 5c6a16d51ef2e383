/** Wire shapes of /transactional/v1/orders: the bid (seed 2.1 to 2.3), its modification, the order book and history (ODIN). */
import Type, { type Static } from 'typebox';
import { Errors, type ErrorKind } from '../domain/errors.js';
import { PagedEnvelope, SuccessEnvelope, withCode } from './common.js';
import { Count, OdinTime, PAGE_QUERY_FIELDS, PageMetadata, PriceText, Text } from './odin-fields.js';
import { ORDER_STATUS_CODES } from '../domain/orders/odin.js';
import { OrderStatus } from '../domain/orders/status.js';
import { BIDDER_CATEGORIES } from '../domain/ofs/rules.js';
import { OFS_ORDER_TYPES, OFS_PRODUCT_TYPE, OFS_TRANSACTION_TYPE } from '../domain/ofs/bid.js';
import { OFS_EXCHANGES } from '../domain/ofs/issue/issue.js';

/**
 * A closed set of strings. The explicit string type makes a number or a boolean answer the wrong-type code
 * (e-104), as on every other field, before the set's own code.
 */
const StringEnum = <const Values extends string[]>(values: readonly [...Values], description: string) =>
  Type.Enum(values, { type: 'string', description });

const EMPTY = (field: string) =>
  withCode(
    Errors.OFS_DERIVATIVE_FIELDS,
    Type.String({ maxLength: 0, description: `Leave empty for OFS instruments (${field}).` }),
  );

export const ScripInfo = Type.Object(
  {
    exchange: withCode(Errors.OFS_EXCHANGE, StringEnum(OFS_EXCHANGES, 'Exchange segment of the OFS instrument.')),
    scrip_token: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Exchange token of the instrument.' }),
    symbol: Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'Trading symbol; must match the registered issue.',
    }),
    series: Type.String({ minLength: 1, maxLength: 10, description: 'Series; must match the registered issue.' }),
    expiry_date: Type.Optional(EMPTY('expiry_date')),
    strike_price: Type.Optional(EMPTY('strike_price')),
    option_type: Type.Optional(EMPTY('option_type')),
  },
  {
    additionalProperties: false,
    description: 'The OFS instrument: exchange segment, token, symbol and series of a registered issue.',
  },
);

/** The largest quantity the API takes: 15 digits, a whole number that a JSON number holds exactly. */
export const MAX_QUANTITY = 999_999_999_999_999;

/** Field schemas shared by the bid and its modification. */
const OrderType = withCode(
  Errors.OFS_ORDER_TYPE,
  StringEnum(OFS_ORDER_TYPES, 'RL (limit, price > 0) or RL-MKT (cut-off, price 0).'),
);
// The form (pattern) and the size (maxLength, which bounds a number without leading zeros) are separate
// rules, so that a number that is merely too large is told so.
const Quantity = withCode(
  Errors.OFS_QUANTITY,
  Type.String({
    pattern: '^[1-9][0-9]*$',
    maxLength: String(MAX_QUANTITY).length,
    description: `Number of shares, as a string of digits without sign or leading zeros, from "1" to "${MAX_QUANTITY}", e.g. "10".`,
    examples: ['10'],
  }),
  { maxLength: `quantity must be at most ${MAX_QUANTITY} shares` },
);
const Price = withCode(
  Errors.OFS_PRICE,
  Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Price per unit in rupees; 0 means cut-off.' }),
);
// const rather than type null: any other value breaks the OFS rule (e-307), not a type (e-104).
const TriggerPrice = withCode(
  Errors.OFS_TRIGGER_PRICE,
  Type.Unsafe<null>({ const: null, description: 'null for OFS.' }),
);
const DisclosedQuantity = withCode(
  Errors.OFS_DISCLOSED_QUANTITY,
  Type.Integer({ minimum: 0, maximum: MAX_QUANTITY, description: 'Between 0 and quantity.' }),
);
const Validity = withCode(Errors.OFS_VALIDITY, Type.String({ maxLength: 0, description: 'Empty for OFS.' }));
const ValidityDays = withCode(
  Errors.OFS_VALIDITY,
  Type.Union([Type.Literal(0), Type.Null()], { description: '0 or null for OFS.' }),
);

/** Free-text ODIN fields that are accepted and stored. */
const OdinTag = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

/** The README's bid on the demo issue (`ordergate demo`): the API reference's example, the demo's and the tests' bid. */
export const EXAMPLE_BID = {
  scrip_info: {
    exchange: 'NSE_EQ',
    scrip_token: 500112,
    symbol: 'SBIN',
    series: 'OF',
    expiry_date: '',
    strike_price: '',
    option_type: '',
  },
  transaction_type: 'BUY',
  product_type: 'OFS',
  order_type: 'RL',
  quantity: '10',
  price: 101.5,
  trigger_price: null,
  disclosed_quantity: 0,
  validity: '',
  validity_days: 0,
  is_amo: false,
  order_identifier: 'mybid1',
} as const;

export const OfsOrderRequest = Type.Object(
  {
    scrip_info: ScripInfo,
    transaction_type: withCode(
      Errors.OFS_TRANSACTION_TYPE,
      Type.Literal(OFS_TRANSACTION_TYPE, { description: 'OFS supports BUY only.' }),
    ),
    product_type: withCode(Errors.OFS_PRODUCT_TYPE, Type.Literal(OFS_PRODUCT_TYPE, { description: 'Must be OFS.' })),
    order_type: OrderType,
    quantity: Quantity,
    price: Price,
    trigger_price: Type.Optional(TriggerPrice),
    disclosed_quantity: Type.Optional(DisclosedQuantity),
    validity: Type.Optional(Validity),
    validity_days: Type.Optional(ValidityDays),
    is_amo: Type.Optional(withCode(Errors.OFS_AMO, Type.Literal(false, { description: 'false for OFS.' }))),
    order_identifier: Type.Optional(
      withCode(
        Errors.OFS_ORDER_IDENTIFIER,
        Type.String({
          maxLength: 10,
          // No C0 or C1 control characters (Unicode Cc), and no lone surrogate, which could not be stored as
          // sent and so could not be shown back in the order book.
          pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$',
          description: 'Your own tag for the order, at most 10 characters; shown in the order book.',
        }),
      ),
    ),
    freeze_quantity: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_QUANTITY, description: 'When > 0, quantity may not exceed it.' }),
    ),
    algo_id: OdinTag(
      "The exchange's ID of the registered algo that places the order (ordergate algos register); empty or absent: the exchange's generic algo ID is stamped (ALGO_GENERIC_ID).",
    ),
    strategy_id: OdinTag('ODIN strategy id; stored.'),
    part_code: OdinTag('ODIN participant code; stored.'),
    vender_code: OdinTag('ODIN vendor code; stored.'),
    client_id: OdinTag("Empty or the caller's own user id."),
  },
  {
    additionalProperties: false,
    description: 'A BUY bid for a registered OFS issue, at a limit price (RL) or at the cut-off price (RL-MKT).',
    // The README's bid on the demo issue (`ordergate demo`): the example the API reference shows.
    examples: [EXAMPLE_BID],
  },
);
export type OfsOrderRequest = Static<typeof OfsOrderRequest>;

export const PlaceOrderResponse = SuccessEnvelope(
  Type.Object(
    { orderId: Type.String({ description: 'System-generated OFS order identifier.' }) },
    { additionalProperties: false },
  ),
  'Order Entry Sent to OMS',
);

const OrderIdData = Type.Object(
  { orderId: Type.String({ description: "The order's identifier." }) },
  { additionalProperties: false },
);

// --- modify and cancel: PUT / DELETE /transactional/v1/orders/regular/{exchange}/{order_id} (ODIN) ---------

/** A path that names no order of the caller's answers 404 e-371, as an unknown order id does. */
const PathOrderId = withCode(
  Errors.ORDER_NOT_FOUND,
  Type.String({ minLength: 1, maxLength: 100, description: 'The orderId the bid was placed with.' }),
);

export const OrderPathParams = Type.Object(
  {
    exchange: withCode(
      Errors.ORDER_NOT_FOUND,
      StringEnum(OFS_EXCHANGES, 'The exchange segment the order was placed on.'),
    ),
    order_id: PathOrderId,
  },
  { additionalProperties: false },
);

/** A whole number of shares, or the string of its digits: ODIN clients send either in a modification. */
const WholeOrDigits = (field: string, code: ErrorKind, minimum: 0 | 1, description: string) =>
  withCode(
    code,
    Type.Union(
      [
        Type.Integer({ minimum, maximum: MAX_QUANTITY }),
        Type.String({
          pattern: minimum === 1 ? '^[1-9][0-9]*$' : '^(0|[1-9][0-9]*)$',
          maxLength: String(MAX_QUANTITY).length,
        }),
      ],
      { description },
    ),
    { anyOf: `${field} must be a whole number from ${minimum} to ${MAX_QUANTITY}, or the string of its digits` },
  );

/**
 * A modification as ODIN clients send it: the SDK sends its whole parameter object, so the path's exchange
 * and order_id come in the body too (accepted when equal to the path's), and numbers where the place call
 * has strings.
 */
export const ModifyOrderRequest = Type.Object(
  {
    exchange: Type.Optional(
      Type.String({ maxLength: 100, description: "When sent, the path's exchange (e-375 otherwise)." }),
    ),
    order_id: Type.Optional(
      Type.String({ maxLength: 100, description: "When sent, the path's order_id (e-375 otherwise)." }),
    ),
    order_type: OrderType,
    quantity: WholeOrDigits(
      'quantity',
      Errors.OFS_QUANTITY,
      1,
      'The new number of shares: a whole number from 1, or its digits as a string ("10").',
    ),
    price: Price,
    traded_quantity: Type.Optional(
      WholeOrDigits(
        'traded_quantity',
        Errors.INVALID_VALUE,
        0,
        "The traded quantity you last saw (a whole number or its digits); when sent it must equal the order's current one, else 409.",
      ),
    ),
    disclosed_quantity: Type.Optional(DisclosedQuantity),
    validity: Type.Optional(
      withCode(Errors.OFS_VALIDITY, StringEnum(['', 'DAY'], '"" or "DAY": an OFS bid is a day order.')),
    ),
    validity_days: Type.Optional(ValidityDays),
    trigger_price: Type.Optional(
      withCode(
        Errors.OFS_TRIGGER_PRICE,
        Type.Union([Type.Null(), Type.Literal(0)], { description: 'null or 0 for OFS.' }),
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'The new terms of a live OFS bid; they replace the current ones (disclosed_quantity absent means 0).',
    examples: [{ order_type: 'RL', quantity: '20', price: 102, disclosed_quantity: 0 }],
  },
);
export type ModifyOrderRequest = Static<typeof ModifyOrderRequest>;

export const ModifyOrderResponse = SuccessEnvelope(OrderIdData, 'Order Modification Sent to OMS');
export const CancelOrderResponse = SuccessEnvelope(OrderIdData, 'Order Cancellation Sent to OMS');

// --- carry-forward: POST /transactional/v1/orders/regular/{exchange}/{order_id}/carry_forward (ours) ------

/**
 * A carry-forward's body, optional: new terms for the bid as it is carried forward (NSE takes a carry-forward
 * with the bid's terms). A bid priced below the T-day cut-off is carried forward only with a price of at
 * least the cut-off. No body, or `{}`: the bid is carried forward as it is.
 */
export const CarryForwardRequest = Type.Object(
  {
    price: Type.Optional(Price),
    quantity: Type.Optional(
      WholeOrDigits(
        'quantity',
        Errors.OFS_QUANTITY,
        1,
        'The whole bid, as a modification counts it (what it was allotted on T plus what it carries forward): a whole number, or its digits as a string.',
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Optional: the revised price and/or quantity to carry the bid forward at; absent parts stay as they are.',
    examples: [{ price: 105 }],
  },
);
export type CarryForwardRequest = Static<typeof CarryForwardRequest>;

export const CarryForwardResponse = SuccessEnvelope(OrderIdData, 'Order Carry-Forward Sent to OMS');

// --- order book and history: GET /transactional/v1/orders[/{order_id}] (ODIN) ------------------------------

const ORDER_STATUSES = Object.values(OrderStatus);

/** Query values are strings (nothing is coerced): numbers are declared as strings of digits. */
export const OrderBookQuery = Type.Object(
  {
    ...PAGE_QUERY_FIELDS,
    orderStatus: Type.Optional(
      StringEnum(
        [...Object.keys(ORDER_STATUS_CODES), ...ORDER_STATUSES],
        "ODIN's codes: 1 live (OMSXMITTED, EXXMITTED, PENDING), 2 completed (EXECUTED, CANCELLED, OMSREJECT, ORDERERROR), -1 all; or one status name.",
      ),
    ),
    order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the order with this id.' })),
  },
  { additionalProperties: false },
);
export type OrderBookQuery = Static<typeof OrderBookQuery>;

export const OrderIdParams = Type.Object({ order_id: PathOrderId }, { additionalProperties: false });

/** The fields of an order in ODIN's order book, and ordergate's own beside them. */
const ORDER_FIELDS = {
  order_id: Text('The orderId given when the bid was placed.'),
  exchange: Text('NSE_EQ or BSE_EQ.'),
  scrip_token: Type.Integer({ description: 'Exchange token of the instrument.' }),
  symbol: Text('Trading symbol.'),
  series: Text('Series.'),
  transaction_type: Text('BUY.'),
  product_type: Text('OFS.'),
  order_type: Text('RL (limit) or RL-MKT (cut-off).'),
  status: StringEnum(ORDER_STATUSES, "The order's status."),
  total_quantity: Count('The quantity bid for.'),
  traded_quantity: Count('The quantity allotted (EXECUTED orders).'),
  pending_quantity: Count('total_quantity - traded_quantity while the order is live; 0 once it is finished.'),
  disclosed_quantity: Count('The disclosed quantity.'),
  order_price: PriceText('The bid price in rupees with two decimals; "0.00" for a cut-off bid.'),
  trigger_price: PriceText('Always "0.00": an OFS bid has no trigger.'),
  traded_price: PriceText('The allotment price in rupees; "0.00" while nothing is allotted.'),
  validity: Text('DAY: an OFS bid is a day order.'),
  validity_days: Count('0.'),
  order_timestamp: OdinTime('When the order was placed, India time ("2026-04-17 12:46:34").'),
  exchange_timestamp: OdinTime(
    'When the exchange last reported on the order, India time; "" until it has the order.',
    true,
  ),
  last_modified: OdinTime('When the order last changed, India time.'),
  error_reason: Text('Why the order was rejected or not allotted; "" when none.'),
  exchange_order_no: Text('The exchange\'s order number; "" until the exchange has the order.'),
  client_id: Text('The user the order belongs to.'),
  order_identifier: Text('Your own tag for the order; "" when none was sent.'),
  algo_id: Text(
    'The algo ID the order carries (SEBI): a registered algo\'s as sent, or the exchange\'s generic ID stamped when none was sent (ALGO_GENERIC_ID); as sent while those rules are off; "" when none.',
  ),
  strategy_id: Text('As sent; "" when none.'),
  part_code: Text('As sent; "" when none.'),
  vender_code: Text('As sent; "" when none.'),
  category: StringEnum(
    BIDDER_CATEGORIES,
    'The bidder category the order was placed under (in an offer: RETAIL for a retail bid, NON_RETAIL for the rest; bid_category says which).',
  ),
  offer_id: Text(
    'The offer the bid is in (see GET /transactional/v1/ofs/offers); "" for a bid in an OFS issue of the one-listing model.',
  ),
  bid_category: Text(
    'The bid\'s category in its offer: RETAIL, EMPLOYEE, NII, MF, IC or OTHS (from its series and the bidder); "" outside an offer.',
  ),
  margin_type: Text(
    'The bid\'s margin in its offer: H (100 %, funds blocked) or T (0 %, custodian-confirmed: revised upward only, never cancelled); "" outside an offer.',
  ),
  carried_forward: Type.Boolean({
    description: 'Whether the bidder carried the unallotted non-retail bid forward to T+1 (POST .../carry_forward).',
  }),
};

/** One order with its current state, under ODIN's order-book names. */
export const OrderBookEntry = Type.Object(ORDER_FIELDS, { additionalProperties: false });
export type OrderBookEntry = Static<typeof OrderBookEntry>;

export const OrderBookResponse = PagedEnvelope(
  Type.Array(OrderBookEntry, { description: 'This page of your orders, newest first.' }),
  PageMetadata,
  'Order book fetched successfully',
);

/** One change of an order: the order as that change left it, and what happened. */
export const OrderHistoryEntry = Type.Object(
  {
    ...ORDER_FIELDS,
    reason: Text('What happened.'),
  },
  {
    additionalProperties: false,
    description:
      "The order's fields as the change left them (status, quantities, price, error_reason, last_modified), the rest as the order is now.",
  },
);
export type OrderHistoryEntry = Static<typeof OrderHistoryEntry>;

export const OrderHistoryResponse = SuccessEnvelope(
  Type.Array(OrderHistoryEntry, { description: "The order's changes, oldest first." }),
  'Order history fetched successfully',
);
