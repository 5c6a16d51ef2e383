/**
 * Order entry: an OFS bid, a modification, a cancellation or a carry-forward, from the API to a durable
 * change with its outbox entry for the OMS. Request-alone rules run first (400), then the caller rules
 * (403); then the request becomes a command for the group commit (group-commit.ts), which runs a whole
 * batch of commands in one transaction: this service reads and locks what they are judged on (read), the
 * domain's rules judge each against that snapshot (domain/orders/entry.ts: the order 404/409, the issue or
 * offer and the pre-trade checks 422), and the accepted changes are written together (write). Each change
 * is acknowledged only after that transaction has committed.
 */
import { timeOrderedId } from '../ids.js';
import { ApiError } from '../domain/errors.js';
import { callerViolations, crossFieldViolations, modifyPathViolations, type ModifiedTerms } from '../domain/ofs/bid.js';
import { rupeesToPaise, type OfsIssue } from '../domain/ofs/issue/issue.js';
import type { OfferRegistration } from '../domain/ofs/offer/offer.js';
import type { OfferBidder } from '../domain/ofs/offer/rules.js';
import { BatchSnapshot, judgeOrderCommand } from '../domain/orders/entry.js';
import {
  issueKey,
  type CarryForwardRevision,
  type OrderActionCommand,
  type ModifyCommand,
  type PlaceCommand,
  type Requester,
} from '../domain/orders/commands.js';
import { acceptedOrder, type OrderChange } from '../domain/orders/order.js';
import type { ModifyOrderRequest, OfsOrderRequest } from '../schemas/orders.js';
import type { Store } from '../store/sql/database.js';
import type { OrderEntryMetrics } from '../metrics/operator-metrics.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { OrderRepository } from '../store/orders/orders.js';
import type { AlgoRepository } from '../store/orders/algos.js';
import type { AlgoGate } from './algo-gate.js';
import type { StoreTx } from '../store/sql/write-tx.js';
import type { Caller } from './auth.js';
import { GroupCommitter, type Judgment } from './group-commit.js';
import type { AnswerInTransaction } from './idempotency.js';

const emptyToNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

/** A command of the batch, with the request's answer to keep when it has an idempotency key. */
type Command =
  | (PlaceCommand & { answer: AnswerInTransaction<string> | undefined })
  | ((ModifyCommand | OrderActionCommand) & { answer: AnswerInTransaction<void> | undefined });

/** What a batch is judged on: the loaded snapshot, and each command's idempotency key still held (or the refusal). */
interface Loaded {
  state: BatchSnapshot;
  held: Map<Command, ApiError>;
}

export class OrderEntryService {
  private readonly committer: GroupCommitter<Command, Loaded, unknown, OrderChange>;
  private committed: (() => void) | undefined;

  constructor(
    store: Pick<Store, 'writeTransaction' | 'writeLanes'>,
    private readonly issues: OfsIssueRepository,
    private readonly offers: OfsOfferRepository,
    private readonly orders: OrderRepository,
    private readonly algos: { gate: AlgoGate; registry: Pick<AlgoRepository, 'lockForOrders'> },
    private readonly now: () => number,
    metrics?: OrderEntryMetrics,
  ) {
    this.committer = new GroupCommitter(
      store,
      {
        read: (tx, commands) => this.read(tx, commands),
        judge,
        write: (tx, accepted, { state }) => this.write(tx, accepted, state.now),
      },
      {
        maxInFlight: store.writeLanes,
        onCommitted: () => this.committed?.(),
        ...(metrics !== undefined && { metrics }),
      },
    );
  }

  /** Calls `listener` after each commit of order entry: the embedded OMS's wake-up (OutboxLoop.wake). */
  whenCommitted(listener: () => void): void {
    this.committed = listener;
  }

  /** Whether order entry's commits fall behind (load shedding): see GroupCommitter.fallsBehind. */
  commitsFallBehind(maxWaitMs: number): { behind: boolean; oldestWaitMs: number } {
    return this.committer.fallsBehind(maxWaitMs);
  }

  /**
   * Places an OFS bid and answers its order id once it is durably stored. `answer`, for a request with an
   * idempotency key, writes the request's answer in the same transaction as the order.
   */
  async placeOfsBid(
    caller: Caller,
    bid: OfsOrderRequest,
    requestId: string | null,
    answer?: AnswerInTransaction<string>,
  ): Promise<string> {
    ApiError.throwIfAny(crossFieldViolations(bid));
    ApiError.throwIfAny(callerViolations(bid, caller.userId));
    const { exchange, scrip_token } = bid.scrip_info;
    // SEBI's rules: the algo ID the order carries, and the user's orders a second in the segment.
    const algo = await this.algos.gate.forPlacement(caller.userId, exchange, emptyToNull(bid.algo_id));
    // A price that is not a whole number of paise is refused by issueViolations before this is stored.
    const order = acceptedOrder(
      {
        orderId: timeOrderedId(),
        userId: caller.userId,
        exchange,
        scripToken: scrip_token,
        symbol: bid.scrip_info.symbol,
        series: bid.scrip_info.series,
        transactionType: bid.transaction_type,
        productType: bid.product_type,
        orderType: bid.order_type,
        quantity: Number(bid.quantity),
        pricePaise: rupeesToPaise(bid.price) ?? 0,
        disclosedQuantity: bid.disclosed_quantity ?? 0,
        orderIdentifier: emptyToNull(bid.order_identifier),
        algoId: algo.algoId,
        strategyId: emptyToNull(bid.strategy_id),
        partCode: emptyToNull(bid.part_code),
        venderCode: emptyToNull(bid.vender_code),
        requestId,
        category: caller.category,
        // Set by the batch's judgment when the instrument is a listing of an offer.
        offerId: null,
        offerCategory: null,
        marginType: null,
        // The client's member data as the session read it (no statement of its own), kept with the bid
        // for its whole life: the exchange link sends these, whatever the user's record says later.
        ucc: caller.member.ucc,
        clientType: caller.member.clientType,
        custodianCode: caller.member.custodianCode,
        pan: caller.member.pan,
      },
      0,
    );
    await this.committer.run({ kind: 'place', caller, bid, order, answer });
    return order.orderId;
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
    ApiError.throwIfAny(modifyPathViolations(request, exchange, orderId));
    // The schema has checked the numbers' form: whole numbers, or strings of their digits.
    const terms: ModifiedTerms = {
      order_type: request.order_type,
      quantity: String(request.quantity),
      price: request.price,
      disclosed_quantity: request.disclosed_quantity,
      traded_quantity: request.traded_quantity === undefined ? undefined : Number(request.traded_quantity),
    };
    ApiError.throwIfAny(crossFieldViolations(terms));
    await this.countInThreshold(caller, exchange, orderId);
    await this.committer.run({ kind: 'modify', caller, exchange, orderId, request: terms, requestId, answer });
  }

  /**
   * Carries one of the caller's unallotted non-retail bids in an offer forward to T+1 (its unallotted
   * quantity), at the revised terms when given (a bid below the T-day cut-off needs a price of at least it),
   * and queues it for the OMS, which blocks its funds again. Again for a bid already carried forward: no change.
   */
  async carryForward(
    caller: Caller,
    exchange: string,
    orderId: string,
    requestId: string | null,
    answer?: AnswerInTransaction<void>,
    revision: CarryForwardRevision = {},
  ): Promise<void> {
    await this.countInThreshold(caller, exchange, orderId);
    await this.committer.run({ kind: 'carry', caller, exchange, orderId, requestId, answer, revision });
  }

  /**
   * A modification or a carry-forward is an order message to the exchange: counted in SEBI's threshold like
   * a new order (ApiError e-603 past it). One of no order of the caller's is answered 404 by its judgment.
   */
  private async countInThreshold(caller: Caller, exchange: string, orderId: string): Promise<void> {
    if (!this.algos.gate.countsThreshold) return;
    const order = await this.orders.find(orderId);
    if (order !== undefined && order.userId === caller.userId && order.exchange === exchange)
      await this.algos.gate.forModification(caller.userId, exchange, order.algoId);
  }

  /** Asks the OMS to cancel one of the caller's live orders. */
  async cancelOrder(
    caller: Caller,
    exchange: string,
    orderId: string,
    requestId: string | null,
    answer?: AnswerInTransaction<void>,
  ): Promise<void> {
    await this.committer.run({ kind: 'cancel', caller, exchange, orderId, requestId, answer });
  }

  /**
   * Asks the OMS to cancel an order on its owner's behalf (the kill switch, `onBehalf` naming it and why),
   * under the rules the owner's own cancellation keeps; refused (ApiError) when the order can no longer be
   * cancelled.
   */
  async cancelOnBehalf(
    owner: Requester,
    exchange: string,
    orderId: string,
    onBehalf: { actor: string; reason: string },
  ): Promise<void> {
    await this.committer.run({
      kind: 'cancel',
      caller: owner,
      exchange,
      orderId,
      requestId: null,
      onBehalf,
      answer: undefined,
    });
  }

  /**
   * What a batch reads: the locks (PostgreSQL: per retail user and per PAN, for what can raise a retail
   * total; see lockUsers), the orders it changes (locked), their issues and the bids', the retail totals
   * (the callers' and those of the other accounts under their PANs, which share their retail limit), and
   * whether each request still holds its idempotency key.
   */
  private async read(tx: StoreTx, commands: readonly Command[]): Promise<Loaded> {
    const now = this.now();
    const retailCallers = commands
      .filter((c) => (c.kind === 'place' || c.kind === 'modify') && c.caller.category === 'RETAIL')
      .map((c) => c.caller);
    const retailUsers = retailCallers.map((caller) => caller.userId);
    // A modification of a bid in an offer may raise its bidder's retail or employee total there, like a new
    // bid; a carry-forward with new terms its 0 %-margin total.
    const limitedCallers = commands
      .filter((c) => c.kind === 'modify' || c.kind === 'place' || c.kind === 'carry')
      .map((c) => c.caller);
    const limitedUsers = limitedCallers.map((caller) => caller.userId);
    const placements = commands.filter((c) => c.kind === 'place');
    // The instruments bid on that are no issue may be an offer's listings: their users' limits are judged too.
    const instruments = new Map<string, [string, number]>();
    for (const { order } of placements)
      instruments.set(issueKey(order.exchange, order.scripToken), [order.exchange, order.scripToken]);
    const issues = new Map<string, OfsIssue | undefined>();
    const offers = new Map<string, OfferRegistration | undefined>();
    await this.readInstruments(tx, instruments, issues, offers);
    const hasOffers = [...offers.values()].some((offer) => offer !== undefined);
    const lockedCallers =
      hasOffers || commands.some((c) => c.kind === 'modify' || c.kind === 'carry') ? limitedCallers : retailCallers;
    await this.orders.lockUsers(
      tx,
      lockedCallers.map((caller) => caller.userId),
      pansOf(lockedCallers),
    );
    const orders = await this.orders.lockOrders(
      tx,
      commands.flatMap((c) => (c.kind === 'place' ? [] : [c.orderId])),
    );
    const more = new Map<string, [string, number]>();
    for (const order of orders.values()) {
      const key = issueKey(order.exchange, order.scripToken);
      if (!instruments.has(key)) more.set(key, [order.exchange, order.scripToken]);
    }
    await this.readInstruments(tx, more, issues, offers);
    const held = new Map<Command, ApiError>();
    for (const command of commands) {
      const refusal = await refusalOf(() => command.answer?.confirmHeld(tx));
      if (refusal !== null) held.set(command, refusal);
    }
    // The offers' bidders: who each placing user is in its offer, and its live bids there.
    const offerIds = new Set<string>();
    const bidders = new Map<string, OfferBidder>();
    const zeroMarginUsers = new Set<string>();
    for (const offer of offers.values()) if (offer !== undefined) offerIds.add(offer.offer.offerId);
    for (const offerId of offerIds) {
      const placing = placements
        .filter((c) => offers.get(issueKey(c.order.exchange, c.order.scripToken))?.offer.offerId === offerId)
        .map((c) => c.caller.userId);
      for (const [userId, bidder] of await this.offers.bidders(offerId, placing, tx)) {
        bidders.set(`${offerId}\u0000${userId}`, bidder);
        // Whoever may place a 0 %-margin bid: its standing against its limit is read below (issue 47 row 3).
        if (bidder.marginType === 'T') zeroMarginUsers.add(userId);
      }
    }
    const liveOfferBids =
      offerIds.size === 0
        ? { bids: [], pans: new Map<string, string | null>() }
        : await this.orders.liveOfferBids(tx, limitedUsers, [...offerIds], pansOf(limitedCallers));
    const exposures = await this.orders.exposures(tx, retailUsers, pansOf(retailCallers));
    // The PAN each user's retail bids count under: the other accounts' as read, the callers' as their
    // sessions read it (the PAN their lock was taken on).
    const pans = liveOfferBids.pans;
    for (const row of exposures) pans.set(row.userId, row.pan);
    for (const { caller } of commands) pans.set(caller.userId, caller.member?.pan ?? null);
    // The algos of what is placed or modified, last in the lock order: the kill switch is judged against them.
    const algoIds = [
      ...placements.map((c) => c.order.algoId),
      ...commands.flatMap((c) =>
        c.kind === 'modify' || c.kind === 'carry' ? [orders.get(c.orderId)?.algoId ?? null] : [],
      ),
    ].filter((algoId): algoId is string => algoId !== null && this.algos.gate.mayBeRegistered(algoId));
    const algos = await this.algos.registry.lockForOrders(tx, algoIds);
    // The 0 %-margin standing of whoever may place or raise a 0 %-margin bid (issue 47 row 3).
    for (const command of commands) {
      if ((command.kind === 'modify' || command.kind === 'carry') && orders.get(command.orderId)?.marginType === 'T')
        zeroMarginUsers.add(command.caller.userId);
    }
    const zeroMargin = await this.orders.zeroMarginExposure(tx, [...zeroMarginUsers], now);
    return {
      state: new BatchSnapshot(
        now,
        issues,
        orders,
        exposures,
        offers,
        bidders,
        liveOfferBids.bids,
        algos,
        zeroMargin,
        pans,
      ),
      held,
    };
  }

  /** Each instrument's issue, or else the offer it is a listing of (or neither). */
  private async readInstruments(
    tx: StoreTx,
    instruments: Map<string, [string, number]>,
    issues: Map<string, OfsIssue | undefined>,
    offers: Map<string, OfferRegistration | undefined>,
  ): Promise<void> {
    for (const [key, [exchange, scripToken]] of instruments) {
      const issue = await this.issues.find(exchange, scripToken, tx);
      issues.set(key, issue);
      if (issue === undefined) offers.set(key, await this.offers.findByListing(exchange, scripToken, tx));
    }
  }

  /** The accepted changes, together; then each request's answer, for a retry to replay. */
  private async write(
    tx: StoreTx,
    accepted: readonly { command: Command; change: OrderChange }[],
    now: number,
  ): Promise<void> {
    // A change that changes nothing (a carry-forward asked again) is answered, and not written.
    await this.orders.apply(
      tx,
      accepted.flatMap((a) => (a.change.unchanged ? [] : [a.change])),
      now,
    );
    for (const { command } of accepted) {
      if (command.answer === undefined) continue;
      if (command.kind === 'place') await command.answer.keep(tx, command.order.orderId);
      else await command.answer.keep(tx, undefined);
    }
  }
}

/** The PANs of the callers that have one (the retail limit counts per PAN: docs/design/member-data.md). */
function pansOf(callers: readonly Requester[]): string[] {
  const pans: string[] = [];
  for (const caller of callers) {
    const pan = caller.member?.pan;
    if (pan !== undefined && pan !== null) pans.push(pan);
  }
  return pans;
}

/** Null when `work` passes; the ApiError when it refuses (anything else is thrown on). */
async function refusalOf(work: () => Promise<unknown> | undefined): Promise<ApiError | null> {
  try {
    await work();
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * One command of a batch, judged in order against the batch's snapshot by the domain's rules (nothing is
 * written there, and no transaction is in reach); a request that no longer holds its idempotency key is
 * refused before them.
 */
function judge(command: Command, { state, held }: Loaded): Judgment<unknown, OrderChange> {
  const refusal = held.get(command);
  if (refusal !== undefined) return { accepted: false, error: refusal };
  try {
    const change = judgeOrderCommand(command, state);
    return { accepted: true, change, value: command.kind === 'place' ? command.order.orderId : undefined };
  } catch (error) {
    if (error instanceof ApiError) return { accepted: false, error };
    throw error;
  }
}
