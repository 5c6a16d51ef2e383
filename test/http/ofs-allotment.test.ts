/**
 * GET /transactional/v1/ofs/offers/{offer_id}/allotment (issue 51) through the real server and the OMS
 * worker with the simulated exchange, on the run's database: a two-day offer, an NII bidder held to the
 * single-bidder cap on T and again on T+1 after carrying forward, a bid below the T-day cut-off that lapses,
 * the 404 of an unknown offer, and nobody's bids but the caller's.
 *
 * The offer: 10,000 shares, retail 1,000, non-retail 9,000, MF/IC 2,500 reserved, cap 2,500; floor 100.00,
 * price priority. T: mf1 (MF) 5,000 @ 102.00, oths1 1,500 @ 101.50, nii1 6,000 @ 101.00 (2,500 within the
 * cap), nii2 1,000 @ 100.50. MF/IC reservation: mf1 2,500; the rest (6,500) by price: mf1 2,500, oths1
 * 1,500, nii1 2,500 at 101.00, the T-day cut-off; nii2 gets nothing. T+1: nobody bids retail, nii1 carries
 * its 3,500 forward, and the 1,000 retail shares left go to carried-forward bids within the cap: nii1
 * holds the cap already.
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

const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + DAY;
const T1_CLOSE = T1 + 375 * MINUTE;
const ALLOTMENT = '/transactional/v1/ofs/offers/ACME-OFS-1/allotment';
const NSE_IS = { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'ACME', series: 'IS' };

describe('the allotment explained', () => {
  let server: TestServer;
  let oms: OmsWorker;
  const users = {} as Record<'mf1' | 'oths1' | 'nii1' | 'nii2' | 'bystander', TestUser>;
  const orders = {} as Record<'mf1' | 'oths1' | 'nii1' | 'nii2', string>;

  beforeAll(async () => {
    server = await startTestServer({ now: T - 60 * MINUTE });
    await server.admin.importOfs([
      offerImport(
        {
          base_quantity: 10_000,
          green_shoe_quantity: 0,
          employee_quantity: 0,
          retail_reserve_pct: 10,
          retail_discount: null,
          employee_discount: null,
        },
        T,
      ),
    ]);
    users.mf1 = await server.createUser('mf1', { category: 'MF' });
    users.oths1 = await server.createUser('oths1', { category: 'OTHS' });
    users.nii1 = await server.createUser('nii1', { category: 'NII' });
    users.nii2 = await server.createUser('nii2', { category: 'NII' });
    users.bystander = await server.createUser('bystander', { category: 'NII' });
    const funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    for (const name of ['nii1', 'nii2'] as const) await funds.deposit(name, '1000000');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server?.close());

  async function place(name: keyof typeof orders, quantity: number, price: number): Promise<string> {
    const body = validBid({
      scrip_info: { expiry_date: '', strike_price: '', option_type: '', ...NSE_IS },
      order_type: 'RL',
      quantity: String(quantity),
      price,
    });
    const res = await server.call('POST', '/transactional/v1/orders/regular', {
      body,
      token: users[name].token,
      apiKey: users[name].apiKey,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  async function allotment(user: TestUser, path = ALLOTMENT) {
    const res = await server.call('GET', path, { token: user.token });
    return res;
  }

  const runOms = async (passes = 3) => {
    for (let i = 0; i < passes; i++) await oms.runOnce();
  };

  it('answers AWAITING_ALLOCATION while T is open', async () => {
    server.clock.now = T + 10 * MINUTE;
    orders.mf1 = await place('mf1', 5_000, 102);
    orders.oths1 = await place('oths1', 1_500, 101.5);
    orders.nii1 = await place('nii1', 6_000, 101);
    orders.nii2 = await place('nii2', 1_000, 100.5);
    await runOms();
    const res = await allotment(users.nii1);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', message: 'Allotment fetched successfully' });
    expect(res.body.data).toMatchObject({
      offer_id: 'ACME-OFS-1',
      state: 'T_OPEN',
      allocated: { t_day: false, t1_day: false },
      t_cutoff_price: null,
      bids: [
        {
          order_id: orders.nii1,
          bid_category: 'NII',
          outcome: 'AWAITING',
          funds: { blocked: 6_06_000, debited: 0, released: 0 },
          days: [{ day: 'T', bid_quantity: 6_000, reason: 'AWAITING_ALLOCATION' }],
        },
      ],
    });
  });

  it('explains the T allocation: the cap for nii1, the cut-off for nii2', async () => {
    server.clock.now = T_CLOSE + MINUTE;
    await runOms();
    const nii1 = (await allotment(users.nii1)).body.data;
    expect(nii1).toMatchObject({
      state: 'T_ALLOCATED',
      allocated: { t_day: true, t1_day: false },
      t_cutoff_price: 101,
    });
    expect(nii1.bids[0]).toMatchObject({
      outcome: 'AWAITING',
      allotted_quantity: 2_500,
      not_allotted_quantity: 3_500,
      funds: { blocked: 0, debited: 2_52_500, released: 3_53_500 },
      days: [
        {
          day: 'T',
          bid_quantity: 6_000,
          allotted_quantity: 2_500,
          price: 101,
          value: 2_52_500,
          reason: 'SINGLE_BIDDER_CAP',
        },
        { day: 'T+1', bid_quantity: 3_500, allotted_quantity: 0, reason: 'AWAITING_ALLOCATION' },
      ],
    });
    expect(nii1.bids[0].days[1].explanation).toContain('carry them forward');
    const nii2 = (await allotment(users.nii2)).body.data;
    expect(nii2.bids[0].days[0]).toMatchObject({ day: 'T', allotted_quantity: 0, reason: 'BELOW_CUTOFF' });
    expect(nii2.bids[0].days[0].explanation).toBe(
      'Nothing of 1,000 shares was allotted on T: your price Rs 100.50 was below the T-day cut-off of Rs 101.00.',
    );
  });

  it('explains T+1: the carried-forward 3,500 get nothing (the cap), the bid not carried forward lapses', async () => {
    server.clock.now = T1 + 10 * MINUTE;
    users.nii1 = await server.logInAgain(users.nii1);
    users.nii2 = await server.logInAgain(users.nii2);
    users.bystander = await server.logInAgain(users.bystander);
    const carried = await server.call('POST', `/transactional/v1/orders/regular/NSE_EQ/${orders.nii1}/carry_forward`, {
      token: users.nii1.token,
      apiKey: users.nii1.apiKey,
    });
    expect(carried.status, carried.text).toBe(200);
    await runOms();
    server.clock.now = T1_CLOSE + MINUTE;
    await runOms();

    const res = await allotment(users.nii1);
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      server_time: new Date(T1_CLOSE + MINUTE).toISOString(),
      state: 'ALLOCATED',
      allocated: { t_day: true, t1_day: true },
      t_cutoff_price: 101,
      t1_opens_at: new Date(T1).toISOString(),
      settlement_dates: { t_day: '2026-12-02T08:00:00.000Z', t1_day: '2026-12-03T08:00:00.000Z' },
    });
    expect(data.bids).toHaveLength(1);
    const [bid] = data.bids;
    expect(bid).toMatchObject({
      order_id: orders.nii1,
      exchange: 'NSE_EQ',
      symbol: 'ACME',
      series: 'IS',
      bid_category: 'NII',
      margin_type: 'H',
      status: 'EXECUTED',
      price: 101,
      quantity: 6_000,
      carried_forward: true,
      outcome: 'PART_ALLOTTED',
      allotted_quantity: 2_500,
      not_allotted_quantity: 3_500,
      average_price: 101,
      // Blocked 6,06,000 at entry and 3,53,500 again at carry-forward: debited 2,52,500, the rest released.
      funds: { blocked: 0, debited: 2_52_500, released: 7_07_000 },
    });
    expect(bid.days).toEqual([
      expect.objectContaining({
        day: 'T',
        allotted_quantity: 2_500,
        reason: 'SINGLE_BIDDER_CAP',
        settles_at: '2026-12-02T08:00:00.000Z',
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
    expect(bid.explanation).toBe(
      'Allotted 2,500 of 6,000 at Rs 101.00: the single-bidder cap (2,500 shares a bidder) took the rest; Rs 2,52,500.00 debited, Rs 7,07,000.00 released; settles Wed 2 Dec 13:30 IST',
    );
    expect(data.totals).toEqual({
      bid_quantity: 6_000,
      allotted_quantity: 2_500,
      not_allotted_quantity: 3_500,
      blocked: 0,
      debited: 2_52_500,
      released: 7_07_000,
    });
    for (const text of [bid.explanation, ...bid.days.map((d: { explanation: string }) => d.explanation)])
      expect(text).not.toMatch(/e-\d{3}|UTC|\d{4}-\d\d-\d\dT|\$\./);

    const nii2 = (await allotment(users.nii2)).body.data.bids[0];
    expect(nii2).toMatchObject({ outcome: 'NOT_ALLOTTED', status: 'CANCELLED', allotted_quantity: 0 });
    expect(nii2.days.map((d: { reason: string }) => d.reason)).toEqual(['BELOW_CUTOFF', 'NOT_CARRIED_FORWARD']);
    expect(nii2.funds).toEqual({ blocked: 0, debited: 0, released: 1_00_500 });
  });

  it('shows nobody’s bids but the caller’s, and answers an unknown offer 404 e-368 as the offer read does', async () => {
    const mine = await allotment(users.bystander);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.bids).toEqual([]);
    expect(mine.body.data.totals).toEqual({
      bid_quantity: 0,
      allotted_quantity: 0,
      not_allotted_quantity: 0,
      blocked: 0,
      debited: 0,
      released: 0,
    });
    const unknown = await allotment(users.bystander, '/transactional/v1/ofs/offers/NO-SUCH/allotment');
    const offerRead = await server.call('GET', '/transactional/v1/ofs/offers/NO-SUCH', {
      token: users.bystander.token,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('e-368');
    expect(unknown.body.code).toBe(offerRead.body.code);
    const anonymous = await server.call('GET', ALLOTMENT, {});
    expect(anonymous.status).toBe(401);
  });
});
