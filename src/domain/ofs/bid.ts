/**
 * The rules of an OFS bid, as plain functions over plain data. Rules that need only the request answer
 * 400 and run first; rules against the caller and the registered issue run after them.
 */
import { Errors, type Violation } from '../errors.js';
import { OFS_EXCHANGES, type OfsIssue } from './issue/issue.js';
import { CUTOFF_ORDER_TYPE, LIMIT_ORDER_TYPE, offeredQuantityViolations, tickViolations } from './rules.js';

/*
 * What makes a request an OFS bid (seed 4.1): a BUY of product OFS, at a price (RL) or at the cut-off price
 * (RL-MKT), on NSE_EQ or BSE_EQ, no after-market order, no validity, no derivative fields. Written once
 * here: the place-order schema (src/schemas/orders.ts) is built from these values, and a cart's OFS line
 * is judged by ofsKindFaults when it is saved (src/domain/orders/cart-line.ts).
 */
export const OFS_TRANSACTION_TYPE = 'BUY';
export const OFS_PRODUCT_TYPE = 'OFS';
export const OFS_ORDER_TYPES = [LIMIT_ORDER_TYPE, CUTOFF_ORDER_TYPE] as const;
/** An OFS instrument is no derivative: these fields of scrip_info are absent or "". */
export const OFS_DERIVATIVE_FIELDS = ['expiry_date', 'option_type', 'strike_price'] as const;

/** The fields of a bid that say what kind of order it is, as sent (exchange undefined: no OFS segment). */
export interface OfsKind {
  exchange: string | undefined;
  transaction_type: string;
  order_type: string;
  validity?: string | undefined;
  is_amo?: boolean | undefined;
  expiry_date?: unknown;
  option_type?: unknown;
  strike_price?: unknown;
}

export type OfsKindField =
  | 'validity'
  | 'transaction_type'
  | 'order_type'
  | 'is_amo'
  | 'scrip_info.exchange'
  | `scrip_info.${(typeof OFS_DERIVATIVE_FIELDS)[number]}`;

/** The fields (bid names) whose values make a request no OFS bid; empty for an OFS bid. */
export function ofsKindFaults(bid: OfsKind): OfsKindField[] {
  const faults: OfsKindField[] = [];
  if (bid.validity !== undefined && bid.validity !== '') faults.push('validity');
  if (bid.transaction_type !== OFS_TRANSACTION_TYPE) faults.push('transaction_type');
  if (!(OFS_ORDER_TYPES as readonly string[]).includes(bid.order_type)) faults.push('order_type');
  if (bid.is_amo === true) faults.push('is_amo');
  if (!(OFS_EXCHANGES as readonly (string | undefined)[]).includes(bid.exchange)) faults.push('scrip_info.exchange');
  for (const name of OFS_DERIVATIVE_FIELDS) {
    if (bid[name] !== undefined && bid[name] !== '') faults.push(`scrip_info.${name}`);
  }
  return faults;
}

/** The fields of a bid that the rules read, as the wire schema has already typed them. */
export interface OfsBid {
  scrip_info: { exchange: string; scrip_token: number; symbol: string; series: string };
  order_type: string;
  quantity: string;
  price: number;
  disclosed_quantity?: number | undefined;
  freeze_quantity?: number | undefined;
  client_id?: string | undefined;
}

/** Rules across fields of one request (the schema has checked each field alone); a modification too. */
export function crossFieldViolations(
  bid: Pick<OfsBid, 'order_type' | 'quantity' | 'price' | 'disclosed_quantity' | 'freeze_quantity'>,
): Violation[] {
  const violations: Violation[] = [];
  const quantity = Number(bid.quantity);
  if (bid.order_type === LIMIT_ORDER_TYPE && bid.price === 0) {
    violations.push({
      kind: Errors.OFS_PRICE_ORDER_TYPE,
      field: 'price',
      message:
        'price must be above 0 for order_type RL; use order_type RL-MKT with price 0 to bid at the cut-off price',
    });
  }
  if (bid.order_type === CUTOFF_ORDER_TYPE && bid.price !== 0) {
    violations.push({
      kind: Errors.OFS_PRICE_ORDER_TYPE,
      field: 'price',
      message: 'price must be 0 for order_type RL-MKT (a cut-off bid); use order_type RL for a price bid',
    });
  }
  if (bid.disclosed_quantity !== undefined && bid.disclosed_quantity > quantity) {
    violations.push({
      kind: Errors.OFS_DISCLOSED_QUANTITY,
      field: 'disclosed_quantity',
      message: `disclosed_quantity (${bid.disclosed_quantity}) may not exceed quantity (${quantity})`,
    });
  }
  if (bid.freeze_quantity !== undefined && bid.freeze_quantity > 0 && quantity > bid.freeze_quantity) {
    violations.push({
      kind: Errors.OFS_FREEZE_QUANTITY,
      field: 'quantity',
      message: `quantity (${quantity}) exceeds freeze_quantity (${bid.freeze_quantity})`,
    });
  }
  return violations;
}

/** client_id, when sent, must name the caller: nobody bids for another user through this API. */
export function callerViolations(bid: OfsBid, userId: string): Violation[] {
  if (bid.client_id === undefined || bid.client_id === '' || bid.client_id === userId) return [];
  return [{ kind: Errors.OFS_CLIENT_ID, field: 'client_id', message: 'client_id must be empty or your own user id' }];
}

/** The bid against the registered issue it names (undefined: no such issue). */
export function issueViolations(bid: OfsBid, issue: OfsIssue | undefined): Violation[] {
  const { exchange, scrip_token, symbol, series } = bid.scrip_info;
  if (issue === undefined) {
    return [
      {
        kind: Errors.OFS_ISSUE_NOT_FOUND,
        field: 'scrip_info.scrip_token',
        message: `no OFS issue is registered for scrip_token ${scrip_token} on ${exchange}`,
      },
    ];
  }
  const violations: Violation[] = [];
  if (symbol !== issue.symbol) {
    violations.push({
      kind: Errors.OFS_SCRIP_MISMATCH,
      field: 'scrip_info.symbol',
      message: `symbol "${symbol}" does not match the OFS issue's symbol "${issue.symbol}"`,
    });
  }
  if (series !== issue.series) {
    violations.push({
      kind: Errors.OFS_SCRIP_MISMATCH,
      field: 'scrip_info.series',
      message: `series "${series}" does not match the OFS issue's series "${issue.series}"`,
    });
  }
  violations.push(...tickViolations(bid.price, issue));
  violations.push(...offeredQuantityViolations(Number(bid.quantity), issue.offerQuantity, 'the OFS issue'));
  return violations;
}

/** What a modification asks, whatever form its numbers came in. */
export interface ModifiedTerms {
  order_type: string;
  /** A string of digits, as in a bid. */
  quantity: string;
  price: number;
  disclosed_quantity?: number | undefined;
  /** The traded quantity the client last saw, if sent. */
  traded_quantity?: number | undefined;
}

/**
 * ODIN clients repeat the path's exchange and order_id in a modify body: accepted when they are the
 * path's, refused when they name another order.
 */
export function modifyPathViolations(
  body: { exchange?: string | undefined; order_id?: string | undefined },
  exchange: string,
  orderId: string,
): Violation[] {
  const violations: Violation[] = [];
  if (body.exchange !== undefined && body.exchange !== exchange) {
    violations.push({
      kind: Errors.ORDER_PATH_MISMATCH,
      field: 'exchange',
      message: `exchange must be the path's, ${exchange}, or left out`,
    });
  }
  if (body.order_id !== undefined && body.order_id !== orderId) {
    violations.push({
      kind: Errors.ORDER_PATH_MISMATCH,
      field: 'order_id',
      message: `order_id must be the path's, ${orderId}, or left out`,
    });
  }
  return violations;
}
