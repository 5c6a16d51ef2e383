/**
 * What a batch of order changes writes, decided here and written by the store (OrderRepository.apply):
 * the new orders and the changed ones, one history row per change (the order events), the OMS's outbox
 * entries, the trades, the retail totals' deltas, and the funds: each account's sums and its ledger rows.
 * Plain data from plain data; the property tests (test/domain/order-effects.test.ts) hold it to the
 * books: the ledger always adds up to the accounts' deltas, and the retail totals to the live retail bids.
 */
import type { ExposureAmounts } from '../ofs/rules.js';
import {
  exposureDelta,
  fundsEffect,
  tradeCostPaise,
  type ChangeOrigin,
  type FundsEffect,
  type Order,
  type OrderChange,
  type OutboxAction,
} from './order.js';
import type { Trade } from '../funds/trades.js';

/** One history row: the order as the change left it, and why. */
export interface HistoryEntry {
  order: Order;
  reason: string;
  at: number;
  origin: ChangeOrigin;
}

export interface OutboxEntry {
  orderId: string;
  action: OutboxAction;
  at: number;
}

/** A change of a user's retail total in one issue (`order` names the user and the issue). */
export interface ExposureChange extends ExposureAmounts {
  order: Order;
}

/** One user's funds changes of a batch, summed (docs/design/funds.md). */
export interface AccountChange {
  userId: string;
  blockedPaise: number;
  debitPaise: number;
  at: number;
}

export interface LedgerEntry {
  userId: string;
  kind: 'BLOCK' | 'RELEASE' | 'DEBIT';
  amountPaise: number;
  orderId: string;
  at: number;
}

/** Everything a batch of changes writes. */
export interface OrderWritePlan {
  /** Orders new in the batch, as its last change of each leaves them. */
  inserted: Order[];
  /** Orders the batch changed (in a column that is stored), as its last change of each leaves them. */
  updated: Order[];
  /** One per change, in the changes' order. */
  history: HistoryEntry[];
  outbox: OutboxEntry[];
  trades: Trade[];
  /** Summed by user and issue, in key order: on PostgreSQL rows are locked in one order everywhere. */
  exposure: ExposureChange[];
  /** Summed by user, in user order (the OMS locks accounts in that order too). */
  accounts: AccountChange[];
  ledger: LedgerEntry[];
}

/**
 * Whether a change alters what is stored of an order (the fields an order change may set; OrderRepository's
 * MUTABLE_COLUMNS write the same ones, a test holds them together).
 */
export function storedOrderChanged(before: Order, after: Order): boolean {
  return (
    before.orderType !== after.orderType ||
    before.quantity !== after.quantity ||
    before.pricePaise !== after.pricePaise ||
    before.disclosedQuantity !== after.disclosedQuantity ||
    before.tradedQuantity !== after.tradedQuantity ||
    before.status !== after.status ||
    before.errorReason !== after.errorReason ||
    before.cancelRequestedAt !== after.cancelRequestedAt ||
    before.tradedPricePaise !== after.tradedPricePaise ||
    before.exchangeOrderId !== after.exchangeOrderId ||
    before.fundsBlockedPaise !== after.fundsBlockedPaise ||
    before.carriedForwardAt !== after.carriedForwardAt ||
    before.updatedAt !== after.updatedAt
  );
}

/** The ledger rows of one order's funds effect: what was blocked or released, and what was debited. */
function ledgerEntries(effect: FundsEffect, at: number): LedgerEntry[] {
  const { userId, orderId } = effect;
  const entries: LedgerEntry[] = [];
  if (effect.blockedDeltaPaise > 0)
    entries.push({ userId, orderId, at, kind: 'BLOCK', amountPaise: effect.blockedDeltaPaise });
  if (effect.blockedDeltaPaise < 0)
    entries.push({ userId, orderId, at, kind: 'RELEASE', amountPaise: -effect.blockedDeltaPaise });
  if (effect.debitPaise > 0) entries.push({ userId, orderId, at, kind: 'DEBIT', amountPaise: effect.debitPaise });
  return entries;
}

const exposureKey = (order: Pick<Order, 'userId' | 'symbol' | 'exchange' | 'scripToken'>) =>
  `${order.userId}\u0000${order.symbol}\u0000${order.exchange}\u0000${order.scripToken}`;

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The writes of a batch of changes made at `now`. The changes of one order come one after another; the
 * first one's `before` is what the order was before the batch, the last one's `after` what it becomes.
 */
export function planOrderWrites(changes: readonly OrderChange[], now: number): OrderWritePlan {
  const first = new Map<string, OrderChange>();
  const last = new Map<string, OrderChange>();
  for (const change of changes) {
    if (!first.has(change.after.orderId)) first.set(change.after.orderId, change);
    last.set(change.after.orderId, change);
  }
  const debits = new Map<string, number>();
  for (const { trade } of changes)
    if (trade !== undefined) debits.set(trade.orderId, (debits.get(trade.orderId) ?? 0) + tradeCostPaise(trade));

  const inserted: Order[] = [];
  const updated: Order[] = [];
  const exposure = new Map<string, ExposureChange>();
  const accounts = new Map<string, AccountChange>();
  const ledger: LedgerEntry[] = [];
  for (const [orderId, change] of last) {
    const before = first.get(orderId)!.before;
    const effect = fundsEffect(before, change.after, debits.get(orderId) ?? 0);
    if (effect !== null) {
      const sum = accounts.get(effect.userId) ?? { userId: effect.userId, blockedPaise: 0, debitPaise: 0, at: now };
      sum.blockedPaise += effect.blockedDeltaPaise;
      sum.debitPaise += effect.debitPaise;
      accounts.set(effect.userId, sum);
      ledger.push(...ledgerEntries(effect, now));
    }
    if (before === null) inserted.push(change.after);
    else if (storedOrderChanged(before, change.after)) updated.push(change.after);
    const delta = exposureDelta(before, change.after);
    if (delta.priceValuePaise === 0 && delta.cutoffQuantity === 0) continue;
    const key = exposureKey(change.after);
    const sum = exposure.get(key);
    if (sum === undefined) exposure.set(key, { order: change.after, ...delta });
    else {
      sum.priceValuePaise += delta.priceValuePaise;
      sum.cutoffQuantity += delta.cutoffQuantity;
    }
  }
  return {
    inserted,
    updated,
    history: changes.map((change) => ({ order: change.after, reason: change.reason, at: now, origin: change.origin })),
    outbox: changes.flatMap((change) =>
      change.outbox === undefined ? [] : [{ orderId: change.after.orderId, action: change.outbox, at: now }],
    ),
    trades: changes.flatMap((change) => (change.trade === undefined ? [] : [change.trade])),
    exposure: [...exposure].sort(([a], [b]) => byKey(a, b)).map(([, delta]) => delta),
    accounts: [...accounts.values()].sort((a, b) => byKey(a.userId, b.userId)),
    ledger,
  };
}
