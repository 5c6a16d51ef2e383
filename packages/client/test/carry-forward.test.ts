/**
 * carryForward against an in-process server whose clock the test moves through an offer's days, with the
 * OMS run by hand: refused before T+1 (409 e-378) and for an unknown order (404 e-371), then on T+1 the
 * partly allotted non-retail bid is carried forward with a revised price (one below the T-day cut-off is
 * refused, 422 e-380), under an Idempotency-Key like every order-entry call.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../../src/oms/worker.js';
import { FundsService } from '../../../src/services/funds.js';
import { FundsRepository } from '../../../src/store/funds/funds.js';
import { UserRepository } from '../../../src/store/access/users.js';
import { createOmsWorker } from '../../../src/wiring.js';
import { offerImport } from '../../../test/support/offers.js';
import { startTestServer, type TestServer, type TestUser } from '../../../test/support/server.js';
import { OrdergateClient, OrdergateError, type PlaceBid } from '../src/index.js';

const MINUTE = 60 * 1000;
/** T opens 09:15 India time on 1 December and closes at 15:30; T+1 the next day (the import's instants). */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + 24 * 60 * MINUTE;

/**
 * The offer: 1,000 shares, 875 of them non-retail, at most 250 to one bidder. One NII bids 400 in the NSE
 * non-retail series: the cap leaves 150 of them unallotted on T.
 */
const offer = offerImport({ base_quantity: 1000, green_shoe_quantity: 0, employee_quantity: 0 }, T);
const nonRetailBid: PlaceBid = {
  scrip_info: { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'ACME', series: 'IS' },
  transaction_type: 'BUY',
  product_type: 'OFS',
  order_type: 'RL',
  quantity: '400',
  price: 101,
};

describe('carryForward', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let nii: TestUser;
  let orderId: string;

  beforeAll(async () => {
    server = await startTestServer({ now: T - 60 * MINUTE });
    await server.admin.importOfs([offer]);
    nii = await server.createUser('nii1', { category: 'NII' });
    const funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    await funds.deposit('nii1', '1000000');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server.close());

  /** The bidder's client, logged in afresh: a session lasts 24 hours, and the test crosses days. */
  async function bidder(): Promise<OrdergateClient> {
    const client = new OrdergateClient({ baseUrl: server.url });
    await client.login({ userId: nii.userId, password: nii.password, apiKey: nii.apiKey });
    return client;
  }

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.unreachable('the call succeeded'),
      (error: unknown) => error,
    );

  it('refuses a bid on T with OrdergateError 409 e-378, and an unknown order with 404 e-371', async () => {
    server.clock.now = T + 10 * MINUTE;
    const client = await bidder();
    orderId = (await client.place(nonRetailBid)).data.orderId;
    await oms.runOnce();

    const onT = await refusal(client.carryForward('NSE_EQ', orderId));
    expect(onT).toBeInstanceOf(OrdergateError);
    expect(onT).toMatchObject({ status: 409, code: 'e-378' });
    expect((onT as OrdergateError).is('OFS_CARRY_FORWARD_NOT_ALLOWED')).toBe(true);
    expect((onT as OrdergateError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);

    const unknown = await refusal(client.carryForward('NSE_EQ', 'NO-SUCH-ORDER'));
    expect(unknown).toBeInstanceOf(OrdergateError);
    expect(unknown).toMatchObject({ status: 404, code: 'e-371' });
  });

  it('carries the partly allotted bid forward on T+1, and again without change under the same key', async () => {
    // T closes with 400 shares bid for 875: the operator lets the T allocation go on, which allots the cap.
    server.clock.now = T_CLOSE + MINUTE;
    await server.admin.proceedOffer(offer.offer_id as string);
    await oms.runOnce();
    server.clock.now = T1 + 5 * MINUTE;
    const client = await bidder();
    expect((await client.orderBook({ order_id: orderId })).data[0]).toMatchObject({
      status: 'PENDING',
      traded_quantity: 250,
      bid_category: 'NII',
      carried_forward: false,
    });

    // Below the T-day cut-off (the floor, 100.00: T was under-subscribed) a revision is refused, naming it.
    const below = await refusal(client.carryForward('NSE_EQ', orderId, { revision: { price: 99.95 } }));
    expect(below).toMatchObject({ status: 422, code: 'e-380', message: expect.stringContaining('at least 100.00') });

    const answer = await client.carryForward('NSE_EQ', orderId, {
      idempotencyKey: 'carry-nii1-1',
      revision: { price: 102 },
    });
    expect(answer).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order Carry-Forward Sent to OMS',
      data: { orderId },
    });
    expect(
      await client.carryForward('NSE_EQ', orderId, { idempotencyKey: 'carry-nii1-1', revision: { price: 102 } }),
    ).toEqual(answer);
    expect((await client.orderBook({ order_id: orderId })).data[0]).toMatchObject({
      carried_forward: true,
      order_price: '102.00',
    });
  });
});
