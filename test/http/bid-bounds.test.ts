/**
 * The bounds on a bid (issue 47 row 3), through the real server on both databases: a bid is for at most
 * the shares on sale (an offer's base, green shoe and employees; an issue's offer quantity), and a client's
 * live 0 %-margin bids total at most the limit the operator set with the custodian arrangement (none set:
 * none taken), counted under concurrency. The probe's bid, 999999999999999 shares at Rs 999,999,999.95 by
 * an MF at 0 % margin, set the T-day cut-off for everyone; it is refused at the door now.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const MINUTE = 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const NSE_IS = {
  exchange: 'NSE_EQ',
  scrip_token: 700001,
  symbol: 'ACME',
  series: 'IS',
  expiry_date: '',
  strike_price: '',
  option_type: '',
};

function expectRefused(res: CallResult, code: string, message: RegExp): void {
  expect(res.status, res.text).toBe(422);
  expect(res.body.code, res.text).toBe(code);
  expect(res.body.message).toMatch(message);
}

describe('the bounds on a bid', () => {
  let server: TestServer;
  let mf: TestUser;
  let ic: TestUser;
  let retail: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T + 10 * MINUTE });
    // 1,000,000 base + 1,000,000 green shoe + 20,000 for employees: 2,020,000 shares at most.
    // BSE's series carries an order value upper limit of Rs 1,00,00,000 (NSE's has none).
    await server.admin.importOfs([
      offerImport(
        {
          listings: [
            { exchange: 'NSE_EQ', scrip_token: 700001, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
            {
              exchange: 'BSE_EQ',
              scrip_token: 800001,
              series: { RETAIL: 'A', NON_RETAIL: 'A' },
              order_value_upper_limit: { NON_RETAIL: 10_000_000 },
            },
          ],
        },
        T,
      ),
    ]);
    await server.registerIssue();
    mf = await server.createUser('mf', { category: 'MF', marginType: 'T' });
    ic = await server.createUser('ic', { category: 'IC', marginType: 'T' });
    retail = await server.createUser('ret');
  });
  afterAll(() => server.close());

  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });
  const bid = (user: TestUser, quantity: number | string, price: number) =>
    server.call('POST', PLACE_ORDER, {
      body: validBid({ scrip_info: NSE_IS, quantity: String(quantity), price }),
      ...as(user),
    });
  const modify = (user: TestUser, orderId: string, quantity: number, price: number) =>
    server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, {
      body: { order_type: 'RL', quantity: String(quantity), price },
      ...as(user),
    });

  it('refuses a bid for more than the offer sells, and the probe’s bid; takes the whole offer', async () => {
    await server.admin.setZeroMarginLimit('mf', '100000000000');
    expectRefused(
      await bid(mf, '999999999999999', 999_999_999.95),
      'e-382',
      /quantity 999999999999999 is more than the 2020000 shares the offer of ACME sells/,
    );
    expectRefused(await bid(mf, 2_020_001, 101), 'e-382', /more than the 2020000 shares/);
    const whole = await bid(mf, 2_020_000, 101);
    expect(whole.status, whole.text).toBe(200);
    // A modification is held to it too.
    expectRefused(await modify(mf, whole.body.data.orderId, 2_020_001, 101), 'e-382', /more than the 2020000 shares/);
  });

  it('refuses a bid in a one-listing issue for more than its offer quantity', async () => {
    const over = await server.call('POST', PLACE_ORDER, {
      body: validBid({ quantity: '1000001', price: 101 }),
      ...as(retail),
    });
    expectRefused(over, 'e-382', /quantity 1000001 is more than the 1000000 shares the OFS issue sells/);
  });

  it('takes no 0 %-margin bid from a client without a limit, and counts each against the limit set', async () => {
    expectRefused(await bid(ic, 100, 101), 'e-384', /No 0 % margin limit is set for you/);
    await server.admin.setZeroMarginLimit('ic', '1000000');
    const first = await bid(ic, 5_000, 101); // Rs 5,05,000
    expect(first.status, first.text).toBe(200);
    expectRefused(
      await bid(ic, 5_000, 101),
      'e-384',
      /Your 0 %-margin bids, live or allotted and not settled, total Rs 5,05,000\.00; with this bid they would total Rs 10,10,000\.00, over your 0 % margin limit of Rs 10,00,000\.00 \(Rs 4,95,000\.00 left\)/,
    );
    const second = await bid(ic, 4_900, 101); // Rs 4,94,900: Rs 9,99,900 in all
    expect(second.status, second.text).toBe(200);
    // A raise counts what it adds: 5,000 at 102.00 is Rs 5,10,000, Rs 10,04,900 in all.
    expectRefused(await modify(ic, first.body.data.orderId, 5_000, 102), 'e-384', /would total Rs 10,04,900\.00/);
    // The operator raises the limit to exactly that: taken (at the limit is within it), on the next bid.
    await server.admin.setZeroMarginLimit('ic', '1004900');
    const raised = await modify(ic, first.body.data.orderId, 5_000, 102);
    expect(raised.status, raised.text).toBe(200);
  });

  it('holds the limit for bids sent together: of 8 at once that each take 30 % of it, 3 are taken', async () => {
    const oic = await server.createUser('ic2', { category: 'IC', marginType: 'T' });
    await server.admin.setZeroMarginLimit('ic2', '101000'); // 3 bids of Rs 30,300 fit, 4 do not
    const answers = await Promise.all(Array.from({ length: 8 }, () => bid(oic, 300, 101)));
    expect(answers.filter((res) => res.status === 200)).toHaveLength(3);
    for (const res of answers.filter((r) => r.status !== 200)) expect(res.body.code, res.text).toBe('e-384');
  });

  it("refuses a bid over its series' order value upper limit, placed or modified (e-383); shows the limit", async () => {
    const nii = await server.createUser('nii', { category: 'NII' });
    const onBse = (quantity: number, price: number) =>
      server.call('POST', PLACE_ORDER, {
        body: validBid({
          scrip_info: { ...NSE_IS, exchange: 'BSE_EQ', scrip_token: 800001, series: 'A' },
          quantity: String(quantity),
          price,
        }),
        ...as(nii),
      });
    expectRefused(
      await onBse(99_010, 101),
      'e-383',
      /The bid's value Rs 1,00,00,010\.00 is over the series' order value upper limit of Rs 1,00,00,000\.00, as the exchange sets it for the offer; at 101\.00 you may bid for at most 99009 shares/,
    );
    const within = await onBse(99_009, 101);
    expect(within.status, within.text).toBe(200);
    const raised = await server.call('PUT', `${PLACE_ORDER}/BSE_EQ/${within.body.data.orderId}`, {
      body: { order_type: 'RL', quantity: '99009', price: 101.05 },
      ...as(nii),
    });
    expectRefused(raised, 'e-383', /order value upper limit of Rs 1,00,00,000\.00/);
    // The same bid on NSE, whose series has no limit, is taken.
    expect((await bid(nii, 99_010, 101)).status).toBe(200);
    const read = await server.call('GET', '/transactional/v1/ofs/offers/ACME-OFS-1', { token: nii.token });
    expect(
      read.body.data.offer.listings.map((l: { order_value_upper_limit: unknown }) => l.order_value_upper_limit),
    ).toEqual([
      { RETAIL: null, NON_RETAIL: 10_000_000, EMPLOYEE: null },
      { RETAIL: null, NON_RETAIL: null, EMPLOYEE: null },
    ]);
  });

  it('counts what was allotted to 0 %-margin bids and has not settled against the limit, until it settles', async () => {
    const ic3 = await server.createUser('ic3', { category: 'IC', marginType: 'T' });
    await server.admin.setZeroMarginLimit('ic3', '1000000');
    const first = await bid(ic3, 5_000, 101); // Rs 5,05,000
    expect(first.status, first.text).toBe(200);
    // Allotted in full at 101.00 (the exchange's trade, as the OMS writes it): no longer live, not settled
    // for an hour. The custodian pays for it at settlement, so it still counts.
    const orderId: string = first.body.data.orderId;
    const settlesAt = server.clock.now + 60 * MINUTE;
    await server.setOrderStatus(orderId, 'EXECUTED', { tradedQuantity: 5_000 });
    await server.store.db
      .insertInto('trades')
      .values({
        trade_id: `T-${orderId}`,
        order_id: orderId,
        user_id: 'ic3',
        exchange: 'NSE_EQ',
        scrip_token: 700001,
        symbol: 'ACME',
        series: 'IS',
        transaction_type: 'BUY',
        product_type: 'DELIVERY',
        quantity: 5_000,
        price_paise: 10_100,
        traded_at: server.clock.now,
        settles_at: settlesAt,
        exchange_order_id: null,
        order_identifier: null,
      })
      .execute();
    expectRefused(
      await bid(ic3, 5_000, 101),
      'e-384',
      /Your 0 %-margin bids, live or allotted and not settled, total Rs 5,05,000\.00; with this bid they would total Rs 10,10,000\.00/,
    );
    // Settled: the custodian has paid, and the limit is free again.
    const before = server.clock.now;
    server.clock.now = settlesAt;
    const after = await bid(ic3, 5_000, 101);
    server.clock.now = before;
    expect(after.status, after.text).toBe(200);
  });

  it("refuses a bid in a one-listing issue over its series' order value upper limit (e-383), a cut-off bid at the retail cut-off", async () => {
    // Rs 1,00,000 for the series; the retail cut-off is 101.00.
    await server.registerIssue({ scripToken: 500113, symbol: 'TATA', valueLimitPaise: 10_000_000 });
    const nii = await server.createUser('nii-issue', { category: 'NII' });
    const onIssue = (user: TestUser, quantity: number, price: number, orderType = 'RL') =>
      server.call('POST', PLACE_ORDER, {
        body: validBid({
          scrip_info: { exchange: 'NSE_EQ', scrip_token: 500113, symbol: 'TATA', series: 'OF' },
          order_type: orderType,
          quantity: String(quantity),
          price,
        }),
        ...as(user),
      });
    expectRefused(
      await onIssue(nii, 991, 101),
      'e-383',
      /The bid's value Rs 1,00,091\.00 is over the series' order value upper limit of Rs 1,00,000\.00.*at most 990 shares/,
    );
    const within = await onIssue(nii, 990, 101);
    expect(within.status, within.text).toBe(200);
    const cutoff = await onIssue(retail, 991, 0, 'RL-MKT');
    expectRefused(cutoff, 'e-383', /at 101\.00 you may bid for at most 990 shares/);
    // An issue imported without one has none (the issue of the tests above).
    expect(
      (await server.call('GET', '/transactional/v1/ofs/issues', { token: nii.token })).body.data.issues.map(
        (i: { order_value_upper_limit: unknown }) => i.order_value_upper_limit,
      ),
    ).toEqual(expect.arrayContaining([1_00_000, null]));
  });

  it('does not hold a 100 %-margin bid to it', async () => {
    const cash = await server.createUser('mf-cash', { category: 'MF', marginType: 'H' });
    const res = await bid(cash, 1_000, 101);
    expect(res.status, res.text).toBe(200);
  });

  it("refuses an employee's bids on T+1 past Rs 5,00,000 at the T-day cut-off price (e-365), within the offer's shares", async () => {
    // The operator registers the offer's eligible employees before T+1 opens.
    const registered = await server.createUser('emp');
    await server.admin.addEmployees('ACME-OFS-1', ['emp']);
    // The T allocation ran at T's close and found a cut-off of 101.00; it is T+1, ten minutes in.
    await server.store.db
      .updateTable('ofs_offers')
      .set({ t_allocated_at: T + 6.25 * 60 * MINUTE, t_cutoff_price_paise: 10_100 })
      .where('offer_id', '=', 'ACME-OFS-1')
      .execute();
    server.clock.now = T + 24 * 60 * MINUTE + 10 * MINUTE;
    // A session lasts 24 hours: the employee logs in again on T+1.
    const emp = await server.logInAgain(registered);
    const employeeBid = (quantity: number) =>
      server.call('POST', PLACE_ORDER, {
        body: validBid({
          scrip_info: { ...NSE_IS, series: 'ES' },
          order_type: 'RL-MKT',
          quantity: String(quantity),
          price: 0,
        }),
        ...as(emp),
      });
    // 5,000 shares at 101.00 are Rs 5,05,000: far within the offer's 2,020,000 shares, over the employee limit.
    expectRefused(
      await employeeBid(5_000),
      'e-365',
      /Your live employee bids in the offer of ACME total Rs 0\.00 at the T-day cut-off price 101\.00; with this bid they would total Rs 5,05,000\.00, over the employee limit of Rs 5,00,000\.00\. You may bid for at most 4950 more shares/,
    );
    // At most 4,950 (Rs 4,99,950) are taken; then one more share is over it, counted with the bid taken.
    const taken = await employeeBid(4_950);
    expect(taken.status, taken.text).toBe(200);
    expectRefused(
      await employeeBid(1),
      'e-365',
      /total Rs 4,99,950\.00 at the T-day cut-off price 101\.00; with this bid they would total Rs 5,00,051\.00, .*at most 0 more shares/,
    );
  });
});
