/**
 * The allotment explained (src/domain/ofs/offer/allotment-explained.ts, issue 51): each reason code from a
 * constructed case, the single-bidder cap across days, and the figures adding up (fast-check).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  explainAllotment,
  indianNumber,
  indianRupees,
  istTime,
  withoutErrorCodes,
  type BidAllotment,
  type BidFundsEntry,
  type ExplainedBidInput,
} from '../../../src/domain/ofs/offer/allotment-explained.js';
import type { Offer, OfferRegistration } from '../../../src/domain/ofs/offer/offer.js';
import { NO_HOLIDAYS } from '../../../src/domain/ofs/trading-calendar.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** T: Tuesday 1 December 2026, 09:15 to 15:30 India time; T+1 Wednesday 2 December. */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + DAY;
const T1_CLOSE = T1 + 375 * MINUTE;
/** The pay-outs: 13:30 India time on Wednesday 2 and Thursday 3 December. */
const T_PAYOUT = Date.parse('2026-12-02T08:00:00Z');
const T1_PAYOUT = Date.parse('2026-12-03T08:00:00Z');

/** 10,000 shares: retail 1,000, non-retail 9,000, the single-bidder cap 2,500; floor 100.00. */
function registration(overrides: Partial<OfferRegistration> = {}, terms: Partial<Offer> = {}): OfferRegistration {
  const offer: Offer = {
    offerId: 'ACME-OFS-1',
    symbol: 'ACME',
    listings: [{ exchange: 'NSE_EQ', scripToken: 700001, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } }],
    floorPricePaise: 10_000,
    tickSizePaise: 5,
    baseQuantity: 10_000,
    greenShoeQuantity: 0,
    greenShoeExercised: 0,
    greenShoeDecidedAt: null,
    greenShoeDecisionBy: T_CLOSE,
    retailReservePct: 10,
    retailDiscount: null,
    retailAllocationPrice: 'UNIFORM',
    employeeQuantity: 100,
    employeeGreenShoeQuantity: 0,
    employeeDiscount: null,
    printedPortions: null,
    allocation: 'PRICE_PRIORITY',
    tDay: { opensAt: T, closesAt: T_CLOSE },
    t1Day: { opensAt: T1, closesAt: T1_CLOSE },
    settlementDelayMs: null,
    ...terms,
  };
  return {
    offer,
    progress: { tAllocatedAt: T_CLOSE + MINUTE, t1AllocatedAt: T1_CLOSE + MINUTE, cancelledAt: null },
    tCutoffPricePaise: 10_100,
    tUnallotted: 0,
    tProceedAt: null,
    tHeldAt: null,
    t1RetailCutoffPricePaise: 10_100,
    ...overrides,
  };
}

let seq = 0;
/** A bid placed on its day, with its history's first row; the rest as given. */
function bid(overrides: Partial<ExplainedBidInput> = {}): ExplainedBidInput {
  seq += 1;
  const category = overrides.category ?? 'NII';
  const placedAt = category === 'RETAIL' || category === 'EMPLOYEE' ? T1 + 10 * MINUTE : T + 10 * MINUTE;
  const quantity = overrides.quantity ?? 6_000;
  const pricePaise = overrides.pricePaise ?? 10_100;
  return {
    orderId: `o${String(seq).padStart(6, '0')}`,
    exchange: 'NSE_EQ',
    symbol: 'ACME',
    series: category === 'RETAIL' ? 'RS' : 'IS',
    category,
    marginType: 'H',
    status: 'EXECUTED',
    pricePaise,
    quantity,
    carriedForward: false,
    cancelRequested: false,
    errorReason: null,
    createdAt: placedAt,
    updatedAt: T1_CLOSE + MINUTE,
    fundsBlockedPaise: 0,
    allotments: [],
    changes: [
      { at: placedAt, status: 'OMSXMITTED', quantity, pricePaise, actor: 'u' },
      { at: placedAt + 1, status: 'PENDING', quantity, pricePaise, actor: 'exchange' },
    ],
    funds: [],
    ...overrides,
  };
}

const onT = (quantity: number, pricePaise: number): BidAllotment => ({
  quantity,
  pricePaise,
  at: T_CLOSE + MINUTE,
  settlesAt: T_PAYOUT,
});
const onT1 = (quantity: number, pricePaise: number): BidAllotment => ({
  quantity,
  pricePaise,
  at: T1_CLOSE + MINUTE,
  settlesAt: T1_PAYOUT,
});
/**
 * The ledger of a bid blocked in full, as OrderRepository.apply writes it: an allotment debits its cost from
 * the cash and the block is released (the whole of it once the bid is finished).
 */
function ledger(quantity: number, pricePaise: number, allotments: BidAllotment[]): BidFundsEntry[] {
  const entries: BidFundsEntry[] = [{ kind: 'BLOCK', amountPaise: quantity * pricePaise, at: T }];
  for (const a of allotments) entries.push({ kind: 'DEBIT', amountPaise: a.quantity * a.pricePaise, at: a.at });
  entries.push({ kind: 'RELEASE', amountPaise: quantity * pricePaise, at: T1_CLOSE + MINUTE });
  return entries;
}

const explain = (bids: ExplainedBidInput[], reg = registration(), now = T1_CLOSE + 10 * MINUTE) =>
  explainAllotment(reg, bids, NO_HOLIDAYS, now);

describe('the words', () => {
  it('writes rupees and shares in the Indian grouping, times in India time', () => {
    expect(indianNumber(6000)).toBe('6,000');
    expect(indianNumber(1234567)).toBe('12,34,567');
    expect(indianRupees(25_250_000)).toBe('Rs 2,52,500.00');
    expect(istTime(T_PAYOUT)).toBe('Wed 2 Dec 13:30 IST');
    expect(withoutErrorCodes('e-380: below the T-day cut-off 101.00 (e-380)')).toBe('below the T-day cut-off 101.00');
  });
});

describe('each reason', () => {
  it('SINGLE_BIDDER_CAP: 2,500 of 6,000 on T is the cap; the 3,500 carried forward get nothing on T+1', () => {
    const allotments = [onT(2_500, 10_100)];
    const b = bid({ carriedForward: true, allotments, funds: ledger(6_000, 10_100, allotments) });
    const data = explain([b]);
    const [explained] = data.bids;
    expect(explained).toMatchObject({
      outcome: 'PART_ALLOTTED',
      allotted_quantity: 2_500,
      not_allotted_quantity: 3_500,
      average_price: 101,
      carried_forward: true,
      funds: { blocked: 0, debited: 2_52_500, released: 3_53_500 },
    });
    expect(explained!.days).toEqual([
      expect.objectContaining({
        day: 'T',
        bid_quantity: 6_000,
        allotted_quantity: 2_500,
        price: 101,
        value: 2_52_500,
        reason: 'SINGLE_BIDDER_CAP',
        settles_at: new Date(T_PAYOUT).toISOString(),
      }),
      expect.objectContaining({
        day: 'T+1',
        bid_quantity: 3_500,
        allotted_quantity: 0,
        price: null,
        value: 0,
        reason: 'SINGLE_BIDDER_CAP',
        settles_at: null,
      }),
    ]);
    expect(explained!.explanation).toBe(
      'Allotted 2,500 of 6,000 at Rs 101.00: the single-bidder cap (2,500 shares a bidder) took the rest; Rs 2,52,500.00 debited, Rs 3,53,500.00 released; settles Wed 2 Dec 13:30 IST',
    );
    expect(explained!.days[1]!.explanation).toContain('2,500 shares a bidder');
    expect(data.totals).toEqual({
      bid_quantity: 6_000,
      allotted_quantity: 2_500,
      not_allotted_quantity: 3_500,
      blocked: 0,
      debited: 2_52_500,
      released: 3_53_500,
    });
  });

  it('counts the cap over all the bidder’s bids, MF and IC exempt', () => {
    const a = bid({ quantity: 2_000, allotments: [onT(2_000, 10_100)] });
    const b = bid({ quantity: 1_000, allotments: [onT(500, 10_100)], carriedForward: true });
    expect(explain([a, b]).bids[1]!.days.map((d) => d.reason)).toEqual(['SINGLE_BIDDER_CAP', 'SINGLE_BIDDER_CAP']);
    const mf = bid({ category: 'MF', quantity: 6_000, allotments: [onT(3_000, 10_100)], carriedForward: true });
    expect(explain([mf]).bids[0]!.days[0]!.reason).toBe('PRICE_PRIORITY');
  });

  it('a bid below the cut-off is explained by its price, though the bidder’s other bid reached the cap', () => {
    const capped = bid({ quantity: 6_000, pricePaise: 10_200, allotments: [onT(2_500, 10_200)] });
    const below = bid({ quantity: 1_000, pricePaise: 10_050, status: 'CANCELLED' });
    expect(explain([capped, below]).bids.map((b) => b.days.map((d) => d.reason))).toEqual([
      ['SINGLE_BIDDER_CAP', 'NOT_CARRIED_FORWARD'],
      ['BELOW_CUTOFF', 'NOT_CARRIED_FORWARD'],
    ]);
  });

  it('NOT_CARRIED_FORWARD: the rest of a part-allotted bid lapsed at T+1’s close', () => {
    const b = bid({ quantity: 1_000, allotments: [onT(400, 10_100)] });
    const [explained] = explain([b]).bids;
    expect(explained!.days.map((d) => [d.day, d.reason, d.bid_quantity])).toEqual([
      ['T', 'PRICE_PRIORITY', 1_000],
      ['T+1', 'NOT_CARRIED_FORWARD', 600],
    ]);
    expect(explained!.outcome).toBe('PART_ALLOTTED');
  });

  it('BELOW_CUTOFF: a bid below the T-day cut-off, by its price at T’s close', () => {
    const b = bid({ quantity: 1_000, pricePaise: 10_050, status: 'CANCELLED' });
    const [explained] = explain([b]).bids;
    expect(explained!.days[0]).toMatchObject({ day: 'T', reason: 'BELOW_CUTOFF', allotted_quantity: 0 });
    expect(explained!.days[0]!.explanation).toContain('your price Rs 100.50 was below the T-day cut-off of Rs 101.00');
    expect(explained!.outcome).toBe('NOT_ALLOTTED');
    // Revised at carry-forward to the cut-off: T's reason stays its price then.
    const revised = bid({
      quantity: 1_000,
      pricePaise: 10_100,
      carriedForward: true,
      allotments: [onT1(1_000, 10_100)],
      changes: [
        { at: T + MINUTE, status: 'PENDING', quantity: 1_000, pricePaise: 10_050, actor: 'exchange' },
        { at: T1 + MINUTE, status: 'PENDING', quantity: 1_000, pricePaise: 10_100, actor: 'u' },
      ],
    });
    expect(explain([revised]).bids[0]!.days.map((d) => d.reason)).toEqual(['BELOW_CUTOFF', 'ALLOTTED_IN_FULL']);
  });

  it('ALLOTTED_IN_FULL, PROPORTIONATE and PRICE_PRIORITY', () => {
    const full = bid({ quantity: 100, allotments: [onT(100, 10_200)] });
    expect(explain([full]).bids[0]).toMatchObject({ outcome: 'ALLOTTED', days: [{ reason: 'ALLOTTED_IN_FULL' }] });
    const part = bid({ quantity: 1_000, allotments: [onT(300, 10_100)], carriedForward: true });
    expect(explain([part]).bids[0]!.days[0]!.reason).toBe('PRICE_PRIORITY');
    const proportionate = registration({}, { allocation: 'PROPORTIONATE' });
    expect(explain([part], proportionate).bids[0]!.days[0]!.reason).toBe('PROPORTIONATE');
  });

  it('BELOW_RETAIL_CUTOFF, and a retail bid shared at the retail cut-off', () => {
    const reg = registration({ t1RetailCutoffPricePaise: 10_300 });
    const below = bid({ category: 'RETAIL', quantity: 100, pricePaise: 10_200, status: 'CANCELLED' });
    const at = bid({ category: 'RETAIL', quantity: 100, pricePaise: 10_300, allotments: [onT1(40, 10_100)] });
    const data = explain([below, at], reg);
    expect(data.bids.map((b) => [b.days.length, b.days[0]!.day, b.days[0]!.reason])).toEqual([
      [1, 'T+1', 'BELOW_RETAIL_CUTOFF'],
      [1, 'T+1', 'PRICE_PRIORITY'],
    ]);
  });

  it('NOTHING_LEFT_FOR_CARRIED_FORWARD: a carried-forward bid at the cut-off, nothing allotted on T+1', () => {
    const b = bid({ quantity: 1_000, allotments: [onT(200, 10_100)], carriedForward: true });
    const other = registration({}, { baseQuantity: 100_000 });
    expect(explain([b], other).bids[0]!.days.map((d) => d.reason)).toEqual([
      'PRICE_PRIORITY',
      'NOTHING_LEFT_FOR_CARRIED_FORWARD',
    ]);
  });

  it('REJECTED, with its reason in words, without the error code', () => {
    const b = bid({
      status: 'OMSREJECT',
      errorReason: 'Insufficient funds: the bid needs Rs 6,06,000.00 of funds (e-301)',
      updatedAt: T + 11 * MINUTE,
    });
    const [explained] = explain([b]).bids;
    expect(explained).toMatchObject({ outcome: 'REJECTED', days: [{ day: 'T', reason: 'REJECTED' }] });
    expect(explained!.days[0]!.explanation).toBe(
      'The bid was rejected: Insufficient funds: the bid needs Rs 6,06,000.00 of funds.',
    );
    expect(explained!.explanation).not.toMatch(/e-\d/);
  });

  it('CANCELLED by the bidder, OFFER_CANCELLED with the offer', () => {
    const mine = bid({ status: 'CANCELLED', cancelRequested: true, updatedAt: T + 60 * MINUTE });
    expect(explain([mine]).bids[0]).toMatchObject({ outcome: 'CANCELLED', days: [{ reason: 'CANCELLED' }] });
    const held = registration({
      progress: { tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: T_CLOSE + 30 * MINUTE },
      tCutoffPricePaise: null,
      t1RetailCutoffPricePaise: null,
    });
    const lapsed = bid({ status: 'CANCELLED', updatedAt: T_CLOSE + 31 * MINUTE });
    expect(explain([lapsed], held).bids[0]).toMatchObject({
      outcome: 'CANCELLED',
      days: [{ day: 'T', reason: 'OFFER_CANCELLED' }],
    });
  });

  it('AWAITING_ALLOCATION: on T, and a carried-forward bid during T+1', () => {
    const before = registration({
      progress: { tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: null },
      tCutoffPricePaise: null,
      t1RetailCutoffPricePaise: null,
    });
    const live = bid({ status: 'PENDING', fundsBlockedPaise: 6_000 * 10_100 });
    const data = explain([live], before, T + 60 * MINUTE);
    expect(data.allocated).toEqual({ t_day: false, t1_day: false });
    expect(data.state).toBe('T_OPEN');
    expect(data.bids[0]).toMatchObject({ outcome: 'AWAITING', days: [{ reason: 'AWAITING_ALLOCATION' }] });
    expect(data.bids[0]!.funds.blocked).toBe(6_06_000);

    const afterT = registration({
      progress: { tAllocatedAt: T_CLOSE + MINUTE, t1AllocatedAt: null, cancelledAt: null },
    });
    const carried = bid({
      status: 'PENDING',
      carriedForward: true,
      allotments: [onT(1_000, 10_100)],
      changes: [
        { at: T + MINUTE, status: 'PENDING', quantity: 6_000, pricePaise: 10_100, actor: 'exchange' },
        { at: T_CLOSE + MINUTE, status: 'PENDING', quantity: 6_000, pricePaise: 10_100, actor: 'exchange' },
      ],
    });
    const during = explain([carried], afterT, T1 + 60 * MINUTE);
    expect(during.allocated).toEqual({ t_day: true, t1_day: false });
    expect(during.bids[0]!.days.map((d) => d.reason)).toEqual(['PRICE_PRIORITY', 'AWAITING_ALLOCATION']);
    expect(during.bids[0]!.outcome).toBe('AWAITING');
    // Not carried forward yet: it may still be, until T+1's close.
    const notYet = { ...carried, carriedForward: false };
    expect(explain([notYet], afterT, T1 + 60 * MINUTE).bids[0]!.days[1]!.explanation).toContain('carry them forward');
  });
});

describe('the figures add up', () => {
  it('allotted + not allotted = quantity; debited + released + blocked = what was blocked, for finished bids', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            category: fc.constantFrom('NII', 'MF', 'OTHS', 'RETAIL', 'EMPLOYEE' as const),
            quantity: fc.integer({ min: 1, max: 5_000 }),
            pricePaise: fc.integer({ min: 10_000, max: 11_000 }),
            tShare: fc.double({ min: 0, max: 1, noNaN: true }),
            t1Share: fc.double({ min: 0, max: 1, noNaN: true }),
            carried: fc.boolean(),
          }),
          { maxLength: 6 },
        ),
        (specs) => {
          const bids = specs.map((s) => {
            const nonRetail = s.category !== 'RETAIL' && s.category !== 'EMPLOYEE';
            const tAllotted = nonRetail ? Math.floor(s.quantity * s.tShare) : 0;
            const t1Allotted = nonRetail && !s.carried ? 0 : Math.floor((s.quantity - tAllotted) * s.t1Share);
            const allotments = [
              ...(tAllotted > 0 ? [onT(tAllotted, s.pricePaise)] : []),
              ...(t1Allotted > 0 ? [onT1(t1Allotted, s.pricePaise)] : []),
            ];
            return bid({
              category: s.category,
              quantity: s.quantity,
              pricePaise: s.pricePaise,
              carriedForward: s.carried && nonRetail,
              status: allotments.length > 0 ? 'EXECUTED' : 'CANCELLED',
              allotments,
              funds: ledger(s.quantity, s.pricePaise, allotments),
            });
          });
          const data = explain(bids);
          for (const b of data.bids) {
            expect(b.allotted_quantity + b.not_allotted_quantity).toBe(b.quantity);
            expect(b.days.reduce((s, d) => s + d.allotted_quantity, 0)).toBe(b.allotted_quantity);
            const blocked = bids
              .find((x) => x.orderId === b.order_id)!
              .funds.filter((f) => f.kind === 'BLOCK')
              .reduce((s, f) => s + f.amountPaise, 0);
            expect(Math.round((b.funds.debited + b.funds.released + b.funds.blocked) * 100)).toBe(blocked);
            expect(b.outcome).not.toBe('AWAITING');
            expect(b.explanation).not.toMatch(/e-\d|UTC|Z\b/);
          }
          expect(data.totals.allotted_quantity + data.totals.not_allotted_quantity).toBe(data.totals.bid_quantity);
          expect(data.totals.bid_quantity).toBe(data.bids.reduce((s, b) => s + b.quantity, 0));
        },
      ),
    );
  });
});
