/**
 * Order entry: an OFS bid from the API to a durable order with its outbox entry for the OMS. Request-alone
 * rules run first (400), then the caller rules (403), then the rules against the registered issue (422);
 * the order is acknowledged only after its transaction has committed (group commit).
 */
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../domain/errors.js';
import { callerViolations, crossFieldViolations, issueViolations } from '../domain/ofs-bid.js';
import { rupeesToPaise } from '../domain/ofs-issue.js';
import type { OfsOrderRequest } from '../schemas/orders.js';
import type { GroupCommitter } from '../store/group-commit.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { OrderRepository } from '../store/orders.js';
import type { Caller } from './auth.js';

function throwIfAny(violations: Parameters<typeof ApiError.fromViolations>[0]): void {
  if (violations.length > 0) throw ApiError.fromViolations(violations);
}

const emptyToNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

export class OrderEntryService {
  constructor(
    private readonly issues: OfsIssueRepository,
    private readonly orders: OrderRepository,
    private readonly committer: GroupCommitter,
    private readonly now: () => number,
  ) {}

  /** Places an OFS bid and answers its order id once it is durably stored. */
  async placeOfsBid(caller: Caller, bid: OfsOrderRequest, requestId: string | null): Promise<string> {
    throwIfAny(crossFieldViolations(bid));
    throwIfAny(callerViolations(bid, caller.userId));

    const { exchange, scrip_token } = bid.scrip_info;
    const orderId = uuidv7();
    await this.committer.run(async (trx) => {
      const issue = await this.issues.find(exchange, scrip_token, trx);
      throwIfAny(issueViolations(bid, issue));
      // issueViolations has refused any price that is not a whole number of paise.
      const pricePaise = rupeesToPaise(bid.price)!;
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
          orderType: bid.order_type,
          quantity: Number(bid.quantity),
          pricePaise,
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
    });
    return orderId;
  }
}
