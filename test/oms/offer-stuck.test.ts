/**
 * No bad bid stops an allocation, and no failing instrument stops the others (issue 46; docs/design/oms.md,
 * "One instrument's failure is its own"), on the run's database, through the public surface: HTTP, the OMS
 * worker, the health endpoint, the metrics and the `ordergate oms stuck|retry` commands.
 *
 * Four offers on the same days (T Tuesday 1 December, T+1 Wednesday 2 December), each 1,000 shares: 100
 * retail, 900 non-retail, 250 reserved for MF/IC, price priority, floor 100.00.
 * - B-OFS holds the bid of the defect: nii's 500 at 100.00, unallotted on T (mf took the 900 at 105.00, so
 *   the T-day cut-off is 105.00), carried forward on T+1 without a revision. The API now refuses that
 *   (e-380, naming the cut-off); a database from before the fix holds it, and the test writes it so.
 * - A-OFS (its id sorts before B's) and C-OFS (after) are plain: allotted in the same pass as B.
 * - D-OFS cannot be allotted at all: its stored T-day cut-off is broken. It fails, is tried again after 1,
 *   2, 4 and 8 s, and is set aside at the fifth failure; the operator sees it, fixes it, and takes it back.
 * A-OFS also shows a carry-forward's funds blocked again, and refused for good when they lack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorMetrics } from '../../src/metrics/operator-metrics.js';
import { watchStore } from '../../src/wiring.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { runOrdergate } from '../cli/run-ordergate.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { recordingLogger } from './fixture.js';

const ORDERS = '/transactional/v1/orders';
const PLACE_ORDER = `${ORDERS}/regular`;
const MINUTE = 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + 24 * 60 * MINUTE;
const T1_CLOSE = T1 + 375 * MINUTE;

const OFFERS = { A: 700_201, B: 700_202, C: 700_203, D: 700_204 } as const;
type OfferName = keyof typeof OFFERS;
type Name = 'mf' | 'nii' | 'nii3' | 'ret';

describe('one carried-forward bid below the cut-off, and one offer that cannot be allotted, stop nothing else', () => {
  let database: TestDatabase;
  let server: TestServer;
  let oms: OmsWorker;
  const log = recordingLogger();
  const metrics = new OperatorMetrics();
  const users = {} as Record<Name, TestUser>;
  const orders = {} as Record<string, string>;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    server = await startTestServer({ databaseUrl: database.databaseUrl, now: T - 60 * MINUTE });
    await server.admin.importOfs(
      (Object.keys(OFFERS) as OfferName[]).map((name) =>
        offerImport(
          {
            offer_id: `${name}-OFS`,
            symbol: `${name}CO`,
            listings: [
              {
                exchange: 'NSE_EQ',
                scrip_token: OFFERS[name],
                series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null },
              },
            ],
            base_quantity: 1_000,
            green_shoe_quantity: 0,
            retail_reserve_pct: 10,
            retail_discount: null,
            employee_quantity: 0,
          },
          T,
        ),
      ),
    );
    users.mf = await server.createUser('mf', { category: 'MF' });
    users.nii = await server.createUser('nii', { category: 'NII' });
    users.nii3 = await server.createUser('nii3', { category: 'NII' });
    users.ret = await server.createUser('ret');
    const funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    for (const name of ['mf', 'nii', 'ret'] as const) await funds.deposit(name, '10000000');
    // nii3 can fund its T-day bid, 500 at 100.00, and not a carry-forward at 121.00.
    await funds.deposit('nii3', '60000');
    watchStore(metrics, server.store);
    oms = createOmsWorker(server.store, { logger: log.logger, now: () => server.clock.now, metrics: metrics.oms });
  });
  afterAll(async () => {
    await server?.close();
    await database?.dispose();
  });

  const as = (name: Name) => ({ token: users[name].token, apiKey: users[name].apiKey });
  const bid = (
    name: Name,
    offer: OfferName,
    series: 'RS' | 'IS',
    orderType: 'RL' | 'RL-MKT',
    quantity: number,
    price: number,
  ) =>
    server.call('POST', PLACE_ORDER, {
      body: validBid({
        scrip_info: {
          exchange: 'NSE_EQ',
          scrip_token: OFFERS[offer],
          symbol: `${offer}CO`,
          series,
          expiry_date: '',
          strike_price: '',
          option_type: '',
        },
        order_type: orderType,
        quantity: String(quantity),
        price,
      }),
      ...as(name),
    });
  async function placed(key: string, ...args: Parameters<typeof bid>): Promise<void> {
    const res = await bid(...args);
    expect(res.status, res.text).toBe(200);
    orders[key] = res.body.data.orderId as string;
  }
  const carry = (name: Name, orderId: string, body?: Record<string, unknown>) =>
    server.call('POST', `${PLACE_ORDER}/NSE_EQ/${orderId}/carry_forward`, {
      ...as(name),
      ...(body !== undefined && { body }),
    });
  const order = async (name: Name, key: string) =>
    (
      (await server.call('GET', `${ORDERS}?limit=100`, { token: users[name].token })).body.data as Record<
        string,
        unknown
      >[]
    ).find((o) => o.order_id === orders[key])!;
  const history = async (name: Name, key: string) =>
    (
      (await server.call('GET', `${ORDERS}/${orders[key]}`, { token: users[name].token })).body.data as {
        status: string;
        reason: string;
      }[]
    ).map((h) => h.reason);
  const offer = async (name: OfferName) =>
    (await server.call('GET', `/transactional/v1/ofs/offers/${name}-OFS`, { token: users.ret.token })).body.data.offer;
  const blocked = async (name: Name) =>
    (await server.call('GET', '/authentication/v1/user/balance', { token: users[name].token })).body.data.blocked;
  const omsHealth = async () => (await server.call('GET', '/health/oms')).body;
  const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: database.databaseUrl } });

  /** A session lasts 24 hours: the bidders log in again. */
  async function logInAgain(): Promise<void> {
    for (const name of Object.keys(users) as Name[]) users[name] = await server.logInAgain(users[name]);
  }

  it('T: mf takes the 900 of each offer at 105.00 (A, C, D: 1,000 bid, 100 left live); nii and nii3 bid 500 at 100.00 in B and A', async () => {
    server.clock.now = T + 10 * MINUTE;
    for (const name of Object.keys(OFFERS) as OfferName[])
      await placed(`mf-${name}`, 'mf', name, 'IS', 'RL', name === 'B' ? 900 : 1_000, 105);
    await placed('nii-B', 'nii', 'B', 'IS', 'RL', 500, 100);
    await placed('nii3-A', 'nii3', 'A', 'IS', 'RL', 500, 100);
    await oms.runOnce();
    expect(await blocked('nii')).toBe('50000.00');
    server.clock.now = T_CLOSE + MINUTE;
    await oms.runOnce();
    for (const name of Object.keys(OFFERS) as OfferName[])
      expect(await offer(name)).toMatchObject({ state: 'T_ALLOCATED', t_cutoff_price: 105 });
    // Unallotted on T, nii's bid stays live for the carry-forward decision, and blocks nothing overnight.
    expect(await order('nii', 'nii-B')).toMatchObject({ status: 'PENDING', traded_quantity: 0 });
    expect(await blocked('nii')).toBe('0.00');
    expect((await history('nii', 'nii-B')).at(-1)).toMatch(
      /Not allotted on T: .*the T-day cut-off price is 105.00.*blocked again then/,
    );
  });

  it('T+1: a carry-forward below the cut-off is refused naming the cut-off; a revision to at least it is taken, its funds blocked again or the bid ended', async () => {
    server.clock.now = T1 + 5 * MINUTE;
    await logInAgain();
    const refused = await carry('nii', orders['nii-B']!);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({
      code: 'e-380',
      message:
        'The bid\'s price 100.00 is below the T-day cut-off price 105.00: a carried-forward bid must stand at or above it. Carry it forward with a revised price of at least 105.00 (body {"price": 105.00})',
    });
    const low = await carry('nii', orders['nii-B']!, { price: 104.95 });
    expect(low.status, low.text).toBe(422);
    expect(low.body.code).toBe('e-380');
    expect((await carry('nii', orders['nii-B']!, { price: 105.02 })).body.code).toBe('e-353');
    expect((await carry('nii', orders['nii-B']!, { price: 105.005 })).body.code).toBe('e-353');

    // nii3 revises to 121.00 as it carries forward: 500 x 121.00 = Rs 60,500.00, more than its Rs 60,000.00.
    const revised = await carry('nii3', orders['nii3-A']!, { price: 121, quantity: '500' });
    expect(revised.status, revised.text).toBe(200);
    expect(await order('nii3', 'nii3-A')).toMatchObject({ order_price: '121.00', carried_forward: true });
    await oms.runOnce();
    expect(await order('nii3', 'nii3-A')).toMatchObject({ status: 'CANCELLED', carried_forward: false });
    expect((await history('nii3', 'nii3-A')).at(-1)).toBe(
      'Carry-forward refused by the OMS: the bid needs Rs 60,500.00 of funds; Rs 60,000.00 available. The bid is not carried forward and cannot be again',
    );
    expect(await blocked('nii3')).toBe('0.00');
    expect((await carry('nii3', orders['nii3-A']!)).body.code).toBe('e-372');

    // Retail bids at the cut-off in A, B and C.
    for (const name of ['A', 'B', 'C'] as const) await placed(`ret-${name}`, 'ret', name, 'RS', 'RL-MKT', 50, 0);
    await oms.runOnce();
    expect(await blocked('ret')).toBe('15750.00');

    // The database holds nii's bid as the code before the fix carried it forward: at 100.00, below 105.00.
    await server.store.db
      .updateTable('orders')
      .set({ carried_forward_at: server.clock.now })
      .where('order_id', '=', orders['nii-B']!)
      .execute();
    await server.store.db
      .updateTable('sim_exchange_bids')
      .set({ carried_forward: 1 })
      .where('order_id', '=', orders['nii-B']!)
      .execute();
    // And D's stored T-day cut-off is broken: no allocation of D can run.
    await server.store.db
      .updateTable('ofs_offers')
      .set({ t_cutoff_price_paise: -5 })
      .where('offer_id', '=', 'D-OFS')
      .execute();
  });

  it('T+1 close, one pass: A, B and C allotted, every one of their orders final, the bad bid set aside with its reason; D fails alone', async () => {
    server.clock.now = T1_CLOSE + MINUTE;
    await oms.runOnce();
    for (const name of ['A', 'B', 'C'] as const) {
      expect(await offer(name)).toMatchObject({ state: 'ALLOCATED' });
      expect(await order('ret', `ret-${name}`)).toMatchObject({
        status: 'EXECUTED',
        traded_quantity: 50,
        traded_price: '105.00',
      });
    }
    for (const name of ['A', 'C'] as const)
      expect(await order('mf', `mf-${name}`)).toMatchObject({ status: 'EXECUTED', traded_quantity: 900 });
    expect(await order('mf', 'mf-B')).toMatchObject({ status: 'EXECUTED', traded_quantity: 900 });
    expect(await order('nii', 'nii-B')).toMatchObject({ status: 'CANCELLED', traded_quantity: 0 });
    expect((await history('nii', 'nii-B')).at(-1)).toBe(
      'Not allotted on T+1: set aside, a carried-forward bid at 100.00 is below the T-day cut-off 105.00',
    );
    expect(await blocked('nii')).toBe('0.00');
    expect(await blocked('ret')).toBe('0.00');

    expect(await offer('D')).toMatchObject({ state: 'T1_OPEN' });
    expect(await order('mf', 'mf-D')).toMatchObject({ status: 'PENDING', traded_quantity: 900 });
    const failed = log
      .lines()
      .filter((line) => line.msg === 'OMS work on an instrument failed; it is tried again later');
    expect(failed).toMatchObject([{ instrument: 'offer:D-OFS', step: 'allocation', failures: 1 }]);
    expect(await omsHealth()).toEqual({ status: 'ok', set_aside: [] });
    const stuck = await ordergate(['oms', 'stuck']);
    expect(stuck.code, stuck.stderr).toBe(0);
    expect(stuck.stdout).toMatch(
      /^retrying offer:D-OFS step=allocation failures=1 since=\S+ last=\S+ next_try=\S+\n {2}RangeError: the T-day cut-off price -5 /,
    );
  });

  it('sets D aside after five failures, tried 1, 2, 4 and 8 s apart; the operator sees it on the health endpoint, in the metrics and the log', async () => {
    // Before its pause is over, D is not tried again.
    await oms.runOnce();
    expect(log.lines().filter((line) => line.instrument === 'offer:D-OFS' && line.level === 50)).toHaveLength(1);
    for (const pauseMs of [1_000, 2_000, 4_000, 8_000]) {
      server.clock.now += pauseMs;
      await oms.runOnce();
    }
    const setAside = log.lines().filter((line) => line.instrument === 'offer:D-OFS' && line.level === 50);
    expect(setAside.map((line) => line.failures)).toEqual([1, 2, 3, 4, 5]);
    expect(setAside.at(-1)!.msg).toBe(
      'OMS set offer:D-OFS (allocation) aside after 5 failures in a row; the other instruments go on. Fix the cause, then: ordergate oms retry offer:D-OFS',
    );
    // Set aside, it is tried no more.
    server.clock.now += 60 * MINUTE;
    await oms.runOnce();
    expect(log.lines().filter((line) => line.instrument === 'offer:D-OFS' && line.level === 50)).toHaveLength(5);
    expect(await omsHealth()).toEqual({
      status: 'degraded',
      set_aside: [
        {
          instrument: 'offer:D-OFS',
          step: 'allocation',
          failures: 5,
          since: new Date(server.clock.now - 60 * MINUTE).toISOString(),
        },
      ],
    });
    expect(await metrics.registry.getSingleMetricAsString('ordergate_oms_instruments_set_aside')).toMatch(
      /^ordergate_oms_instruments_set_aside 1$/m,
    );
    expect(await metrics.registry.getSingleMetricAsString('ordergate_oms_instrument_failures_total')).toMatch(
      /ordergate_oms_instrument_failures_total\{step="allocation",set_aside="true"\} 1/,
    );
    const stuck = await ordergate(['oms', 'stuck']);
    expect(stuck.stdout).toMatch(
      /^set-aside offer:D-OFS step=allocation failures=5 .* next_try=-\n {2}RangeError: the T-day cut-off price -5 is not a whole number/,
    );
  });

  it('takes D back once the operator has fixed it: allotted at the next pass, the health ok again', async () => {
    await server.store.db
      .updateTable('ofs_offers')
      .set({ t_cutoff_price_paise: 10_500 })
      .where('offer_id', '=', 'D-OFS')
      .execute();
    const retry = await ordergate(['oms', 'retry', 'offer:D-OFS']);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toBe('retrying: offer:D-OFS: at the next pass of the OMS\n');
    await oms.runOnce();
    expect(await offer('D')).toMatchObject({ state: 'ALLOCATED' });
    expect(await order('mf', 'mf-D')).toMatchObject({ status: 'EXECUTED', traded_quantity: 900 });
    expect(await omsHealth()).toEqual({ status: 'ok', set_aside: [] });
    const again = await ordergate(['oms', 'retry', 'offer:D-OFS']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('ordergate: offer:D-OFS: no failure is on record for it (see ordergate oms stuck)\n');
    expect((await ordergate(['oms', 'stuck'])).stdout).toBe('');
  });
});
