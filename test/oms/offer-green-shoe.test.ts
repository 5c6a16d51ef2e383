/**
 * The seller's green-shoe decision, after the T-day demand is known (issue 46; shared/spec/ofs-framework.md,
 * "At T close"): the T allocation waits for it until its deadline, and the offer says so; the operator
 * records any quantity from none to the whole option, which sets the portions (and the employees' part of
 * the green shoe); with no decision, the import's default stands at the deadline.
 *
 * Two offers, T Tuesday 1 December 09:15-15:30 India time, the decision due at 17:00: base 1,000 and a
 * green shoe of 1,000 each, 10 % retail. G1 also has 100 shares for employees and 100 more of the green
 * shoe's. An MF bids 2,000 at 101.00 in each.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { createOmsWorker } from '../../src/wiring.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const MINUTE = 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const DECISION_BY = Date.parse('2026-12-01T11:30:00Z');
const T1 = T + 24 * 60 * MINUTE;
const T1_CLOSE = T1 + 375 * MINUTE;
const TOKENS = { G1: 700_301, G2: 700_302 } as const;

describe("the T allocation waits for the seller's green-shoe decision", () => {
  let server: TestServer;
  let oms: OmsWorker;
  let mf: TestUser;
  let emp: TestUser;
  const orders = {} as Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer({ now: T - 60 * MINUTE });
    await server.admin.importOfs(
      (['G1', 'G2'] as const).map((name) =>
        offerImport(
          {
            offer_id: name,
            symbol: name,
            listings: [
              {
                exchange: 'NSE_EQ',
                scrip_token: TOKENS[name],
                series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
              },
            ],
            base_quantity: 1_000,
            green_shoe_quantity: 1_000,
            green_shoe_exercised: false,
            // The default deadline: 17:00 India time on T.
            green_shoe_decision_by: undefined,
            retail_reserve_pct: 10,
            employee_quantity: name === 'G1' ? 100 : 0,
            employee_green_shoe_quantity: name === 'G1' ? 100 : 0,
            employee_discount: null,
          },
          T,
        ),
      ),
    );
    mf = await server.createUser('mf', { category: 'MF' });
    emp = await server.createUser('emp');
    await server.admin.addEmployees('G1', ['emp']);
    const funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    await funds.deposit('mf', '1000000');
    await funds.deposit('emp', '100000');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
  });
  afterAll(() => server?.close());

  const offer = async (name: string, user = mf) =>
    (await server.call('GET', `/transactional/v1/ofs/offers/${name}`, { token: user.token })).body.data.offer;
  const order = async (user: TestUser, key: string) =>
    (
      (await server.call('GET', '/transactional/v1/orders?limit=100', { token: user.token })).body.data as Record<
        string,
        unknown
      >[]
    ).find((o) => o.order_id === orders[key])!;

  it('after T closes, waits until 17:00 India time for the decision, and the offer says so', async () => {
    server.clock.now = T + 10 * MINUTE;
    for (const name of ['G1', 'G2'] as const) {
      const res = await server.call('POST', '/transactional/v1/orders/regular', {
        body: validBid({
          scrip_info: {
            exchange: 'NSE_EQ',
            scrip_token: TOKENS[name],
            symbol: name,
            series: 'IS',
            expiry_date: '',
            strike_price: '',
            option_type: '',
          },
          quantity: '2000',
          price: 101,
        }),
        token: mf.token,
        apiKey: mf.apiKey,
      });
      expect(res.status, res.text).toBe(200);
      orders[name] = res.body.data.orderId;
    }
    await oms.runOnce();
    server.clock.now = T_CLOSE + MINUTE;
    await oms.runOnce();
    for (const name of ['G1', 'G2']) {
      expect(await offer(name)).toMatchObject({
        state: 'T_OPEN',
        awaiting_green_shoe_until: '2026-12-01T11:30:00.000Z',
        awaiting_operator: false,
        green_shoe_exercised: 0,
        green_shoe_decided_at: null,
      });
      expect(await order(mf, name)).toMatchObject({ status: 'PENDING', traded_quantity: 0 });
    }
  });

  it('allots G1 at the next pass once the operator records 500 of the green shoe: total 1,500, employees 150', async () => {
    await server.admin.setGreenShoe('G1', 500);
    await oms.runOnce();
    expect(await offer('G1')).toMatchObject({
      state: 'T_ALLOCATED',
      green_shoe_exercised: 500,
      awaiting_green_shoe_until: null,
      portions: { total: 1_500, retail_reserved: 150, non_retail: 1_350, employee: 150 },
    });
    expect(await order(mf, 'G1')).toMatchObject({ traded_quantity: 1_350 });
    // G2 waits on.
    expect(await offer('G2')).toMatchObject({ state: 'T_OPEN', awaiting_green_shoe_until: '2026-12-01T11:30:00.000Z' });
  });

  it('allots G2 at its deadline with the default decision (none exercised): total 1,000', async () => {
    server.clock.now = DECISION_BY - 1;
    await oms.runOnce();
    expect(await offer('G2')).toMatchObject({ state: 'T_OPEN' });
    server.clock.now = DECISION_BY;
    await oms.runOnce();
    expect(await offer('G2')).toMatchObject({
      state: 'T_ALLOCATED',
      green_shoe_exercised: 0,
      portions: { total: 1_000, non_retail: 900 },
    });
    expect(await order(mf, 'G2')).toMatchObject({ traded_quantity: 900 });
    await expect(server.admin.setGreenShoe('G2', 1_000)).rejects.toThrow(
      /the T allocation runs, and it has run|the decision was due by/,
    );
  });

  it('gives the employees their green-shoe part on T+1: 150 shares at the cut-off, settling on the next trading day', async () => {
    server.clock.now = T1 + MINUTE;
    emp = await server.logInAgain(emp);
    const res = await server.call('POST', '/transactional/v1/orders/regular', {
      body: validBid({
        scrip_info: {
          exchange: 'NSE_EQ',
          scrip_token: TOKENS.G1,
          symbol: 'G1',
          series: 'ES',
          expiry_date: '',
          strike_price: '',
          option_type: '',
        },
        order_type: 'RL-MKT',
        quantity: '200',
        price: 0,
      }),
      token: emp.token,
      apiKey: emp.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    orders.emp = res.body.data.orderId;
    await oms.runOnce();
    // Thursday 3 December becomes an exchange holiday: T+1's allotments settle on Friday, at the pay-out.
    await new TradingHolidayRepository(server.store.db).replaceYears(
      [{ date: '2026-12-03', description: 'A holiday' }],
      server.clock.now,
    );
    server.clock.now = T1_CLOSE + MINUTE;
    await oms.runOnce();
    expect(await order(emp, 'emp')).toMatchObject({ status: 'EXECUTED', traded_quantity: 150, traded_price: '101.00' });
    const trade = await server.store.db
      .selectFrom('trades')
      .select('settles_at')
      .where('order_id', '=', orders.emp!)
      .executeTakeFirstOrThrow();
    expect(new Date(Number(trade.settles_at)).toISOString()).toBe('2026-12-04T08:00:00.000Z');
  });
});
