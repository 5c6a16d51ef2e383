/**
 * The OMS's order state machine (docs/design/oms.md, "Lifecycle"): what becomes of an order at each step of
 * the worker, given what the store and the exchange said. Pure functions: plain data in, the order changes
 * (or the decision) out; the worker (worker.ts) reads, locks, calls the exchange and applies what they
 * answer. What a bid blocks of its bidder's funds is decided in src/domain/funds/blocking.ts.
 */
import {
  admissionBlock,
  blockAfterModification,
  blockAfterTAllocation,
  fundsShortfall,
  releasesBlock,
} from '../domain/funds/blocking.js';
import type { RiskDecision } from '../domain/ofs/instrument.js';
import { formatRupees, type BidTerms, type IssuePrices } from '../domain/ofs/rules.js';
import {
  averageTradedPricePaise,
  EXCHANGE_ORIGIN,
  OMS_ORIGIN,
  tradeOfAllotment,
  type ChangeOrigin,
  type Order,
  type OrderChange,
} from '../domain/orders/order.js';
import { isLiveStatus, OrderStatus } from '../domain/orders/status.js';
import type { ChangeAnswer, ExchangeBid, ExchangeEvent, PlaceAnswer, Unanswered } from './exchange.js';

/** Orders at the exchange, as far as the OMS knows. */
const AT_EXCHANGE: readonly OrderStatus[] = [OrderStatus.EXXMITTED, OrderStatus.PENDING];

export function isAtExchange(order: Pick<Order, 'status'>): boolean {
  return AT_EXCHANGE.includes(order.status);
}

/** An order the OMS takes to place, with the risk check's verdict on it. */
export interface Placement {
  order: Order;
  risk: RiskDecision;
}

/**
 * The OMS side of placements, up to EXXMITTED: the order cancelled if its user asked, rejected if the risk
 * check refuses it, else, for a bidder with a funds account (in `availablePaise`, what each has available),
 * the funds the bid needs blocked out of what is available, or the bid rejected naming the amounts. A
 * batch's earlier bids leave their bidder less for its later ones. Orders past OMSXMITTED are left alone.
 */
export function admit(
  placements: readonly Placement[],
  availablePaise: ReadonlyMap<string, number>,
  at: number,
): OrderChange[] {
  const available = new Map(availablePaise);
  const changes: OrderChange[] = [];
  for (const { order, risk } of placements) {
    // Any other status means it is past this step.
    if (order.status !== OrderStatus.OMSXMITTED) continue;
    if (order.cancelRequestedAt !== null) {
      changes.push(
        transition(
          order,
          OrderStatus.CANCELLED,
          'Cancelled by the user before it reached the exchange',
          at,
          OMS_ORIGIN,
        ),
      );
      continue;
    }
    const free = available.get(order.userId);
    const block = admissionBlock(order, risk.prices, free);
    const refusal = risk.violation ?? block?.shortfall;
    if (refusal) {
      const reason = `Rejected by the OMS: ${refusal}`;
      changes.push(transition(order, OrderStatus.OMSREJECT, reason, at, OMS_ORIGIN, { errorReason: reason }));
      continue;
    }
    if (block === null) {
      changes.push(transition(order, OrderStatus.EXXMITTED, 'Sent to the exchange', at, OMS_ORIGIN));
      continue;
    }
    available.set(order.userId, free! - Number(block.requiredPaise));
    changes.push(
      transition(
        order,
        OrderStatus.EXXMITTED,
        `Funds of ${formatRupees(block.requiredPaise)} blocked; sent to the exchange`,
        at,
        OMS_ORIGIN,
        {
          fundsBlockedPaise: Number(block.requiredPaise),
        },
      ),
    );
  }
  return changes;
}

/**
 * The orders of a placement batch that go to the exchange, in the batch's order: those EXXMITTED, admitted
 * now (`admission`) or earlier by a worker that died or a pass that failed after its admission.
 */
export function toTransmit(
  orderIds: readonly string[],
  locked: ReadonlyMap<string, Order>,
  admission: readonly OrderChange[],
): Order[] {
  const admitted = new Map(admission.map((change) => [change.after.orderId, change.after]));
  return orderIds.flatMap((orderId) => {
    const order = admitted.get(orderId) ?? locked.get(orderId);
    return order?.status === OrderStatus.EXXMITTED ? [order] : [];
  });
}

export function termsOf(order: Order): BidTerms {
  return { orderType: order.orderType, pricePaise: order.pricePaise, quantity: order.quantity };
}

/** The order as the exchange receives it. */
export function bidOf(order: Order): ExchangeBid {
  const offer =
    order.offerId === null
      ? null
      : {
          offerId: order.offerId,
          userId: order.userId,
          category: order.offerCategory!,
          marginType: order.marginType ?? 'H',
        };
  return {
    orderId: order.orderId,
    exchange: order.exchange,
    scripToken: order.scripToken,
    symbol: order.symbol,
    exchangeOrderId: order.exchangeOrderId,
    member:
      order.ucc === null
        ? null
        : { ucc: order.ucc, clientType: order.clientType ?? 'CLI', custodianCode: order.custodianCode },
    category: order.category,
    offer,
    ...termsOf(order),
  };
}

/**
 * A placement the exchange has not answered: the order stays EXXMITTED (it may stand at the exchange), and
 * its history says what it waits for. The OMS reads the exchange's book for it before it sends it again.
 */
export function awaitingExchange(order: Order | undefined, unanswered: Unanswered): OrderChange[] {
  if (order?.status !== OrderStatus.EXXMITTED) return [];
  const retry = `tried again in ${Math.max(1, Math.round(unanswered.retryAfterMs / 1000))} s`;
  const reason =
    unanswered.outcome === 'unknown'
      ? `Waiting for the exchange's answer (${unanswered.why}); the exchange's book is read for this bid before it is sent again, ${retry}`
      : `Not yet taken by the exchange (${unanswered.why}); ${retry}`;
  return note(order, reason, EXCHANGE_ORIGIN);
}

/** The exchange's answer to a placement, applied if the order is still EXXMITTED. */
export function settle(order: Order | undefined, result: PlaceAnswer, at: number): OrderChange[] {
  if (order?.status !== OrderStatus.EXXMITTED) return [];
  if (result.accepted) {
    return [
      transition(
        order,
        OrderStatus.PENDING,
        `Accepted by the exchange, exchange order id ${result.exchangeOrderId}`,
        at,
        EXCHANGE_ORIGIN,
        {
          exchangeOrderId: result.exchangeOrderId,
        },
      ),
    ];
  }
  return [
    transition(order, OrderStatus.ORDERERROR, `Rejected by the exchange: ${result.reason}`, at, EXCHANGE_ORIGIN, {
      errorReason: result.reason,
    }),
  ];
}

/**
 * A funds-checked order's block raised to `requiredPaise` for its new terms, before they go to the exchange,
 * out of what its bidder has available (undefined: no funds account, and nothing more is blocked). Answers
 * the change, or why the funds lack.
 */
export function raiseBlock(
  order: Order & { fundsBlockedPaise: number },
  requiredPaise: bigint,
  availablePaise: number | undefined,
  at: number,
): { changes: OrderChange[]; shortfall: string | null } {
  if (availablePaise === undefined) return { changes: [], shortfall: null };
  const shortfall = fundsShortfall(requiredPaise, order.fundsBlockedPaise, availablePaise);
  if (shortfall !== null) return { changes: [], shortfall };
  const more = requiredPaise - BigInt(order.fundsBlockedPaise);
  return {
    changes: [
      {
        before: order,
        after: { ...order, fundsBlockedPaise: Number(requiredPaise), updatedAt: at },
        reason: `Funds of ${formatRupees(more)} more blocked for the new terms`,
        origin: OMS_ORIGIN,
      },
    ],
    shortfall: null,
  };
}

/**
 * New terms done at the exchange: the order already has them; its block follows them (`prices` value them,
 * undefined when the listing is no longer registered).
 */
export function modified(order: Order, terms: BidTerms, prices: IssuePrices | undefined, at: number): OrderChange[] {
  const blocked = blockAfterModification(order, terms, prices);
  const block = blocked === undefined ? {} : { fundsBlockedPaise: blocked };
  const after = { ...order, ...block, updatedAt: blocked === undefined ? order.updatedAt : at };
  return [{ before: order, after, reason: 'Modified at the exchange', origin: EXCHANGE_ORIGIN }];
}

/**
 * Why new terms did not get to the exchange: the order was no longer there or its bidder lacked the funds
 * (both the OMS's refusal), or the exchange refused them.
 */
export type ModificationRefusal =
  | { refusedBy: 'status'; status: OrderStatus }
  | { refusedBy: 'funds'; shortfall: string }
  | { refusedBy: 'exchange'; reason: string };

/** The history reason of a refused modification, and who refused it. */
export function refusalOf(refusal: ModificationRefusal): { reason: string; origin: ChangeOrigin } {
  switch (refusal.refusedBy) {
    case 'status':
      return { reason: `Modification not sent to the exchange: the order is ${refusal.status}`, origin: OMS_ORIGIN };
    case 'funds':
      return { reason: `Modification refused by the OMS: ${refusal.shortfall}`, origin: OMS_ORIGIN };
    case 'exchange':
      return { reason: `Modification refused by the exchange: ${refusal.reason}`, origin: EXCHANGE_ORIGIN };
  }
}

/**
 * A refused modification, on the order's history. With `restore` (the terms the exchange holds, and the
 * prices that value them), the order takes those terms back, and its block follows them.
 */
export function modificationRefused(
  order: Order,
  refusal: ModificationRefusal,
  restore: { terms: BidTerms; prices: IssuePrices | undefined } | undefined,
  at: number,
): OrderChange[] {
  const { reason, origin } = refusalOf(refusal);
  if (restore === undefined) return note(order, reason, origin);
  const { orderType, pricePaise, quantity } = restore.terms;
  const restored = { orderType, pricePaise, quantity };
  const blocked = blockAfterModification(order, restored, restore.prices);
  return [
    {
      before: order,
      after: {
        ...order,
        ...restored,
        // The disclosed quantity is ours alone; it must still fit the quantity.
        disclosedQuantity: Math.min(order.disclosedQuantity, quantity),
        ...(blocked !== undefined && { fundsBlockedPaise: blocked }),
        updatedAt: at,
      },
      reason: `${reason}; the order keeps its terms at the exchange`,
      origin,
    },
  ];
}

/** A cancellation the OMS did not send: the order (in `status` when it was read) is not at the exchange. */
export function cancellationNotPossible(order: Order | undefined, status: OrderStatus): OrderChange[] {
  return note(order, `Cancellation not possible: the order is ${status}`, OMS_ORIGIN);
}

/** The exchange's answer to a cancellation, applied if the order is still at the exchange. */
export function cancellationAnswered(order: Order | undefined, result: ChangeAnswer, at: number): OrderChange[] {
  if (!result.done) return note(order, `Cancellation refused by the exchange: ${result.reason}`, EXCHANGE_ORIGIN);
  if (order === undefined || !isAtExchange(order)) return [];
  return [transition(order, OrderStatus.CANCELLED, 'Cancelled by the user', at, EXCHANGE_ORIGIN)];
}

/**
 * The exchange's answer to a carry-forward. Refused: the order is no longer carried forward, takes back the
 * terms the exchange holds (`restore`; a revision sent with the carry-forward is undone) and, as a bid not
 * carried forward, blocks nothing; its history says why.
 */
export function carryForwardAnswered(
  order: Order | undefined,
  result: ChangeAnswer,
  restore: BidTerms | undefined,
  at: number,
): OrderChange[] {
  if (order === undefined) return [];
  if (result.done) return note(order, 'Carried forward at the exchange', EXCHANGE_ORIGIN);
  const terms =
    restore === undefined
      ? {}
      : { orderType: restore.orderType, pricePaise: restore.pricePaise, quantity: restore.quantity };
  return [
    {
      before: order,
      after: {
        ...order,
        ...terms,
        carriedForwardAt: null,
        ...blockLeftByTAllocation({ ...order, carriedForwardAt: null }),
        updatedAt: at,
      },
      reason: `Carry-forward refused by the exchange: ${result.reason}`,
      origin: EXCHANGE_ORIGIN,
    },
  ];
}

/**
 * A carry-forward whose funds the bidder lacks: refused, finally (the exchange re-checks margin at
 * carry-forward, and a bid not carried forward lapses at T+1's close anyway). The order ends: EXECUTED for
 * what T allotted it, else CANCELLED; it blocks nothing.
 */
export function carryForwardRefusedForFunds(order: Order | undefined, shortfall: string, at: number): OrderChange[] {
  if (order === undefined || !isLiveStatus(order.status)) return [];
  const reason = `Carry-forward refused by the OMS: ${shortfall}. The bid is not carried forward and cannot be again`;
  const status = order.tradedQuantity > 0 ? OrderStatus.EXECUTED : OrderStatus.CANCELLED;
  return [
    transition(order, status, reason, at, OMS_ORIGIN, {
      carriedForwardAt: null,
      ...(status === OrderStatus.CANCELLED && { errorReason: reason }),
    }),
  ];
}

/** An exchange event with when the trade it makes settles (null: it makes none). */
export interface DeliveredEvent {
  event: ExchangeEvent;
  settlesAt: number | null;
}

/**
 * One delivery of exchange events, applied in turn to the orders (as locked): two events of one order in
 * one delivery, the second sees the first's outcome.
 */
export function applyEvents(
  orders: ReadonlyMap<string, Order>,
  events: readonly DeliveredEvent[],
  at: number,
): OrderChange[] {
  const current = new Map(orders);
  return events.flatMap(({ event, settlesAt }) => {
    const changes = applyEvent(current.get(event.orderId), event, at, settlesAt);
    for (const change of changes) current.set(change.after.orderId, change.after);
    return changes;
  });
}

/**
 * An allocation event, applied to an order still live (a repeat delivery finds it finished, or, for an
 * event that leaves it live, sees the allotment's trade already made: its trade id is the order's). An
 * offer's T allocation leaves a bid it did not allot in full live for the carry-forward decision, with no
 * block: its funds are released until it is carried forward (then blocked again).
 */
export function applyEvent(
  order: Order | undefined,
  event: ExchangeEvent,
  at: number,
  settlesAt: number | null,
): OrderChange[] {
  if (order === undefined || !isLiveStatus(order.status)) return [];
  let change: OrderChange;
  const allotted =
    event.pricePaise !== null && event.quantity > 0 ? { quantity: event.quantity, pricePaise: event.pricePaise } : null;
  // A second allotment (T+1, after a partial one on T) is the order's second trade.
  const part = order.tradedQuantity > 0 ? 2 : 1;
  const filled = allotted && {
    tradedQuantity: order.tradedQuantity + allotted.quantity,
    tradedPricePaise: averageTradedPricePaise(order, allotted.quantity, allotted.pricePaise),
  };
  switch (event.kind) {
    case 'ALLOTTED':
      change = transition(order, OrderStatus.EXECUTED, event.reason, at, EXCHANGE_ORIGIN, filled ?? {});
      break;
    case 'PART_ALLOTTED':
      // An offer's T allocation allots a bid once: one delivered again (an exchange's file read twice, a
      // restart before its acknowledgement) finds the order's T trade made, and changes nothing.
      if (order.tradedQuantity > 0) return [];
      if (filled === null) return note(order, event.reason, EXCHANGE_ORIGIN);
      change = {
        before: order,
        after: { ...order, ...filled, ...blockLeftByTAllocation(order, filled.tradedQuantity), updatedAt: at },
        reason: event.reason,
        origin: EXCHANGE_ORIGIN,
      };
      break;
    case 'NOTE': {
      const released = blockLeftByTAllocation(order);
      if (released.fundsBlockedPaise === undefined || released.fundsBlockedPaise === order.fundsBlockedPaise)
        return note(order, event.reason, EXCHANGE_ORIGIN);
      return [
        {
          before: order,
          after: { ...order, ...released, updatedAt: at },
          reason: event.reason,
          origin: EXCHANGE_ORIGIN,
        },
      ];
    }
    default:
      // Not allotted (more): what an earlier allotment gave the order stands.
      change =
        order.tradedQuantity > 0
          ? transition(order, OrderStatus.EXECUTED, event.reason, at, EXCHANGE_ORIGIN)
          : transition(order, OrderStatus.CANCELLED, event.reason, at, EXCHANGE_ORIGIN, { errorReason: event.reason });
  }
  if (allotted) {
    if (settlesAt === null)
      throw new RangeError(`the allotment to order ${order.orderId} came without its settlement time`);
    change.trade = tradeOfAllotment(change.after, allotted.quantity, allotted.pricePaise, at, settlesAt, part);
  }
  return [change];
}

/** What an offer's T allocation leaves of a live bid's block, `tradedQuantity` of it allotted (funds-blocking.ts). */
function blockLeftByTAllocation(
  order: Order,
  tradedQuantity: number = order.tradedQuantity,
): { fundsBlockedPaise?: number } {
  const block = blockAfterTAllocation({ ...order, carriedForward: order.carriedForwardAt !== null }, tradedQuantity);
  return block === null ? {} : { fundsBlockedPaise: block };
}

/** The order moved to `status`, with its history reason; `fields` are set as well. */
function transition(
  order: Order,
  status: OrderStatus,
  reason: string,
  at: number,
  origin: ChangeOrigin,
  fields: Partial<Order> = {},
): OrderChange {
  // A finished order blocks nothing more: its funds are released.
  const release = releasesBlock(order, status) ? { fundsBlockedPaise: 0 } : {};
  return { before: order, after: { ...order, ...fields, ...release, status, updatedAt: at }, reason, origin };
}

/** A history entry that changes nothing on the order (undefined: the order is gone). */
function note(order: Order | undefined, reason: string, origin: ChangeOrigin): OrderChange[] {
  return order === undefined ? [] : [{ before: order, after: order, reason, origin }];
}
