/**
 * What a bid blocks of its bidder's funds (docs/design/funds.md), over any terms: a bid never blocks more
 * than is available, a modification blocks only the difference and only once more is needed, the block
 * follows the terms the exchange holds, and a finished bid releases all of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admissionBlock,
  blockAfterModification,
  blockAfterTAllocation,
  blockFollowsTerms,
  blockRequiredPaise,
  blockToRaisePaise,
  fundsRequiredPaise,
  fundsShortfall,
  openTerms,
  releasesBlock,
  type BlockedBid,
} from '../../src/domain/funds/blocking.js';
import { LIVE_STATUSES, OrderStatus } from '../../src/domain/orders/status.js';

const prices = { floorPricePaise: 10_000, retailCutoffPricePaise: 10_100 };

const terms = fc.record({
  orderType: fc.constantFrom('RL', 'RL-MKT'),
  quantity: fc.integer({ min: 1, max: 1_000_000 }),
  pricePaise: fc.integer({ min: 1, max: 1_000_000 }),
});

/** A live funds-checked bid with part of it (perhaps) allotted, blocking what its terms need. */
const liveBid = terms.chain((bid) =>
  fc
    .record({
      orderType: fc.constant(bid.orderType),
      quantity: fc.constant(bid.quantity),
      pricePaise: fc.constant(bid.pricePaise),
      tradedQuantity: fc.integer({ min: 0, max: bid.quantity - 1 }),
      status: fc.constantFrom(...LIVE_STATUSES),
    })
    .map((live): BlockedBid => ({
      ...live,
      fundsBlockedPaise: Number(blockRequiredPaise(live, live.tradedQuantity, prices)),
    })),
);

const finished = fc.constantFrom(
  OrderStatus.OMSREJECT,
  OrderStatus.ORDERERROR,
  OrderStatus.CANCELLED,
  OrderStatus.EXECUTED,
);

describe('the block a bid needs', () => {
  it('is what is still bid for, at its unit value: a partly allotted bid blocks only for the rest', () => {
    fc.assert(
      fc.property(liveBid, (bid) => {
        expect(openTerms(bid, bid.tradedQuantity).quantity).toBe(bid.quantity - bid.tradedQuantity);
        expect(blockRequiredPaise(bid, bid.tradedQuantity, prices)).toBe(
          fundsRequiredPaise({ ...bid, quantity: bid.quantity - bid.tradedQuantity }, prices),
        );
      }),
    );
    expect(blockRequiredPaise({ orderType: 'RL-MKT', quantity: 10, pricePaise: 0 }, 4, prices)).toBe(60_600n);
  });
});

describe('admission', () => {
  it('blocks nothing for a bidder without an account, or a bid nothing values (a 0 %-margin bid)', () => {
    fc.assert(
      fc.property(terms, (bid) => {
        expect(admissionBlock({ ...bid, tradedQuantity: 0 }, prices, undefined)).toBeNull();
        expect(admissionBlock({ ...bid, tradedQuantity: 0 }, undefined, 1_000_000)).toBeNull();
      }),
    );
  });

  it('blocks what the bid needs when it is available, and names the amounts when it is not', () => {
    fc.assert(
      fc.property(terms, fc.integer({ min: 0, max: 2 ** 40 }), (bid, available) => {
        const block = admissionBlock({ ...bid, tradedQuantity: 0 }, prices, available)!;
        expect(block.requiredPaise).toBe(fundsRequiredPaise(bid, prices));
        expect(block.shortfall === null).toBe(block.requiredPaise <= BigInt(available));
        if (block.shortfall !== null)
          expect(block.shortfall).toMatch(/^the bid needs Rs [\d,]+\.\d\d of funds; Rs [\d,]+\.\d\d available$/);
      }),
    );
  });
});

describe('a modification', () => {
  it('needs more blocked only when its terms need more than the bid holds, and then exactly what they need', () => {
    fc.assert(
      fc.property(liveBid, terms, (bid, next) => {
        fc.pre(next.quantity > bid.tradedQuantity);
        const required = blockRequiredPaise(next, bid.tradedQuantity, prices);
        const raise = blockToRaisePaise(bid, next, prices);
        expect(raise).toBe(required > BigInt(bid.fundsBlockedPaise!) ? required : null);
      }),
    );
  });

  it('never leaves the bidder less than nothing: the shortfall is null exactly when the difference is available', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 60n }), fc.nat(), fc.nat(), (required, held, available) => {
        const shortfall = fundsShortfall(required, held, available);
        expect(shortfall === null).toBe(required - BigInt(held) <= BigInt(available));
        if (shortfall !== null) expect(BigInt(available) - (required - BigInt(held))).toBeLessThan(0n);
      }),
    );
  });

  it('leaves the block at what the terms at the exchange need, changed only when it differs', () => {
    fc.assert(
      fc.property(liveBid, terms, (bid, held) => {
        fc.pre(held.quantity > bid.tradedQuantity);
        const required = Number(blockRequiredPaise(held, bid.tradedQuantity, prices));
        expect(blockAfterModification(bid, held, prices)).toBe(
          required === bid.fundsBlockedPaise ? undefined : required,
        );
        // Its own terms: nothing changes.
        expect(blockAfterModification(bid, bid, prices)).toBeUndefined();
      }),
    );
  });

  it('changes nothing on a bid that is not funds-checked or finished, or whose listing is gone', () => {
    fc.assert(
      fc.property(liveBid, terms, finished, (bid, next, status) => {
        const unchecked = { ...bid, fundsBlockedPaise: null };
        expect(blockFollowsTerms(unchecked)).toBe(false);
        expect(blockToRaisePaise(unchecked, next, prices)).toBeNull();
        expect(blockAfterModification(unchecked, next, prices)).toBeUndefined();
        const ended = { ...bid, status, fundsBlockedPaise: 0 };
        expect(blockToRaisePaise(ended, next, prices)).toBeNull();
        expect(blockAfterModification(ended, next, prices)).toBeUndefined();
        expect(blockAfterModification(bid, next, undefined)).toBeUndefined();
      }),
    );
  });
});

describe("an offer's T allocation", () => {
  it('leaves a bid it did not allot in full, for the carry-forward decision, with no block; a bid without funds account with none', () => {
    fc.assert(
      fc.property(liveBid, (bid) => {
        const limit = {
          ...bid,
          orderType: 'RL',
          carriedForward: false,
          fundsBlockedPaise: Number(blockRequiredPaise({ ...bid, orderType: 'RL' }, bid.tradedQuantity, prices)),
        };
        expect(blockAfterTAllocation(limit, bid.tradedQuantity)).toBe(0);
        expect(blockAfterTAllocation({ ...limit, fundsBlockedPaise: null }, bid.tradedQuantity)).toBeNull();
      }),
    );
  });

  it('keeps what the open shares of a bid carried forward already need (its T outcome came late)', () => {
    const carried = { quantity: 500, pricePaise: 10_100, fundsBlockedPaise: 5_050_000, carriedForward: true };
    expect(blockAfterTAllocation(carried, 300)).toBe(200 * 10_100);
    expect(blockAfterTAllocation(carried, 0)).toBe(500 * 10_100);
  });
});

describe('the end of a bid', () => {
  it('releases the whole block of a funds-checked bid once it is finished, and nothing while it is live', () => {
    for (const status of Object.values(OrderStatus)) {
      const live = LIVE_STATUSES.includes(status);
      expect(releasesBlock({ fundsBlockedPaise: 101_500 }, status)).toBe(!live);
      expect(releasesBlock({ fundsBlockedPaise: null }, status)).toBe(false);
    }
  });
});
