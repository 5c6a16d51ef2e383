/**
 * An issue of the one-listing model as an OFS instrument (ofs/instrument.ts): its bids are judged by its
 * window, tick, floor, the series' value limit and, for a retail bidder, the Rs 2,00,000 limit over the
 * live bids in the symbol of the bidder and of the other accounts under its PAN; none is carried forward;
 * its trades settle by its delay, or T+1.
 */
import { ApiError, Errors } from '../../errors.js';
import { issueViolations, type OfsBid } from '../bid.js';
import type { EntryBook, OfsInstrument, RiskDecision } from '../instrument.js';
import {
  orderValueViolations,
  priceViolations,
  retailLimitViolations,
  windowViolations,
  type BidTerms,
} from '../rules.js';
import { settlementTime } from '../../funds/trades.js';
import {
  modificationOf,
  notCarriedForward,
  type ModifyCommand,
  type OrderActionCommand,
  type PlaceCommand,
  type Requester,
} from '../../orders/commands.js';
import type { Order, OrderChange } from '../../orders/order.js';
import { rupeesToPaise, type OfsIssue } from './issue.js';

/**
 * The OMS risk check of a bid in an issue: the issue is still registered and the order's window still
 * open. The API judged the rest before its 200; this catches what changed since.
 */
export function issueRisk(order: Order, issue: OfsIssue | undefined, now: number): RiskDecision {
  if (issue === undefined)
    return { violation: `${order.exchange} ${order.scripToken} is not a registered OFS issue`, prices: undefined };
  const [closed] = windowViolations(issue, order.category, now);
  return {
    violation: closed === undefined ? null : `${closed.message}; the order did not reach the exchange`,
    prices: issue,
  };
}

/**
 * The pre-trade checks: the caller's window, the price rules, the series' order value upper limit, and for
 * a retail caller the Rs 2,00,000 limit over the live bids in the issue's symbol of the caller (without
 * `replaced`, the order a modification replaces) and of the other accounts under its PAN.
 */
function checkPreTrade(
  book: EntryBook,
  caller: Requester,
  issue: OfsIssue,
  terms: BidTerms,
  replaced: Order | null,
): void {
  ApiError.throwIfAny(windowViolations(issue, caller.category, book.now));
  ApiError.throwIfAny(priceViolations(terms, issue, caller.category));
  ApiError.throwIfAny(orderValueViolations(issue.valueLimitPaise, terms, issue.retailCutoffPricePaise));
  if (caller.category !== 'RETAIL') return;
  ApiError.throwIfAny(
    retailLimitViolations(terms, issue, caller.category, book.exposures(caller.userId, issue.symbol, replaced)),
  );
}

/** The issue registered on an instrument, or undefined: no issue is (a new bid there is refused, an old one's issue is gone). */
export function issueInstrument(issue: OfsIssue | undefined): OfsInstrument {
  return new IssueInstrument(issue);
}

class IssueInstrument implements OfsInstrument {
  constructor(private readonly issue: OfsIssue | undefined) {}

  place(command: PlaceCommand, book: EntryBook): Order {
    ApiError.throwIfAny(issueViolations(command.bid, this.issue));
    const order: Order = { ...command.order, createdAt: book.now, updatedAt: book.now };
    checkPreTrade(book, command.caller, this.issue!, order, null);
    return order;
  }

  modify(command: ModifyCommand, order: Order, book: EntryBook): OrderChange {
    const { request } = command;
    const modified: OfsBid = {
      scrip_info: {
        exchange: order.exchange,
        scrip_token: order.scripToken,
        symbol: order.symbol,
        series: order.series,
      },
      order_type: request.order_type,
      quantity: request.quantity,
      price: request.price,
    };
    ApiError.throwIfAny(issueViolations(modified, this.issue));
    const change = {
      orderType: request.order_type,
      quantity: Number(request.quantity),
      pricePaise: rupeesToPaise(request.price)!,
      disclosedQuantity: request.disclosed_quantity ?? 0,
    };
    checkPreTrade(book, command.caller, this.issue!, change, order);
    return modificationOf(command, book.now, order, change);
  }

  checkCancellation(command: OrderActionCommand, order: Order, book: EntryBook): void {
    if (this.issue === undefined) {
      throw new ApiError(
        Errors.OFS_ISSUE_NOT_FOUND,
        `The OFS issue of order ${order.orderId} is no longer registered`,
        [{ field: 'order_id', message: "the order's OFS issue is not registered" }],
      );
    }
    ApiError.throwIfAny(windowViolations(this.issue, command.caller.category, book.now));
  }

  carryForward(_command: OrderActionCommand, order: Order): OrderChange {
    throw notCarriedForward(order);
  }

  risk(order: Order, now: number): RiskDecision {
    return issueRisk(order, this.issue, now);
  }

  prices() {
    return this.issue;
  }

  settlesAt(allottedAt: number): number {
    return settlementTime(allottedAt, this.issue?.settlementDelayMs ?? null);
  }
}
