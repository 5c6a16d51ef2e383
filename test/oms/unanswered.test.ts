/**
 * An exchange that does not answer (docs/design/exchange-links.md, "Exactly once at the exchange"): a
 * placement whose answer was lost leaves its order EXXMITTED, its history saying so once; its outbox entry
 * waits for the link's back-off, and the next pass reads the exchange's book before sending anything, so
 * that a bid the exchange took is never sent twice and one it never got is sent again. A bid the exchange
 * did not answer holds up none beside it. Changes (modify, cancel) the exchange did not answer are sent
 * again after the back-off.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ExchangeUnavailableError,
  heldTerms,
  type ChangeResult,
  type ExchangeAdapter,
  type ExchangeBid,
  type PlaceResult,
  type Unanswered,
} from '../../src/oms/exchange.js';
import { OmsRepository } from '../../src/store/orders/outbox.js';
import type { BidTerms } from '../../src/domain/ofs/rules.js';
import { ObservedExchange, OmsBench } from './fixture.js';

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
});
afterEach(async () => {
  await bench.close();
});

const LOST: Unanswered = { outcome: 'unknown', why: 'no answer within the timeout', retryAfterMs: 10_000 };
const REFUSED_CONNECTION: Unanswered = { outcome: 'not-sent', why: 'ECONNREFUSED', retryAfterMs: 2_000 };

/**
 * The simulated exchange behind a wire that fails as told: for the order ids in `lose`, the exchange takes
 * the call and its answer is lost; for those in `refuse`, the call never reaches it. Each fault happens once
 * per order.
 */
function faultyWire(lose: Set<string>, refuse: Set<string>): ExchangeAdapter {
  const inner = bench.exchange();
  const fault = <T>(orderId: string, answer: T, onLost: (u: Unanswered) => T, onRefused: (u: Unanswered) => T) => {
    if (lose.delete(orderId)) return onLost(LOST);
    if (refuse.delete(orderId)) return onRefused(REFUSED_CONNECTION);
    return answer;
  };
  const unansweredPlace = (u: Unanswered): PlaceResult => ({ accepted: null, ...u });
  const unansweredChange = (u: Unanswered): ChangeResult => ({ done: null, ...u });
  return {
    findBids: (ids) => inner.findBids(ids),
    placeBids: async (bids: readonly ExchangeBid[]) => {
      const reaching = bids.filter((bid) => !refuse.has(bid.orderId));
      const answers = new Map((await inner.placeBids(reaching)).map((answer, i) => [reaching[i]!.orderId, answer]));
      return bids.map((bid) => fault(bid.orderId, answers.get(bid.orderId)!, unansweredPlace, unansweredPlace));
    },
    modify: async (bid: ExchangeBid, terms: BidTerms) => {
      if (refuse.has(bid.orderId)) return fault(bid.orderId, { done: true }, unansweredChange, unansweredChange);
      return fault(bid.orderId, await inner.modify(bid, terms), unansweredChange, unansweredChange);
    },
    cancel: async (bid: ExchangeBid) => {
      if (refuse.has(bid.orderId)) return fault(bid.orderId, { done: true }, unansweredChange, unansweredChange);
      return fault(bid.orderId, await inner.cancel(bid), unansweredChange, unansweredChange);
    },
    carryForward: (bid, terms) => inner.carryForward(bid, terms),
    pollEvents: () => inner.pollEvents(),
    acknowledge: (ids) => inner.acknowledge(ids),
  };
}

const waitingNotes = async (orderId: string) =>
  (await bench.history(orderId)).filter((entry) => /^(Waiting for the exchange|Not yet taken)/.test(entry.reason));

describe('an exchange that does not answer', () => {
  it('keeps a bid whose answer was lost EXXMITTED, then finds it in the book and never sends it twice', async () => {
    const lost = await bench.placeOrder({ quantity: 11 });
    const fine = await bench.placeOrder({ quantity: 12 });
    const exchange = new ObservedExchange(faultyWire(new Set([lost]), new Set()));
    const worker = bench.worker({ exchange });

    expect(await worker.runOnce()).toBe(1);
    // The bid beside it is answered and done: one bid's lost answer holds up no other.
    expect(await bench.status(fine)).toBe('PENDING');
    expect(await bench.status(lost)).toBe('EXXMITTED');
    const notes = await waitingNotes(lost);
    expect(notes.map((entry) => entry.reason)).toEqual([
      "Waiting for the exchange's answer (no answer within the timeout); the exchange's book is read for this bid before it is sent again, tried again in 10 s",
    ]);
    expect(await bench.exchangeBid(lost)).toMatchObject({ transmissions: 1, status: 'LIVE' });

    // Within the back-off nothing is taken again.
    bench.clock.now += LOST.retryAfterMs - 1;
    expect(await worker.runOnce()).toBe(0);
    expect(exchange.count('place', lost)).toBe(1);

    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(lost)).toBe('PENDING');
    // Read in the book once, on the pass after the lost answer (not on the first: a new bid is not there).
    expect(exchange.count('find', lost)).toBe(1);
    expect(exchange.count('place', lost)).toBe(1);
    expect(await bench.exchangeBid(lost)).toMatchObject({ transmissions: 1 });
    expect(await bench.statusTrail(lost)).toEqual(['OMSXMITTED', 'EXXMITTED', 'EXXMITTED', 'PENDING']);
    expect(await bench.openOutbox()).toBe(0);
  });

  it('sends again, after the back-off, a bid the exchange never got, and it stands there once', async () => {
    const orderId = await bench.placeOrder();
    const exchange = new ObservedExchange(faultyWire(new Set(), new Set([orderId])));
    const worker = bench.worker({ exchange });

    expect(await worker.runOnce()).toBe(0);
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
    expect((await waitingNotes(orderId)).map((entry) => entry.reason)).toEqual([
      'Not yet taken by the exchange (ECONNREFUSED); tried again in 2 s',
    ]);

    bench.clock.now += REFUSED_CONNECTION.retryAfterMs + 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(exchange.count('place', orderId)).toBe(2);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ transmissions: 1, status: 'LIVE' });
  });

  it('says once in the history that a bid waits, however many passes it waits', async () => {
    const orderId = await bench.placeOrder();
    const refuse = new Set([orderId]);
    const wire = faultyWire(new Set(), refuse);
    const worker = bench.worker({ exchange: new ObservedExchange(wire) });
    for (let i = 0; i < 3; i++) {
      refuse.add(orderId);
      await worker.runOnce();
      bench.clock.now += REFUSED_CONNECTION.retryAfterMs + 1;
    }
    expect(await waitingNotes(orderId)).toHaveLength(1);
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
  });

  it('sends a modification and a cancellation again after the back-off when their answers were lost', async () => {
    const modified = await bench.placeOrder({ quantity: 10 });
    const cancelled = await bench.placeOrder({ quantity: 20 });
    const lose = new Set<string>();
    const refuse = new Set<string>();
    const exchange = new ObservedExchange(faultyWire(lose, refuse));
    const worker = bench.worker({ exchange });
    await worker.runOnce();

    await bench.requestModification(modified, { quantity: 15, pricePaise: 10_200 });
    await bench.requestCancellation(cancelled);
    lose.add(modified);
    refuse.add(cancelled);
    await worker.runOnce();
    // The exchange took the modification (its answer was lost); the cancellation never reached it.
    expect(await bench.exchangeBid(modified)).toMatchObject({ quantity: 15, price_paise: 10_200 });
    expect(await bench.exchangeBid(cancelled)).toMatchObject({ status: 'LIVE' });
    expect(await bench.openOutbox()).toBe(2);

    bench.clock.now += LOST.retryAfterMs + 1;
    await worker.runOnce();
    expect(exchange.count('modify', modified)).toBe(2);
    expect(exchange.count('cancel', cancelled)).toBe(2);
    expect(await bench.exchangeBid(modified)).toMatchObject({ quantity: 15, price_paise: 10_200, status: 'LIVE' });
    expect(await bench.exchangeBid(cancelled)).toMatchObject({ status: 'CANCELLED' });
    expect(await bench.status(cancelled)).toBe('CANCELLED');
    expect(await bench.order(modified)).toMatchObject({ quantity: 15 });
    expect(await bench.openOutbox()).toBe(0);
  });

  it('holds each bid for its own back-off: a lost answer is not read early because a refused one beside it was', async () => {
    const lost = await bench.placeOrder({ quantity: 11 });
    const refused = await bench.placeOrder({ quantity: 12 });
    const exchange = new ObservedExchange(faultyWire(new Set([lost]), new Set([refused])));
    const worker = bench.worker({ exchange });
    await worker.runOnce();

    bench.clock.now += REFUSED_CONNECTION.retryAfterMs + 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(refused)).toBe('PENDING');
    expect(await bench.status(lost)).toBe('EXXMITTED');
    expect(exchange.count('find', lost)).toBe(0);

    bench.clock.now += LOST.retryAfterMs;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(lost)).toBe('PENDING');
    expect(await bench.exchangeBid(lost)).toMatchObject({ transmissions: 1 });
  });

  it('keeps a back-off when the worker gives back its leases after a failed pass', async () => {
    const lost = await bench.placeOrder();
    const worker = bench.worker({ exchange: new ObservedExchange(faultyWire(new Set([lost]), new Set())) });
    await worker.runOnce();
    // What a failed pass does at the next one: every lease of the worker given back.
    await new OmsRepository(bench.store.db, bench.store.dialect).releaseLeasedTo(worker.workerId);
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += LOST.retryAfterMs + 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(lost)).toBe('PENDING');
  });

  it('does not send a waiting bid while the exchange’s book cannot be read, and sends the new ones meanwhile', async () => {
    const lost = await bench.placeOrder({ quantity: 11 });
    const wire = faultyWire(new Set([lost]), new Set());
    let bookDown = false;
    const exchange = new ObservedExchange({
      ...wire,
      findBids: (ids) =>
        bookDown
          ? Promise.reject(
              new ExchangeUnavailableError({ outcome: 'not-sent', why: 'ECONNREFUSED', retryAfterMs: 5_000 }),
            )
          : wire.findBids(ids),
    });
    const worker = bench.worker({ exchange });
    await worker.runOnce();

    bookDown = true;
    const fresh = await bench.placeOrder({ quantity: 12 });
    bench.clock.now += LOST.retryAfterMs + 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(fresh)).toBe('PENDING');
    expect(await bench.status(lost)).toBe('EXXMITTED');
    expect(exchange.count('place', lost)).toBe(1);

    bookDown = false;
    bench.clock.now += 4_999;
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(lost)).toBe('PENDING');
    expect(exchange.count('place', lost)).toBe(1);
  });

  it('takes a change refused when sent again for done when the exchange’s book shows the first made it', async () => {
    const modifiedId = await bench.placeOrder({ quantity: 10 });
    const cancelledId = await bench.placeOrder({ quantity: 20 });
    const lose = new Set<string>();
    const wire = faultyWire(lose, new Set());
    // An exchange stricter than the simulator: a change it already made is refused when it comes again.
    const strict: ExchangeAdapter = {
      ...wire,
      modify: async (bid, terms) => {
        const held = heldTerms((await wire.findBids([bid.orderId])).get(bid.orderId));
        if (held?.quantity === terms.quantity && held.pricePaise === terms.pricePaise)
          return { done: false, reason: 'nothing to modify' };
        return wire.modify(bid, terms);
      },
      cancel: async (bid) => {
        const held = (await wire.findBids([bid.orderId])).get(bid.orderId);
        if (held?.status === 'CANCELLED') return { done: false, reason: 'the bid is not open' };
        return wire.cancel(bid);
      },
    };
    const worker = bench.worker({ exchange: new ObservedExchange(strict) });
    await worker.runOnce();
    await bench.requestModification(modifiedId, { quantity: 15, pricePaise: 10_200 });
    await bench.requestCancellation(cancelledId);
    lose.add(modifiedId);
    lose.add(cancelledId);
    await worker.runOnce();
    bench.clock.now += LOST.retryAfterMs + 1;
    await worker.runOnce();

    expect(await bench.status(cancelledId)).toBe('CANCELLED');
    expect(await bench.order(modifiedId)).toMatchObject({ status: 'PENDING', quantity: 15, price_paise: 10_200 });
    const reasons = (await bench.history(modifiedId)).map((entry) => entry.reason);
    expect(reasons.some((reason) => /refused/i.test(reason))).toBe(false);
    expect(await bench.openOutbox()).toBe(0);
  });

  it('settles a waiting bid refused when the exchange’s book says so later (an exchange that answers by file)', async () => {
    const orderId = await bench.placeOrder();
    const wire = faultyWire(new Set(), new Set([orderId]));
    const exchange = new ObservedExchange({
      ...wire,
      findBids: async (ids) =>
        new Map(ids.map((id) => [id, { status: 'REFUSED' as const, reason: 'UCC not registered with the exchange' }])),
    });
    const worker = bench.worker({ exchange });
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('EXXMITTED');

    bench.clock.now += REFUSED_CONNECTION.retryAfterMs + 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.order(orderId)).toMatchObject({
      status: 'ORDERERROR',
      error_reason: 'UCC not registered with the exchange',
    });
    expect(exchange.count('place', orderId)).toBe(1);
    expect(await bench.openOutbox()).toBe(0);
  });

  it('waits on a bid the book says is awaited, holding up no other waiting bid, and sends it never twice', async () => {
    const awaited = await bench.placeOrder({ quantity: 10 });
    const lost = await bench.placeOrder({ quantity: 11 });
    const wire = faultyWire(new Set([awaited, lost]), new Set());
    const stillAwaited = new Set([awaited]);
    const answerFile: Unanswered = { outcome: 'unknown', why: 'waiting for the answer file', retryAfterMs: 30_000 };
    const exchange = new ObservedExchange({
      ...wire,
      findBids: async (ids) => {
        const found = await wire.findBids(ids.filter((id) => !stillAwaited.has(id)));
        for (const id of ids)
          if (stillAwaited.has(id)) found.set(id, { status: 'AWAITED' as const, unanswered: answerFile });
        return found;
      },
    });
    const worker = bench.worker({ exchange });
    await worker.runOnce();
    expect(await bench.status(awaited)).toBe('EXXMITTED');

    bench.clock.now += LOST.retryAfterMs + 1;
    await worker.runOnce();
    // The other bid's answer is in the book: it is settled, though the first is still awaited.
    expect(await bench.status(lost)).toBe('PENDING');
    expect(await bench.status(awaited)).toBe('EXXMITTED');

    stillAwaited.delete(awaited);
    bench.clock.now += answerFile.retryAfterMs - 1;
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(awaited)).toBe('PENDING');
    expect(exchange.count('place', awaited)).toBe(1);
    expect(exchange.count('place', lost)).toBe(1);
    expect(await bench.openOutbox()).toBe(0);
  });
});
