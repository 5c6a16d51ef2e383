/**
 * The reconciliation rule (src/domain/ofs/reconciliation.ts): a book made from our orders reconciles to no
 * difference, whatever the orders; each change made to such a book (or to our side) gives exactly its own
 * difference, of its kind and about its bid; the words name the bid and both sides. Property tests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bookAgeNote,
  changedSince,
  reconcile,
  type BookBid,
  type BookStatus,
  type OurBid,
} from '../../src/domain/ofs/reconciliation.js';

const RUNS = 300;

/** Our orders' statuses and what a faithful book holds for each (undefined: nothing). */
const FAITHFUL: Record<string, readonly (BookStatus | undefined)[]> = {
  PENDING: ['LIVE'],
  EXECUTED: ['ALLOTTED'],
  CANCELLED: ['CANCELLED', 'NOT_ALLOTTED', undefined],
  ORDERERROR: [undefined],
  OMSREJECT: [undefined],
};

const uuid = fc.uuid({ version: 7 });

const ourBid: fc.Arbitrary<OurBid> = fc
  .record({
    orderId: uuid,
    status: fc.constantFrom(...Object.keys(FAITHFUL)),
    cutoff: fc.boolean(),
    pricePaise: fc.integer({ min: 10_000, max: 20_000 }),
    quantity: fc.integer({ min: 1, max: 100_000 }),
    carriedForward: fc.boolean(),
    inFlight: fc.boolean(),
  })
  .map(({ orderId, status, cutoff, pricePaise, quantity, carriedForward, inFlight }) => ({
    orderId,
    status,
    orderType: cutoff ? 'RL-MKT' : 'RL',
    // A cut-off bid's price is ours alone (0 here, blank on the wire): never compared.
    pricePaise: cutoff ? 0 : pricePaise,
    quantity,
    exchangeOrderId: status === 'ORDERERROR' || status === 'OMSREJECT' ? null : `X${orderId.replace(/-/g, '')}`,
    carriedForward: carriedForward && status === 'PENDING',
    inFlight: inFlight && status === 'PENDING',
  }));

const ourBids = fc.uniqueArray(ourBid, { minLength: 1, maxLength: 30, selector: (bid) => bid.orderId });

/** A faithful book of our bids: `pick` chooses, for a CANCELLED bid, what the book holds of it. */
function bookOf(ours: readonly OurBid[], pick: (choices: readonly (BookStatus | undefined)[], i: number) => number) {
  return ours.flatMap((bid, i): BookBid[] => {
    const choices = FAITHFUL[bid.status]!;
    const status = choices[pick(choices, i) % choices.length];
    if (status === undefined || bid.exchangeOrderId === null) return [];
    return [
      {
        orderId: bid.orderId,
        reference: bid.orderId.replace(/-/g, ''),
        exchangeOrderId: bid.exchangeOrderId,
        status,
        orderType: bid.orderType,
        // The book's price of a cut-off bid may be anything (the wire leaves it blank).
        pricePaise: bid.orderType === 'RL-MKT' ? 777 : bid.pricePaise,
        quantity: bid.quantity,
        carriedForward: bid.carriedForward,
      },
    ];
  });
}

const faithful = fc.tuple(ourBids, fc.array(fc.nat(), { minLength: 30, maxLength: 30 })).map(([ours, picks]) => ({
  ours,
  book: bookOf(ours, (_, i) => picks[i]!),
}));

/** The entries of a book that a change to one can be seen on: of a bid not in flight. */
const comparable = (ours: readonly OurBid[], book: readonly BookBid[]) =>
  book.filter((entry) => !ours.find((bid) => bid.orderId === entry.orderId)!.inFlight);

describe('reconciliation', () => {
  it('finds no difference between our orders and a book made from them', () => {
    fc.assert(
      fc.property(faithful, ({ ours, book }) => {
        const result = reconcile(ours, book);
        expect(result.differences).toEqual([]);
        expect(result.matched).toBe(book.length);
        expect(result.inFlight).toBe(ours.filter((bid) => bid.inFlight).length);
      }),
      { numRuns: RUNS },
    );
  });

  it('gives exactly one difference of its kind for each change made to one bid of the book', () => {
    const change = fc.constantFrom('quantity', 'price', 'cutoff', 'status', 'bidId', 'carry', 'removed', 'unknown');
    fc.assert(
      fc.property(faithful, change, fc.nat(), uuid, ({ ours, book }, what, at, stranger) => {
        const candidates = comparable(ours, book);
        const entry = candidates[at % Math.max(1, candidates.length)];
        const our = entry && ours.find((bid) => bid.orderId === entry.orderId)!;
        let changed: BookBid[];
        let expected: { kind: string; orderId: string | null };
        if (what === 'unknown') {
          const exchangeOrderId = `U${stranger.replace(/-/g, '')}`;
          const unknown: BookBid = {
            orderId: ours.some((bid) => bid.orderId === stranger) ? null : stranger,
            reference: stranger.replace(/-/g, ''),
            exchangeOrderId,
            status: 'LIVE',
            orderType: 'RL',
            pricePaise: 10_100,
            quantity: 5,
          };
          changed = [...book, unknown];
          expected = { kind: 'UNKNOWN_TO_US', orderId: null };
        } else {
          if (entry === undefined || our === undefined) return;
          const replace = (next: BookBid | null) =>
            book.flatMap((other) => (other === entry ? (next === null ? [] : [next]) : [other]));
          switch (what) {
            case 'quantity':
              changed = replace({ ...entry, quantity: entry.quantity + 1 });
              expected = { kind: 'QUANTITY_DIFFERS', orderId: our.orderId };
              break;
            case 'price':
              if (entry.orderType === 'RL-MKT') return;
              changed = replace({ ...entry, pricePaise: entry.pricePaise + 5 });
              expected = { kind: 'PRICE_DIFFERS', orderId: our.orderId };
              break;
            case 'cutoff':
              changed = replace({ ...entry, orderType: entry.orderType === 'RL-MKT' ? 'RL' : 'RL-MKT' });
              expected = { kind: 'PRICE_DIFFERS', orderId: our.orderId };
              break;
            case 'status':
              changed = replace({ ...entry, status: entry.status === 'LIVE' ? 'CANCELLED' : 'LIVE' });
              expected = { kind: 'STATUS_DIFFERS', orderId: our.orderId };
              break;
            case 'bidId':
              changed = replace({ ...entry, exchangeOrderId: `${entry.exchangeOrderId}Z` });
              expected = { kind: 'BID_ID_DIFFERS', orderId: our.orderId };
              break;
            case 'carry':
              if (!our.carriedForward || entry.status !== 'LIVE') return;
              changed = replace({ ...entry, carriedForward: false });
              expected = { kind: 'CARRY_FORWARD_NOT_SHOWN', orderId: our.orderId };
              break;
            default:
              // Removed: a difference only where our status says the bid must be there.
              if (our.status === 'CANCELLED') {
                expect(reconcile(ours, replace(null)).differences).toEqual([]);
                return;
              }
              changed = replace(null);
              expected = { kind: 'MISSING_AT_EXCHANGE', orderId: our.orderId };
          }
        }
        const result = reconcile(ours, changed);
        expect(result.differences.map(({ kind, orderId }) => ({ kind, orderId }))).toEqual([expected]);
        expect(result.counts[expected.kind as keyof typeof result.counts]).toBe(1);
        expect(Object.values(result.counts).reduce((a, b) => a + b, 0)).toBe(1);
      }),
      { numRuns: RUNS },
    );
  });

  it('does not compare a bid whose work waits for the OMS, nor takes its entry for a stranger', () => {
    const ours: OurBid[] = [
      {
        orderId: 'a',
        status: 'PENDING',
        orderType: 'RL',
        pricePaise: 10_100,
        quantity: 10,
        exchangeOrderId: 'X1',
        carriedForward: false,
        inFlight: true,
      },
      {
        orderId: 'b',
        status: 'OMSXMITTED',
        orderType: 'RL',
        pricePaise: 10_100,
        quantity: 10,
        exchangeOrderId: null,
        carriedForward: false,
        inFlight: true,
      },
    ];
    const book: BookBid[] = [
      {
        orderId: 'a',
        reference: 'a',
        exchangeOrderId: 'X1',
        status: 'LIVE',
        orderType: 'RL',
        pricePaise: 9,
        quantity: 3,
      },
    ];
    expect(reconcile(ours, book)).toMatchObject({ differences: [], matched: 1, inFlight: 2 });
  });

  it('says each difference in words naming both sides', () => {
    const our: OurBid = {
      orderId: '0193-a',
      status: 'CANCELLED',
      orderType: 'RL',
      pricePaise: 10_150,
      quantity: 100,
      exchangeOrderId: 'X1',
      carriedForward: false,
      inFlight: false,
    };
    const result = reconcile(
      [our, { ...our, orderId: '0193-b', status: 'PENDING', exchangeOrderId: 'X2' }],
      [
        {
          orderId: '0193-a',
          reference: 'r-a',
          exchangeOrderId: 'X1',
          status: 'LIVE',
          orderType: 'RL-MKT',
          pricePaise: 0,
          quantity: 90,
        },
        {
          orderId: null,
          reference: null,
          exchangeOrderId: 'X9',
          status: 'LIVE',
          orderType: 'RL',
          pricePaise: 10_000,
          quantity: 7,
        },
      ],
    );
    expect(result.differences.map((d) => [d.kind, d.message])).toEqual([
      ['STATUS_DIFFERS', 'Order 0193-a is CANCELLED in ordergate; the exchange has its bid X1 live'],
      ['QUANTITY_DIFFERS', "Order 0193-a is for 100 shares; the exchange's bid X1 is for 90"],
      ['PRICE_DIFFERS', "Order 0193-a bids at 101.50; the exchange's bid X1 is at the cut-off"],
      [
        'UNKNOWN_TO_US',
        'The exchange holds bid X9 (7 at 100.00, live) with no reference: ordergate has no order for it',
      ],
      [
        'MISSING_AT_EXCHANGE',
        "Order 0193-b (PENDING, 100 at 101.50, the exchange's bid id X2) is not in the exchange's book",
      ],
    ]);
    expect(result.differences[0]).toMatchObject({
      orderId: '0193-a',
      exchangeOrderId: 'X1',
      reference: 'r-a',
      ours: { status: 'CANCELLED', quantity: 100 },
      theirs: { status: 'LIVE', quantity: 90 },
    });
  });

  it('matches by bid id an entry whose reference names no order of ours', () => {
    const our: OurBid = {
      orderId: 'a',
      status: 'PENDING',
      orderType: 'RL',
      pricePaise: 10_100,
      quantity: 10,
      exchangeOrderId: 'X1',
      carriedForward: false,
      inFlight: false,
    };
    const entry: BookBid = {
      orderId: null,
      reference: null,
      exchangeOrderId: 'X1',
      status: 'LIVE',
      orderType: 'RL',
      pricePaise: 10_100,
      quantity: 10,
    };
    expect(reconcile([our], [entry]).differences).toEqual([]);
    // A second entry with the same bid id is a bid unknown to us.
    expect(reconcile([our], [entry, entry]).differences.map((d) => d.kind)).toEqual(['UNKNOWN_TO_US']);
  });

  it('tells an old book’s age, and which orders changed since it was written', () => {
    const at = Date.parse('2026-12-02T10:05:00Z');
    expect(bookAgeNote(at, at)).toBeNull();
    expect(bookAgeNote(at, at + 4_999)).toBeNull();
    expect(bookAgeNote(at, at + 61_500)).toBe(
      "the exchange's book is as of 2026-12-02T10:05:00.000Z, 61 s before this run; orders changed since are left out",
    );
    const bid: OurBid = {
      orderId: 'o-1',
      status: 'PENDING',
      orderType: 'RL',
      pricePaise: 10_100,
      quantity: 10,
      exchangeOrderId: 'X1',
      carriedForward: false,
      inFlight: false,
    };
    expect(changedSince(bid, at)).toBe(false);
    expect(changedSince({ ...bid, updatedAt: at }, at)).toBe(false);
    expect(changedSince({ ...bid, updatedAt: at + 1 }, at)).toBe(true);
  });

  it('reports nothing of an order still live on both sides after the last close (no kind for it yet)', () => {
    const bid: OurBid = {
      orderId: 'o-1',
      status: 'PENDING',
      orderType: 'RL',
      pricePaise: 10_100,
      quantity: 10,
      exchangeOrderId: 'X1',
      carriedForward: true,
      inFlight: false,
    };
    const live: BookBid = {
      ...bid,
      orderId: 'o-1',
      exchangeOrderId: 'X1',
      reference: 'r1',
      status: 'LIVE',
      carriedForward: true,
    };
    expect(reconcile([bid], [live]).differences).toEqual([]);
  });
});
