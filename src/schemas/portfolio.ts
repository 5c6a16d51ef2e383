/**
 * Wire shapes of the trade book (GET /transactional/v1/trades), positions
 * (GET /transactional/v1/portfolio/positions/{type}) and holdings (GET /transactional/v1/portfolio/holdings),
 * under ODIN's names and formats: prices as rupee strings with two decimals, times in India time.
 */
import Type, { type Static } from 'typebox';
import { Errors } from '../domain/errors.js';
import { POSITION_TYPES } from '../domain/funds/trades.js';
import { PagedEnvelope, SuccessEnvelope, withCode } from './common.js';
import { Count, OdinTime, PAGE_QUERY_FIELDS, PageMetadata, PriceText, Text } from './odin-fields.js';

/** The most order ids `order_ids` takes at once. */
export const MAX_TRADE_ORDER_IDS = 100;

/** Query values are strings (nothing is coerced): numbers are declared as strings of digits. */
export const TradeBookQuery = Type.Object(
  {
    ...PAGE_QUERY_FIELDS,
    order_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only the trades of this order.' }),
    ),
    order_ids: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_TRADE_ORDER_IDS * 101,
        pattern: '^[^,]{1,100}(,[^,]{1,100})*$',
        description: `Only the trades of these orders: up to ${MAX_TRADE_ORDER_IDS} order ids separated by commas, none empty.`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type TradeBookQuery = Static<typeof TradeBookQuery>;

/** One trade: an allotment of an OFS bid. */
export const TradeEntry = Type.Object(
  {
    trade_id: Text("The trade's id."),
    order_id: Text('The order it filled.'),
    exchange_order_no: Text('The exchange\'s order number; "" when unknown.'),
    exchange: Text('NSE_EQ or BSE_EQ.'),
    scrip_token: Type.Integer({ description: 'Exchange token of the instrument.' }),
    symbol: Text('Trading symbol.'),
    series: Text('Series.'),
    transaction_type: Text('BUY.'),
    product_type: Text('OFS.'),
    traded_quantity: Count('The shares allotted.'),
    traded_price: PriceText('The allotment price in rupees.'),
    trade_timestamp: OdinTime('When the allotment was applied, India time.'),
    order_identifier: Text('Your own tag of the order; "" when none.'),
    client_id: Text('The user the trade belongs to.'),
  },
  { additionalProperties: false },
);
export type TradeEntry = Static<typeof TradeEntry>;

export const TradeBookResponse = PagedEnvelope(
  Type.Array(TradeEntry, { description: 'This page of your trades, newest first.' }),
  PageMetadata,
  'Trade book fetched successfully',
);

export const PositionsParams = Type.Object(
  {
    type: withCode(
      Errors.POSITION_TYPE,
      Type.Enum([...POSITION_TYPES], {
        type: 'string',
        description: 'all, daily (traded today) or expiry (expiring today: none for OFS shares).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PositionsParams = Static<typeof PositionsParams>;

export const PositionsQuery = Type.Object(
  {
    intropStatus: Type.Optional(
      Type.Enum(['0', '1'], {
        type: 'string',
        description:
          "ODIN's interoperability flag; taken and ignored (ordergate lists each exchange's positions apart).",
      }),
    ),
  },
  { additionalProperties: false },
);

/** Shares allotted and not yet settled, per instrument. */
export const PositionEntry = Type.Object(
  {
    exchange: Text('NSE_EQ or BSE_EQ.'),
    scrip_token: Type.Integer({ description: 'Exchange token of the instrument.' }),
    symbol: Text('Trading symbol.'),
    series: Text('Series.'),
    product_type: Text('OFS.'),
    buy_quantity: Count('Shares bought (allotted).'),
    buy_average_price: PriceText('Their average price in rupees.'),
    buy_value: PriceText('What they cost in rupees.'),
    sell_quantity: Count('Shares sold: 0 (OFS bids buy).'),
    sell_average_price: PriceText('"0.00".'),
    sell_value: PriceText('"0.00".'),
    net_quantity: Count('buy_quantity - sell_quantity.'),
    net_average_price: PriceText('The average price of the net quantity in rupees.'),
    last_traded: OdinTime('The latest allotment, India time.'),
    settles_at: OdinTime('When the last of these shares settle and become a holding, India time.'),
  },
  { additionalProperties: false },
);
export type PositionEntry = Static<typeof PositionEntry>;

export const PositionsResponse = SuccessEnvelope(
  Type.Array(PositionEntry, { description: 'Your open positions, in the order of their first trade.' }),
  'Positions fetched successfully',
);

/** Settled shares, per instrument. */
export const HoldingEntry = Type.Object(
  {
    exchange: Text('The exchange they were bought on: NSE_EQ or BSE_EQ.'),
    scrip_token: Type.Integer({ description: 'Exchange token of the instrument.' }),
    symbol: Text('Trading symbol.'),
    series: Text('Series.'),
    product_type: Text('OFS.'),
    quantity: Count('Shares held.'),
    average_price: PriceText('Their average price in rupees.'),
    value: PriceText('What they cost in rupees.'),
    last_traded: OdinTime('The latest allotment, India time.'),
    settled_at: OdinTime('When the last of them settled, India time.'),
  },
  { additionalProperties: false },
);
export type HoldingEntry = Static<typeof HoldingEntry>;

export const HoldingsResponse = SuccessEnvelope(
  Type.Array(HoldingEntry, { description: 'Your holdings, in the order of their first trade.' }),
  'Holdings fetched successfully',
);
