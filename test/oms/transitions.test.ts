/**
 * The OMS's order state machine, step by step, without a store or an exchange: what admission, the
 * exchange's answers and its allocation events make of an order (docs/design/oms.md, "Lifecycle"), and
 * what each does to the order's funds block (docs/design/funds.md).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OfsIssue } from '../../src/domain/ofs/issue/issue.js';
import type { Offer } from '../../src/domain/ofs/offer/offer.js';
import { acceptedOrder, type Order } from '../../src/domain/orders/order.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import {
  admit,
  applyEvents,
  bidOf,
  cancellationAnswered,
  carryForwardAnswered,
  carryForwardRefusedForFunds,
  modificationRefused,
  modified,
  raiseBlock,
  settle,
  toTransmit,
  type Placement,
} from '../../src/oms/transitions.js';
import type { ExchangeEvent } from '../../src/oms/exchange.js';
import type { RiskDecision } from '../../src/domain/ofs/instrument.js';
import { issueRisk } from '../../src/domain/ofs/issue/instrument.js';
import { offerRisk, type RegisteredOffer } from '../../src/domain/ofs/offer/instrument.js';
import { sbinIssue } from '../support/fixtures.js';

const T0 = Date.parse('2026-11-23T10:00:00+05:30');
const HOUR = 3_600_000;
const prices = { floorPricePaise: 10_000, retailCutoffPricePaise: 10_100 };

const issue: OfsIssue = sbinIssue({
  nonRetailOpensAt: T0 - HOUR,
  nonRetailClosesAt: T0 + HOUR,
  retailOpensAt: T0 - HOUR,
  retailClosesAt: T0 + HOUR,
});

let sequence = 0;
function order(fields: Partial<Order> = {}): Order {
  sequence += 1;
  const accepted = acceptedOrder(
    {
      orderId: `O-${sequence}`,
      userId: 'u1',
      exchange: 'NSE_EQ',
      scripToken: 500112,
      symbol: 'SBIN',
      series: 'OF',
      transactionType: 'BUY',
      productType: 'OFS',
      orderType: 'RL',
      quantity: 10,
      pricePaise: 10_150,
      disclosedQuantity: 10,
      orderIdentifier: null,
      algoId: null,
      strategyId: null,
      partCode: null,
      venderCode: null,
      requestId: null,
      category: 'RETAIL',
      offerId: null,
      offerCategory: null,
      marginType: null,
    },
    T0 - HOUR,
  );
  return { ...accepted, ...fields };
}

const passes: RiskDecision = { violation: null, prices };
const at = T0;

describe('admission', () => {
  it('blocks each bid out of what its bidder has left after the batch’s earlier bids, and rejects the one that does not fit', () => {
    const [a, b, c] = [order(), order(), order({ userId: 'u2' })];
    const changes = admit(
      [a, b, c].map((o) => ({ order: o, risk: passes })),
      new Map([
        ['u1', 150_000],
        ['u2', 0],
      ]),
      at,
    );
    expect(
      changes.map((change) => [change.after.orderId, change.after.status, change.after.fundsBlockedPaise]),
    ).toEqual([
      [a.orderId, OrderStatus.EXXMITTED, 101_500],
      [b.orderId, OrderStatus.OMSREJECT, null],
      [c.orderId, OrderStatus.OMSREJECT, null],
    ]);
    expect(changes[0]!.reason).toBe('Funds of Rs 1,015.00 blocked; sent to the exchange');
    expect(changes[1]!.after.errorReason).toBe(
      'Rejected by the OMS: the bid needs Rs 1,015.00 of funds; Rs 485.00 available',
    );
    expect(changes.every((change) => change.origin.actor === 'oms' && change.after.updatedAt === at)).toBe(true);
  });

  it('sends a bid of a bidder without an account without blocking, cancels one its user cancelled, and rejects what the risk check refuses', () => {
    const [free, cancelled, risky] = [order(), order({ cancelRequestedAt: T0 - 1 }), order()];
    const placements: Placement[] = [
      { order: free, risk: passes },
      { order: cancelled, risk: passes },
      { order: risky, risk: { violation: 'the window closed', prices } },
    ];
    const changes = admit(placements, new Map(), at);
    expect(changes.map((change) => [change.after.status, change.reason, change.after.fundsBlockedPaise])).toEqual([
      [OrderStatus.EXXMITTED, 'Sent to the exchange', null],
      [OrderStatus.CANCELLED, 'Cancelled by the user before it reached the exchange', null],
      [OrderStatus.OMSREJECT, 'Rejected by the OMS: the window closed', null],
    ]);
  });

  it('leaves orders past OMSXMITTED alone, and never blocks more than the bidder has', () => {
    expect(
      admit([{ order: order({ status: OrderStatus.PENDING }), risk: passes }], new Map([['u1', 10 ** 9]]), at),
    ).toEqual([]);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1_000 }), { maxLength: 20 }),
        fc.integer({ min: 0, max: 10 ** 8 }),
        (quantities, available) => {
          const changes = admit(
            quantities.map((quantity) => ({ order: order({ quantity }), risk: passes })),
            new Map([['u1', available]]),
            at,
          );
          const blocked = changes.reduce((sum, change) => sum + (change.after.fundsBlockedPaise ?? 0), 0);
          expect(blocked).toBeLessThanOrEqual(available);
          expect(
            changes.every(
              (change) =>
                change.after.status === OrderStatus.EXXMITTED || change.after.status === OrderStatus.OMSREJECT,
            ),
          ).toBe(true);
        },
      ),
    );
  });
});

describe('the risk check', () => {
  it('refuses a bid whose issue is gone or whose window has closed, and values the rest at the issue’s prices', () => {
    const bid = order();
    expect(issueRisk(bid, issue, at)).toEqual({ violation: null, prices: issue });
    expect(issueRisk(bid, undefined, at)).toEqual({
      violation: 'NSE_EQ 500112 is not a registered OFS issue',
      prices: undefined,
    });
    expect(issueRisk(bid, issue, T0 + 2 * HOUR).violation).toMatch(
      /closed at .*; the order did not reach the exchange$/,
    );
  });

  it('refuses a bid in an offer that is gone or cancelled; a 0 %-margin bid blocks nothing', () => {
    const offer: Offer = {
      offerId: 'OF-1',
      symbol: 'SBIN',
      listings: [
        { exchange: 'NSE_EQ', scripToken: 500112, series: { RETAIL: 'RS', NON_RETAIL: 'OF', EMPLOYEE: null } },
      ],
      floorPricePaise: 10_000,
      tickSizePaise: 5,
      baseQuantity: 1_000_000,
      greenShoeQuantity: 0,
      greenShoeExercised: 0,
      greenShoeDecidedAt: null,
      greenShoeDecisionBy: T0 + HOUR,
      retailReservePct: 10,
      retailDiscount: null,
      retailAllocationPrice: 'UNIFORM',
      employeeQuantity: 0,
      employeeGreenShoeQuantity: 0,
      printedPortions: null,
      employeeDiscount: null,
      allocation: 'PROPORTIONATE',
      tDay: { opensAt: T0 - HOUR, closesAt: T0 + HOUR },
      t1Day: { opensAt: T0 + 24 * HOUR, closesAt: T0 + 25 * HOUR },
      settlementDelayMs: null,
    };
    const registered: RegisteredOffer = {
      offer,
      progress: { tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: null },
      tCutoffPricePaise: null,
    };
    const bid = order({ offerId: 'OF-1', offerCategory: 'NII', category: 'NON_RETAIL', marginType: 'H' });
    expect(offerRisk(bid, registered, at)).toEqual({
      violation: null,
      prices: { floorPricePaise: 10_000, retailCutoffPricePaise: null },
    });
    expect(offerRisk({ ...bid, marginType: 'T' }, registered, at)).toEqual({ violation: null, prices: undefined });
    expect(offerRisk(bid, undefined, at)).toEqual({
      violation: 'the offer OF-1 is no longer registered',
      prices: undefined,
    });
    const cancelled = { ...registered, progress: { ...registered.progress, cancelledAt: T0 - 1 } };
    expect(offerRisk(bid, cancelled, at).violation).toMatch(/was cancelled.*; the order did not reach the exchange$/);
  });
});

describe('transmission and the exchange’s answer', () => {
  it('sends the EXXMITTED orders of the batch, admitted now or before a crash, in the batch’s order', () => {
    const [earlier, now, rejected] = [order({ status: OrderStatus.EXXMITTED }), order(), order()];
    const admission = admit(
      [
        { order: now, risk: passes },
        { order: rejected, risk: { violation: 'no', prices } },
      ],
      new Map(),
      at,
    );
    const locked = new Map([earlier, now, rejected].map((o) => [o.orderId, o]));
    expect(
      toTransmit([now.orderId, earlier.orderId, rejected.orderId, 'gone'], locked, admission).map((o) => o.orderId),
    ).toEqual([now.orderId, earlier.orderId]);
    expect(bidOf(now)).toEqual({
      orderId: now.orderId,
      exchange: 'NSE_EQ',
      scripToken: 500112,
      symbol: now.symbol,
      exchangeOrderId: null,
      member: null,
      category: 'RETAIL',
      offer: null,
      orderType: 'RL',
      pricePaise: 10_150,
      quantity: 10,
    });
  });

  it('makes an accepted order PENDING and a rejected one ORDERERROR, releasing its block; only from EXXMITTED', () => {
    const sent = order({ status: OrderStatus.EXXMITTED, fundsBlockedPaise: 101_500 });
    const [accepted] = settle(sent, { accepted: true, exchangeOrderId: 'X-1' }, at);
    expect(accepted!.after).toMatchObject({
      status: OrderStatus.PENDING,
      exchangeOrderId: 'X-1',
      fundsBlockedPaise: 101_500,
    });
    const [rejected] = settle(sent, { accepted: false, reason: 'too late' }, at);
    expect(rejected!.after).toMatchObject({
      status: OrderStatus.ORDERERROR,
      errorReason: 'too late',
      fundsBlockedPaise: 0,
    });
    expect(rejected!.reason).toBe('Rejected by the exchange: too late');
    expect(settle({ ...sent, status: OrderStatus.PENDING }, { accepted: true, exchangeOrderId: 'X-1' }, at)).toEqual(
      [],
    );
    expect(settle(undefined, { accepted: true, exchangeOrderId: 'X-1' }, at)).toEqual([]);
  });
});

describe('modification', () => {
  const live = { ...order({ status: OrderStatus.PENDING, quantity: 20 }), fundsBlockedPaise: 101_500 };

  it('raises the block for new terms out of what is available, or names the shortfall', () => {
    const raised = raiseBlock(live, 203_000n, 101_500, at);
    expect(raised.shortfall).toBeNull();
    expect(raised.changes[0]!.after.fundsBlockedPaise).toBe(203_000);
    expect(raised.changes[0]!.reason).toBe('Funds of Rs 1,015.00 more blocked for the new terms');
    expect(raiseBlock(live, 203_000n, 101_499, at)).toEqual({
      changes: [],
      shortfall: 'the new terms need Rs 1,015.00 more funds (Rs 2,030.00 in all); Rs 1,014.99 available',
    });
    expect(raiseBlock(live, 203_000n, undefined, at)).toEqual({ changes: [], shortfall: null });
  });

  it('once done at the exchange, leaves the block at what the terms need (lower terms release the difference)', () => {
    const lower = { orderType: 'RL', quantity: 5, pricePaise: 10_150 };
    const [change] = modified({ ...live, quantity: 5 }, lower, prices, at);
    expect(change!.after).toMatchObject({ fundsBlockedPaise: 50_750, updatedAt: at });
    expect(change!.reason).toBe('Modified at the exchange');
    const [same] = modified(live, { orderType: 'RL', quantity: 10, pricePaise: 10_150 }, prices, at);
    expect(same!.after).toEqual(live);
  });

  it('names who refused it, and restores the exchange’s terms with the block and disclosed quantity that fit them', () => {
    expect(modificationRefused(live, { refusedBy: 'status', status: OrderStatus.EXECUTED }, undefined, at)).toEqual([
      {
        before: live,
        after: live,
        reason: 'Modification not sent to the exchange: the order is EXECUTED',
        origin: { actor: 'oms', requestId: null },
      },
    ]);
    const [byExchange] = modificationRefused(
      live,
      { refusedBy: 'exchange', reason: 'closed' },
      { terms: { orderType: 'RL', quantity: 4, pricePaise: 10_150 }, prices },
      at,
    );
    expect(byExchange!.reason).toBe(
      'Modification refused by the exchange: closed; the order keeps its terms at the exchange',
    );
    expect(byExchange!.origin.actor).toBe('exchange');
    expect(byExchange!.after).toMatchObject({
      quantity: 4,
      disclosedQuantity: 4,
      fundsBlockedPaise: 40_600,
      updatedAt: at,
    });
    const [byFunds] = modificationRefused(live, { refusedBy: 'funds', shortfall: 'Rs 0.00 available' }, undefined, at);
    expect([byFunds!.reason, byFunds!.origin.actor]).toEqual([
      'Modification refused by the OMS: Rs 0.00 available',
      'oms',
    ]);
  });
});

describe('cancellation and carry-forward', () => {
  it('cancels an order at the exchange and releases its block; notes a refusal', () => {
    const live = order({ status: OrderStatus.PENDING, fundsBlockedPaise: 101_500 });
    expect(cancellationAnswered(live, { done: true }, at)[0]!.after).toMatchObject({
      status: OrderStatus.CANCELLED,
      fundsBlockedPaise: 0,
    });
    expect(cancellationAnswered(live, { done: false, reason: 'closed' }, at)[0]!.reason).toBe(
      'Cancellation refused by the exchange: closed',
    );
    expect(cancellationAnswered({ ...live, status: OrderStatus.EXECUTED }, { done: true }, at)).toEqual([]);
  });

  it("drops the carry-forward the exchange refused: the exchange's terms back, the block released", () => {
    const carried = order({
      status: OrderStatus.PENDING,
      carriedForwardAt: T0,
      pricePaise: 10_500,
      quantity: 40,
      fundsBlockedPaise: 420_000,
    });
    const [refused] = carryForwardAnswered(
      carried,
      { done: false, reason: 'T+1 closed' },
      { orderType: 'RL', pricePaise: 10_000, quantity: 40 },
      at,
    );
    expect(refused!.after).toMatchObject({
      carriedForwardAt: null,
      pricePaise: 10_000,
      quantity: 40,
      fundsBlockedPaise: 0,
    });
    expect(refused!.reason).toBe('Carry-forward refused by the exchange: T+1 closed');
    expect(carryForwardAnswered(carried, { done: true }, undefined, at)[0]!.after).toBe(carried);
  });

  it('refuses a carry-forward its bidder cannot fund, finally: the order ends with what T allotted it', () => {
    const carried = order({ status: OrderStatus.PENDING, carriedForwardAt: T0, quantity: 40, fundsBlockedPaise: 0 });
    const [cancelled] = carryForwardRefusedForFunds(
      carried,
      'the bid needs Rs 4,200.00 of funds; Rs 10.00 available',
      at,
    );
    expect(cancelled!.after).toMatchObject({
      status: OrderStatus.CANCELLED,
      carriedForwardAt: null,
      fundsBlockedPaise: 0,
    });
    expect(cancelled!.reason).toBe(
      'Carry-forward refused by the OMS: the bid needs Rs 4,200.00 of funds; Rs 10.00 available. The bid is not carried forward and cannot be again',
    );
    const [executed] = carryForwardRefusedForFunds(
      { ...carried, tradedQuantity: 10, tradedPricePaise: 10_500 },
      'short',
      at,
    );
    expect(executed!.after).toMatchObject({ status: OrderStatus.EXECUTED, tradedQuantity: 10 });
    expect(carryForwardRefusedForFunds({ ...carried, status: OrderStatus.CANCELLED }, 'short', at)).toEqual([]);
  });
});

describe('allocation events', () => {
  const event = (orderId: string, fields: Partial<ExchangeEvent>): ExchangeEvent => ({
    eventId: `E-${orderId}-${fields.kind}`,
    orderId,
    kind: 'ALLOTTED',
    quantity: 0,
    pricePaise: null,
    reason: 'r',
    day: null,
    ...fields,
  });

  it('applies two events of one order in one delivery in turn: a part allotment on T (the rest of the block released), then the rest', () => {
    const bid = order({
      status: OrderStatus.PENDING,
      category: 'NON_RETAIL',
      quantity: 10,
      fundsBlockedPaise: 101_500,
    });
    const changes = applyEvents(
      new Map([[bid.orderId, bid]]),
      [
        {
          event: event(bid.orderId, { kind: 'PART_ALLOTTED', quantity: 4, pricePaise: 10_100, day: 'T' }),
          settlesAt: at + 1_000,
        },
        {
          event: event(bid.orderId, { kind: 'ALLOTTED', quantity: 6, pricePaise: 10_200, day: 'T+1' }),
          settlesAt: at + 60_000,
        },
      ],
      at,
    );
    expect(
      changes.map((change) => [
        change.after.status,
        change.after.tradedQuantity,
        change.after.fundsBlockedPaise,
        change.trade?.tradeId,
      ]),
    ).toEqual([
      [OrderStatus.PENDING, 4, 0, `T-${bid.orderId}`],
      [OrderStatus.EXECUTED, 10, 0, `T-${bid.orderId}-2`],
    ]);
    expect(changes[1]!.after.tradedPricePaise).toBe(10_160);
    expect(changes.map((change) => change.trade!.settlesAt)).toEqual([at + 1_000, at + 60_000]);
  });

  it('applies a part allotment delivered twice once: no second trade, the traded quantity counted once', () => {
    const bid = order({
      status: OrderStatus.PENDING,
      category: 'NON_RETAIL',
      quantity: 10,
      fundsBlockedPaise: 101_500,
    });
    const part = event(bid.orderId, { kind: 'PART_ALLOTTED', quantity: 4, pricePaise: 10_100, day: 'T' });
    const [first] = applyEvents(new Map([[bid.orderId, bid]]), [{ event: part, settlesAt: at + 1_000 }], at);
    expect(first!.after).toMatchObject({ tradedQuantity: 4 });
    const again = applyEvents(
      new Map([[bid.orderId, first!.after]]),
      [{ event: { ...part, eventId: 'E-again' }, settlesAt: at + 1_000 }],
      at + 5,
    );
    expect(again).toEqual([]);
  });

  it('releases the block of a bid the T allocation left unallotted, until it is carried forward', () => {
    const bid = order({
      status: OrderStatus.PENDING,
      category: 'NON_RETAIL',
      quantity: 10,
      fundsBlockedPaise: 101_500,
    });
    const [note] = applyEvents(
      new Map([[bid.orderId, bid]]),
      [{ event: event(bid.orderId, { kind: 'NOTE', reason: 'not allotted on T', day: 'T' }), settlesAt: null }],
      at,
    );
    expect(note!.after).toMatchObject({ status: OrderStatus.PENDING, fundsBlockedPaise: 0 });
    expect(note!.reason).toBe('not allotted on T');
    // Carried forward already (its T outcome came late): it keeps what its open shares need.
    const carried = { ...bid, carriedForwardAt: at - 1, fundsBlockedPaise: 10 * bid.pricePaise };
    const [late] = applyEvents(
      new Map([[bid.orderId, carried]]),
      [{ event: event(bid.orderId, { kind: 'NOTE', reason: 'late' }), settlesAt: null }],
      at,
    );
    expect(late!.after.fundsBlockedPaise).toBe(10 * bid.pricePaise);
    // Not funds-checked: a note only.
    const unchecked = { ...bid, fundsBlockedPaise: null };
    expect(
      applyEvents(
        new Map([[bid.orderId, unchecked]]),
        [{ event: event(bid.orderId, { kind: 'NOTE' }), settlesAt: null }],
        at,
      )[0]!.after,
    ).toBe(unchecked);
  });

  it('refuses an allotment without its settlement time', () => {
    const bid = order({ status: OrderStatus.PENDING });
    expect(() =>
      applyEvents(
        new Map([[bid.orderId, bid]]),
        [{ event: event(bid.orderId, { quantity: 1, pricePaise: 10_000 }), settlesAt: null }],
        at,
      ),
    ).toThrow('came without its settlement time');
  });

  it('cancels a bid not allotted, keeps what an earlier allotment gave, and ignores a finished order', () => {
    const bid = order({ status: OrderStatus.PENDING, fundsBlockedPaise: 101_500 });
    const [none] = applyEvents(
      new Map([[bid.orderId, bid]]),
      [{ event: event(bid.orderId, { kind: 'NOT_ALLOTTED', reason: 'below cut-off' }), settlesAt: null }],
      at,
    );
    expect(none!.after).toMatchObject({
      status: OrderStatus.CANCELLED,
      errorReason: 'below cut-off',
      fundsBlockedPaise: 0,
    });
    const part = { ...bid, tradedQuantity: 4, tradedPricePaise: 10_100 };
    const [rest] = applyEvents(
      new Map([[bid.orderId, part]]),
      [{ event: event(bid.orderId, { kind: 'NOT_ALLOTTED' }), settlesAt: null }],
      at,
    );
    expect(rest!.after).toMatchObject({ status: OrderStatus.EXECUTED, tradedQuantity: 4 });
    const done = { ...bid, status: OrderStatus.EXECUTED };
    expect(
      applyEvents(
        new Map([[bid.orderId, done]]),
        [{ event: event(bid.orderId, { kind: 'ALLOTTED', quantity: 10, pricePaise: 10_100 }), settlesAt: at }],
        at,
      ),
    ).toEqual([]);
  });
});
