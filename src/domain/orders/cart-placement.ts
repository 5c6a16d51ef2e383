/**
 * Cart execution as plain functions over plain data: which registered OFS issue a cart line names, the OFS
 * bid that an OFS line stands for, and the translation of a bid's field names into the line's, so that a
 * line fails with exactly the code a single bid with the same values gets, named `orders[i].Field`. The
 * schema checks of a stored line and of its bid run at the edge (src/schemas/cart-lines.ts). Saving a cart
 * uses the same issue lookup and bid to check an OFS line's price against its issue (savedBidViolations).
 */
import { BID_TO_LINE_FIELD, ofsSegmentOfLine, type CartLine } from './cart-line.js';
import { Errors, type FieldError, type Violation } from '../errors.js';
import { issueViolations, OFS_PRODUCT_TYPE, type OfsBid } from '../ofs/bid.js';
import { rupeesToPaise, type OfsIssue } from '../ofs/issue/issue.js';
import { floorViolations } from '../ofs/rules.js';

/** The only product the embedded OMS routes; lines of any other product are reported, never dropped. */
export const ROUTABLE_PRODUCT = OFS_PRODUCT_TYPE;

/** `orders[i]` followed by the line's name for a bid's field; `orders[i]` alone for a fault of the whole bid. */
export function lineFieldOf(index: number, bidField: string): string {
  if (!Object.hasOwn(BID_TO_LINE_FIELD, bidField)) return `orders[${index}]`;
  return `orders[${index}].${BID_TO_LINE_FIELD[bidField as keyof typeof BID_TO_LINE_FIELD]}`;
}

/** The outcome of one line, as answered in `data`. */
export interface PlacedLine {
  index: number;
  status: 'success';
  orderId: string;
}
export interface FailedLine {
  index: number;
  status: 'error';
  code: string;
  message: string;
  errors: FieldError[];
}
export type LineResult = PlacedLine | FailedLine;

/** A failed line: the first violation names the code and message; all are listed (fields already `orders[i]...`). */
export function failedLine(index: number, violations: readonly Violation[]): FailedLine {
  const first = violations[0];
  if (first === undefined) throw new RangeError('failedLine needs at least one violation');
  return {
    index,
    status: 'error',
    code: first.kind.code,
    message: first.message,
    errors: violations.map(({ field, message }) => ({ field, message })),
  };
}

/**
 * A bid's violations (bid field names, as a single bid would answer them) as the line's: same code and
 * message, the field translated.
 */
export function asLineViolations(index: number, violations: readonly Violation[]): Violation[] {
  return violations.map((v) => ({ ...v, field: lineFieldOf(index, v.field) }));
}

/** A valid line of a product the OMS does not route is reported, not placed. */
export function productViolations(line: CartLine, index: number): Violation[] {
  const product = line.ProductType;
  if (product === ROUTABLE_PRODUCT) return [];
  return [
    {
      kind: Errors.CART_PRODUCT_NOT_ROUTABLE,
      field: `orders[${index}].ProductType`,
      message: `orders[${index}] is a ${product} order: this OMS routes OFS bids only, so it was not placed`,
    },
  ];
}

export type IssueMatch = { ok: true; issue: OfsIssue } | { ok: false; violations: Violation[] };

/**
 * The registered issue an OFS line names by exchange, symbol and series. When the line carries a
 * scripToken, the issue must also have that scrip_token (exchange and scrip_token identify an issue, so
 * it also tells apart several issues of one symbol and series); without one, exactly one issue must match.
 */
export function matchOfsIssue(line: CartLine, index: number, issues: readonly OfsIssue[]): IssueMatch {
  const scrip = line.scripDetail;
  const exchange = ofsSegmentOfLine(scrip._ExchangeName);
  const named = `${scrip.symbol} ${scrip._Series} on ${scrip._ExchangeName}`;
  const prefix = `orders[${index}].scripDetail`;
  const candidates = issues.filter(
    (issue) => issue.exchange === exchange && issue.symbol === scrip.symbol && issue.series === scrip._Series,
  );
  if (candidates.length === 0) {
    return fail({
      kind: Errors.CART_LINE_ISSUE_NOT_FOUND,
      field: `${prefix}.symbol`,
      message: `no OFS issue is registered for ${named} (scripDetail._ExchangeName, symbol and _Series)`,
    });
  }
  const token = scrip.scripToken;
  if (token !== undefined) {
    const issue = candidates.find((candidate) => candidate.scripToken === token);
    if (issue !== undefined) return { ok: true, issue };
    const known = candidates.map((candidate) => candidate.scripToken).join(', ');
    return fail({
      kind: Errors.CART_LINE_SCRIP_TOKEN_MISMATCH,
      field: `${prefix}.scripToken`,
      message: `scripToken ${token} is not the scrip_token of the OFS issue ${named} (${known})`,
    });
  }
  if (candidates.length > 1) {
    const known = candidates.map((candidate) => candidate.scripToken).join(', ');
    return fail({
      kind: Errors.CART_LINE_ISSUE_AMBIGUOUS,
      field: `${prefix}.scripToken`,
      message: `${candidates.length} OFS issues are registered for ${named} (scrip_token ${known}); add scripDetail.scripToken to name one`,
    });
  }
  return { ok: true, issue: candidates[0]! };
}

/**
 * The OFS bid a line stands for, not yet checked: the issue's exchange and scrip_token, the line's
 * values under the bid's names. A TriggerPrice of 0 is the cart's way of writing the bid's null.
 */
export function ofsBidOfLine(line: CartLine, issue: OfsIssue): unknown {
  const scrip = line.scripDetail;
  const trigger = line.TriggerPrice === undefined ? 0 : Number(line.TriggerPrice);
  return {
    scrip_info: {
      exchange: issue.exchange,
      scrip_token: issue.scripToken,
      symbol: scrip.symbol,
      series: scrip._Series,
      ...(scrip._ExpiryDate !== undefined && { expiry_date: scrip._ExpiryDate }),
      ...(scrip._StrikePrice !== undefined && { strike_price: scrip._StrikePrice }),
      ...(scrip._OptionType !== undefined && { option_type: scrip._OptionType }),
    },
    transaction_type: line.TransactionType,
    product_type: line.ProductType,
    order_type: line.OrderType,
    quantity: String(line.Quantity),
    price: Number(line.Price),
    ...(trigger !== 0 && { trigger_price: trigger }),
    ...(line.disclosed_quantity !== undefined && { disclosed_quantity: line.disclosed_quantity }),
    ...(line.validity !== undefined && { validity: line.validity }),
    ...(line.is_amo !== undefined && { is_amo: line.is_amo }),
  };
}

/**
 * When a cart is saved: the faults of an OFS line's bid against the registered issue it names that hold
 * whoever bids and whenever: the issue's tick (issueViolations, which also compares symbol and series, as a
 * single bid meets them first), then, once the tick holds, its floor (a cut-off line has no price to judge).
 * The rules that depend on the bidder or the day (window, cut-off bids, retail cut-off, retail limit) wait
 * for the execution. Code and field as the line's execution would answer them (`price` ->
 * `orders[i].Price`); the message is the single bid's, after the line it belongs to: a cart error lists the
 * faults of every line at once.
 */
export function savedBidViolations(index: number, bid: OfsBid, issue: OfsIssue): Violation[] {
  const issueFaults = issueViolations(bid, issue);
  const faults =
    issueFaults.length > 0
      ? issueFaults
      : floorViolations(
          { orderType: bid.order_type, quantity: Number(bid.quantity), pricePaise: rupeesToPaise(bid.price) ?? 0 },
          issue,
        );
  return asLineViolations(index, faults).map((violation) => ({
    ...violation,
    message: `orders[${index}]: ${violation.message}`,
  }));
}

export type ExecutionOutcome = 'all-placed' | 'some-placed' | 'none-placed';

export function executionOutcome(results: readonly LineResult[]): ExecutionOutcome {
  const placed = results.filter((result) => result.status === 'success').length;
  if (placed === results.length) return 'all-placed';
  return placed === 0 ? 'none-placed' : 'some-placed';
}

function fail(violation: Violation): IssueMatch {
  return { ok: false, violations: [violation] };
}
