/**
 * Order entry: an OFS bid, a modification or a cancellation, from the API to a durable change with its
 * outbox entry for the OMS. Request-alone rules run first (400), then the caller rules (403), then, inside
 * the group-commit transaction that writes, the rules against stored data: the order (404, 409), the
 * registered issue and the pre-trade checks (422). Checks and write share one transaction, which holds
 * order entry on every node (OrderRepository.holdOrderEntry), so that no other write comes between what a
 * check read and what it allowed; each change is acknowledged only after that transaction has committed.
 */
import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ApiError, Errors } from '../domain/errors.js';
import { callerViolations, crossFieldViolations, issueViolations, type OfsBid } from '../domain/ofs-bid.js';
import { formatPrice, rupeesToPaise, type OfsIssue } from '../domain/ofs-issue.js';
import { priceViolations, retailLimitViolations, windowViolations, type BidTerms } from '../domain/pre-trade.js';
import type { ModifyOrderRequest, OfsOrderRequest } from '../schemas/orders.js';
import type { GroupCommitter } from '../store/group-commit.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import { LIVE_STATUSES, type OrderRepository, type OrderRow, type OrderStatus } from '../store/orders.js';
import type { Database } from '../store/tables.js';
import type { Caller } from './auth.js';
import type { AnswerInTransaction } from './idempotency.js';

const emptyToNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

export const CANCELLATION_REASON = 'Cancellation requested by the user';

/** "Modification requested: quantity 10 -> 20, price 101.00 -> 102.00", plus any other term that changed. */
export function modificationReason(order: OrderRow, change: BidTerms & { disclosedQuantity: number }): string {
  const parts = [
    `quantity ${order.quantity} -> ${change.quantity}`,
    `price ${formatPrice(order.price_paise)} -> ${formatPrice(change.pricePaise)}`,
  ];
  if (order.order_type !== change.orderType) parts.push(`order_type ${order.order_type} -> ${change.orderType}`);
  if (order.disclosed_quantity !== change.disclosedQuantity) parts.push(`disclosed_quantity ${order.disclosed_quantity} -> ${change.disclosedQuantity}`);
  return `Modification requested: ${parts.join(', ')}`;
}

function orderNotFound(exchange: string, orderId: string): ApiError {
  return new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId} on ${exchange}`, [
    { field: 'order_id', message: 'no order of yours has this id on this exchange' },
  ]);
}

export class OrderEntryService {
  constructor(
    private readonly issues: OfsIssueRepository,
    private readonly orders: OrderRepository,
    private readonly committer: GroupCommitter,
    private readonly now: () => number,
  ) {}

  /**
   * Places an OFS bid and answers its order id once it is durably stored. `answer`, for a request with an
   * idempotency key, writes the request's answer in the same transaction as the order.
   */
  async placeOfsBid(caller: Caller, bid: OfsOrderRequest, requestId: string | null, answer?: AnswerInTransaction<string>): Promise<string> {
    ApiError.throwIfAny(crossFieldViolations(bid));
    ApiError.throwIfAny(callerViolations(bid, caller.userId));

    const { exchange, scrip_token } = bid.scrip_info;
    const orderId = uuidv7();
    await this.committer.run(async (trx) => {
      await this.orders.holdOrderEntry(trx);
      await answer?.confirmHeld(trx);
      const issue = await this.issues.find(exchange, scrip_token, trx);
      ApiError.throwIfAny(issueViolations(bid, issue));
      // issueViolations has refused any price that is not a whole number of paise.
      const terms: BidTerms = { orderType: bid.order_type, quantity: Number(bid.quantity), pricePaise: rupeesToPaise(bid.price)! };
      await this.checkPreTrade(trx, caller, issue!, terms, null);
      await this.orders.insertAccepted(
        trx,
        {
          orderId,
          userId: caller.userId,
          exchange,
          scripToken: scrip_token,
          symbol: bid.scrip_info.symbol,
          series: bid.scrip_info.series,
          transactionType: bid.transaction_type,
          productType: bid.product_type,
          orderType: terms.orderType,
          quantity: terms.quantity,
          pricePaise: terms.pricePaise,
          disclosedQuantity: bid.disclosed_quantity ?? 0,
          orderIdentifier: emptyToNull(bid.order_identifier),
          algoId: emptyToNull(bid.algo_id),
          strategyId: emptyToNull(bid.strategy_id),
          partCode: emptyToNull(bid.part_code),
          venderCode: emptyToNull(bid.vender_code),
          requestId,
          category: caller.category,
        },
        this.now(),
      );
      await answer?.keep(trx, orderId);
    });
    return orderId;
  }

  /**
   * Replaces the terms of one of the caller's live orders and queues the change for the OMS. The new
   * terms keep every rule a new bid keeps; the retail limit counts them instead of the order's current
   * terms.
   */
  async modifyOrder(
    caller: Caller,
    exchange: string,
    orderId: string,
    request: ModifyOrderRequest,
    requestId: string | null,
    answer?: AnswerInTransaction<void>,
  ): Promise<void> {
    ApiError.throwIfAny(crossFieldViolations(request));
    await this.committer.run(async (trx) => {
      await this.orders.holdOrderEntry(trx);
      await answer?.confirmHeld(trx);
      const order = await this.ownLiveOrder(trx, caller, exchange, orderId);
      if (request.traded_quantity !== undefined && request.traded_quantity !== order.traded_quantity) {
        throw new ApiError(
          Errors.ORDER_TRADED_QUANTITY_STALE,
          `The order's traded quantity is ${order.traded_quantity}, not ${request.traded_quantity}: it has changed since you read it; read it again`,
          [{ field: 'traded_quantity', message: `must be the order's current traded quantity, ${order.traded_quantity}` }],
        );
      }
      const modified: OfsBid = {
        scrip_info: { exchange: order.exchange, scrip_token: order.scrip_token, symbol: order.symbol, series: order.series },
        order_type: request.order_type,
        quantity: request.quantity,
        price: request.price,
      };
      const issue = await this.issues.find(order.exchange, order.scrip_token, trx);
      ApiError.throwIfAny(issueViolations(modified, issue));
      const change = {
        orderType: request.order_type,
        quantity: Number(request.quantity),
        pricePaise: rupeesToPaise(request.price)!,
        disclosedQuantity: request.disclosed_quantity ?? 0,
      };
      await this.checkPreTrade(trx, caller, issue!, change, order.order_id);
      await this.orders.requestModification(trx, order.order_id, change, modificationReason(order, change), this.now(), {
        actor: caller.userId,
        requestId,
      });
      await answer?.keep(trx);
    });
  }

  /** Asks the OMS to cancel one of the caller's live orders. */
  async cancelOrder(caller: Caller, exchange: string, orderId: string, requestId: string | null, answer?: AnswerInTransaction<void>): Promise<void> {
    await this.committer.run(async (trx) => {
      await this.orders.holdOrderEntry(trx);
      await answer?.confirmHeld(trx);
      const order = await this.ownLiveOrder(trx, caller, exchange, orderId);
      const issue = await this.issues.find(order.exchange, order.scrip_token, trx);
      if (issue === undefined) {
        throw new ApiError(Errors.OFS_ISSUE_NOT_FOUND, `The OFS issue of order ${orderId} is no longer registered`, [
          { field: 'order_id', message: 'the order\'s OFS issue is not registered' },
        ]);
      }
      ApiError.throwIfAny(windowViolations(issue, caller.category, this.now()));
      await this.orders.requestCancellation(trx, order.order_id, CANCELLATION_REASON, this.now(), { actor: caller.userId, requestId });
      await answer?.keep(trx);
    });
  }

  /**
   * The pre-trade checks, in the transaction that will write: the caller's window, the price rules, and
   * for a retail caller the Rs 2,00,000 limit over the caller's live bids in the issue's symbol (without
   * `replacedOrderId`, the order a modification replaces).
   */
  private async checkPreTrade(trx: Transaction<Database>, caller: Caller, issue: OfsIssue, terms: BidTerms, replacedOrderId: string | null): Promise<void> {
    ApiError.throwIfAny(windowViolations(issue, caller.category, this.now()));
    ApiError.throwIfAny(priceViolations(terms, issue, caller.category));
    if (caller.category !== 'RETAIL') return;
    const liveBids = await this.orders.liveBidsInSymbol(trx, caller.userId, issue.symbol);
    ApiError.throwIfAny(retailLimitViolations(terms, issue, caller.category, liveBids.filter((bid) => bid.orderId !== replacedOrderId)));
  }

  /** The caller's order on that exchange, still live and with no cancellation under way. */
  private async ownLiveOrder(trx: Transaction<Database>, caller: Caller, exchange: string, orderId: string): Promise<OrderRow> {
    const order = await this.orders.findForChange(trx, orderId);
    // Another user's order answers exactly like one that does not exist.
    if (order === undefined || order.user_id !== caller.userId || order.exchange !== exchange) throw orderNotFound(exchange, orderId);
    if (!LIVE_STATUSES.includes(order.status as OrderStatus)) {
      throw new ApiError(Errors.ORDER_NOT_LIVE, `Order ${orderId} is ${order.status}: a finished order can no longer be modified or cancelled`, [
        { field: 'order_id', message: `the order is ${order.status}` },
      ]);
    }
    if (order.cancel_requested_at !== null) {
      throw new ApiError(
        Errors.ORDER_CANCEL_PENDING,
        `A cancellation of order ${orderId} is already under way: it can no longer be modified or cancelled`,
        [{ field: 'order_id', message: 'a cancellation is under way' }],
      );
    }
    return order;
  }
}
