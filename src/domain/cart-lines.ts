/**
 * The `orders` field of an order cart: a string that must hold a JSON array of 1 to 50 order lines. Plain
 * functions over plain data: parse the string, check each line against its schema, then the rules across
 * the fields of a line. Every fault of every line is reported, named `orders[i].Field` (i from 0).
 */
import { Errors, type Violation } from './errors.js';
import { prototypeKeyIn } from './json-safety.js';
import { OrderLine } from '../schemas/ordercart.js';
import { compileChecker, createAjv } from '../schemas/validator.js';

export const MAX_CART_LINES = 50;
const MARKET_ORDER_TYPES: readonly string[] = ['RL-MKT', 'SL-MKT'];
const STOP_LOSS_ORDER_TYPES: readonly string[] = ['SL', 'SL-MKT'];
/** The exchanges an OFS line may name: NSE means NSE_EQ and BSE means BSE_EQ. */
const OFS_LINE_EXCHANGES: readonly string[] = ['NSE', 'BSE'];
/** Deep enough for any scrip-master record; deeper values would overflow the stack of JSON.stringify. */
export const MAX_LINE_DEPTH = 16;

export type CartOrdersResult = { ok: true; lines: OrderLine[] } | { ok: false; violations: Violation[] };

const checkLineSchema = compileChecker(createAjv(), OrderLine);

/**
 * Parses and validates the `orders` string of a cart. On success the lines are the parsed values, kept as
 * sent (including scrip-master fields that ordergate does not read).
 */
export function parseCartOrders(orders: string): CartOrdersResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(orders);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not JSON';
    return fail([{ kind: Errors.CART_ORDERS_NOT_JSON, field: 'orders', message: `orders must be a string holding JSON: ${reason}` }]);
  }
  if (!Array.isArray(parsed)) {
    return fail([
      {
        kind: Errors.CART_ORDERS_NOT_ARRAY,
        field: 'orders',
        message: `orders must hold a JSON array of order objects, not ${describeJsonType(parsed)}`,
      },
    ]);
  }
  if (parsed.length < 1 || parsed.length > MAX_CART_LINES) {
    return fail([
      {
        kind: Errors.CART_ORDERS_NOT_ARRAY,
        field: 'orders',
        message: `orders must hold 1 to ${MAX_CART_LINES} order objects, not ${parsed.length}`,
      },
    ]);
  }
  const violations = parsed.flatMap((line: unknown, index) => orderLineViolations(line, index));
  return violations.length === 0 ? { ok: true, lines: parsed as OrderLine[] } : fail(violations);
}

/** The faults of one line: its schema first; the rules across its fields once the schema holds. */
export function orderLineViolations(line: unknown, index: number): Violation[] {
  const prefix = `orders[${index}]`;
  if (nestsDeeperThan(line, MAX_LINE_DEPTH)) {
    return [{ kind: Errors.CART_LINE_INVALID, field: prefix, message: `${prefix} nests objects and arrays deeper than ${MAX_LINE_DEPTH} levels` }];
  }
  // The orders text is stored and read back: a key that could pollute a prototype is refused in it, at any
  // depth, as in a body (after the depth check: the walk is recursive).
  const pollution = prototypeKeyIn(line, prefix);
  if (pollution !== undefined) return [{ kind: Errors.PROTOTYPE_KEY, field: pollution, message: `${pollution} is refused (prototype pollution)` }];
  const schemaViolations = checkLineSchema(line, prefix).map((v) => ({
    kind: Errors.CART_LINE_INVALID,
    field: v.field,
    message: lineFieldMessage(v, prefix),
  }));
  if (schemaViolations.length > 0) return schemaViolations;
  return crossFieldFaults(line as OrderLine).map(({ field, message }) => ({
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
function crossFieldFaults(line: OrderLine): LineFault[] {
  const faults: LineFault[] = [];
  const price = Number(line.Price);
  const trigger = line.TriggerPrice === undefined ? undefined : Number(line.TriggerPrice);
  const isMarket = MARKET_ORDER_TYPES.includes(line.OrderType);
  const isStopLoss = STOP_LOSS_ORDER_TYPES.includes(line.OrderType);

  if (isMarket && price !== 0) faults.push({ field: 'Price', message: `must be "0" for OrderType ${line.OrderType} (a market order)` });
  if (!isMarket && price === 0) faults.push({ field: 'Price', message: `must be above 0 for OrderType ${line.OrderType}; use ${line.OrderType}-MKT for a market order` });

  if (isStopLoss && (trigger === undefined || trigger === 0)) {
    faults.push({ field: 'TriggerPrice', message: `is required and must be above 0 for OrderType ${line.OrderType}` });
  }
  if (!isStopLoss && trigger !== undefined && trigger !== 0) {
    faults.push({ field: 'TriggerPrice', message: `must be absent or 0 for OrderType ${line.OrderType}; only SL and SL-MKT take a trigger price` });
  }
  // Exchange rule for a stop-loss limit order: a buy triggers at or below its limit, a sell at or above.
  if (line.OrderType === 'SL' && trigger !== undefined && trigger > 0 && price > 0) {
    if (line.TransactionType === 'BUY' && trigger > price) faults.push({ field: 'TriggerPrice', message: 'of a BUY SL order may not exceed its Price' });
    if (line.TransactionType === 'SELL' && trigger < price) faults.push({ field: 'TriggerPrice', message: 'of a SELL SL order may not be below its Price' });
  }

  if (line.disclosed_quantity !== undefined && line.disclosed_quantity > line.Quantity) {
    faults.push({ field: 'disclosed_quantity', message: `(${line.disclosed_quantity}) may not exceed Quantity (${line.Quantity})` });
  }

  if (line.ProductType === 'OFS') faults.push(...ofsLineFaults(line));
  else if (line.validity === '') faults.push({ field: 'validity', message: 'must be DAY, IOC, GTD, GTC, EOS, EOSESS or EOTODY; "" is for OFS lines only' });
  return faults;
}

/** An OFS line will be placed as an OFS bid: the bid's request-alone rules (seed 4.1) apply already here. */
function ofsLineFaults(line: OrderLine): LineFault[] {
  const faults: LineFault[] = [];
  const scrip = line.scripDetail;
  if (line.validity !== undefined && line.validity !== '') faults.push({ field: 'validity', message: 'must be absent or "" on an OFS line' });
  if (line.TransactionType !== 'BUY') faults.push({ field: 'TransactionType', message: 'must be BUY on an OFS line: OFS supports BUY only' });
  if (line.OrderType !== 'RL' && line.OrderType !== 'RL-MKT') {
    faults.push({ field: 'OrderType', message: 'must be RL (limit) or RL-MKT (cut-off) on an OFS line' });
  }
  if (line.is_amo === true) faults.push({ field: 'is_amo', message: 'must be absent or false on an OFS line' });
  if (!OFS_LINE_EXCHANGES.includes(scrip._ExchangeName)) {
    faults.push({ field: 'scripDetail._ExchangeName', message: 'must be NSE or BSE on an OFS line' });
  }
  for (const name of ['_ExpiryDate', '_OptionType', '_StrikePrice'] as const) {
    if (scrip[name] !== undefined && scrip[name] !== '') faults.push({ field: `scripDetail.${name}`, message: 'must be absent or "" on an OFS line' });
  }
  return faults;
}

function lineFieldMessage(violation: Violation, prefix: string): string {
  if (violation.kind === Errors.UNKNOWN_FIELD) {
    return `${violation.field} is not a field of an order line; scrip-master fields belong in scripDetail`;
  }
  if (violation.kind === Errors.INVALID_VALUE) return ruleMessage(violation.field, prefix) ?? violation.message;
  return violation.message;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  description?: string;
}

/**
 * "orders[3].OrderType must be RL (limit), ..." from the schema node's description, which is written to
 * follow "must be"; Ajv's own words ("must match pattern ...") are kept when the node has none.
 */
function ruleMessage(field: string, prefix: string): string | undefined {
  let node: SchemaNode | undefined = OrderLine as SchemaNode;
  for (const name of field.slice(prefix.length + 1).split('.')) {
    const properties: Record<string, SchemaNode> | undefined = node?.properties;
    node = properties && Object.hasOwn(properties, name) ? properties[name] : undefined;
  }
  const description = node?.description;
  return description === undefined ? undefined : `${field} must be ${description}`;
}

/** Whether arrays and objects nest deeper than `limit` levels (the value itself is level 1). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth > limit) return true;
    for (const child of Object.values(item.value)) pending.push({ value: child, depth: item.depth + 1 });
  }
  return false;
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function fail(violations: Violation[]): CartOrdersResult {
  return { ok: false, violations };
}
