/**
 * What a request asks of order entry (a new bid, a modification, a cancellation, a carry-forward), and the
 * changes every instrument makes alike of an order: its modification and its cancellation. Judged by
 * orders/entry.ts, which hands the rules of the bid's instrument to it (ofs/instrument.ts).
 */
import { ApiError, Errors } from '../errors.js';
import type { ModifiedTerms, OfsBid } from '../ofs/bid.js';
import { formatPrice } from '../ofs/issue/issue.js';
import type { BidderCategory, BidTerms } from '../ofs/rules.js';
import type { Order, OrderChange } from './order.js';
import type { Member } from '../access/member-data.js';

export const CANCELLATION_REASON = 'Cancellation requested by the user';

/** An instrument's key in the maps a batch reads: its exchange and scrip token. */
export const issueKey = (exchange: string, scripToken: number) => `${exchange}\u0000${scripToken}`;

/** Who asks: the caller of a request, as the rules read it. */
export interface Requester {
  userId: string;
  category: BidderCategory;
  /** Its member data (docs/design/member-data.md); absent: none known, and a bid is refused (e-385). */
  member?: Member;
}

/** A new bid: what the request asked (`bid`) and the order it becomes if accepted. */
export interface PlaceCommand {
  kind: 'place';
  caller: Requester;
  bid: OfsBid;
  order: Order;
}

export interface ModifyCommand {
  kind: 'modify';
  caller: Requester;
  exchange: string;
  orderId: string;
  request: ModifiedTerms;
  requestId: string | null;
}

/** A cancellation, or a carry-forward to T+1 (a bid in an offer). */
export interface OrderActionCommand {
  kind: 'cancel' | 'carry';
  caller: Requester;
  exchange: string;
  orderId: string;
  requestId: string | null;
  /** Who asks on the owner's behalf and why (the kill switch); absent: the owner itself. */
  onBehalf?: { actor: string; reason: string };
  /** A carry-forward's new terms (NSE takes a carry-forward with the bid's terms); absent parts stay as they are. */
  revision?: CarryForwardRevision;
}

/** New terms sent with a carry-forward: the price in rupees as sent, the whole bid's quantity. */
export interface CarryForwardRevision {
  price?: number;
  quantity?: number;
}

/** What a request asks of the order-entry batch. */
export type OrderCommand = PlaceCommand | ModifyCommand | OrderActionCommand;

/** The new terms of a modified bid. */
export interface OrderModification extends BidTerms {
  disclosedQuantity: number;
}

/** "Modification requested: quantity 10 -> 20, price 101.00 -> 102.00", plus any other term that changed. */
export function modificationReason(order: Order, change: OrderModification): string {
  const parts = [
    `quantity ${order.quantity} -> ${change.quantity}`,
    `price ${formatPrice(order.pricePaise)} -> ${formatPrice(change.pricePaise)}`,
  ];
  if (order.orderType !== change.orderType) parts.push(`order_type ${order.orderType} -> ${change.orderType}`);
  if (order.disclosedQuantity !== change.disclosedQuantity)
    parts.push(`disclosed_quantity ${order.disclosedQuantity} -> ${change.disclosedQuantity}`);
  return `Modification requested: ${parts.join(', ')}`;
}

/** The accepted modification: the order with its new terms, queued for the OMS. */
export function modificationOf(
  command: ModifyCommand,
  now: number,
  order: Order,
  change: OrderModification,
): OrderChange {
  return {
    before: order,
    after: {
      ...order,
      orderType: change.orderType,
      quantity: change.quantity,
      pricePaise: change.pricePaise,
      disclosedQuantity: change.disclosedQuantity,
      updatedAt: now,
    },
    reason: modificationReason(order, change),
    origin: { actor: command.caller.userId, requestId: command.requestId },
    outbox: 'MODIFY',
  };
}

/** The accepted cancellation request: the order marked, queued for the OMS. */
export function cancellationOf(command: OrderActionCommand, now: number, order: Order): OrderChange {
  return {
    before: order,
    after: { ...order, cancelRequestedAt: now, updatedAt: now },
    reason: command.onBehalf?.reason ?? CANCELLATION_REASON,
    origin: { actor: command.onBehalf?.actor ?? command.caller.userId, requestId: command.requestId },
    outbox: 'CANCEL',
  };
}

/** A carry-forward asked of a bid whose instrument has no T+1 to carry it to (an issue of the one-listing model). */
export function notCarriedForward(order: Order): ApiError {
  return new ApiError(
    Errors.OFS_CARRY_FORWARD_NOT_ALLOWED,
    `Order ${order.orderId} is a bid in an OFS issue, not in an offer: only bids in an offer are carried forward`,
    [{ field: 'order_id', message: 'the order is not a bid in an offer' }],
  );
}
