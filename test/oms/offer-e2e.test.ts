/**
 * A whole offer under the SEBI framework through the public surface (docs/design/ofs.md), on the run's
 * database, served by two nodes (two servers and two OMS workers on one database; NSE bids go to one,
 * BSE bids to the other, and every read is checked on both): non-retail bids of every kind on T on both listings, the green shoe exercised, the T
 * allocation with the cap and the discovered cut-off, carry-forward and revision on T+1, retail bids at a
 * price and at the cut-off on both exchanges, an employee, the T+1 allocation with the retail discount and
 * the spill of unsubscribed retail shares to a carried-forward bid, funds (released at the T allocation,
 * blocked again at carry-forward), and trades settling on trading days at the pay-out time.
 *
 * The offer: base 1,000 + green shoe 200 (exercised) = 1,200; retail 12.5 % = 150; non-retail 1,050; MF/IC
 * 300 reserved; single-bidder cap 300; employees 50 on top; floor 100.00, tick 0.05, price priority.
 *
 * T: mf1 (MF) 250 @ 102.00 (NSE), ic1 (IC, 0 % margin) 100 @ 101.50 (BSE), nii1 500 @ 101.00 (NSE),
 * oths1 600 @ 100.50 (BSE), nii2 300 @ 100.25 (NSE). The cap trims nii1 and oths1 to 300 each: demand 1,250
 * for 1,050. MF/IC first: 250 and 50 of their reserved 300; the rest by price: ic1's other 50, nii1 300,
 * oths1 300 and 100 of nii2's 300 at the marginal 100.25. The T-day cut-off is 100.25 (the lowest allotted
 * price); nothing of the non-retail portion is left.
 *
 * T+1: ret1 100 at the cut-off (NSE), ret2 30 @ 100.50 (BSE): 130 of the 150 retail shares, allotted in
 * full at the UNIFORM price, the cut-off 100.25 less Rs 2.50 = 97.75. emp1 40 at the cut-off: 95.23 (5 %
 * off, rounded down). nii1 and nii2 carry forward; nii1 revises to 101.50, but holds the cap already; nii2 (100 allotted)
 * takes the 20 unsubscribed retail shares at its 100.25. oths1 does not carry forward: its 300 stand, the
 * rest is cancelled at the close.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { odinMessagesOf } from '../../src/domain/orders/socket-messages.js';
import { toOrderEvent } from '../../src/schemas/mappers/orders.js';
import { OrderEventRepository } from '../../src/store/orders/events.js';
import { offerImport } from '../support/offers.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const ORDERS = '/transactional/v1/orders';
const PLACE_ORDER = `${ORDERS}/regular`;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
/** T opens 09:15 India time on 1 December; it closes at 15:30 (the import's instants). */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + DAY;
const T1_CLOSE = T1 + 375 * MINUTE;

const NSE = { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'ACME' };
const BSE = { exchange: 'BSE_EQ', scrip_token: 800001, symbol: 'ACME', series: 'A' };

type Name = 'mf1' | 'ic1' | 'nii1' | 'oths1' | 'nii2' | 'ret1' | 'ret2' | 'ret3' | 'emp1';

describe('a whole offer: T on both listings, the T allocation, carry-forward, T+1, settlement by day', () => {
  let database: TestDatabase;
  /** Node A, which serves the NSE bids, and node B, which serves the BSE ones. */
  let server: TestServer;
  let nodeB: TestServer;
  let oms: OmsWorker;
  let omsB: OmsWorker;
  /** Both nodes' clocks, moved together. */
  const clock = {
    set now(at: number) {
      server.clock.now = at;
      nodeB.clock.now = at;
    },
    get now() {
      return server.clock.now;
    },
  };
  /** Both OMS workers, one pass each. */
  const runOms = async () => {
    await oms.runOnce();
    await omsB.runOnce();
  };
  let funds: FundsService;
  const users = {} as Record<Name, TestUser>;
  let ops: TestUser;
  const orders = {} as Record<'mf1' | 'ic1_bse' | 'nii1' | 'oths1_bse' | 'nii2' | 'ret1' | 'ret2_bse' | 'emp1', string>;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    server = await startTestServer({ databaseUrl: database.databaseUrl, now: T - 60 * MINUTE });
    nodeB = await startTestServer({ databaseUrl: database.databaseUrl, now: T - 60 * MINUTE });
    await server.admin.importOfs([
      offerImport(
        {
          base_quantity: 1000,
          green_shoe_quantity: 200,
          employee_quantity: 50,
          retail_discount: { rupees: 2.5 },
          employee_discount: { pct: 5 },
        },
        T,
      ),
    ]);
    users.mf1 = await server.createUser('mf1', { category: 'MF' });
    users.ic1 = await server.createUser('ic1', { category: 'IC', marginType: 'T' });
    // 0 %-margin bids count against the limit the operator sets with the custodian (issue 47 row 3).
    await server.admin.setZeroMarginLimit('ic1', '10000000');
    users.nii1 = await server.createUser('nii1', { category: 'NII' });
    users.oths1 = await server.createUser('oths1', { category: 'OTHS' });
    users.nii2 = await server.createUser('nii2', { category: 'NII' });
    users.ret1 = await server.createUser('ret1');
    users.ret2 = await server.createUser('ret2');
    users.ret3 = await server.createUser('ret3');
    users.emp1 = await server.createUser('emp1');
    await server.admin.addEmployees('ACME-OFS-1', ['emp1']);
    ops = await server.createUser('ops');
    await new UserRepository(server.store.db, server.store.dialect).setOperator('ops', server.clock.now);
    funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    for (const name of ['nii1', 'nii2', 'ic1', 'ret1', 'emp1'] as const) await funds.deposit(name, '1000000');
    oms = createOmsWorker(server.store, {
      logger: pino({ level: 'silent' }),
      now: () => server.clock.now,
      workerId: 'node-a',
    });
    omsB = createOmsWorker(nodeB.store, {
      logger: pino({ level: 'silent' }),
      now: () => nodeB.clock.now,
      workerId: 'node-b',
    });
  });
  afterAll(async () => {
    await nodeB?.close();
    await server?.close();
    await database?.dispose();
  });

  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });

  /** The node a request goes to: B for BSE, A for the rest. */
  const nodeOf = (exchange: unknown) => (exchange === 'BSE_EQ' ? nodeB : server);

  function place(
    name: Name,
    scrip: Record<string, unknown>,
    orderType: 'RL' | 'RL-MKT',
    quantity: number,
    price: number,
  ) {
    const body = validBid({
      scrip_info: { expiry_date: '', strike_price: '', option_type: '', ...scrip },
      order_type: orderType,
      quantity: String(quantity),
      price,
    });
    return nodeOf(scrip.exchange).call('POST', PLACE_ORDER, { body, ...as(users[name]) });
  }

  async function placed(
    name: Name,
    scrip: Record<string, unknown>,
    orderType: 'RL' | 'RL-MKT',
    quantity: number,
    price: number,
  ): Promise<string> {
    const res = await place(name, scrip, orderType, quantity, price);
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  const exchangeOf = (orderId: string) =>
    Object.entries(orders)
      .find(([, id]) => id === orderId)?.[0]
      .includes('bse')
      ? 'BSE_EQ'
      : 'NSE_EQ';
  const modify = (name: Name, orderId: string, quantity: number, price: number) =>
    nodeOf(exchangeOf(orderId)).call('PUT', `${PLACE_ORDER}/${exchangeOf(orderId)}/${orderId}`, {
      body: {
        order_type: 'RL',
        quantity: String(quantity),
        price,
        disclosed_quantity: 0,
        validity: '',
        validity_days: 0,
        trigger_price: null,
      },
      ...as(users[name]),
    });
  const cancel = (name: Name, orderId: string) =>
    nodeOf(exchangeOf(orderId)).call('DELETE', `${PLACE_ORDER}/${exchangeOf(orderId)}/${orderId}`, as(users[name]));
  const carry = (name: Name, orderId: string) =>
    nodeOf(exchangeOf(orderId)).call(
      'POST',
      `${PLACE_ORDER}/${exchangeOf(orderId)}/${orderId}/carry_forward`,
      as(users[name]),
    );

  /** The order as the order book shows it; both nodes show the same. */
  async function order(name: Name, orderId: string) {
    const [a, b] = await Promise.all(
      [server, nodeB].map((node) => node.call('GET', `${ORDERS}?limit=100`, { token: users[name].token })),
    );
    expect(a!.status, a!.text).toBe(200);
    expect(b!.body).toEqual(a!.body);
    return (a!.body.data as Record<string, unknown>[]).find((o) => o.order_id === orderId)!;
  }

  async function history(name: Name, orderId: string) {
    const res = await server.call('GET', `${ORDERS}/${orderId}`, { token: users[name].token });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { status: string; reason: string }[];
  }

  async function balance(name: Name) {
    const res = await server.call('GET', '/authentication/v1/user/balance', { token: users[name].token });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { blocked: string; debited: string };
  }

  /** A session lasts 24 hours: the bidders log in again. */
  async function logInAgain(names: readonly Name[]) {
    for (const name of names) users[name] = await server.logInAgain(users[name]);
  }

  const expectRefused = (
    res: { status: number; text: string; body: { code: string; message: string } },
    status: number,
    code: string,
    message?: RegExp,
  ) => {
    expect(res.status, res.text).toBe(status);
    expect(res.body.code, res.text).toBe(code);
    if (message) expect(res.body.message).toMatch(message);
  };

  it('takes non-retail bids on T on both listings, by the bidder category the series and the user give', async () => {
    // Before T: refused, with the opening time.
    expectRefused(await place('mf1', { ...NSE, series: 'IS' }, 'RL', 250, 102), 422, 'e-354', /opens at/);
    clock.now = T + 10 * MINUTE;
    orders.mf1 = await placed('mf1', { ...NSE, series: 'IS' }, 'RL', 250, 102);
    orders.ic1_bse = await placed('ic1', BSE, 'RL', 100, 101.5);
    orders.nii1 = await placed('nii1', { ...NSE, series: 'IS' }, 'RL', 400, 101);
    orders.oths1_bse = await placed('oths1', BSE, 'RL', 600, 100.5);
    orders.nii2 = await placed('nii2', { ...NSE, series: 'IS' }, 'RL', 300, 100.25);

    // A non-retail user in the retail series, a retail user on T, a cut-off bid from an institution, below the floor, off the tick.
    expectRefused(
      await place('nii1', { ...NSE, series: 'RS' }, 'RL', 10, 101),
      422,
      'e-362',
      /retail series .* whose series is IS/,
    );
    expectRefused(await place('ret1', { ...NSE, series: 'RS' }, 'RL', 10, 101), 422, 'e-354', /taken on T\+1/);
    expectRefused(
      await place('ret1', { ...NSE, series: 'ES' }, 'RL-MKT', 10, 0),
      422,
      'e-363',
      /not registered as an eligible employee/,
    );
    expectRefused(await place('mf1', { ...NSE, series: 'IS' }, 'RL-MKT', 10, 0), 422, 'e-357');
    expectRefused(
      await place('mf1', { ...NSE, series: 'IS' }, 'RL', 10, 99.95),
      422,
      'e-356',
      /below the floor price 100.00/,
    );
    expectRefused(await place('mf1', { ...NSE, series: 'IS' }, 'RL', 10, 100.02), 422, 'e-353');
    await runOms();
    expect(await order('mf1', orders.mf1)).toMatchObject({ status: 'PENDING' });
    expect(await order('ic1', orders.ic1_bse)).toMatchObject({ status: 'PENDING', exchange: 'BSE_EQ' });
    // The exchange publishes the indicative price: the VWAP of the valid non-retail bids, and apart by margin.
    const read = await server.call('GET', '/transactional/v1/ofs/offers/ACME-OFS-1', { token: users.mf1.token });
    expect(read.body.data.offer.indicative).toEqual({
      at: new Date(T + 10 * MINUTE).toISOString(),
      price: 100.86, // 1,66,425.00 / 1,650
      quantity: 1650,
      margin_100: { price: 100.82, quantity: 1550 }, // 1,56,275.00 / 1,550
      margin_0: { price: 101.5, quantity: 100 },
    });
    expect(read.body.data.indicative_history).toEqual([
      { at: new Date(T + 10 * MINUTE).toISOString(), price: 100.86, quantity: 1650 },
    ]);
  });

  it('blocks funds for 100 %-margin bids and nothing for a 0 %-margin one, which may only be revised upward', async () => {
    expect(await balance('nii1')).toMatchObject({ blocked: '40400.00' });
    expect(await balance('ic1')).toMatchObject({ blocked: '0.00' });
    expectRefused(await modify('ic1', orders.ic1_bse, 90, 101.5), 422, 'e-376', /quantity 90 is below its current 100/);
    expectRefused(await cancel('ic1', orders.ic1_bse), 422, 'e-377');
    // A 100 %-margin bid is modified and cancelled freely on T.
    expect((await modify('nii1', orders.nii1, 500, 101)).status).toBe(200);
    const spare = await placed('nii2', { ...NSE, series: 'IS' }, 'RL', 10, 100);
    expect((await cancel('nii2', spare)).status).toBe(200);
    await runOms();
    expect(await order('nii1', orders.nii1)).toMatchObject({ status: 'PENDING', total_quantity: 500 });
    expect(await balance('nii1')).toMatchObject({ blocked: '50500.00' });
    expect(await order('nii2', spare)).toMatchObject({ status: 'CANCELLED' });
  });

  it('allots the non-retail portion at T close with the green shoe, the MF/IC reservation and the cap, and finds the cut-off', async () => {
    await server.admin.setGreenShoe('ACME-OFS-1', true);
    clock.now = T_CLOSE + MINUTE;
    // Carry-forward is a T+1 act.
    expectRefused(await carry('nii2', orders.nii2), 409, 'e-378', /during T\+1/);
    await runOms();
    const offer = (await server.call('GET', '/transactional/v1/ofs/offers/ACME-OFS-1', { token: users.mf1.token })).body
      .data.offer;
    expect(offer).toMatchObject({
      state: 'T_ALLOCATED',
      t_cutoff_price: 100.25,
      portions: { total: 1200, retail_reserved: 150, non_retail: 1050, mf_ic_reserved: 300, single_bidder_cap: 300 },
    });

    expect(await order('mf1', orders.mf1)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 250,
      traded_price: '102.00',
    });
    expect(await order('ic1', orders.ic1_bse)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 100,
      traded_price: '101.50',
    });
    // Partly allotted bids stay live for the carry-forward decision.
    expect(await order('nii1', orders.nii1)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 300,
      traded_price: '101.00',
    });
    expect(await order('oths1', orders.oths1_bse)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 300,
      traded_price: '100.50',
    });
    expect(await order('nii2', orders.nii2)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 100,
      traded_price: '100.25',
    });
    expect((await history('nii1', orders.nii1)).at(-1)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 300,
      traded_price: '101.00',
      reason: expect.stringMatching(/cap.*carried forward to T\+1/s),
    });
    // nii1 paid 300 x 101.00; the 200 left block nothing until carried forward. ic1 (0 % margin) is debited nothing.
    expect(await balance('nii1')).toMatchObject({ debited: '30300.00', blocked: '0.00' });
    expect(await balance('ic1')).toMatchObject({ debited: '0.00', blocked: '0.00' });
    // The operator's book: the broker's bids per category and listing, open and allotted, and the open non-retail demand by price.
    const book = await server.call('GET', '/operator/v1/ofs/offers/ACME-OFS-1/book', { token: ops.token });
    expect(book.status, book.text).toBe(200);
    const category = (name: string) => book.body.data.categories.find((c: { category: string }) => c.category === name);
    expect(book.body.data.categories.map((c: { category: string }) => c.category)).toEqual([
      'RETAIL',
      'EMPLOYEE',
      'NII',
      'MF',
      'IC',
      'OTHS',
    ]);
    expect(category('MF')).toEqual({
      category: 'MF',
      bids: 1,
      open_quantity: 0,
      allotted_quantity: 250,
      allotted_value: 25_500,
      by_listing: [
        {
          exchange: 'NSE_EQ',
          scrip_token: 700001,
          bids: 1,
          open_quantity: 0,
          allotted_quantity: 250,
          allotted_value: 25_500,
        },
      ],
    });
    expect(category('IC')).toMatchObject({
      allotted_quantity: 100,
      by_listing: [{ exchange: 'BSE_EQ', scrip_token: 800001, allotted_quantity: 100, allotted_value: 10_150 }],
    });
    expect(category('NII')).toMatchObject({
      bids: 2,
      open_quantity: 400,
      allotted_quantity: 400,
      allotted_value: 30_300 + 10_025,
    });
    expect(category('OTHS')).toMatchObject({
      bids: 1,
      open_quantity: 300,
      allotted_quantity: 300,
      by_listing: [{ exchange: 'BSE_EQ' }],
    });
    expect(category('RETAIL')).toMatchObject({ bids: 0, open_quantity: 0, by_listing: [] });
    expect(book.body.data.non_retail_demand).toEqual([
      { price: 101, quantity: 200, cumulative: 200, bids: 1 },
      { price: 100.5, quantity: 300, cumulative: 500, bids: 1 },
      { price: 100.25, quantity: 200, cumulative: 700, bids: 1 },
    ]);
    expect(book.body.data.offer).toMatchObject({ offer_id: 'ACME-OFS-1', state: 'T_ALLOCATED' });
    expectRefused(
      await server.call('GET', '/operator/v1/ofs/offers/ACME-OFS-1/book', { token: users.mf1.token }),
      403,
      'e-214',
    );
    expectRefused(await server.call('GET', '/operator/v1/ofs/offers/NOPE/book', { token: ops.token }), 404, 'e-368');

    // The T allocation has fixed the bids: no more changes until they are carried forward.
    expectRefused(await modify('nii1', orders.nii1, 500, 101.5), 422, 'e-355');
  });

  it('takes carry-forward, revisions at or above the cut-off, retail and employee bids on T+1, and refuses fresh non-retail bids', async () => {
    clock.now = T1 + 5 * MINUTE;
    // A session lasts 24 hours: the bidders log in again.
    await logInAgain(Object.keys(users) as Name[]);
    expectRefused(await place('nii1', { ...NSE, series: 'IS' }, 'RL', 10, 101), 422, 'e-366', /carry forward/);
    expectRefused(await modify('nii2', orders.nii2, 300, 100.5), 409, 'e-379');
    expect((await carry('nii1', orders.nii1)).body).toMatchObject({
      status: 'success',
      message: 'Order Carry-Forward Sent to OMS',
      data: { orderId: orders.nii1 },
    });
    const carriedOnce = await history('nii1', orders.nii1);
    // Again: answered, and nothing is written (issue 47 row 6: no history row, no event).
    for (let i = 0; i < 3; i++) expect((await carry('nii1', orders.nii1)).status).toBe(200);
    expect(await history('nii1', orders.nii1)).toEqual(carriedOnce);
    expect(carriedOnce.filter((h) => h.reason.startsWith('Carried forward to T+1'))).toHaveLength(1);
    expect((await carry('nii2', orders.nii2)).status).toBe(200);
    expectRefused(await modify('nii1', orders.nii1, 500, 100.2), 422, 'e-380', /below the T-day cut-off price 100.25/);
    expectRefused(await modify('nii1', orders.nii1, 300, 101.5), 422, 'e-369');
    expect((await modify('nii1', orders.nii1, 500, 101.5)).status).toBe(200);

    orders.ret1 = await placed('ret1', { ...NSE, series: 'RS' }, 'RL-MKT', 100, 0);
    orders.ret2_bse = await placed('ret2', BSE, 'RL', 30, 100.5);
    orders.emp1 = await placed('emp1', { ...NSE, series: 'ES' }, 'RL-MKT', 40, 0);
    expectRefused(
      await place('ret3', { ...NSE, series: 'RS' }, 'RL', 10, 100.2),
      422,
      'e-359',
      /below the T-day cut-off price 100.25/,
    );
    // ret1's Rs 10,025 at the cut-off counts on the other exchange too: 1,200 more shares at 160.00 pass
    // Rs 2,00,000 (Rs 1,89,975 left: 1,187 shares).
    expectRefused(await place('ret1', BSE, 'RL', 1200, 160), 422, 'e-360', /at most 1187 shares/);
    // More than the offer's 1,250 shares (base, green shoe, employees): refused whatever the money.
    expectRefused(
      await place('ret1', BSE, 'RL', 1251, 100.25),
      422,
      'e-382',
      /more than the 1250 shares the offer of ACME sells/,
    );
    expectRefused(await place('emp1', { ...NSE, series: 'ES' }, 'RL', 10, 100), 422, 'e-364');
    // The employee limit (Rs 5,00,000) is beyond this offer's 1,250 shares: its rule is test/domain's.
    expectRefused(
      await place('emp1', { ...NSE, series: 'ES' }, 'RL-MKT', 4948, 0),
      422,
      'e-382',
      /more than the 1250 shares/,
    );
    expectRefused(await carry('ret1', orders.ret1), 409, 'e-378', /non-retail/);
    await runOms();
    expect((await history('nii1', orders.nii1)).map((h) => h.reason)).toContain('Carried forward at the exchange');
    expect(await order('nii1', orders.nii1)).toMatchObject({
      status: 'PENDING',
      order_price: '101.50',
      pending_quantity: 200,
      offer_id: 'ACME-OFS-1',
      bid_category: 'NII',
      margin_type: 'H',
      carried_forward: true,
    });
    expect(await order('emp1', orders.emp1)).toMatchObject({
      bid_category: 'EMPLOYEE',
      category: 'NON_RETAIL',
      carried_forward: false,
    });
    expect(await order('ret2', orders.ret2_bse)).toMatchObject({ bid_category: 'RETAIL', series: 'A' });
    expect(await order('ret1', orders.ret1)).toMatchObject({ status: 'PENDING' });
    // The retail cut-off bid is blocked at the T-day cut-off; the carried-forward bids are blocked again,
    // nii1's 200 at its revised 101.50, nii2's 200 at 100.25.
    expect(await balance('ret1')).toMatchObject({ blocked: '10025.00' });
    expect(await balance('nii1')).toMatchObject({ blocked: '20300.00' });
    expect(await balance('nii2')).toMatchObject({ blocked: '20050.00' });
  });

  it('allots retail, employees and the spill at T+1 close, cancels what was not carried forward, and settles by day', async () => {
    clock.now = T1_CLOSE + MINUTE;
    await runOms();
    expect(await order('ret1', orders.ret1)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 100,
      traded_price: '97.75',
    });
    expect(await order('ret2', orders.ret2_bse)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 30,
      traded_price: '97.75',
    });
    expect(await order('emp1', orders.emp1)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 40,
      traded_price: '95.23',
    });
    // nii2 takes the 20 unsubscribed retail shares within its cap; nii1 already holds the cap.
    expect(await order('nii2', orders.nii2)).toMatchObject({
      status: 'EXECUTED',
      traded_quantity: 120,
      traded_price: '100.25',
    });
    expect(await order('nii1', orders.nii1)).toMatchObject({ status: 'EXECUTED', traded_quantity: 300 });
    expect(await order('oths1', orders.oths1_bse)).toMatchObject({ status: 'EXECUTED', traded_quantity: 300 });
    expect((await history('oths1', orders.oths1_bse)).at(-1)!.reason).toMatch(
      /not carried forward by the close of T\+1; the 300 shares allotted on T stand/,
    );
    expect(await balance('ret1')).toMatchObject({ blocked: '0.00', debited: '9775.00' });
    expect(await balance('nii1')).toMatchObject({ blocked: '0.00', debited: '30300.00' });

    const trades = await server.store.db
      .selectFrom('trades')
      .select(['order_id', 'quantity', 'price_paise', 'traded_at', 'settles_at'])
      .orderBy('trade_id')
      .execute();
    const of = (orderId: string) =>
      trades
        .filter((t) => t.order_id === orderId)
        .map((t) => [Number(t.quantity), Number(t.price_paise), new Date(Number(t.settles_at)).toISOString()]);
    // T-day trades settle on T+1 and T+1 trades on T+2, trading days, at the 13:30 India time pay-out.
    expect(of(orders.mf1)).toEqual([[250, 10_200, '2026-12-02T08:00:00.000Z']]);
    expect(of(orders.nii2)).toEqual([
      [100, 10_025, '2026-12-02T08:00:00.000Z'],
      [20, 10_025, '2026-12-03T08:00:00.000Z'],
    ]);
    expect(of(orders.ret1)).toEqual([[100, 9_775, '2026-12-03T08:00:00.000Z']]);
    // nii2's T-day shares are a holding since 13:30 on T+1; its T+1 shares are a position until T+2.
    const portfolio = async (path: string) => {
      const res = await nodeB.call('GET', path, { token: users.nii2.token });
      expect(res.status, res.text).toBe(200);
      return res.body.data as Record<string, unknown>[];
    };
    expect(await portfolio('/transactional/v1/portfolio/holdings')).toMatchObject([
      { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'ACME', quantity: 100, average_price: '100.25' },
    ]);
    expect(await portfolio('/transactional/v1/portfolio/positions/all')).toMatchObject([
      { exchange: 'NSE_EQ', scrip_token: 700001, buy_quantity: 20, net_quantity: 20 },
    ]);
    clock.now = Date.parse('2026-12-03T08:00:00Z');
    await logInAgain(['nii2']);
    expect(await portfolio('/transactional/v1/portfolio/holdings')).toMatchObject([
      { quantity: 120, average_price: '100.25' },
    ]);
    expect(await portfolio('/transactional/v1/portfolio/positions/all')).toEqual([]);

    // The live order socket tells each allotment apart: nii2's T-day trade when it was made (the order still
    // PENDING) and its T+1 trade, each with its own number, quantity and price.
    const events = await new OrderEventRepository(server.store.db).userEventsBetween(
      'nii2',
      0,
      Number.MAX_SAFE_INTEGER,
      1000,
    );
    const tradeMessages = events
      .filter((event) => event.order.orderId === orders.nii2)
      .flatMap((event) => odinMessagesOf(toOrderEvent(event), event.trade))
      .filter((message) => message.MessageType === 'TRD_MSG')
      .map((message) => [
        message.OrderStatus,
        message.TradeNumber,
        message.TradeQty,
        message.TradedPrice,
        message.TradedQTY,
      ]);
    expect(tradeMessages).toEqual([
      [expect.any(Number), `T-${orders.nii2}`, 100, 10_025, 100],
      [expect.any(Number), `T-${orders.nii2}-2`, 20, 10_025, 120],
    ]);

    // 1,050 non-retail on T, 130 retail, 20 spilled and 40 to employees on T+1.
    expect(trades.reduce((sum, t) => sum + Number(t.quantity), 0)).toBe(1050 + 130 + 20 + 40);
    const offer = (await server.call('GET', '/transactional/v1/ofs/offers/ACME-OFS-1', { token: users.nii2.token }))
      .body.data.offer;
    // Retail was not oversubscribed: its cut-off is the T-day cut-off, and UNIFORM retail paid it less Rs 2.50.
    expect(offer).toMatchObject({
      state: 'ALLOCATED',
      retail_cutoff_price: 100.25,
      retail_price: 97.75,
      employee_price: 95.23,
    });
  });
});
