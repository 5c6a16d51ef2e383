/**
 * The live order socket's messages (odin-compat.md, "The live order socket"): an order event becomes one
 * `ORD_NRML` message under ODIN's field names and codes, and an allotment also a `TRD_MSG`. ODIN clients
 * map the codes through fixed tables and fail on anything else, so every code comes from src/domain/orders/odin.ts.
 * The messages' wire shapes, with the words the API documents, are in src/schemas/socket-messages.ts.
 *
 * A message describes the order as the event left it, as the event's `order` does (the order's history entry
 * for that change): its status, times, terms, error reason, traded and pending quantities and exchange order
 * number (docs/design/message-socket.md).
 */
import { OrderStatus } from './status.js';
import { tradeIdOf } from '../funds/trades.js';
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

/** The fields of both message types; codes and prices as ODIN writes them (prices in paise). */
interface OrderMessageFields {
  UniqueCode: string;
  Exchange: number;
  ScripCode: number;
  OrderNumber: string;
  OrderStatus: number;
  Reason: string;
  Buy_Sell: number;
  Product: typeof SOCKET_PRODUCT_CODE;
  OrderType: number;
  OrderOriginalQty: number;
  PendingQty: number;
  TradedQTY: number;
  DQ: number;
  OrderPrice: number;
  TriggerPrice: number;
  OrderValidity: typeof SOCKET_DAY_VALIDITY;
  Days: number;
  Symbol: string;
  Series: string;
  InstrumentName: typeof SOCKET_INSTRUMENT_NAME;
  ExpiryDate: '';
  StrikePrice: 0;
  Option_Type: '';
  OrderEntryTime: string;
  LastModifiedTime: string;
  InitiatedBy: string;
  ModifiedBy: string;
  UserRemarks: string;
  /** The algo ID the order carries; "" when none (ordergate's own field). */
  AlgoId: string;
}

/** One change of one of your orders. */
export interface OrderMessage extends OrderMessageFields {
  MessageType: typeof ORDER_MESSAGE_TYPE;
}

/** A trade of one of your orders: an allotment. */
export interface TradeMessage extends OrderMessageFields {
  MessageType: typeof TRADE_MESSAGE_TYPE;
  TradeNumber: string;
  TradeQty: number;
  TradedPrice: number;
  TradeTime: string;
}

export type OdinMessage = OrderMessage | TradeMessage;

/**
 * What the messages are made of: an order event as the API answers it (src/schemas/events.ts), its order
 * under the order book's names.
 */
export interface SocketOrderEvent {
  status: string;
  at: string;
  order: {
    order_id: string;
    exchange: string;
    scrip_token: number;
    symbol: string;
    series: string;
    transaction_type: string;
    order_type: string;
    total_quantity: number;
    traded_quantity: number;
    pending_quantity: number;
    disclosed_quantity: number;
    order_price: string;
    trigger_price: string;
    traded_price: string;
    validity_days: number;
    order_timestamp: string;
    error_reason: string;
    exchange_order_no: string;
    client_id: string;
    order_identifier: string;
    algo_id: string;
  };
}

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
export function odinMessagesOf(
  event: SocketOrderEvent,
  trade?: { tradeId: string; quantity: number; pricePaise: number },
): OdinMessage[] {
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
    AlgoId: order.algo_id,
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
