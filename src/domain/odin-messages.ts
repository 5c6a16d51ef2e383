/**
 * The live order socket's messages (odin-compat.md, "The live order socket"): an order event becomes one
 * `ORD_NRML` message under ODIN's field names and codes, and an allotment also a `TRD_MSG`. ODIN clients
 * map the codes through fixed tables and fail on anything else, so every code comes from src/domain/odin.ts.
 *
 * A message describes the order as the event left it, as the event's `order` does (the order's history entry
 * for that change): its status, times, terms, error reason, traded and pending quantities and exchange order
 * number (docs/design/message-socket.md).
 */
import Type, { type Static } from 'typebox';
import type { OrderEvent } from '../schemas/events.js';
import { OrderStatus } from './order-status.js';
import { tradeIdOf } from './trades.js';
import {
  SOCKET_DAY_VALIDITY,
  SOCKET_EXCHANGE_CODES,
  SOCKET_ORDER_TYPE_CODES,
  SOCKET_PRODUCT_CODE,
  SOCKET_SIDE_CODES,
  SOCKET_STATUS_CODES,
  socketTimestamp,
  MONTHS,
} from './odin.js';

/** `MessageType` of an order change. */
export const ORDER_MESSAGE_TYPE = 'ORD_NRML';
/** `MessageType` of a trade (an allotment). */
export const TRADE_MESSAGE_TYPE = 'TRD_MSG';

/** `InstrumentName` of an OFS instrument: a cash-market equity, as ODIN's scrip details name it. */
export const SOCKET_INSTRUMENT_NAME = 'EQUITY';

const Code = (description: string) => Type.Integer({ description });
const Quantity = (description: string) => Type.Integer({ minimum: 0, description });
const Paise = (description: string) => Type.Integer({ minimum: 0, description });
const SocketTime = (description: string) =>
  Type.String({ pattern: '^([0-9]{2}-[A-Z][a-z]{2}-[0-9]{4} [0-9]{2}\\.[0-9]{2}\\.[0-9]{2})?$', description, examples: ['23-Nov-2026 11.34.54'] });

/** The fields of both message types. */
const ORDER_MESSAGE_FIELDS = {
  UniqueCode: Type.String({ description: 'The order id (order_id of the REST answers).' }),
  Exchange: Code('1 NSE_EQ, 3 BSE_EQ.'),
  ScripCode: Type.Integer({ description: 'The scrip token.' }),
  OrderNumber: Type.String({ description: 'The exchange order number; "" until the exchange has the order.' }),
  OrderStatus: Code('3 OMSXMITTED, 4 EXXMITTED, 5 PENDING, 6 CANCELLED, 7 EXECUTED, 10 OMSREJECT, 11 ORDERERROR.'),
  Reason: Type.String({ description: 'Why the order was rejected, cancelled or not allotted; "" otherwise.' }),
  Buy_Sell: Code('1 BUY, 2 SELL.'),
  Product: Type.Literal(SOCKET_PRODUCT_CODE, { description: 'D (delivery): ODIN clients know no OFS product code.' }),
  OrderType: Code('1 RL (limit), 2 RL-MKT (cut-off).'),
  OrderOriginalQty: Quantity('The quantity bid for.'),
  PendingQty: Quantity('OrderOriginalQty - TradedQTY while the order is live; 0 once it is finished.'),
  TradedQTY: Quantity('The quantity allotted; 0 until the allotment.'),
  DQ: Quantity('The disclosed quantity.'),
  OrderPrice: Paise('The bid price in paise (10150 = Rs 101.50); 0 for a cut-off bid.'),
  TriggerPrice: Paise('Always 0: an OFS bid has no trigger.'),
  OrderValidity: Type.Literal(SOCKET_DAY_VALIDITY, { description: '"1" (a string): DAY.' }),
  Days: Quantity('Validity days: 0.'),
  Symbol: Type.String(),
  Series: Type.String(),
  InstrumentName: Type.Literal(SOCKET_INSTRUMENT_NAME),
  ExpiryDate: Type.Literal('', { description: 'An OFS instrument does not expire.' }),
  StrikePrice: Type.Literal(0, { description: 'An OFS instrument has no strike.' }),
  Option_Type: Type.Literal('', { description: 'An OFS instrument is no option.' }),
  OrderEntryTime: SocketTime('When the order was placed, India time.'),
  LastModifiedTime: SocketTime('When this change happened, India time.'),
  InitiatedBy: Type.String({ description: 'The user who placed the order.' }),
  ModifiedBy: Type.String({ description: 'The user the order belongs to (only its owner modifies or cancels it).' }),
  UserRemarks: Type.String({ description: 'The order_identifier sent with the order; "" when none.' }),
};

export const OrderMessage = Type.Object(
  { MessageType: Type.Literal(ORDER_MESSAGE_TYPE), ...ORDER_MESSAGE_FIELDS },
  { additionalProperties: false, description: 'One change of one of your orders.' },
);
export type OrderMessage = Static<typeof OrderMessage>;

export const TradeMessage = Type.Object(
  {
    MessageType: Type.Literal(TRADE_MESSAGE_TYPE),
    ...ORDER_MESSAGE_FIELDS,
    TradeNumber: Type.String({ description: 'The trade\'s id, as the trade book lists it (trade_id).' }),
    TradeQty: Quantity('The quantity of this trade: the allotted quantity.'),
    TradedPrice: Paise('The price of this trade in paise: the clearing price of the allotment.'),
    TradeTime: SocketTime('When the allotment was made, India time.'),
  },
  { additionalProperties: false, description: 'A trade of one of your orders: an allotment.' },
);
export type TradeMessage = Static<typeof TradeMessage>;

export type OdinMessage = OrderMessage | TradeMessage;


/**
 * A REST time ("2026-04-17 12:46:34", India time) as a socket time ("17-Apr-2026 12.46.34", India time);
 * "" stays "".
 */
export function socketTimeOfRestTime(restTime: string): string {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})$/.exec(restTime);
  if (match === null) {
    if (restTime === '') return '';
    throw new RangeError(`not a REST time: ${JSON.stringify(restTime)}`);
  }
  const [, year, month, day, hh, mm, ss] = match;
  return `${day}-${MONTHS[Number(month) - 1]}-${year} ${hh}.${mm}.${ss}`;
}

/** A REST price ("101.50", rupees with two decimals) in paise (10150). */
export function paiseOfRestPrice(price: string): number {
  if (!/^[0-9]+\.[0-9]{2}$/.test(price)) throw new RangeError(`not a REST price: ${JSON.stringify(price)}`);
  return Number(price.replace('.', ''));
}

function codeOf(table: Readonly<Record<string, number>>, value: string, field: string): number {
  const code = table[value];
  if (code === undefined) throw new RangeError(`no socket code for ${field} ${JSON.stringify(value)}`);
  return code;
}

/**
 * The socket messages of one order event: its `ORD_NRML`, then, for an allotment, its `TRD_MSG`. `trade` is the
 * trade the change made: a bid in an offer allotted in part on T (the order still PENDING) and the rest on
 * T+1 gets one TRD_MSG for each, each with its own trade number, quantity and price. Without it, an EXECUTED
 * change with a traded quantity is the allotment (the whole traded quantity at the order's traded price).
 * Throws a RangeError for a value outside ODIN's code tables (the order schema admits none).
 */
export function odinMessagesOf(event: OrderEvent, trade?: { tradeId: string; quantity: number; pricePaise: number }): OdinMessage[] {
  const order = event.order;
  const status = event.status as OrderStatus;
  const statusCode = SOCKET_STATUS_CODES[status];
  if (statusCode === undefined) throw new RangeError(`no socket code for status ${JSON.stringify(event.status)}`);
  // What the order has traded after this change (its history entry's): 0 until its first allotment.
  const traded = order.traded_quantity;
  const orderMessage: OrderMessage = {
    MessageType: ORDER_MESSAGE_TYPE,
    UniqueCode: order.order_id,
    Exchange: codeOf(SOCKET_EXCHANGE_CODES, order.exchange, 'exchange'),
    ScripCode: order.scrip_token,
    // The event's order is the change's history entry: the exchange order number, the reason and the
    // pending quantity are already those of this change.
    OrderNumber: order.exchange_order_no,
    OrderStatus: statusCode,
    Reason: order.error_reason,
    Buy_Sell: codeOf(SOCKET_SIDE_CODES, order.transaction_type, 'transaction_type'),
    Product: SOCKET_PRODUCT_CODE,
    OrderType: codeOf(SOCKET_ORDER_TYPE_CODES, order.order_type, 'order_type'),
    OrderOriginalQty: order.total_quantity,
    PendingQty: order.pending_quantity,
    TradedQTY: traded,
    DQ: order.disclosed_quantity,
    OrderPrice: paiseOfRestPrice(order.order_price),
    TriggerPrice: paiseOfRestPrice(order.trigger_price),
    OrderValidity: SOCKET_DAY_VALIDITY,
    Days: order.validity_days,
    Symbol: order.symbol,
    Series: order.series,
    InstrumentName: SOCKET_INSTRUMENT_NAME,
    ExpiryDate: '',
    StrikePrice: 0,
    Option_Type: '',
    OrderEntryTime: socketTimeOfRestTime(order.order_timestamp),
    LastModifiedTime: socketTimestamp(Date.parse(event.at)),
    InitiatedBy: order.client_id,
    ModifiedBy: order.client_id,
    UserRemarks: order.order_identifier,
  };
  if (trade === undefined && (status !== OrderStatus.EXECUTED || traded <= 0)) return [orderMessage];
  const tradeMessage: TradeMessage = {
    ...orderMessage,
    MessageType: TRADE_MESSAGE_TYPE,
    TradeNumber: trade?.tradeId ?? tradeIdOf(order.order_id),
    TradeQty: trade?.quantity ?? traded,
    TradedPrice: trade?.pricePaise ?? paiseOfRestPrice(order.traded_price),
    TradeTime: orderMessage.LastModifiedTime,
  };
  return [orderMessage, tradeMessage];
}
