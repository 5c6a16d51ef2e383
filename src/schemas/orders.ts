/** Wire shapes of the order-entry endpoints (seed sections 2.1 to 2.3). */
import Type, { type Static } from 'typebox';
import { Errors } from '../domain/errors.js';
import { SuccessEnvelope, withCode } from './common.js';

/**
 * A closed set of strings. The explicit string type makes a number or a boolean answer the wrong-type code
 * (e-104), as on every other field, before the set's own code.
 */
const StringEnum = <const Values extends string[]>(values: readonly [...Values], description: string) =>
  Type.Enum(values, { type: 'string', description });

const EMPTY = (field: string) =>
  withCode(Errors.OFS_DERIVATIVE_FIELDS, Type.String({ maxLength: 0, description: `Leave empty for OFS instruments (${field}).` }));

export const ScripInfo = Type.Object(
  {
    exchange: withCode(
      Errors.OFS_EXCHANGE,
      StringEnum(['NSE_EQ', 'BSE_EQ'], 'Exchange segment of the OFS instrument.'),
    ),
    scrip_token: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Exchange token of the instrument.' }),
    symbol: Type.String({ minLength: 1, maxLength: 50, description: 'Trading symbol; must match the registered issue.' }),
    series: Type.String({ minLength: 1, maxLength: 10, description: 'Series; must match the registered issue.' }),
    expiry_date: Type.Optional(EMPTY('expiry_date')),
    strike_price: Type.Optional(EMPTY('strike_price')),
    option_type: Type.Optional(EMPTY('option_type')),
  },
  { additionalProperties: false, description: 'Instrument details (seed 2.2).' },
);

/** Free-text ODIN fields that are accepted and stored. */
const OdinTag = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const OfsOrderRequest = Type.Object(
  {
    scrip_info: ScripInfo,
    transaction_type: withCode(Errors.OFS_TRANSACTION_TYPE, Type.Literal('BUY', { description: 'OFS supports BUY only.' })),
    product_type: withCode(Errors.OFS_PRODUCT_TYPE, Type.Literal('OFS', { description: 'Must be OFS.' })),
    order_type: withCode(
      Errors.OFS_ORDER_TYPE,
      StringEnum(['RL', 'RL-MKT'], 'RL (limit, price > 0) or RL-MKT (cut-off, price 0).'),
    ),
    quantity: withCode(
      Errors.OFS_QUANTITY,
      Type.String({
        pattern: '^[1-9][0-9]{0,14}$',
        description: 'Number of units, as a string of digits without sign or leading zeros, e.g. "10".',
        examples: ['10'],
      }),
    ),
    price: withCode(
      Errors.OFS_PRICE,
      Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Price per unit in rupees; 0 means cut-off.' }),
    ),
    // const rather than type null: any other value breaks the OFS rule (e-307), not a type (e-104).
    trigger_price: Type.Optional(withCode(Errors.OFS_TRIGGER_PRICE, Type.Unsafe<null>({ const: null, description: 'null for OFS.' }))),
    disclosed_quantity: Type.Optional(
      withCode(
        Errors.OFS_DISCLOSED_QUANTITY,
        Type.Integer({ minimum: 0, maximum: 999_999_999_999_999, description: 'Between 0 and quantity.' }),
      ),
    ),
    validity: Type.Optional(withCode(Errors.OFS_VALIDITY, Type.String({ maxLength: 0, description: 'Empty for OFS.' }))),
    validity_days: Type.Optional(
      withCode(Errors.OFS_VALIDITY, Type.Union([Type.Literal(0), Type.Null()], { description: '0 or null for OFS.' })),
    ),
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
      Type.Integer({ minimum: 0, maximum: 999_999_999_999_999, description: 'When > 0, quantity may not exceed it.' }),
    ),
    algo_id: OdinTag('ODIN algo id; stored.'),
    strategy_id: OdinTag('ODIN strategy id; stored.'),
    part_code: OdinTag('ODIN participant code; stored.'),
    vender_code: OdinTag('ODIN vendor code; stored.'),
    client_id: OdinTag('Empty or the caller\'s own user id.'),
  },
  { additionalProperties: false, description: 'OFS order request (seed 2.1).' },
);
export type OfsOrderRequest = Static<typeof OfsOrderRequest>;

export const PlaceOrderResponse = SuccessEnvelope(
  Type.Object({ orderId: Type.String({ description: 'System-generated OFS order identifier.' }) }, { additionalProperties: false }),
  'Order Entry Sent to OMS',
);
