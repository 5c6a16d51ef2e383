/**
 * The order lifecycle through the OMS worker and the simulated exchange: placement, the OMS risk check,
 * exchange rejection, cancellation before transmission, modification and cancellation at the exchange.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, ObservedExchange, OmsBench, T0 } from './fixture.js';

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
});
afterEach(async () => {
  expect(bench.errors()).toEqual([]);
  await bench.close();
});

describe('placement', () => {
  it('moves an accepted order OMSXMITTED -> EXXMITTED -> PENDING, with the exchange order id and a reason for each step', async () => {
    const orderId = await bench.placeOrder({ quantity: 25, pricePaise: 10_150 });
    const worker = bench.worker();

    expect(await worker.runOnce()).toBe(1);

    const order = await bench.order(orderId);
    const bid = await bench.exchangeBid(orderId);
    expect(bid).toMatchObject({
      status: 'LIVE',
      quantity: 25,
      price_paise: 10_150,
      category: 'RETAIL',
      order_type: 'RL',
      transmissions: 1,
    });
    expect(order.status).toBe('PENDING');
    expect(order.exchange_order_id).toBe(bid!.exchange_order_id);
    expect(await bench.history(orderId)).toEqual([
      {
        status: 'OMSXMITTED',
        reason: 'Order entry accepted and queued for the OMS',
        quantity: 25,
        price_paise: 10_150,
        traded_quantity: 0,
        at: T0,
      },
      {
        status: 'EXXMITTED',
        reason: 'Sent to the exchange',
        quantity: 25,
        price_paise: 10_150,
        traded_quantity: 0,
        at: T0,
      },
      {
        status: 'PENDING',
        reason: `Accepted by the exchange, exchange order id ${bid!.exchange_order_id}`,
        quantity: 25,
        price_paise: 10_150,
        traded_quantity: 0,
        at: T0,
      },
    ]);
    expect(await bench.openOutbox()).toBe(0);

    // Nothing is due any more: a second pass changes nothing and sends nothing.
    expect(await worker.runOnce()).toBe(0);
    expect(await bench.statusTrail(orderId)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
    expect((await bench.exchangeBid(orderId))!.transmissions).toBe(1);
  });

  it('takes orders in the order they were committed', async () => {
    const ids = [];
    for (let i = 0; i < 5; i += 1) ids.push(await bench.placeOrder({ quantity: i + 1 }));
    const exchange = new ObservedExchange(bench.exchange());
    expect(await bench.worker({ exchange }).runOnce()).toBe(5);
    expect(exchange.calls.filter((call) => call.method === 'place').map((call) => call.orderId)).toEqual(ids);
    for (const id of ids) expect(await bench.status(id)).toBe('PENDING');
  });

  it('rejects in the OMS (OMSREJECT) an order whose window closed before the OMS got to it, and never sends it', async () => {
    const orderId = await bench.placeOrder({ category: 'RETAIL' });
    bench.clock.now = T0 + 2 * HOUR; // the retail window closes now

    await bench.worker().runOnce();

    const order = await bench.order(orderId);
    const reason =
      'Rejected by the OMS: The retail bidding window of SBIN (NSE_EQ) closed at 2026-11-23 12:30 IST; no more bids, modifications or cancellations are taken; the order did not reach the exchange';
    expect(order.status).toBe('OMSREJECT');
    expect(order.error_reason).toBe(reason);
    expect((await bench.history(orderId)).at(-1)).toMatchObject({ status: 'OMSREJECT', reason });
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
  });

  it('applies each category its own window: a non-retail order after the non-retail close is rejected, a retail one still goes', async () => {
    bench.clock.now = T0 + HOUR; // non-retail closed, retail open
    const institutional = await bench.placeOrder({ category: 'NON_RETAIL' });
    const retail = await bench.placeOrder({ category: 'RETAIL' });
    await bench.worker().runOnce();
    expect(await bench.order(institutional)).toMatchObject({
      status: 'OMSREJECT',
      error_reason:
        'Rejected by the OMS: The non-retail bidding window of SBIN (NSE_EQ) closed at 2026-11-23 11:30 IST; no more bids, modifications or cancellations are taken; the order did not reach the exchange',
    });
    expect(await bench.status(retail)).toBe('PENDING');
  });

  it('rejects in the OMS an order for an issue that is not registered', async () => {
    const orderId = await bench.placeOrder({ scripToken: 999_999 });
    await bench.worker().runOnce();
    expect(await bench.order(orderId)).toMatchObject({
      status: 'OMSREJECT',
      error_reason: 'Rejected by the OMS: NSE_EQ 999999 is not a registered OFS issue',
    });
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
  });

  it('marks ORDERERROR with the reason when the exchange rejects the bid', async () => {
    const orderId = await bench.placeOrder({ pricePaise: 10_150 });
    // The issue is re-imported with a higher floor after the order was accepted.
    await bench.registerIssue({ floorPricePaise: 10_200 });

    await bench.worker().runOnce();

    const order = await bench.order(orderId);
    expect(order.status).toBe('ORDERERROR');
    expect(order.error_reason).toBe('Price 101.50 is below the floor price 102.00');
    expect(order.exchange_order_id).toBeNull();
    expect(await bench.statusTrail(orderId)).toEqual(['OMSXMITTED', 'EXXMITTED', 'ORDERERROR']);
    expect((await bench.history(orderId)).at(-1)!.reason).toBe(
      'Rejected by the exchange: Price 101.50 is below the floor price 102.00',
    );
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
  });

  it('cancels an order whose cancellation was requested before it reached the exchange, without sending it', async () => {
    const orderId = await bench.placeOrder();
    await bench.requestCancellation(orderId);

    await bench.worker().runOnce();

    expect(await bench.order(orderId)).toMatchObject({ status: 'CANCELLED' });
    expect((await bench.history(orderId)).map((e) => [e.status, e.reason])).toEqual([
      ['OMSXMITTED', 'Order entry accepted and queued for the OMS'],
      ['OMSXMITTED', 'Cancellation requested by the user'],
      ['CANCELLED', 'Cancelled by the user before it reached the exchange'],
    ]);
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
    expect(await bench.openOutbox()).toBe(0);
  });
});

describe('modification at the exchange', () => {
  it('sends the new terms to the exchange and records it in the history', async () => {
    const orderId = await bench.placeOrder({ quantity: 10, pricePaise: 10_150 });
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestModification(orderId, { quantity: 40, pricePaise: 10_200 });

    expect(await worker.runOnce()).toBe(1);

    expect(await bench.exchangeBid(orderId)).toMatchObject({
      status: 'LIVE',
      quantity: 40,
      price_paise: 10_200,
      transmissions: 1,
    });
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 40, price_paise: 10_200 });
    expect((await bench.history(orderId)).slice(-2)).toEqual([
      expect.objectContaining({
        status: 'PENDING',
        reason: 'Modification requested: test',
        quantity: 40,
        price_paise: 10_200,
      }),
      expect.objectContaining({
        status: 'PENDING',
        reason: 'Modified at the exchange',
        quantity: 40,
        price_paise: 10_200,
      }),
    ]);
  });

  it('restores the terms the exchange holds when it refuses the modification, and says why', async () => {
    const orderId = await bench.placeOrder({ quantity: 10, pricePaise: 10_150 });
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestModification(orderId, { quantity: 40, pricePaise: 9_900 });

    await worker.runOnce();

    expect(await bench.exchangeBid(orderId)).toMatchObject({ quantity: 10, price_paise: 10_150 });
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 10, price_paise: 10_150 });
    expect((await bench.history(orderId)).at(-1)).toEqual(
      expect.objectContaining({
        status: 'PENDING',
        reason:
          'Modification refused by the exchange: Price 99.00 is below the floor price 100.00; the order keeps its terms at the exchange',
        quantity: 10,
        price_paise: 10_150,
      }),
    );
  });

  it('refuses a modification that reaches the exchange after the window closed', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestModification(orderId, { quantity: 15, pricePaise: 10_150 });
    // The retail window closes; allocation waits for the non-retail close, an hour later.
    await bench.registerIssue({ nonRetailClosesAt: T0 + 3 * HOUR });
    bench.clock.now = T0 + 2 * HOUR;

    await worker.runOnce();

    expect(await bench.exchangeBid(orderId)).toMatchObject({ status: 'LIVE', quantity: 10 });
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 10 });
    expect((await bench.history(orderId)).at(-1)!.reason).toBe(
      'Modification refused by the exchange: The retail bidding window of SBIN (NSE_EQ) closed at 2026-11-23 12:30 IST; no more bids, modifications or cancellations are taken; the order keeps its terms at the exchange',
    );
  });
});

describe('cancellation at the exchange', () => {
  it('cancels the bid at the exchange, then the order (CANCELLED, by the user)', async () => {
    const orderId = await bench.placeOrder();
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestCancellation(orderId);

    expect(await worker.runOnce()).toBe(1);

    expect(await bench.exchangeBid(orderId)).toMatchObject({ status: 'CANCELLED' });
    expect(await bench.order(orderId)).toMatchObject({ status: 'CANCELLED' });
    expect((await bench.history(orderId)).map((e) => [e.status, e.reason]).slice(-2)).toEqual([
      ['PENDING', 'Cancellation requested by the user'],
      ['CANCELLED', 'Cancelled by the user'],
    ]);
  });

  it('keeps the order live with the exchange reason when the exchange refuses the cancellation', async () => {
    const orderId = await bench.placeOrder();
    const worker = bench.worker();
    await worker.runOnce();
    await bench.requestCancellation(orderId);
    await bench.registerIssue({ retailClosesAt: T0 + 1, nonRetailClosesAt: T0 + 3 * HOUR });
    bench.clock.now = T0 + 1;

    await worker.runOnce();

    expect(await bench.exchangeBid(orderId)).toMatchObject({ status: 'LIVE' });
    expect(await bench.status(orderId)).toBe('PENDING');
    expect((await bench.history(orderId)).at(-1)!.reason).toBe(
      'Cancellation refused by the exchange: The retail bidding window of SBIN (NSE_EQ) closed at 2026-11-23 10:30:00 IST; no more bids, modifications or cancellations are taken',
    );
  });

  it('processes an order’s PLACE, MODIFY and CANCEL one after another, in commit order', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    await bench.requestModification(orderId, { quantity: 12, pricePaise: 10_150 });
    // Not a cancellation yet: the modification must reach the exchange after the placement.
    expect(await bench.worker().runOnce()).toBe(2);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ quantity: 12, transmissions: 1 });
    expect((await bench.history(orderId)).map((e) => e.reason)).toEqual([
      'Order entry accepted and queued for the OMS',
      'Modification requested: test',
      'Sent to the exchange',
      expect.stringMatching(/^Accepted by the exchange/),
      'Modified at the exchange',
    ]);
  });
});
