/**
 * One order line of a cart, as the domain reads it once its schema holds (src/schemas/ordercart.ts is built
 * from the value sets here), and the rules across its fields that no single field's schema can express.
 * Plain functions over plain data; the parse of the `orders` string and the schema check happen at the edge
 * (src/schemas/cart-lines.ts). Faults are named `orders[i].Field` (i from 0).
 */
import { Errors, type Violation } from '../errors.js';
import { OFS_PRODUCT_TYPE, ofsKindFaults, type OfsKindField } from '../ofs/bid.js';
import type { OfsExchange } from '../ofs/issue/issue.js';

/** A cart holds 1 to this many lines. */
export const MAX_CART_LINES = 50;
/** Deep enough for any scrip-master record; deeper values would overflow the stack of JSON.stringify. */
export const MAX_LINE_DEPTH = 16;

export const CART_TRANSACTION_TYPES = ['BUY', 'SELL'] as const;
export const CART_ORDER_TYPES = ['RL', 'RL-MKT', 'SL', 'SL-MKT'] as const;
export const CART_PRODUCT_TYPES = ['INTRADAY', 'DELIVERY', 'BTST', 'MTF', OFS_PRODUCT_TYPE] as const;
/** "" is an OFS line's validity only (the bid's empty validity). */
export const CART_VALIDITIES = ['DAY', 'IOC', 'GTD', 'GTC', 'EOS', 'EOSESS', 'EOTODY', ''] as const;

const MARKET_ORDER_TYPES: readonly string[] = ['RL-MKT', 'SL-MKT'];
const STOP_LOSS_ORDER_TYPES: readonly string[] = ['SL', 'SL-MKT'];

/** The exchange names of an OFS line and the segments they mean. */
const OFS_LINE_SEGMENTS: Readonly<Record<string, OfsExchange>> = { NSE: 'NSE_EQ', BSE: 'BSE_EQ' };

/** The segment an OFS line's exchange name means; undefined for any other name. */
export function ofsSegmentOfLine(exchangeName: string): OfsExchange | undefined {
  return Object.hasOwn(OFS_LINE_SEGMENTS, exchangeName) ? OFS_LINE_SEGMENTS[exchangeName] : undefined;
}

/**
 * A bid's field -> the line's field that carries its value. A field the mapping never sets (client_id,
 * order_identifier, freeze_quantity) has no counterpart: its faults name the whole line.
 */
export const BID_TO_LINE_FIELD = {
  scrip_info: 'scripDetail',
  'scrip_info.exchange': 'scripDetail._ExchangeName',
  'scrip_info.scrip_token': 'scripDetail.scripToken',
  'scrip_info.symbol': 'scripDetail.symbol',
  'scrip_info.series': 'scripDetail._Series',
  'scrip_info.expiry_date': 'scripDetail._ExpiryDate',
  'scrip_info.strike_price': 'scripDetail._StrikePrice',
  'scrip_info.option_type': 'scripDetail._OptionType',
  transaction_type: 'TransactionType',
  product_type: 'ProductType',
  order_type: 'OrderType',
  quantity: 'Quantity',
  price: 'Price',
  trigger_price: 'TriggerPrice',
  disclosed_quantity: 'disclosed_quantity',
  validity: 'validity',
  is_amo: 'is_amo',
} as const satisfies Readonly<Record<string, string>>;

/** The instrument, as in the ODIN scrip master; further scrip-master fields are kept as sent, unread. */
export interface CartScripDetail {
  symbol: string;
  _Series: string;
  _InstrumentName: string;
  _ExchangeName: string;
  MarketLot: number;
  PriceTick: number;
  _ExpiryDate?: string;
  _OptionType?: string;
  _StrikePrice?: string | number;
  scripToken?: number;
}

/** One order of a cart (ODIN order-cart line). Price and TriggerPrice are decimal rupees as sent. */
export interface CartLine {
  scripDetail: CartScripDetail;
  TransactionType: (typeof CART_TRANSACTION_TYPES)[number];
  OrderType: (typeof CART_ORDER_TYPES)[number];
  Quantity: number;
  Price: string;
  ProductType: (typeof CART_PRODUCT_TYPES)[number];
  TriggerPrice?: number | string;
  is_amo?: boolean;
  disclosed_quantity?: number;
  validity?: (typeof CART_VALIDITIES)[number];
}

/** The rules across the fields of a line whose schema holds: every fault, each as an e-403 of its field. */
export function lineRuleViolations(line: CartLine, index: number): Violation[] {
  const prefix = `orders[${index}]`;
  return crossFieldFaults(line).map(({ field, message }) => ({
    kind: Errors.CART_LINE_INVALID,
    field: `${prefix}.${field}`,
    message: `${prefix}.${field} ${message}`,
  }));
}

interface LineFault {
  /** Relative to the line, e.g. "TriggerPrice" or "scripDetail._ExchangeName". */
  field: string;
  /** Completes "orders[i].<field> ...". */
  message: string;
}

/** Rules that no single field's schema can express. */
function crossFieldFaults(line: CartLine): LineFault[] {
  const faults: LineFault[] = [];
  const price = Number(line.Price);
  const trigger = line.TriggerPrice === undefined ? undefined : Number(line.TriggerPrice);
  const isMarket = MARKET_ORDER_TYPES.includes(line.OrderType);
  const isStopLoss = STOP_LOSS_ORDER_TYPES.includes(line.OrderType);

  if (isMarket && price !== 0)
    faults.push({ field: 'Price', message: `must be "0" for OrderType ${line.OrderType} (a market order)` });
  if (!isMarket && price === 0)
    faults.push({
      field: 'Price',
      message: `must be above 0 for OrderType ${line.OrderType}; use ${line.OrderType}-MKT for a market order`,
    });

  if (isStopLoss && (trigger === undefined || trigger === 0)) {
    faults.push({ field: 'TriggerPrice', message: `is required and must be above 0 for OrderType ${line.OrderType}` });
  }
  if (!isStopLoss && trigger !== undefined && trigger !== 0) {
    faults.push({
      field: 'TriggerPrice',
      message: `must be absent or 0 for OrderType ${line.OrderType}; only SL and SL-MKT take a trigger price`,
    });
  }
  // Exchange rule for a stop-loss limit order: a buy triggers at or below its limit, a sell at or above.
  if (line.OrderType === 'SL' && trigger !== undefined && trigger > 0 && price > 0) {
    if (line.TransactionType === 'BUY' && trigger > price)
      faults.push({ field: 'TriggerPrice', message: 'of a BUY SL order may not exceed its Price' });
    if (line.TransactionType === 'SELL' && trigger < price)
      faults.push({ field: 'TriggerPrice', message: 'of a SELL SL order may not be below its Price' });
  }

  if (line.disclosed_quantity !== undefined && line.disclosed_quantity > line.Quantity) {
    faults.push({
      field: 'disclosed_quantity',
      message: `(${line.disclosed_quantity}) may not exceed Quantity (${line.Quantity})`,
    });
  }

  if (line.ProductType === OFS_PRODUCT_TYPE) faults.push(...ofsLineFaults(line));
  else if (line.validity === '')
    faults.push({
      field: 'validity',
      message: 'must be DAY, IOC, GTD, GTC, EOS, EOSESS or EOTODY; "" is for OFS lines only',
    });
  return faults;
}

/** How a line answers a bid field that breaks the rules of what an OFS bid is: completes "orders[i].<field> ...". */
const OFS_LINE_MESSAGES: Readonly<Record<OfsKindField, string>> = {
  validity: 'must be absent or "" on an OFS line',
  transaction_type: 'must be BUY on an OFS line: OFS supports BUY only',
  order_type: 'must be RL (limit) or RL-MKT (cut-off) on an OFS line',
  is_amo: 'must be absent or false on an OFS line',
  'scrip_info.exchange': 'must be NSE or BSE on an OFS line',
  'scrip_info.expiry_date': 'must be absent or "" on an OFS line',
  'scrip_info.option_type': 'must be absent or "" on an OFS line',
  'scrip_info.strike_price': 'must be absent or "" on an OFS line',
};

/**
 * An OFS line will be placed as an OFS bid, so the bid's rules of what an OFS bid is (seed 4.1, written in
 * domain/ofs/bid.ts) apply already when the cart is saved, each fault named by the line's field.
 */
function ofsLineFaults(line: CartLine): LineFault[] {
  const scrip = line.scripDetail;
  const faults = ofsKindFaults({
    exchange: ofsSegmentOfLine(scrip._ExchangeName),
    transaction_type: line.TransactionType,
    order_type: line.OrderType,
    validity: line.validity,
    is_amo: line.is_amo,
    expiry_date: scrip._ExpiryDate,
    option_type: scrip._OptionType,
    strike_price: scrip._StrikePrice,
  });
  return faults.map((field) => ({ field: BID_TO_LINE_FIELD[field], message: OFS_LINE_MESSAGES[field] }));
}
