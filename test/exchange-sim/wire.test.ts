/**
 * The exchange simulator over HTTP (src/exchange-sim/): the e-OFS shape of mapping.ts under
 * `/<exchange>/api`, driven by the real e-OFS client where it fits and by plain fetch for the rest. The
 * sessions (one per API user), the bids (new, duplicate, refused, in a batch with a bad one), the changes
 * (modify, cancel, carry forward), the book by reference, the open listings, and input that is no bid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf } from '../../src/oms/links/nse-eofs/mapping.js';
import { API_USER, HOUR, memberBid, OFFER_T, OFFER_T1, OFFER_T_CLOSE, OTHER_USER, SimBench, T0 } from './support.js';

let bench: SimBench;

beforeAll(async () => {
  bench = await SimBench.open();
});
afterAll(() => bench?.close());

/** A retail bid on SBIN as the wire carries it, raw (for input the e-OFS client would never write). */
const wireBid = (quantity: unknown, apiEchoBack: string) => ({
  symbol: 'SBIN',
  series: 'RS',
  clientType: 'CLI',
  clientId: 'UCC0003',
  marginType: 1,
  isMarketOrder: false,
  quantity,
  price: 101,
  operationType: 'E',
  orderId: '',
  apiEchoBack,
});

describe('sessions', () => {
  it('logs the API user in through the e-OFS client, and answers the token with its lifetime', async () => {
    const client = bench.client();
    await client.login();
    expect(client.loggedIn).toBe(true);
    const answer = await bench.call('POST', 'NSE_EQ', '/auth/token', null, API_USER);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ code: 200, data: { token: expect.any(String), expiresIn: 600 } });
  });

  it("keeps one session per API user: a new login ends the earlier token, not another user's", async () => {
    const first = await bench.login();
    const other = await bench.login('NSE_EQ', OTHER_USER);
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', first)).status).toBe(200);
    const second = await bench.login();
    const ended = await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', first);
    expect(ended.status).toBe(401);
    expect(ended.body).toEqual({ code: 401, messages: [expect.stringMatching(/log in again/)] });
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', second)).status).toBe(200);
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', other)).status).toBe(200);
  });

  it('answers 401 without a token, with an unknown one, and with a token of the other exchange', async () => {
    for (const token of [null, 'not-a-token', await bench.login('BSE_EQ')]) {
      const answer = await bench.call('POST', 'NSE_EQ', '/order', token, {});
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 401, messages: [expect.any(String)] });
    }
  });

  it('refuses a wrong password with 401 and a login without its fields with 400, naming no password', async () => {
    const wrong = await bench.call('POST', 'NSE_EQ', '/auth/token', null, { ...API_USER, password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.body)).not.toContain('nope');
    const malformed = await bench.call('POST', 'NSE_EQ', '/auth/token', null, { loginId: 'api-one' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      code: 400,
      messages: [expect.stringMatching(/memberCode, loginId and password/)],
    });
  });

  it('refreshes a live token into a new one and ends the old; an expired token answers 401', async () => {
    const token = await bench.login();
    const refreshed = await bench.call('POST', 'NSE_EQ', '/auth/refreshToken', token, {});
    expect(refreshed.status).toBe(200);
    const fresh = (refreshed.body as { data: { token: string } }).data.token;
    expect(fresh).not.toBe(token);
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', token)).status).toBe(401);
    expect((await bench.call('POST', 'NSE_EQ', '/auth/refreshToken', token, {})).status).toBe(401);
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', fresh)).status).toBe(200);
    bench.clock.now += 600_000;
    try {
      expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', fresh)).status).toBe(401);
    } finally {
      bench.clock.now -= 600_000;
    }
  });
});

describe('bids', () => {
  it('takes a new bid, answers the exchange order id, and holds it in its book by reference', async () => {
    const client = bench.client();
    const bid = memberBid();
    const outcome = await client.submit(bid, 'E');
    expect(outcome).toEqual({ kind: 'accepted', exchangeOrderId: expect.stringMatching(/^SIM[0-9A-F]{32}$/) });
    expect(await bench.book([bid, memberBid()])).toEqual([
      {
        orderId: (outcome as { exchangeOrderId: string }).exchangeOrderId,
        apiEchoBack: referenceOf(bid.orderId),
        symbol: 'SBIN',
        series: 'RS',
        quantity: 10,
        price: 101.5,
        isMarketOrder: false,
        orderStatus: 'OPEN',
        carriedForward: false,
      },
    ]);
    // The simulated exchange's bid: the listing from the symbol, retail from RS, the price in paise.
    expect(await bench.row(bid.orderId)).toMatchObject({
      exchange: 'NSE_EQ',
      scrip_token: 500112,
      category: 'RETAIL',
      order_type: 'RL',
      price_paise: 10_150,
      offer_id: null,
    });
    // The other exchange's book does not hold it.
    expect(await bench.book([bid], 'BSE_EQ')).toEqual([]);
  });

  it('answers the whole book of a security by symbol, every bid of it on that exchange whoever placed it', async () => {
    const client = bench.client();
    const [a, b] = [memberBid(), memberBid({ quantity: 20 })];
    await client.submitBatch([a, b], 'E');
    const token = await bench.login('NSE_EQ', OTHER_USER);
    const answer = await bench.call('GET', 'NSE_EQ', '/query/orderBook?symbol=SBIN', token);
    expect(answer.status).toBe(200);
    // The bids of this file's other tests too: the whole book of SBIN on NSE.
    const entries = (answer.body as { data: { apiEchoBack: string; quantity: number; symbol: string }[] }).data;
    expect(entries.map((e) => [e.apiEchoBack, e.quantity])).toEqual(
      expect.arrayContaining([
        [referenceOf(a.orderId), 10],
        [referenceOf(b.orderId), 20],
      ]),
    );
    expect(new Set(entries.map((e) => e.symbol))).toEqual(new Set(['SBIN']));
    const other = await bench.call(
      'GET',
      'BSE_EQ',
      '/query/orderBook?symbol=SBIN',
      await bench.login('BSE_EQ', OTHER_USER),
    );
    expect(other.body).toEqual({ code: 200, data: [] });
    expect((await bench.call('GET', 'NSE_EQ', '/query/orderBook?symbol=TATA', token)).body).toEqual({
      code: 200,
      data: [],
    });
    expect((await bench.call('GET', 'NSE_EQ', '/query/orderBook?symbol=', token)).status).toBe(400);
  });

  it('answers a bid sent again (its apiEchoBack known) with the same exchange order id', async () => {
    const client = bench.client();
    const bid = memberBid({ series: 'IS', ucc: 'INST01', quantity: 100, pricePaise: 10_000 });
    const first = await client.submit(bid, 'E');
    const again = await client.submit(bid, 'E');
    expect(first.kind).toBe('accepted');
    expect(again).toEqual(first);
    expect(await bench.row(bid.orderId)).toMatchObject({ category: 'NON_RETAIL', transmissions: 2 });
  });

  it("refuses a bid below the floor with 422 in the exchange's words", async () => {
    const bid = memberBid({ pricePaise: 9_900 });
    expect(await bench.client().submit(bid, 'E')).toEqual({
      kind: 'rejected',
      reason: 'Price 99.00 is below the floor price 100.00',
    });
    const token = await bench.login();
    const { symbol, series, clientType, clientId, marginType, isMarketOrder, quantity, operationType, apiEchoBack } = {
      symbol: 'SBIN',
      series: 'RS',
      clientType: 'CLI',
      clientId: 'UCC0001',
      marginType: 1,
      isMarketOrder: false,
      quantity: 10,
      operationType: 'E',
      apiEchoBack: referenceOf(memberBid().orderId),
    };
    const answer = await bench.call('POST', 'NSE_EQ', '/order', token, {
      symbol,
      series,
      clientType,
      clientId,
      marginType,
      isMarketOrder,
      quantity,
      price: 99,
      operationType,
      orderId: '',
      apiEchoBack,
    });
    expect(answer).toMatchObject({
      status: 422,
      body: { code: 422, messages: ['Price 99.00 is below the floor price 100.00'] },
    });
    expect(await bench.row(bid.orderId)).toBeUndefined();
  });

  it('takes a retail cut-off bid as RL-MKT at price 0, as order entry stores one, and shows its price blank', async () => {
    const bid = memberBid({ cutoff: true, pricePaise: 0 });
    expect((await bench.client().submit(bid, 'E')).kind).toBe('accepted');
    expect(await bench.row(bid.orderId)).toMatchObject({ order_type: 'RL-MKT', price_paise: 0 });
    const [entry] = await bench.book([bid]);
    expect(entry).toMatchObject({ price: '', isMarketOrder: true, series: 'RS' });
  });

  it('refuses a bid in a symbol the exchange does not list, and one of a series the issue has not', async () => {
    const client = bench.client();
    expect(await client.submit(memberBid({ symbol: 'NOPE' }), 'E')).toEqual({
      kind: 'rejected',
      reason: 'The exchange does not list NOPE for an offer for sale',
    });
    expect(await client.submit(memberBid({ series: 'ES' }), 'E')).toMatchObject({
      kind: 'rejected',
      reason: expect.stringMatching(/^Series ES is not open in SBIN/),
    });
  });

  it('answers a batch item by item: the bad ones refused with their reasons, the rest taken', async () => {
    const client = bench.client();
    const good = [memberBid(), memberBid({ ucc: 'UCC0002' })];
    const low = memberBid({ pricePaise: 9_000 });
    const outcomes = await client.submitBatch([good[0]!, low, good[1]!], 'E');
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'rejected', 'accepted']);
    expect(outcomes[1]).toEqual({ kind: 'rejected', reason: 'Price 90.00 is below the floor price 100.00' });

    // Input that is no bid (a quantity of 0, no reference of ours) is refused alone, as 400 items.
    const token = await bench.login();
    const fine = memberBid();
    const answer = await bench.call('POST', 'NSE_EQ', '/order/batch', token, [
      wireBid(0, referenceOf(memberBid().orderId)),
      wireBid(5, 'not-ours'),
      wireBid(5, referenceOf(fine.orderId)),
      'not an object',
    ]);
    expect(answer.status).toBe(200);
    expect((answer.body as { data: unknown[] }).data).toEqual([
      { apiEchoBack: expect.any(String), code: 400, messages: [expect.stringMatching(/^quantity: /)] },
      { apiEchoBack: 'not-ours', code: 400, messages: [expect.stringMatching(/^apiEchoBack: /)] },
      { orderId: expect.stringMatching(/^SIM/), apiEchoBack: referenceOf(fine.orderId) },
      { code: 400, messages: ['an order request is a JSON object'] },
    ]);
  });

  it('refuses alone a bid repeating another’s apiEchoBack in the same batch, never a 500', async () => {
    const token = await bench.login();
    const reference = referenceOf(memberBid().orderId);
    const answer = await bench.call('POST', 'NSE_EQ', '/order/batch', token, [
      wireBid(5, reference),
      wireBid(7, reference),
    ]);
    expect(answer.status).toBe(200);
    expect((answer.body as { data: unknown[] }).data).toEqual([
      { orderId: expect.stringMatching(/^SIM/), apiEchoBack: reference },
      { apiEchoBack: reference, code: 422, messages: ['apiEchoBack repeats a bid of the same batch'] },
    ]);
  });

  it('refuses a batch that is no array, is empty or holds more than BATCH_LIMIT requests, with 400', async () => {
    const token = await bench.login();
    const bids = Array.from({ length: 101 }, () => ({ apiEchoBack: referenceOf(memberBid().orderId) }));
    for (const [body, text] of [
      [{}, /JSON array/],
      [[], /no order request/],
      [bids, /at most 100 order requests, not 101/],
    ] as const) {
      const answer = await bench.call('POST', 'NSE_EQ', '/order/batch', token, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 400, messages: [expect.stringMatching(text)] });
    }
  });

  it('answers input that is no bid with a clear 400, never a 500', async () => {
    const token = await bench.login();
    const valid = {
      symbol: 'SBIN',
      series: 'RS',
      clientType: 'CLI',
      clientId: 'UCC0001',
      marginType: 1,
      isMarketOrder: false,
      quantity: 10,
      price: 101,
      operationType: 'E',
      orderId: '',
      apiEchoBack: referenceOf(memberBid().orderId),
    };
    const cases: [unknown, RegExp][] = [
      [{ ...valid, quantity: 0 }, /^quantity/],
      [{ ...valid, quantity: 1.5 }, /^quantity/],
      [{ ...valid, quantity: '10' }, /^quantity/],
      [{ ...valid, price: '101' }, /^price/],
      [{ ...valid, price: 101.005 }, /^price: 101.005 is not a whole number of paise/],
      [{ ...valid, isMarketOrder: true }, /^price: must be blank/],
      [{ ...valid, symbol: undefined }, /^symbol/],
      [{ ...valid, clientType: 'X' }, /^clientType/],
      [{ ...valid, clientId: 'A'.repeat(11) }, /^clientId/],
      [{ ...valid, marginType: 2 }, /^marginType/],
      [{ ...valid, operationType: 'M' }, /^operationType: M is not taken on this call/],
      [{ ...valid, operationType: 'Z' }, /^operationType/],
      [{ ...valid, orderId: 'SIM1' }, /^orderId: must be blank/],
      [{ ...valid, apiEchoBack: undefined }, /^apiEchoBack/],
      [{ ...valid, investorCategory: 'XX' }, /^investorCategory/],
      [null, /JSON object/],
      [[valid], /JSON object/],
      [42, /JSON object/],
    ];
    for (const [body, text] of cases) {
      const answer = await bench.call('POST', 'NSE_EQ', '/order', token, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toEqual({ code: 400, messages: [expect.stringMatching(text)] });
    }
    // Bodies that are not JSON, or not sent as JSON, on every call: 4xx in the exchange's shape.
    for (const [method, path] of [
      ['POST', '/order'],
      ['PUT', '/order'],
      ['DELETE', '/order'],
      ['POST', '/order/batch'],
      ['POST', '/auth/token'],
    ] as const) {
      const broken = await bench.call(method, 'NSE_EQ', path, token, '{"symbol": ');
      expect(broken.status, `${method} ${path}`).toBe(400);
      expect(broken.body).toMatchObject({ code: 400, messages: [expect.any(String)] });
      const response = await fetch(`${bench.sim.url}/NSE_EQ/api${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
        body: '<order/>',
      });
      expect(response.status, `${method} ${path} application/xml`).toBe(415);
      expect(await response.json()).toMatchObject({ code: 415 });
    }
    const query = await bench.call('GET', 'NSE_EQ', '/query/orderBook?apiEchoBack=xyz', token);
    expect(query).toMatchObject({ status: 400, body: { code: 400 } });
    const none = await bench.call('GET', 'NSE_EQ', '/query/orderBook', token);
    expect(none).toMatchObject({ status: 400, body: { code: 400 } });
    const many = Array.from({ length: 101 }, () => referenceOf(memberBid().orderId)).join(',');
    expect((await bench.call('GET', 'NSE_EQ', `/query/orderBook?apiEchoBack=${many}`, token)).status).toBe(400);
    const stream = await bench.call('GET', 'NSE_EQ', '/messaging/message-stream?from=-1', token);
    expect(stream).toMatchObject({ status: 400, body: { code: 400 } });
    const unknown = await bench.call('GET', 'NSE_EQ', '/nothing', token);
    expect(unknown).toMatchObject({ status: 404, body: { code: 404 } });
    expect((await bench.call('GET', 'NSE_CM', '/query/activeSecurities', token)).status).toBe(404);
  });
});

describe('changes of a bid', () => {
  it('modifies a live bid (PUT M) and cancels it (DELETE C), again done is done; a cancelled bid takes no change', async () => {
    const client = bench.client();
    const bid = memberBid({ quantity: 10 });
    const placed = await client.submit(bid, 'E');
    expect(placed.kind).toBe('accepted');
    const exchangeOrderId = (placed as { exchangeOrderId: string }).exchangeOrderId;
    const live = { ...bid, exchangeOrderId };
    expect(await client.submit({ ...live, quantity: 20, pricePaise: 10_200 }, 'M')).toEqual({
      kind: 'accepted',
      exchangeOrderId,
    });
    expect(await bench.book([bid])).toMatchObject([{ quantity: 20, price: 102, orderStatus: 'OPEN' }]);
    expect(await client.submit({ ...live, pricePaise: 9_000 }, 'M')).toEqual({
      kind: 'rejected',
      reason: 'Price 90.00 is below the floor price 100.00',
    });
    expect(await client.submit(live, 'C')).toEqual({ kind: 'accepted', exchangeOrderId });
    expect(await client.submit(live, 'C')).toEqual({ kind: 'accepted', exchangeOrderId });
    expect(await bench.book([bid])).toMatchObject([{ orderStatus: 'CANCELLED' }]);
    expect(await client.submit({ ...live, quantity: 5 }, 'M')).toEqual({
      kind: 'rejected',
      reason: 'The bid was cancelled',
    });
  });

  it('refuses a change of a bid it does not hold, of another exchange order id or of another symbol', async () => {
    const client = bench.client();
    expect(await client.submit(memberBid({ exchangeOrderId: 'SIMX' }), 'M')).toEqual({
      kind: 'rejected',
      reason: 'The exchange has no bid for this order',
    });
    const bid = memberBid();
    const placed = (await client.submit(bid, 'E')) as { exchangeOrderId: string };
    expect(await client.submit({ ...bid, exchangeOrderId: 'SIMOTHER' }, 'C')).toMatchObject({
      kind: 'rejected',
      reason: expect.stringMatching(/^Order SIMOTHER is not the exchange's number/),
    });
    expect(await client.submit({ ...bid, exchangeOrderId: placed.exchangeOrderId, symbol: 'ACME' }, 'C')).toMatchObject(
      {
        kind: 'rejected',
        reason: `The bid ${referenceOf(bid.orderId)} is a bid in SBIN, not ACME`,
      },
    );
    // Not on the other exchange's wire either: each segment's book is its own bids.
    expect(await bench.client('BSE_EQ').submit({ ...bid, exchangeOrderId: placed.exchangeOrderId }, 'C')).toEqual({
      kind: 'rejected',
      reason: 'The exchange has no bid for this order',
    });
  });
});

describe('an offer over both exchanges', () => {
  it('lists the securities not yet closed with their series, as far as the registry has them (before T: none open)', async () => {
    const token = await bench.login();
    const answer = await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', token);
    expect(answer.status).toBe(200);
    const data = (answer.body as { data: { symbol: string; series: Record<string, unknown>[] }[] }).data;
    expect(data.map((security) => security.symbol)).toEqual(['ACME', 'SBIN']);
    const sbin = data.find((security) => security.symbol === 'SBIN')!;
    expect(sbin).toMatchObject({ tickSize: 0.05, regularLotSize: 1 });
    expect(sbin.series).toEqual([
      {
        series: 'IS',
        issueSize: 900,
        basePrice: 100,
        openOnDate: '2026-11-23',
        mktOpenTime: new Date(T0 - HOUR).toISOString(),
        mktCloseTime: new Date(T0 + HOUR).toISOString(),
        mktModCxlOpenTime: new Date(T0 - HOUR).toISOString(),
        mktModCxlCloseTime: new Date(T0 + HOUR).toISOString(),
        isNewOrderAllowed: true,
        isModificationAllowed: true,
        isCancellationAllowed: true,
        orderValueUpperLimit: null,
      },
      expect.objectContaining({ series: 'RS', issueSize: 100, mktCloseTime: new Date(T0 + 2 * HOUR).toISOString() }),
    ]);
    const acme = data.find((security) => security.symbol === 'ACME')!;
    expect(acme.series.map((s) => [s.series, s.issueSize, s.isNewOrderAllowed])).toEqual([
      ['IS', 900, false],
      ['RS', 100, false],
      ['ES', 100, false],
    ]);
  });

  it('takes non-retail bids on T with their investor category and margin, carries one forward on T+1', async () => {
    bench.clock.now = OFFER_T + HOUR;
    try {
      const nse = bench.client();
      const mf = memberBid({
        symbol: 'ACME',
        series: 'IS',
        ucc: 'MF0001',
        investorCategory: 'MF',
        custodian: 'CUST01',
        zeroMargin: true,
        quantity: 1_000,
        pricePaise: 10_100,
      });
      const mfPlaced = await nse.submit(mf, 'E');
      expect(mfPlaced.kind).toBe('accepted');
      expect(await bench.row(mf.orderId)).toMatchObject({
        exchange: 'NSE_EQ',
        scrip_token: 700001,
        offer_id: 'ACME-X',
        category: 'MF',
        margin_type: 'T',
        user_id: 'MF0001',
      });
      // An IS bid without an investor category is NII's; 0 % margin is for MF, IC and OTHS only, with a custodian.
      const nii = memberBid({ symbol: 'ACME', series: 'IS', ucc: 'NII001', quantity: 10, pricePaise: 10_000 });
      expect((await nse.submit(nii, 'E')).kind).toBe('accepted');
      expect(await bench.row(nii.orderId)).toMatchObject({ category: 'NII', margin_type: 'H' });
      expect(await nse.submit({ ...nii, orderId: memberBid().orderId, zeroMargin: true }, 'E')).toMatchObject({
        kind: 'rejected',
        reason: expect.stringMatching(/^Margin type T \(0 % margin\) is for MF, IC and OTHS/),
      });
      expect(await nse.submit({ ...mf, orderId: memberBid().orderId, custodian: null, quantity: 5 }, 'E')).toEqual({
        kind: 'rejected',
        reason: 'A 0 % margin bid names the custodian who confirms it (participantId)',
      });
      // A retail bid is taken on T+1, not T: the market's own words.
      expect(
        await nse.submit(memberBid({ symbol: 'ACME', series: 'RS', cutoff: true, pricePaise: 0 }), 'E'),
      ).toMatchObject({
        kind: 'rejected',
        reason: expect.stringMatching(/T\+1/),
      });

      // T closes; the step allots the non-retail portion (900 of the MF's 1,000): the rest stays live for T+1.
      bench.clock.now = OFFER_T_CLOSE + 1;
      await bench.sim.step();
      expect(await bench.row(mf.orderId)).toMatchObject({ status: 'LIVE', t_allotted: 900 });
      bench.clock.now = OFFER_T1 + HOUR;
      const exchangeOrderId = (mfPlaced as { exchangeOrderId: string }).exchangeOrderId;
      expect(await nse.submit({ ...mf, exchangeOrderId, quantity: 1_000 }, 'CF')).toEqual({
        kind: 'accepted',
        exchangeOrderId,
      });
      expect(await bench.row(mf.orderId)).toMatchObject({ carried_forward: 1 });

      // Retail and employee bids on T+1, on the BSE listing too: one pool, NSE's series codes on both wires.
      const bse = bench.client('BSE_EQ');
      const retail = memberBid({ symbol: 'ACME', series: 'RS', cutoff: true, pricePaise: 0, ucc: 'RET001' });
      expect((await bse.submit(retail, 'E')).kind).toBe('accepted');
      expect(await bench.row(retail.orderId)).toMatchObject({
        exchange: 'BSE_EQ',
        scrip_token: 800001,
        offer_id: 'ACME-X',
        category: 'RETAIL',
        order_type: 'RL-MKT',
      });
      const employee = memberBid({ symbol: 'ACME', series: 'ES', cutoff: true, pricePaise: 0, ucc: 'EMP001' });
      expect((await nse.submit(employee, 'E')).kind).toBe('accepted');
      expect(await bench.row(employee.orderId)).toMatchObject({ category: 'EMPLOYEE' });
      // The BSE listing has no employee series of its own: ES names none there.
      expect(await bse.submit({ ...employee, orderId: memberBid().orderId }, 'E')).toMatchObject({
        kind: 'rejected',
        reason: expect.stringMatching(/^Series ES is not a series of ACME/),
      });
    } finally {
      bench.clock.now = T0;
    }
  });
});
