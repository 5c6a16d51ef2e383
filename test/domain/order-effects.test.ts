/**
 * The write plan of a batch of order changes (domain/orders/effects.ts), held to the books over random
 * batches: one history row per change, the funds ledger adding up to each account's deltas, the retail
 * totals moving exactly as the live retail bids do, and orders inserted or updated only as they changed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planOrderWrites, storedOrderChanged } from '../../src/domain/orders/effects.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import {
  orderExposure,
  tradeCostPaise,
  tradeOfAllotment,
  type Order,
  type OrderChange,
} from '../../src/domain/orders/order.js';
import { storedOrder } from '../support/fixtures.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const NOW = Date.parse('2026-11-27T10:00:00+05:30');

const base = (orderId: string, userId: string, scripToken: number): Order =>
  storedOrder({
    orderId,
    userId,
    scripToken,
    symbol: scripToken === 1 ? 'ACME' : 'BETA',
    status: OrderStatus.OMSXMITTED,
    createdAt: NOW - 1000,
    updatedAt: NOW - 1000,
  });

/** What one change may set: the terms, the status, the block, an allotment. */
const step = fc.record({
  status: fc.constantFrom(...Object.values(OrderStatus)),
  orderType: fc.constantFrom('RL', 'RL-MKT'),
  quantity: fc.integer({ min: 1, max: 1_000 }),
  pricePaise: fc.integer({ min: 1, max: 100_000 }),
  fundsBlockedPaise: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: null }),
  allotted: fc.integer({ min: 0, max: 5 }),
  touch: fc.boolean(),
  outbox: fc.option(fc.constantFrom('PLACE' as const, 'MODIFY' as const, 'CANCEL' as const), { nil: undefined }),
});

/** Orders of three users in two issues, new or stored, each with one to three changes in a row. */
const batch = fc
  .array(
    fc.record({
      userId: fc.constantFrom('u1', 'u2', 'u3'),
      scripToken: fc.constantFrom(1, 2),
      category: fc.constantFrom('RETAIL' as const, 'NON_RETAIL' as const),
      inOffer: fc.boolean(),
      funded: fc.boolean(),
      isNew: fc.boolean(),
      steps: fc.array(step, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((orders) => {
    const changes: OrderChange[] = [];
    orders.forEach((spec, i) => {
      const stored: Order = {
        ...base(`o${i}`, spec.userId, spec.scripToken),
        category: spec.category,
        offerId: spec.inOffer ? 'OFFER' : null,
        fundsBlockedPaise: spec.funded ? 5_000 : null,
        status: OrderStatus.PENDING,
      };
      let before: Order | null = spec.isNew ? null : stored;
      for (const s of spec.steps) {
        const previous = before ?? stored;
        const after: Order = {
          ...previous,
          status: s.status,
          orderType: s.orderType,
          quantity: s.quantity,
          pricePaise: s.pricePaise,
          // A funds-checked order stays funds-checked.
          fundsBlockedPaise: spec.funded ? (s.fundsBlockedPaise ?? 0) : null,
          tradedQuantity: previous.tradedQuantity + s.allotted,
          updatedAt: s.touch ? NOW : previous.updatedAt,
        };
        const trade =
          s.allotted > 0
            ? tradeOfAllotment(
                after,
                s.allotted,
                after.pricePaise,
                NOW,
                NOW + DAY_MS,
                after.tradedQuantity === s.allotted ? 1 : 2,
              )
            : undefined;
        changes.push({
          before,
          after,
          reason: `step of o${i}`,
          origin: { actor: 'test', requestId: null },
          ...(s.outbox && { outbox: s.outbox }),
          ...(trade && { trade }),
        });
        before = after;
      }
    });
    return changes;
  });

/** Per order: what it was before the batch (null: new) and what it is after. */
function endsOf(changes: readonly OrderChange[]): Map<string, { before: Order | null; after: Order }> {
  const ends = new Map<string, { before: Order | null; after: Order }>();
  for (const change of changes) {
    const known = ends.get(change.after.orderId);
    ends.set(change.after.orderId, { before: known === undefined ? change.before : known.before, after: change.after });
  }
  return ends;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('planOrderWrites', () => {
  it('is tried on batches that block, release, debit and move retail totals (the generator reaches them)', () => {
    const plans = fc.sample(batch, { numRuns: 300, seed: 7 }).map((changes) => planOrderWrites(changes, NOW));
    expect(
      plans.filter((p) => p.exposure.some((d) => d.priceValuePaise !== 0 || d.cutoffQuantity !== 0)).length,
    ).toBeGreaterThan(30);
    for (const kind of ['BLOCK', 'RELEASE', 'DEBIT'])
      expect(plans.filter((p) => p.ledger.some((e) => e.kind === kind)).length, kind).toBeGreaterThan(30);
    expect(plans.filter((p) => p.updated.length > 0 && p.inserted.length > 0).length).toBeGreaterThan(30);
  });

  it('writes one history row per change, in order, and the outbox entries and trades the changes carry', () => {
    fc.assert(
      fc.property(batch, (changes) => {
        const plan = planOrderWrites(changes, NOW);
        expect(plan.history.map((h) => [h.order, h.reason, h.at])).toEqual(
          changes.map((c) => [c.after, c.reason, NOW]),
        );
        expect(plan.outbox).toEqual(
          changes
            .filter((c) => c.outbox !== undefined)
            .map((c) => ({ orderId: c.after.orderId, action: c.outbox, at: NOW })),
        );
        expect(plan.trades).toEqual(changes.flatMap((c) => (c.trade === undefined ? [] : [c.trade])));
      }),
    );
  });

  it('inserts each new order once, as it ends, and updates a stored one only when a stored field changed', () => {
    fc.assert(
      fc.property(batch, (changes) => {
        const plan = planOrderWrites(changes, NOW);
        const ends = [...endsOf(changes).values()];
        expect(plan.inserted).toEqual(ends.filter((e) => e.before === null).map((e) => e.after));
        expect(plan.updated).toEqual(
          ends.filter((e) => e.before !== null && storedOrderChanged(e.before, e.after)).map((e) => e.after),
        );
      }),
    );
  });

  it('keeps the funds ledger equal to the accounts: blocks less releases is the block moved, debits the cost of the trades', () => {
    fc.assert(
      fc.property(batch, (changes) => {
        const plan = planOrderWrites(changes, NOW);
        for (const account of plan.accounts) {
          const rows = plan.ledger.filter((entry) => entry.userId === account.userId);
          const of = (kind: string) =>
            sum(rows.filter((entry) => entry.kind === kind).map((entry) => entry.amountPaise));
          expect(of('BLOCK') - of('RELEASE')).toBe(account.blockedPaise);
          expect(of('DEBIT')).toBe(account.debitPaise);
        }
        // Every ledger row belongs to an account of the plan; every amount is positive.
        expect(
          plan.ledger.every((entry) => entry.amountPaise > 0 && plan.accounts.some((a) => a.userId === entry.userId)),
        ).toBe(true);
        // The block moved is what the funds-checked orders' blocks moved, the debits what their trades cost.
        const ends = [...endsOf(changes).values()].filter((e) => e.after.fundsBlockedPaise !== null);
        expect(sum(plan.accounts.map((a) => a.blockedPaise))).toBe(
          sum(ends.map((e) => e.after.fundsBlockedPaise! - (e.before?.fundsBlockedPaise ?? 0))),
        );
        const funded = new Set(ends.map((e) => e.after.orderId));
        expect(sum(plan.accounts.map((a) => a.debitPaise))).toBe(
          sum(plan.trades.filter((t) => funded.has(t.orderId)).map(tradeCostPaise)),
        );
        expect(plan.accounts.map((a) => a.userId)).toEqual([...plan.accounts.map((a) => a.userId)].sort());
      }),
    );
  });

  it('moves each retail total by exactly what the live retail bids in its issue add up to after the batch, less before', () => {
    fc.assert(
      fc.property(batch, (changes) => {
        const plan = planOrderWrites(changes, NOW);
        const ends = [...endsOf(changes).values()];
        for (const userId of ['u1', 'u2', 'u3']) {
          for (const scripToken of [1, 2]) {
            const mine = ends.filter((e) => e.after.userId === userId && e.after.scripToken === scripToken);
            const total = (orders: (Order | null)[]) => {
              const amounts = orders.filter((o): o is Order => o !== null).map(orderExposure);
              return {
                priceValuePaise: sum(amounts.map((a) => a.priceValuePaise)),
                cutoffQuantity: sum(amounts.map((a) => a.cutoffQuantity)),
              };
            };
            const after = total(mine.map((e) => e.after));
            const before = total(mine.map((e) => e.before));
            const row = plan.exposure.find((d) => d.order.userId === userId && d.order.scripToken === scripToken);
            expect({
              priceValuePaise: before.priceValuePaise + (row?.priceValuePaise ?? 0),
              cutoffQuantity: before.cutoffQuantity + (row?.cutoffQuantity ?? 0),
            }).toEqual(after);
          }
        }
      }),
    );
  });
});
