/**
 * An offer whose T day closes with non-retail demand short of the non-retail portion: the T allocation
 * waits for the operator (the offer says so), who either cancels the offer (every live bid cancelled, its
 * block released, nothing taken after) or tells it to go on (every bid allotted in full; the cut-off is
 * the floor price, under both methods, so that retail may bid at the floor on T+1 (NSE circular 25/2026);
 * the shares left go to retail on T+1).
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const MINUTE = 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;

/** Two offers on the same days: ONE is cancelled, TWO goes on. Each: 1,000 shares, 10 % retail, 900 non-retail, a 250-share cap per bidder. */
const ONE = {
  offer_id: 'ONE-OFS',
  symbol: 'ONE',
  listings: [{ exchange: 'NSE_EQ', scrip_token: 700011, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } }],
};
const TWO = {
  offer_id: 'TWO-OFS',
  symbol: 'TWO',
  listings: [{ exchange: 'NSE_EQ', scrip_token: 700012, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } }],
};
/** THREE: one NII bids the whole non-retail portion, of which the single-bidder cap lets the allocation take 250. */
const THREE = {
  offer_id: 'THREE-OFS',
  symbol: 'THREE',
  listings: [{ exchange: 'NSE_EQ', scrip_token: 700013, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } }],
};
const terms = { base_quantity: 1000, green_shoe_quantity: 0, retail_reserve_pct: 10, employee_quantity: 0 };

describe('an under-subscribed T day waits for the operator', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let funds: FundsService;
  let nii: TestUser;
  let nii2: TestUser;
  let nii3: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T + 10 * MINUTE });
    await server.admin.importOfs([
      offerImport({ ...ONE, ...terms }, T),
      offerImport({ ...TWO, ...terms }, T),
      offerImport({ ...THREE, ...terms }, T),
    ]);
    nii = await server.createUser('nii', { category: 'NII' });
    nii2 = await server.createUser('nii2', { category: 'NII' });
    nii3 = await server.createUser('nii3', { category: 'NII' });
    funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    await funds.deposit('nii', '1000000');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server.close());

  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });
  const bid = (symbol: string, scripToken: number, quantity: number, price: number, user = nii) =>
    server.call('POST', PLACE_ORDER, {
      body: validBid({
        scrip_info: {
          exchange: 'NSE_EQ',
          scrip_token: scripToken,
          symbol,
          series: 'IS',
          expiry_date: '',
          strike_price: '',
          option_type: '',
        },
        quantity: String(quantity),
        price,
      }),
      ...as(user),
    });
  const offer = async (offerId: string) =>
    (await server.call('GET', `/transactional/v1/ofs/offers/${offerId}`, { token: nii.token })).body.data.offer;
  const blocked = async () =>
    (await server.call('GET', '/authentication/v1/user/balance', { token: nii.token })).body.data.blocked as string;
  const order = async (orderId: string, user = nii) =>
    (
      (await server.call('GET', '/transactional/v1/orders?limit=100', { token: user.token })).body.data as {
        order_id: string;
      }[]
    ).find((o) => o.order_id === orderId);

  let one: string;
  let twoLow: string;
  let twoHigh: string;

  it('holds the T allocation after the close while demand is short, and says so', async () => {
    one = (await bid('ONE', 700011, 500, 101)).body.data.orderId;
    twoLow = (await bid('TWO', 700012, 240, 100.5, nii2)).body.data.orderId;
    twoHigh = (await bid('TWO', 700012, 200, 102)).body.data.orderId;
    await oms.runOnce();
    expect(await blocked()).toBe('70900.00');
    server.clock.now = T_CLOSE + MINUTE;
    await oms.runOnce();
    await oms.runOnce();
    for (const id of ['ONE-OFS', 'TWO-OFS'])
      expect(await offer(id)).toMatchObject({ state: 'T_OPEN', awaiting_operator: true, t_cutoff_price: null });
    expect(await order(one)).toMatchObject({ status: 'PENDING', traded_quantity: 0 });
  });

  it('judges the demand the allocation would take, after the single-bidder cap: one bidder for the whole portion does not fill it (issue 47 row 3)', async () => {
    // Placed before T's close (the clock is put back for it): 900 shares, the whole non-retail portion, of
    // which the allocation would take 250.
    const closedAt = server.clock.now;
    server.clock.now = T + 20 * MINUTE;
    const whole = await bid('THREE', 700013, 900, 101, nii3);
    expect(whole.status, whole.text).toBe(200);
    await oms.runOnce();
    server.clock.now = closedAt;
    await oms.runOnce();
    expect(await offer('THREE-OFS')).toMatchObject({ state: 'T_OPEN', awaiting_operator: true, t_cutoff_price: null });
    expect(await order(whole.body.data.orderId, nii3)).toMatchObject({ status: 'PENDING', traded_quantity: 0 });
  });

  it('cancels the offer: every live bid cancelled with the reason, its block released, nothing taken after', async () => {
    await server.admin.cancelOffer('ONE-OFS');
    await oms.runOnce();
    expect(await offer('ONE-OFS')).toMatchObject({ state: 'CANCELLED', awaiting_operator: false });
    expect(await order(one)).toMatchObject({
      status: 'CANCELLED',
      error_reason: expect.stringMatching(/offer of ONE was cancelled by the operator/),
    });
    expect(await blocked()).toBe('20400.00');
    const late = await bid('ONE', 700011, 10, 101);
    expect(late.status, late.text).toBe(409);
    expect(late.body).toMatchObject({
      code: 'e-367',
      message: 'The offer of ONE was cancelled; it takes no bids, modifications or cancellations',
    });
    await expect(server.admin.cancelOffer('ONE-OFS')).rejects.toThrow(/cancelled already/);
  });

  it('goes on when told: every bid allotted in full, the cut-off the floor price, the shares left for retail on T+1', async () => {
    await server.admin.proceedOffer('TWO-OFS');
    await oms.runOnce();
    expect(await offer('TWO-OFS')).toMatchObject({
      state: 'T_ALLOCATED',
      awaiting_operator: false,
      t_cutoff_price: 100,
    });
    expect(await order(twoLow, nii2)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 240,
      traded_price: '100.50',
    });
    expect(await order(twoHigh)).toMatchObject({ status: 'EXECUTED', traded_quantity: 200, traded_price: '102.00' });
    const row = await server.store.db
      .selectFrom('ofs_offers')
      .select(['t_unallotted'])
      .where('offer_id', '=', 'TWO-OFS')
      .executeTakeFirstOrThrow();
    expect(Number(row.t_unallotted)).toBe(460);
    expect(await blocked()).toBe('0.00');
    await expect(server.admin.proceedOffer('TWO-OFS')).rejects.toThrow(/has run already/);
  });

  it('takes a retail bid at the floor on T+1 (the cut-off is the floor), and none below it', async () => {
    server.clock.now = T + 24 * 60 * MINUTE + MINUTE;
    const retail = await server.createUser('ret');
    const retailBid = (price: number) =>
      server.call('POST', PLACE_ORDER, {
        body: validBid({
          scrip_info: {
            exchange: 'NSE_EQ',
            scrip_token: 700012,
            symbol: 'TWO',
            series: 'RS',
            expiry_date: '',
            strike_price: '',
            option_type: '',
          },
          quantity: '10',
          price,
        }),
        ...as(retail),
      });
    const atFloor = await retailBid(100);
    expect(atFloor.status, atFloor.text).toBe(200);
    const below = await retailBid(99.95);
    expect(below.status, below.text).toBe(422);
    expect(below.body.code).toBe('e-359');
  });
});
