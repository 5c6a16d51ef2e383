/**
 * Published offers, against the figures the exchanges and the sellers printed (docs/design/ofs.md,
 * "Checked against published offers"): the portions in shares for the green shoe exercised (in whole or
 * in part), the T-day cut-off, the operator's wait on a short T day, and the settlement days. Where a
 * book is needed its bids are ours, shaped to give the published totals; the figures are the notices'.
 *
 * Sources:
 * - Coal India, June 2023: the broker's copy of the exchange notice (elitewealth.in/coal-india-ltd-ofs):
 *   base 9,24,40,924, green shoe 9,24,40,924 accepted in full; retail 92,44,093 + 92,44,092 = 1,84,88,185;
 *   non-retail 8,31,96,831 + 8,31,96,832 = 16,63,93,663; floor 225.00, tick 0.05, price priority; the
 *   retail cut-off 226.00, "fixed for RIC bids based on clearing price of non-retail".
 * - Indian Overseas Bank, December 2025: BSE notice 20251216-54 (base 38,51,31,796, green shoe 19,25,65,898,
 *   retail 3,85,13,180 + 1,92,56,590, non-retail 34,66,18,616 + 17,33,09,308, employees 1,50,000, floor
 *   34.00, tick 0.01, price priority; T Wednesday 17 December, T+1 Thursday 18 December); the seller's
 *   filing as reported (Business Standard, Business Today, 18 December 2025): 7,60,94,197 of the green
 *   shoe exercised, retail 4,61,22,600; T-day bids 39,95,07,082; T+1 retail bids 26,05,753.
 * - Mazagon Dock Shipbuilders, April 2025: the seller's filings as reported (Capital Market, NDTV Profit):
 *   base 1,14,10,366, green shoe 80,67,600 of which 47,69,988 exercised, retail 16,18,036 ("10 % of the
 *   Offer"), non-retail 1,45,62,318, employees 50,000, floor 2,525.00; T Friday 4 April, T+1 Monday
 *   7 April; T-day bids 1,45,62,318, the non-retail portion exactly.
 * - Bank of Maharashtra, December 2025: BSE notice 20251201-53: base 38,45,77,748, green shoe 7,69,15,549
 *   (exercised in full), retail 3,84,57,775 + 76,91,555, non-retail 34,61,19,973 + 6,92,23,994,
 *   employees 75,000, floor 54.00, tick 0.01, price priority.
 */
import { describe, expect, it } from 'vitest';
import { allocateT1Day, allocateTDay, type OfferBid } from '../../src/domain/ofs/offer/allocation.js';
import { offerCalendarProblems, offerPortions, tAllocationWait, type Offer } from '../../src/domain/ofs/offer/offer.js';
import { offerPriceViolations } from '../../src/domain/ofs/offer/rules.js';
import { offerSettlementTime } from '../../src/domain/funds/trades.js';
import { NO_HOLIDAYS } from '../../src/domain/ofs/trading-calendar.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** An offer with its sessions at 09:15-15:30 India time on `tDate` and `t1Date` (YYYY-MM-DD). */
function published(
  terms: Partial<Offer> & Pick<Offer, 'baseQuantity' | 'greenShoeQuantity' | 'greenShoeExercised' | 'floorPricePaise'>,
  tDate: string,
  t1Date: string,
): Offer {
  const session = (date: string) => ({
    opensAt: Date.parse(`${date}T03:45:00Z`),
    closesAt: Date.parse(`${date}T10:00:00Z`),
  });
  return {
    offerId: 'X',
    symbol: 'X',
    listings: [{ exchange: 'NSE_EQ', scripToken: 1, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } }],
    tickSizePaise: 1,
    greenShoeDecidedAt: Date.parse(`${tDate}T11:00:00Z`),
    greenShoeDecisionBy: Date.parse(`${tDate}T11:30:00Z`),
    retailReservePct: 10,
    retailDiscount: null,
    retailAllocationPrice: 'UNIFORM',
    employeeQuantity: 0,
    employeeGreenShoeQuantity: 0,
    employeeDiscount: null,
    printedPortions: null,
    allocation: 'PRICE_PRIORITY',
    tDay: session(tDate),
    t1Day: session(t1Date),
    settlementDelayMs: null,
    ...terms,
  };
}

const bid = (
  orderId: string,
  category: OfferBid['category'],
  pricePaise: number,
  quantity: number,
  placedSeq: number,
): OfferBid => ({
  orderId,
  bidderId: orderId,
  category,
  pricePaise,
  quantity,
  placedSeq,
});

describe('Coal India, June 2023: the green shoe in full, the retail cut-off 226.00', () => {
  const coal = published(
    {
      baseQuantity: 92_440_924,
      greenShoeQuantity: 92_440_924,
      greenShoeExercised: 92_440_924,
      floorPricePaise: 22_500,
      tickSizePaise: 5,
    },
    '2023-06-01',
    '2023-06-02',
  );

  it('has the notice’s portions: retail 1,84,88,185, non-retail 16,63,93,663, MF/IC and the cap 4,62,20,462', () => {
    expect(offerPortions(coal)).toEqual({
      total: 184_881_848,
      retailReserved: 18_488_185,
      nonRetail: 166_393_663,
      mfIcReserved: 46_220_462,
      employee: 0,
      singleBidderCap: 46_220_462,
      source: 'computed',
    });
    // The notice printed the base and green-shoe parts: 92,44,093 + 92,44,092 retail (ceil of the whole, not of each part).
    expect(92_44_093 + 92_44_092).toBe(offerPortions(coal).retailReserved);
    expect(8_31_96_831 + 8_31_96_832).toBe(offerPortions(coal).nonRetail);
  });

  it('finds the T-day cut-off where the book outside the MF/IC reservation clears, 226.00; retail bids from there on T+1', () => {
    const bids = [
      // The mutual funds and insurers fill their reservation.
      bid('MF', 'MF', 22_700, 46_220_462, 1),
      // Five institutions at 226.50, within the cap; three NIIs at 226.00, the marginal level; the rest below.
      ...[0, 1, 2, 3, 4].map((i) => bid(`O${i}`, 'OTHS', 22_650, 20_000_000, 2 + i)),
      ...[0, 1, 2].map((i) => bid(`N${i}`, 'NII', 22_600, 10_000_000, 10 + i)),
      bid('L', 'NII', 22_550, 30_000_000, 20),
    ];
    const t = allocateTDay(coal, bids);
    expect(t.cutoffPricePaise).toBe(22_600);
    expect(t.unallotted).toBe(0);
    const allotted = Object.fromEntries(t.allotments.map((a) => [a.orderId, a.allottedQuantity]));
    // 12,01,73,201 outside the reservation: 10,00,00,000 at 226.50, 2,01,73,201 shared at 226.00, none at 225.50.
    expect(allotted.MF).toBe(46_220_462);
    expect(allotted.O0).toBe(20_000_000);
    expect(allotted.N0! + allotted.N1! + allotted.N2!).toBe(20_173_201);
    expect(allotted.L).toBe(0);
    const retailBid = (price: number) => ({ orderType: 'RL', quantity: 100, pricePaise: price });
    expect(offerPriceViolations(retailBid(22_600), coal, 'RETAIL', t.cutoffPricePaise, false)).toEqual([]);
    expect(offerPriceViolations(retailBid(22_595), coal, 'RETAIL', t.cutoffPricePaise, false)[0]!.message).toContain(
      'below the T-day cut-off price 226.00',
    );
  });
});

describe('Indian Overseas Bank, December 2025: the green shoe in part, a short T day', () => {
  // The notice prints no MF/IC figure ("at least 25 %"): 25 % of the total, rounded up, stands in for it.
  const printedForWholeShoe = {
    greenShoe: 192_565_898,
    retailReserved: 38_513_180 + 19_256_590,
    nonRetail: 346_618_616 + 173_309_308,
    mfIcReserved: 144_424_424,
    employee: 150_000,
  };
  const iob = published(
    {
      baseQuantity: 385_131_796,
      greenShoeQuantity: 192_565_898,
      greenShoeExercised: 76_094_197,
      floorPricePaise: 3_400,
      employeeQuantity: 150_000,
      printedPortions: printedForWholeShoe,
    },
    '2025-12-17',
    '2025-12-18',
  );

  it('the notice printed the portions for the whole green shoe; with 7,60,94,197 exercised they are computed: retail 4,61,22,600', () => {
    // As printed for the whole option: 57,76,97,694 shares.
    expect(offerPortions({ ...iob, greenShoeExercised: 192_565_898 })).toMatchObject({
      total: 577_697_694,
      retailReserved: 57_769_770,
      nonRetail: 519_927_924,
      source: 'notice',
    });
    expect(offerPortions(iob)).toEqual({
      total: 461_225_993,
      retailReserved: 46_122_600,
      nonRetail: 415_103_393,
      mfIcReserved: 115_306_499,
      employee: 150_000,
      singleBidderCap: 115_306_498,
      source: 'computed',
    });
  });

  it('waits for the operator: 39,95,07,082 bid on T is short of 41,51,03,393', () => {
    expect(tAllocationWait(iob, null, 399_507_082n, iob.tDay.closesAt + HOUR)).toEqual({ for: 'operator' });
  });

  it('told to go on, allots every bid in full, the cut-off at the floor 34.00, and gives retail what non-retail left', () => {
    const tBids = [
      bid('MF', 'MF', 3_450, 150_000_000, 1),
      bid('IC', 'IC', 3_420, 100_000_000, 2),
      bid('O1', 'OTHS', 3_410, 80_000_000, 3),
      bid('O2', 'OTHS', 3_405, 69_507_082, 4),
    ];
    const t = allocateTDay(iob, tBids);
    // Not oversubscribed: the floor, not the lowest bid (34.05), so that retail may bid at the floor.
    expect(t.cutoffPricePaise).toBe(3_400);
    expect(t.allotments.every((a) => a.allottedQuantity === tBids.find((b) => b.orderId === a.orderId)!.quantity)).toBe(
      true,
    );
    expect(t.unallotted).toBe(15_596_311);
    const t1 = allocateT1Day(
      iob,
      {
        cutoffPricePaise: t.cutoffPricePaise,
        nonRetailUnallotted: t.unallotted,
        tAllottedByBidder: t.allottedByBidder,
      },
      [bid('R', 'RETAIL', 0, 2_605_753, 10)],
    );
    expect(t1.retail).toEqual({
      portion: 61_718_911,
      demand: 2_605_753n,
      allotted: 2_605_753,
      clearingPricePaise: 3_400,
    });
    expect(t1.allotments[0]).toMatchObject({ allottedQuantity: 2_605_753, pricePaise: 3_400 });
    // What retail left, and the employees' 1,50,000 nobody bid for, return to the seller.
    expect(t1.returnedToSeller).toBe(61_718_911 - 2_605_753 + 150_000);
  });

  it('settles T-day allotments on Thursday 18 December and T+1 allotments on Friday 19 December, at 13:30 India time', () => {
    expect(offerCalendarProblems(iob, NO_HOLIDAYS)).toEqual([]);
    expect(new Date(offerSettlementTime(iob, 'T', iob.tDay.closesAt + HOUR, NO_HOLIDAYS)).toISOString()).toBe(
      '2025-12-18T08:00:00.000Z',
    );
    expect(new Date(offerSettlementTime(iob, 'T+1', iob.t1Day.closesAt + HOUR, NO_HOLIDAYS)).toISOString()).toBe(
      '2025-12-19T08:00:00.000Z',
    );
  });
});

describe('Mazagon Dock, April 2025: the green shoe in part, T on a Friday', () => {
  const mazdock = published(
    {
      baseQuantity: 11_410_366,
      greenShoeQuantity: 8_067_600,
      greenShoeExercised: 4_769_988,
      floorPricePaise: 252_500,
      employeeQuantity: 50_000,
    },
    '2025-04-04',
    '2025-04-07',
  );

  it('has the filing’s portions: total 1,61,80,354, retail 16,18,036, non-retail 1,45,62,318', () => {
    expect(offerPortions(mazdock)).toMatchObject({
      total: 16_180_354,
      retailReserved: 1_618_036,
      nonRetail: 14_562_318,
      employee: 50_000,
    });
  });

  it('T-day bids of exactly the non-retail portion: no operator is asked, and the cut-off is the floor', () => {
    expect(tAllocationWait(mazdock, null, 14_562_318n, mazdock.tDay.closesAt + HOUR)).toBeNull();
    // Two NIIs, each within the cap of 40,45,088.
    const t = allocateTDay(mazdock, [
      bid('MF', 'MF', 252_600, 10_000_000, 1),
      bid('N1', 'NII', 253_000, 2_500_000, 2),
      bid('N2', 'NII', 252_500, 2_062_318, 3),
    ]);
    expect(t.cutoffPricePaise).toBe(252_500);
    expect(t.unallotted).toBe(0);
  });

  it('takes T+1 on the Monday, and settles T-day allotments that Monday and T+1 ones on Tuesday 8 April', () => {
    expect(offerCalendarProblems(mazdock, NO_HOLIDAYS)).toEqual([]);
    // T+1 on the Saturday would not be the next trading day.
    const saturday = {
      ...mazdock,
      t1Day: { opensAt: mazdock.t1Day.opensAt - 2 * DAY, closesAt: mazdock.t1Day.closesAt - 2 * DAY },
    };
    expect(offerCalendarProblems(saturday, NO_HOLIDAYS)).toEqual([
      't1_day: 2025-04-05 is a Saturday, not a trading day',
    ]);
    expect(new Date(offerSettlementTime(mazdock, 'T', mazdock.tDay.closesAt, NO_HOLIDAYS)).toISOString()).toBe(
      '2025-04-07T08:00:00.000Z',
    );
    expect(new Date(offerSettlementTime(mazdock, 'T+1', mazdock.t1Day.closesAt, NO_HOLIDAYS)).toISOString()).toBe(
      '2025-04-08T08:00:00.000Z',
    );
  });
});

describe('Bank of Maharashtra, December 2025: the green shoe in full, the parts printed', () => {
  it('computes what the notice printed: retail 3,84,57,775 + 76,91,555, non-retail 34,61,19,973 + 6,92,23,994', () => {
    const mahabank = published(
      {
        baseQuantity: 384_577_748,
        greenShoeQuantity: 76_915_549,
        greenShoeExercised: 76_915_549,
        floorPricePaise: 5_400,
        employeeQuantity: 75_000,
      },
      '2025-12-02',
      '2025-12-03',
    );
    expect(offerPortions(mahabank)).toMatchObject({
      total: 461_493_297,
      retailReserved: 38_457_775 + 7_691_555,
      nonRetail: 346_119_973 + 69_223_994,
      employee: 75_000,
    });
  });
});
