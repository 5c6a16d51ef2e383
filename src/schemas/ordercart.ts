/**
 * Wire shapes of /transactional/v1/ordercart (seed 2.4, 2.5, 4.2; ODIN create, list, details, delete) and
 * the schema of one order line inside the `orders` string (ODIN). A line's `description` is phrased to
 * follow "must be": cart-line validation turns it into the message of a failed line field.
 */
import Type, { type Static } from 'typebox';
import {
  CART_ORDER_TYPES,
  CART_PRODUCT_TYPES,
  CART_TRANSACTION_TYPES,
  CART_VALIDITIES,
  type CartLine,
} from '../domain/orders/cart-line.js';
import { Errors } from '../domain/errors.js';
import { FieldErrorSchema, MessageList, SuccessEnvelope, withCode } from './common.js';
import { PAGE_QUERY_FIELDS } from './odin-fields.js';
import { MAX_QUANTITY } from './orders.js';

const MAX_PRICE = 1_000_000_000;

/** A decimal number of rupees written as a string: no sign, no leading zeros, up to 4 decimals. */
const DECIMAL_PATTERN = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,4})?$';

export const ScripDetail = Type.Object(
  {
    symbol: Type.String({ minLength: 1, maxLength: 50, description: 'a trading symbol of 1 to 50 characters' }),
    _Series: Type.String({ maxLength: 20, description: 'a series of at most 20 characters, e.g. "EQ"' }),
    _InstrumentName: Type.String({
      maxLength: 30,
      description: 'an instrument name of at most 30 characters, e.g. "EQUITIES"',
    }),
    _ExchangeName: Type.String({
      minLength: 1,
      maxLength: 20,
      description: 'an exchange name of 1 to 20 characters, e.g. "NSE"; NSE or BSE on OFS lines',
    }),
    MarketLot: Type.Integer({
      minimum: 1,
      maximum: MAX_QUANTITY,
      description: `a whole number from 1 to ${MAX_QUANTITY} (units per lot)`,
    }),
    PriceTick: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_PRICE,
      description: 'a number above 0 (the tick size)',
    }),
    _ExpiryDate: Type.Optional(
      Type.String({ maxLength: 30, description: 'a string of at most 30 characters; "" on OFS lines' }),
    ),
    _OptionType: Type.Optional(
      Type.String({ maxLength: 10, description: 'a string of at most 10 characters; "" on OFS lines' }),
    ),
    _StrikePrice: Type.Optional(
      Type.Union([Type.String({ maxLength: 20 }), Type.Number()], {
        description: 'a string of at most 20 characters or a number; "" on OFS lines',
      }),
    ),
    scripToken: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2147483647,
        description: 'a whole number from 1 to 2147483647 (the exchange token)',
      }),
    ),
  },
  {
    // Scrip-master fields beyond these are kept as sent (product.md).
    additionalProperties: true,
    description: 'The instrument, as in the ODIN scrip master; further scrip-master fields are kept as sent.',
  },
);

export const OrderLine = Type.Object(
  {
    scripDetail: ScripDetail,
    TransactionType: Type.Enum(CART_TRANSACTION_TYPES, { description: 'BUY or SELL' }),
    OrderType: Type.Enum(CART_ORDER_TYPES, {
      description: 'RL (limit), RL-MKT (market), SL (stop-loss limit) or SL-MKT (stop-loss market)',
    }),
    Quantity: Type.Integer({
      minimum: 1,
      maximum: MAX_QUANTITY,
      description: `a whole number from 1 to ${MAX_QUANTITY}`,
    }),
    Price: Type.String({
      pattern: DECIMAL_PATTERN,
      description: 'a string holding a decimal number of rupees, e.g. "101.50"; "0" for RL-MKT and SL-MKT',
    }),
    ProductType: Type.Enum(CART_PRODUCT_TYPES, {
      description: 'INTRADAY, DELIVERY, BTST, MTF or OFS',
    }),
    TriggerPrice: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: MAX_PRICE }), Type.String({ pattern: DECIMAL_PATTERN })], {
        description:
          'a number or a string holding a decimal number, e.g. 99.5 or "99.50"; needed above 0 by SL and SL-MKT',
      }),
    ),
    is_amo: Type.Optional(Type.Boolean({ description: 'true or false (after-market order); false on OFS lines' })),
    disclosed_quantity: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_QUANTITY, description: 'a whole number from 0 to Quantity' }),
    ),
    validity: Type.Optional(
      Type.Enum(CART_VALIDITIES, {
        description: 'DAY, IOC, GTD, GTC, EOS, EOSESS or EOTODY, and "" on OFS lines',
      }),
    ),
  },
  {
    // A misspelt optional field (say `Validity`) must not be dropped silently: it would place another order.
    additionalProperties: false,
    description: 'One order of a cart (ODIN order-cart line).',
  },
);
export type OrderLine = Static<typeof OrderLine>;
// The schema is the domain's line, field for field: a line it accepts is a CartLine, and the other way round.
// A compile-time check, exported only so that noUnusedLocals keeps it.
type Holds<Claim extends true> = Claim;
export type _OrderLineIsCartLine = Holds<
  OrderLine extends CartLine ? (CartLine extends OrderLine ? true : false) : false
>;

const ordercartName = withCode(
  Errors.CART_NAME,
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[^\\u0000-\\u001F\\u007F]*$',
    description: 'Name of the cart: 1 to 100 characters, no control characters.',
  }),
);
/** An OFS line as the API documents it (the `orders` example); the tests hold it valid. */
export const EXAMPLE_ORDER_LINE: OrderLine = {
  scripDetail: {
    symbol: 'SBIN',
    _Series: 'OF',
    _InstrumentName: 'EQUITIES',
    _ExchangeName: 'NSE',
    MarketLot: 1,
    PriceTick: 0.05,
  },
  TransactionType: 'BUY',
  OrderType: 'RL',
  Quantity: 10,
  Price: '101.50',
  ProductType: 'OFS',
  validity: '',
};

const orders = Type.String({
  description:
    'A JSON-stringified array of 1 to 50 order objects (the `orders` array of the list and details answers shows their schema), not a nested JSON array.',
  examples: [JSON.stringify([EXAMPLE_ORDER_LINE])],
});
const version = withCode(
  Errors.CART_VERSION,
  Type.Literal('1', { description: 'Version of the ordercart schema: "1".' }),
);
const userId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
/** Our ids are UUIDv7; any printable ASCII is accepted and simply not found when it is not one of ours. */
const ordercartId = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[\\x21-\\x7E]+$',
  description: 'Identifier of the order cart, as answered at creation.',
});

export const CreateOrderCartRequest = Type.Object(
  {
    ordercartName,
    orders,
    version,
    createdBy: userId('Your own user id.'),
    modifiedBy: userId('Your own user id.'),
    executedNoTime: withCode(
      Errors.CART_EXECUTED_ON_CREATE,
      Type.Literal(0, { description: 'Count of executions; 0 for a new cart (the server counts them).' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Order cart creation request: the update request without ordercartId.',
    examples: [
      {
        ordercartName: 'My basket',
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: 'demo',
        modifiedBy: 'demo',
        executedNoTime: 0,
      },
    ],
  },
);
export type CreateOrderCartRequest = Static<typeof CreateOrderCartRequest>;

export const UpdateOrderCartRequest = Type.Object(
  {
    ordercartName,
    orders,
    version,
    createdBy: userId('User id of the original creator (your own).'),
    modifiedBy: userId('Your own user id.'),
    executedNoTime: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'The stored count of executions, as last read; a different count answers 409.',
    }),
    ordercartId,
  },
  {
    additionalProperties: false,
    description: "Order cart update request: the cart's new name and orders, which replace the stored ones.",
    examples: [
      {
        ordercartName: 'Renamed basket',
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: 'demo',
        modifiedBy: 'demo',
        executedNoTime: 0,
        ordercartId: 'the ordercartId the create call answered',
      },
    ],
  },
);
export type UpdateOrderCartRequest = Static<typeof UpdateOrderCartRequest>;

export const OrderCartParams = Type.Object(
  { ordercartId: withCode(Errors.CART_NOT_FOUND, ordercartId) },
  { additionalProperties: false },
);

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'The ETag of the cart details as last read; when it no longer matches, 412.' }),
  ),
});

export const OrderCart = Type.Object(
  {
    ordercartId: Type.String(),
    ordercartName: Type.String(),
    orders: Type.Array(OrderLine, { description: 'The stored order objects, as a JSON array (not a string).' }),
    version: Type.String(),
    createdBy: Type.String(),
    modifiedBy: Type.String(),
    executedNoTime: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    modifiedAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type OrderCart = Static<typeof OrderCart>;

export const CART_CREATED = 'Order cart created successfully';
export const CART_LISTED = 'Ordercart list fetched successfully';
export const CART_DETAILS = 'Ordercart details fetched successfully';
export const CART_UPDATED = 'Order cart updated successfully';
export const CART_DELETED = 'Ordercart deleted successfully';

export const CreateOrderCartResponse = SuccessEnvelope(
  Type.Object(
    { ordercartId: Type.String({ description: 'Identifier of the new cart.' }) },
    { additionalProperties: false },
  ),
  CART_CREATED,
);
/**
 * The cart list's page size: at most 100, and 100 by default, so that a client that sends no paging
 * parameters gets every cart under the default MAX_CARTS_PER_USER, as before the list was paged, while an
 * answer stays within about 6.5 MB (carts are at most 64 KiB each).
 */
export const MAX_CART_PAGE_SIZE = 100;
export const DEFAULT_CART_PAGE_SIZE = 100;

/** The order book's paging parameters (ODIN), with the cart list's page size. */
export const OrderCartListQuery = Type.Object(
  {
    offset: PAGE_QUERY_FIELDS.offset,
    limit: Type.Optional(
      Type.String({
        pattern: '^(100|[1-9][0-9]?)$',
        description: `The page size, 1 to ${MAX_CART_PAGE_SIZE} (default ${DEFAULT_CART_PAGE_SIZE}).`,
        examples: ['20'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type OrderCartListQuery = Static<typeof OrderCartListQuery>;

export const OrderCartListResponse = SuccessEnvelope(
  Type.Array(OrderCart, { description: 'This page of your carts, newest first.' }),
  CART_LISTED,
);
export const OrderCartDetailsResponse = SuccessEnvelope(OrderCart, CART_DETAILS);
export const UpdateOrderCartResponse = SuccessEnvelope(MessageList, CART_UPDATED);
export const DeleteOrderCartResponse = SuccessEnvelope(MessageList, CART_DELETED);

// --- execute: POST /transactional/v1/ordercart/{ordercartId}/execute (ours) ---------------------------------

export const CART_EXECUTED = 'Order cart executed: every order was sent to OMS';
export const CART_PARTLY_EXECUTED = 'Order cart partly executed: some orders were not placed; see each line in data';

const lineIndex = Type.Integer({ minimum: 0, description: "The line's position in `orders`, from 0." });

export const PlacedCartLine = Type.Object(
  {
    index: lineIndex,
    status: Type.Literal('success'),
    orderId: Type.String({ description: "The new order's identifier, as a single bid answers it." }),
  },
  { additionalProperties: false, description: 'A line placed as an order.' },
);

export const FailedCartLine = Type.Object(
  {
    index: lineIndex,
    status: Type.Literal('error'),
    code: Type.String({
      description:
        "The catalog code a single bid with the line's values gets, or a cart-execution code (e-413 to e-416).",
      examples: ['e-353'],
    }),
    message: Type.String(),
    errors: Type.Array(FieldErrorSchema, { description: 'The faults of the line, each named orders[i].Field.' }),
  },
  { additionalProperties: false, description: 'A line that was not placed; it has no orderId.' },
);

export const ExecuteOrderCartResponse = SuccessEnvelope(
  Type.Array(Type.Union([PlacedCartLine, FailedCartLine]), {
    description: 'One result per line, in the order of the lines.',
  }),
  `Some or all lines placed: code s-101 ("${CART_EXECUTED}") when every line was placed, s-102 ("${CART_PARTLY_EXECUTED}") when some were not.`,
);
