/**
 * The `orders` field of an order cart, parsed at the edge: a string that must hold a JSON array of 1 to 50
 * order lines. Parse the string, check each line against its schema, then the domain's rules across the
 * fields of a line (src/domain/orders/cart-line.ts). Every fault of every line is reported, named `orders[i].Field`
 * (i from 0). Execution checks a stored line the same way, and the bid of an OFS line against the
 * place-order schema, as a single bid's body is checked. Saving also checks the price of each OFS line of a
 * registered issue against that issue (registeredIssueViolations).
 */
import { lineRuleViolations, MAX_CART_LINES, MAX_LINE_DEPTH, type CartLine } from '../domain/orders/cart-line.js';
import {
  asLineViolations,
  matchOfsIssue,
  ofsBidOfLine,
  productViolations,
  ROUTABLE_PRODUCT,
  savedBidViolations,
} from '../domain/orders/cart-placement.js';
import { Errors, type Violation } from '../domain/errors.js';
import { prototypeKeyIn, unstorableStringIn } from '../domain/json-safety.js';
import type { OfsIssue } from '../domain/ofs/issue/issue.js';
import { OrderLine } from './ordercart.js';
import { OfsOrderRequest } from './orders.js';
import { compileChecker, createAjv } from './validator.js';

export type CartOrdersResult = { ok: true; lines: OrderLine[] } | { ok: false; violations: Violation[] };

const ajv = createAjv();
const checkLineSchema = compileChecker(ajv, OrderLine);
const checkOfsOrderRequest = compileChecker(ajv, OfsOrderRequest);

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
    return fail([
      {
        kind: Errors.CART_ORDERS_NOT_JSON,
        field: 'orders',
        message: `orders must be a string holding JSON: ${reason}`,
      },
    ]);
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
    return [
      {
        kind: Errors.CART_LINE_INVALID,
        field: prefix,
        message: `${prefix} nests objects and arrays deeper than ${MAX_LINE_DEPTH} levels`,
      },
    ];
  }
  // The orders text is stored and read back: a key that could pollute a prototype is refused in it, at any
  // depth, as in a body (after the depth check: the walk is recursive).
  const pollution = prototypeKeyIn(line, prefix);
  if (pollution !== undefined)
    return [{ kind: Errors.PROTOTYPE_KEY, field: pollution, message: `${pollution} is refused (prototype pollution)` }];
  // The lines become bids: a character no store keeps is refused here, as in a body (http/plugins/storable-strings.ts).
  const unstorable = unstorableStringIn(line, prefix);
  if (unstorable !== undefined) {
    return [
      {
        kind: Errors.STRING_NOT_STORABLE,
        field: unstorable.field,
        message: `${unstorable.field} holds ${unstorable.character}, which is not taken`,
      },
    ];
  }
  const schemaViolations = checkLineSchema(line, prefix).map((v) => ({
    kind: Errors.CART_LINE_INVALID,
    field: v.field,
    message: lineFieldMessage(v, prefix),
  }));
  if (schemaViolations.length > 0) return schemaViolations;
  return lineRuleViolations(line as CartLine, index);
}

/**
 * The faults that keep a stored line from being placed before any stored data is read: the line's own
 * rules (it was valid when saved; they are checked again so that no line escapes them), then its product.
 */
export function unplaceableLineViolations(line: unknown, index: number): Violation[] {
  const lineFaults = orderLineViolations(line, index);
  return lineFaults.length > 0 ? lineFaults : productViolations(line as CartLine, index);
}

export type LineBid = { ok: true; bid: OfsOrderRequest } | { ok: false; violations: Violation[] };

/** The line's bid against the place-order schema, the check a single bid's body gets first (400 codes). */
export function lineBid(line: CartLine, index: number, issue: OfsIssue): LineBid {
  const bid = ofsBidOfLine(line, issue);
  const violations = checkOfsOrderRequest(bid);
  return violations.length === 0
    ? { ok: true, bid: bid as OfsOrderRequest }
    : { ok: false, violations: asLineViolations(index, violations) };
}

/**
 * When a cart is saved, after its lines' own rules: each OFS line that names one registered issue (found as
 * execution finds it) and makes a bid of the place-order schema is checked against that issue's tick and
 * floor (savedBidViolations). Every other line is saved as it is and answered at its execution, as before:
 * a line of another product (e-413), of no registered issue (e-414), naming several (e-415) or another
 * scripToken (e-416), or whose bid breaks the place-order schema (say a Price above 1,000,000,000).
 */
export function registeredIssueViolations(lines: readonly OrderLine[], issues: readonly OfsIssue[]): Violation[] {
  return lines.flatMap((line, index) => {
    if (line.ProductType !== ROUTABLE_PRODUCT) return [];
    const match = matchOfsIssue(line, index, issues);
    if (!match.ok) return [];
    const checked = lineBid(line, index, match.issue);
    return checked.ok ? savedBidViolations(index, checked.bid, match.issue) : [];
  });
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
