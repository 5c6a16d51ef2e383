/**
 * Order entry's rules for a batch of commands (a new bid, a modification, a cancellation, a carry-forward),
 * judged one after another against a snapshot of what the batch read: the order (404, 409), the issue or
 * the offer and its rules, and the pre-trade checks (422). Plain functions over plain data: the loading,
 * the locks and the writing are OrderEntryService's (services/order-entry.ts), the batching the group
 * commit's (services/group-commit.ts).
 */
import { killSwitchViolations, type AlgoRegistration } from './algo-rules.js';
import { memberDataRefusal } from '../access/member-data.js';
import { ApiError, Errors, type Violation } from '../errors.js';
import type { EntryBook, OfsInstrument } from '../ofs/instrument.js';
import { issueInstrument } from '../ofs/issue/instrument.js';
import type { OfsIssue } from '../ofs/issue/issue.js';
import { offerInstrument } from '../ofs/offer/instrument.js';
import type { OfferRegistration } from '../ofs/offer/offer.js';
import {
  zeroMarginLimitViolations,
  zeroMarginValuePaise,
  type OfferBidder,
  type OtherOfferBid,
  type ZeroMarginExposure,
} from '../ofs/offer/rules.js';
import type { IssueExposure } from '../ofs/rules.js';
import {
  cancellationOf,
  issueKey,
  type ModifyCommand,
  type OrderActionCommand,
  type OrderCommand,
  type PlaceCommand,
  type Requester,
} from './commands.js';
import { ACCEPTED_REASON, exposureDelta, type Order, type OrderChange, type RetailExposure } from './order.js';
import { isLiveStatus, OrderStatus } from './status.js';

function orderNotFound(exchange: string, orderId: string): ApiError {
  return new ApiError(Errors.ORDER_NOT_FOUND, `You have no order ${orderId} on ${exchange}`, [
    { field: 'order_id', message: 'no order of yours has this id on this exchange' },
  ]);
}

/**
 * What a batch's judgments read, loaded once for the batch (OrderEntryService.read) and kept up to date as
 * its commands are accepted: a later command sees the earlier ones' effects (another bid of the same user,
 * or of another account under its PAN, counts in its retail limit, a modification sees the order as the
 * one before left it).
 */
export class BatchSnapshot implements EntryBook {
  /**
   * The retail totals by user and symbol: a command reads its caller's in its symbol, and those of the
   * other accounts under the caller's PAN (the retail limit is per PAN: docs/design/member-data.md).
   */
  private readonly exposureRows = new Map<string, RetailExposure[]>();

  /** The users under each PAN of `pans`: the accounts that share one retail limit. */
  private readonly panHolders = new Map<string, string[]>();

  /** The live bids of the batch's offer bidders in their offers, by user and offer, then order id. */
  private readonly offerBids = new Map<string, Map<string, Order>>();

  constructor(
    readonly now: number,
    readonly issues: Map<string, OfsIssue | undefined>,
    readonly orders: Map<string, Order>,
    exposureRows: readonly RetailExposure[],
    /** The offers of the instruments that are no issue, by instrument. */
    readonly offers: Map<string, OfferRegistration | undefined> = new Map(),
    /** What the offers' rules read of the bidders, by offer and user. */
    readonly bidders: Map<string, OfferBidder> = new Map(),
    liveOfferBids: readonly Order[] = [],
    /** The registered algos of the orders placed or modified, as the transaction read (and locked) them. */
    readonly algos: Map<string, AlgoRegistration> = new Map(),
    /** The 0 %-margin standing of the users whose bids may take 0 % margin, by user. */
    private readonly zeroMargin: Map<string, ZeroMarginExposure> = new Map(),
    /**
     * The PAN under which each user's retail bids count (the callers' as their sessions read it, the other
     * accounts' as read with their bids); a user absent, or without a PAN, counts alone.
     */
    private readonly pans: ReadonlyMap<string, string | null> = new Map(),
  ) {
    for (const row of exposureRows) this.exposureRowsOf(row.userId, row.symbol).push(row);
    for (const order of liveOfferBids) this.offerBidsOf(order.userId, order.offerId!).set(order.orderId, order);
    for (const [userId, pan] of pans) {
      if (pan === null) continue;
      const holders = this.panHolders.get(pan);
      if (holders === undefined) this.panHolders.set(pan, [userId]);
      else holders.push(userId);
    }
  }

  /** The other accounts under the user's PAN, whose live retail bids count in its retail limit. */
  private otherAccounts(userId: string): readonly string[] {
    const pan = this.pans.get(userId);
    const holders = pan === undefined || pan === null ? undefined : this.panHolders.get(pan);
    if (holders === undefined || holders.length < 2) return [];
    return holders.filter((holder) => holder !== userId);
  }

  private offerBidsOf(userId: string, offerId: string): Map<string, Order> {
    const key = `${userId}\u0000${offerId}`;
    let bids = this.offerBids.get(key);
    if (bids === undefined) this.offerBids.set(key, (bids = new Map()));
    return bids;
  }

  offer(exchange: string, scripToken: number): OfferRegistration | undefined {
    return this.offers.get(issueKey(exchange, scripToken));
  }

  bidder(offerId: string, userId: string): OfferBidder | undefined {
    return this.bidders.get(`${offerId}\u0000${userId}`);
  }

  /** The instrument a new bid names: its issue, else the offer it is a listing of, else no issue. */
  instrumentAt(exchange: string, scripToken: number): OfsInstrument {
    const issue = this.issue(exchange, scripToken);
    const offer = issue === undefined ? this.offer(exchange, scripToken) : undefined;
    return offer !== undefined ? offerInstrument(offer, offer.offer.offerId) : issueInstrument(issue);
  }

  /** The instrument of an existing bid: its offer (while its listing is still the offer's) or its issue, as registered now. */
  instrumentOf(order: Order): OfsInstrument {
    if (order.offerId === null) return issueInstrument(this.issue(order.exchange, order.scripToken));
    const registration = this.offer(order.exchange, order.scripToken);
    return offerInstrument(registration?.offer.offerId === order.offerId ? registration : undefined, order.offerId);
  }

  /**
   * The user's other live bids in the offer (without `except`), as its limits count them, and the live
   * retail bids there of the other accounts under its PAN (they share its retail limit, not its others).
   */
  otherOfferBids(userId: string, offerId: string, except: Order | null): OtherOfferBid[] {
    const bids: OtherOfferBid[] = [...this.offerBidsOf(userId, offerId).values()]
      .filter((order) => order.orderId !== except?.orderId)
      .map((order) => ({
        category: order.offerCategory!,
        orderType: order.orderType,
        pricePaise: order.pricePaise,
        quantity: order.quantity - order.tradedQuantity,
      }));
    for (const other of this.otherAccounts(userId)) {
      for (const order of this.offerBidsOf(other, offerId).values()) {
        if (order.offerCategory !== 'RETAIL') continue;
        bids.push({
          category: 'RETAIL',
          orderType: order.orderType,
          pricePaise: order.pricePaise,
          quantity: order.quantity - order.tradedQuantity,
          otherAccount: true,
        });
      }
    }
    return bids;
  }

  private exposureRowsOf(userId: string, symbol: string): RetailExposure[] {
    const key = `${userId}\u0000${symbol}`;
    let rows = this.exposureRows.get(key);
    if (rows === undefined) this.exposureRows.set(key, (rows = []));
    return rows;
  }

  issue(exchange: string, scripToken: number): OfsIssue | undefined {
    return this.issues.get(issueKey(exchange, scripToken));
  }

  /** The registered algo an order carries, if its ID is one's. */
  algo(algoId: string | null): AlgoRegistration | undefined {
    return algoId === null ? undefined : this.algos.get(algoId);
  }

  /**
   * The user's retail exposure in the issues of the symbol, without `except` (the order a modification
   * replaces), and that of the other accounts under its PAN (marked `otherAccount`).
   */
  exposures(userId: string, symbol: string, except: Order | null): IssueExposure[] {
    const own = this.exposureRowsOf(userId, symbol);
    const others = this.otherAccounts(userId);
    let rows: RetailExposure[] = own;
    if (others.length > 0) {
      rows = [...own];
      for (const other of others)
        for (const row of this.exposureRows.get(`${other}\u0000${symbol}`) ?? [])
          rows.push({ ...row, otherAccount: true });
    }
    if (except === null) return rows;
    const replaced = exposureDelta(except, { ...except, status: OrderStatus.CANCELLED });
    return rows.map((row) =>
      row.otherAccount !== true && row.exchange === except.exchange && row.scripToken === except.scripToken
        ? {
            ...row,
            priceValuePaise: row.priceValuePaise + replaced.priceValuePaise,
            cutoffQuantity: row.cutoffQuantity + replaced.cutoffQuantity,
          }
        : row,
    );
  }

  /**
   * The refusal, if any, of `after` (a new or changed 0 %-margin bid; `before`, what it was) by its client's
   * 0 %-margin limit, over the client's other live 0 %-margin bids as the batch stands.
   */
  zeroMarginViolations(after: Order, before: Order | null): Violation[] {
    if (after.marginType !== 'T') return [];
    const standing = this.zeroMargin.get(after.userId);
    const others = (standing?.openPaise ?? 0n) - zeroMarginValueOf(before);
    return zeroMarginLimitViolations(standing, others, zeroMarginValueOf(after));
  }

  /** Records an accepted change, for the commands after it. */
  accept(change: OrderChange): void {
    const { after } = change;
    this.orders.set(after.orderId, after);
    const standing = this.zeroMargin.get(after.userId);
    if (standing !== undefined) standing.openPaise += zeroMarginValueOf(after) - zeroMarginValueOf(change.before);
    if (after.offerId !== null) {
      const bids = this.offerBidsOf(after.userId, after.offerId);
      if (isLiveStatus(after.status)) bids.set(after.orderId, after);
      else bids.delete(after.orderId);
    }
    const delta = exposureDelta(change.before, after);
    if (delta.priceValuePaise === 0 && delta.cutoffQuantity === 0) return;
    const { scripToken } = after;
    const rows = this.exposureRowsOf(after.userId, after.symbol);
    let row = rows.find((r) => r.exchange === after.exchange && r.scripToken === scripToken);
    if (row === undefined) {
      const issue = this.issue(after.exchange, scripToken)!;
      row = {
        userId: after.userId,
        symbol: after.symbol,
        exchange: after.exchange,
        scripToken,
        priceValuePaise: 0,
        cutoffQuantity: 0,
        retailCutoffPricePaise: issue.retailCutoffPricePaise,
        floorPricePaise: issue.floorPricePaise,
      };
      rows.push(row);
    }
    row.priceValuePaise += delta.priceValuePaise;
    row.cutoffQuantity += delta.cutoffQuantity;
  }
}

/**
 * The change a command makes, judged against the batch's snapshot, and recorded in it for the commands
 * after it; throws the ApiError that refuses it. Nothing is written here.
 */
export function judgeOrderCommand(command: OrderCommand, state: BatchSnapshot): OrderChange {
  const change = changeOf(command, state);
  state.accept(change);
  return change;
}

function changeOf(command: OrderCommand, state: BatchSnapshot): OrderChange {
  switch (command.kind) {
    case 'place':
      return judgePlacement(command, state);
    case 'modify':
      return judgeModification(command, state);
    case 'cancel':
      return judgeCancellation(command, state);
    case 'carry':
      return judgeCarryForward(command, state);
  }
}

/** An order (new or modified) whose algo the kill switch stopped is refused, whatever else it asks. */
function checkKillSwitch(state: BatchSnapshot, order: Order): void {
  const stopped = killSwitchViolations(state.algo(order.algoId));
  if (stopped !== null) throw stopped;
}

/** What a bid counts against its client's 0 %-margin limit: a live 0 %-margin bid's open quantity at its price. */
function zeroMarginValueOf(order: Order | null): bigint {
  return order !== null && order.marginType === 'T' && isLiveStatus(order.status) ? zeroMarginValuePaise(order) : 0n;
}

/**
 * A bid (new, modified or carried forward) whose client lacks what the exchange needs for it is refused
 * (422 e-385), once its instrument has judged its category: an offer's bid by the category it is placed in,
 * an issue's by its user's.
 */
function checkMemberData(caller: Requester, order: Order): void {
  const { member } = caller;
  const refusal = memberDataRefusal(
    member,
    order.offerCategory ?? member?.category ?? 'RETAIL',
    order.marginType ?? 'H',
  );
  if (refusal !== null) throw refusal;
}

function judgePlacement(command: PlaceCommand, state: BatchSnapshot): OrderChange {
  checkKillSwitch(state, command.order);
  const order = state.instrumentAt(command.order.exchange, command.order.scripToken).place(command, state);
  checkMemberData(command.caller, order);
  return {
    before: null,
    after: order,
    reason: ACCEPTED_REASON,
    origin: { actor: command.caller.userId, requestId: order.requestId },
    outbox: 'PLACE',
  };
}

function judgeModification(command: ModifyCommand, state: BatchSnapshot): OrderChange {
  const { caller, request } = command;
  const order = ownLiveOrder(state, caller, command.exchange, command.orderId);
  checkKillSwitch(state, order);
  if (request.traded_quantity !== undefined && request.traded_quantity !== order.tradedQuantity) {
    throw new ApiError(
      Errors.ORDER_TRADED_QUANTITY_STALE,
      `The order's traded quantity is ${order.tradedQuantity}, not ${request.traded_quantity}: it has changed since you read it; read it again`,
      [{ field: 'traded_quantity', message: `must be the order's current traded quantity, ${order.tradedQuantity}` }],
    );
  }
  const change = state.instrumentOf(order).modify(command, order, state);
  checkMemberData(caller, change.after);
  return change;
}

function judgeCancellation(command: OrderActionCommand, state: BatchSnapshot): OrderChange {
  const order = ownLiveOrder(state, command.caller, command.exchange, command.orderId);
  state.instrumentOf(order).checkCancellation(command, order, state);
  return cancellationOf(command, state.now, order);
}

/** Carry-forward of a bid to T+1 (an offer's non-retail bid): carried forward, the bid is placed again on T+1, so a stopped algo's is not. */
function judgeCarryForward(command: OrderActionCommand, state: BatchSnapshot): OrderChange {
  const order = ownLiveOrder(state, command.caller, command.exchange, command.orderId);
  checkKillSwitch(state, order);
  const change = state.instrumentOf(order).carryForward(command, order, state);
  if (change.unchanged !== true) checkMemberData(command.caller, change.after);
  return change;
}

/** The caller's order on that exchange, still live and with no cancellation under way. */
function ownLiveOrder(state: BatchSnapshot, caller: Requester, exchange: string, orderId: string): Order {
  const order = state.orders.get(orderId);
  // Another user's order answers exactly like one that does not exist.
  if (order === undefined || order.userId !== caller.userId || order.exchange !== exchange)
    throw orderNotFound(exchange, orderId);
  if (!isLiveStatus(order.status)) {
    throw new ApiError(
      Errors.ORDER_NOT_LIVE,
      `Order ${orderId} is ${order.status}: a finished order can no longer be modified or cancelled`,
      [{ field: 'order_id', message: `the order is ${order.status}` }],
    );
  }
  if (order.cancelRequestedAt !== null) {
    throw new ApiError(
      Errors.ORDER_CANCEL_PENDING,
      `A cancellation of order ${orderId} is already under way: it can no longer be modified or cancelled`,
      [{ field: 'order_id', message: 'a cancellation is under way' }],
    );
  }
  return order;
}
