import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  offerSettlementTime,
  portfolioOf,
  settlementTime,
  tradesOfPositionType,
  type Trade,
} from '../../src/domain/funds/trades.js';
import { NO_HOLIDAYS } from '../../src/domain/ofs/trading-calendar.js';

const at = (ist: string) => Date.parse(`${ist}+05:30`);

function trade(overrides: Partial<Trade>): Trade {
  return {
    tradeId: 'T-1',
    orderId: '1',
    userId: 'u',
    exchange: 'NSE_EQ',
    scripToken: 500112,
    symbol: 'SBIN',
    series: 'OF',
    transactionType: 'BUY',
    productType: 'OFS',
    quantity: 10,
    pricePaise: 10_150,
    tradedAt: at('2026-11-23T15:00:00'),
    settlesAt: at('2026-11-24T09:00:00'),
    exchangeOrderId: 'X',
    orderIdentifier: null,
    ...overrides,
  };
}

describe('settlement', () => {
  it('is T+1 at 09:00 India time by default, whatever the hour of the trade that day', () => {
    expect(settlementTime(at('2026-11-23T15:00:00'), null)).toBe(at('2026-11-24T09:00:00'));
    expect(settlementTime(at('2026-11-23T00:00:00'), null)).toBe(at('2026-11-24T09:00:00'));
    expect(settlementTime(at('2026-11-23T23:59:59'), null)).toBe(at('2026-11-24T09:00:00'));
    expect(settlementTime(at('2026-12-31T10:00:00'), null)).toBe(at('2027-01-01T09:00:00'));
  });

  it("is the issue's delay after the trade when its import sets one", () => {
    expect(settlementTime(at('2026-11-23T15:00:00'), 60_000)).toBe(at('2026-11-23T15:01:00'));
  });

  it('always comes after the trade', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (t) => {
        expect(settlementTime(t, null)).toBeGreaterThan(t);
      }),
    );
  });
});

describe('portfolio lines', () => {
  it("sums each instrument's trades, with the weighted average price rounded to a paisa", () => {
    const lines = portfolioOf([
      trade({ tradeId: 'T-1', quantity: 10, pricePaise: 10_150 }),
      trade({ tradeId: 'T-2', quantity: 20, pricePaise: 10_100, tradedAt: at('2026-11-23T16:00:00') }),
      trade({ tradeId: 'T-3', exchange: 'BSE_EQ', scripToken: 543210, quantity: 3, pricePaise: 10_001 }),
    ]);
    expect(lines).toEqual([
      expect.objectContaining({
        exchange: 'NSE_EQ',
        quantity: 30,
        valuePaise: 303_500n,
        averagePricePaise: 10_117n,
        lastTradedAt: at('2026-11-23T16:00:00'),
      }),
      expect.objectContaining({ exchange: 'BSE_EQ', quantity: 3, valuePaise: 30_003n, averagePricePaise: 10_001n }),
    ]);
  });

  it('keeps values exact beyond 2^53', () => {
    const [line] = portfolioOf([trade({ quantity: 999_999_999_999_999, pricePaise: 99_999_999_999 })]);
    expect(line!.valuePaise).toBe(999_999_999_999_999n * 99_999_999_999n);
    expect(line!.averagePricePaise).toBe(99_999_999_999n);
  });
});

describe('position types', () => {
  const trades = [
    trade({ tradeId: 'T-1', tradedAt: at('2026-11-22T15:00:00') }),
    trade({ tradeId: 'T-2', tradedAt: at('2026-11-23T10:00:00') }),
  ];
  const now = at('2026-11-23T23:00:00');

  it("all: every unsettled trade; daily: today's (India time); expiry: none (OFS shares do not expire)", () => {
    expect(tradesOfPositionType('all', trades, now).map((t) => t.tradeId)).toEqual(['T-1', 'T-2']);
    expect(tradesOfPositionType('daily', trades, now).map((t) => t.tradeId)).toEqual(['T-2']);
    expect(tradesOfPositionType('expiry', trades, now)).toEqual([]);
  });
});

describe('offerSettlementTime', () => {
  // T Friday 2026-12-04, T+1 Monday 2026-12-07 (09:15-15:30 India time).
  const offer = {
    settlementDelayMs: null,
    tDay: { opensAt: Date.parse('2026-12-04T03:45:00Z'), closesAt: Date.parse('2026-12-04T10:00:00Z') },
    t1Day: { opensAt: Date.parse('2026-12-07T03:45:00Z'), closesAt: Date.parse('2026-12-07T10:00:00Z') },
  };
  const iso = (ms: number) => new Date(ms).toISOString();

  it('settles a T-day allotment on the first trading day after T, and a T+1 one after T+1, at 13:30 India time', () => {
    expect(iso(offerSettlementTime(offer, 'T', offer.tDay.closesAt + 60_000, NO_HOLIDAYS))).toBe(
      '2026-12-07T08:00:00.000Z',
    );
    expect(iso(offerSettlementTime(offer, 'T+1', offer.t1Day.closesAt + 60_000, NO_HOLIDAYS))).toBe(
      '2026-12-08T08:00:00.000Z',
    );
    const holiday = { holidays: new Map([['2026-12-08', 'A holiday']]) };
    expect(iso(offerSettlementTime(offer, 'T+1', offer.t1Day.closesAt, holiday))).toBe('2026-12-09T08:00:00.000Z');
  });

  it('tells the day of an event that does not say by when it came, and settles a drill after its delay', () => {
    expect(iso(offerSettlementTime(offer, null, offer.tDay.closesAt + 60_000, NO_HOLIDAYS))).toBe(
      '2026-12-07T08:00:00.000Z',
    );
    expect(iso(offerSettlementTime(offer, null, offer.t1Day.closesAt + 60_000, NO_HOLIDAYS))).toBe(
      '2026-12-08T08:00:00.000Z',
    );
    expect(offerSettlementTime({ ...offer, settlementDelayMs: 60_000 }, 'T', 1_000, NO_HOLIDAYS)).toBe(61_000);
  });
});
