/**
 * GET /transactional/v1/ofs/issues through the real server: every registered issue, newest windows first,
 * with where its windows stand on the server's clock for the caller's category, and that clock itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const ISSUES = '/transactional/v1/ofs/issues';
const HOUR = 60 * 60 * 1000;
/** Day T of the current issue opens at 09:15 India time. */
const T = Date.parse('2026-11-23T03:45:00Z');

describe('GET /transactional/v1/ofs/issues', () => {
  let server: TestServer;
  let alice: TestUser;
  let nora: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T - HOUR });
    // Non-retail on day T, retail on day T+1; an older issue (allocated) and a newer one (on BSE).
    await server.registerIssue({
      nonRetailOpensAt: T,
      nonRetailClosesAt: T + 6 * HOUR,
      retailOpensAt: T + 24 * HOUR,
      retailClosesAt: T + 30 * HOUR,
      retailCutoffPricePaise: null,
    });
    await server.registerIssue({
      exchange: 'NSE_EQ',
      scripToken: 400001,
      symbol: 'OLDCO',
      allocation: 'PRICE_PRIORITY',
      nonRetailOpensAt: T - 72 * HOUR,
      nonRetailClosesAt: T - 66 * HOUR,
      retailOpensAt: T - 48 * HOUR,
      retailClosesAt: T - 42 * HOUR,
    });
    await server.store.db
      .updateTable('ofs_issues')
      .set({ allocated_at: T - 42 * HOUR })
      .where('scrip_token', '=', 400001)
      .execute();
    await server.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: 543210,
      symbol: 'NEWCO',
      floorPricePaise: 25_005,
      tickSizePaise: 5,
      offerQuantity: 2_500_000,
      retailReservePct: 25,
      retailCutoffPricePaise: 25_100,
      nonRetailOpensAt: T + 48 * HOUR,
      nonRetailClosesAt: T + 54 * HOUR,
      retailOpensAt: T + 72 * HOUR,
      retailClosesAt: T + 78 * HOUR,
    });
    alice = await server.createUser('alice');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  /** Tokens last 24 hours and the clock moves by days: each call logs in anew. */
  const list = async (user: TestUser) => {
    const login = await server.call('POST', '/authentication/v1/user/session', {
      body: { user_id: user.userId, login_type: 'PASSWORD', password: user.password, api_key: user.apiKey },
    });
    expect(login.status, login.text).toBe(200);
    const res = await server.call('GET', ISSUES, { token: login.body.data.access_token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const statesOf = (body: {
    data: {
      issues: { symbol: string; state: string; retail_window: string; non_retail_window: string; allocated: boolean }[];
    };
  }) =>
    Object.fromEntries(
      body.data.issues.map((i) => [i.symbol, [i.state, i.non_retail_window, i.retail_window, i.allocated]]),
    );

  it('answers exactly status, code, message and data: the server time and every issue, newest windows first, in the import format', async () => {
    const body = await list(alice);
    expect(Object.keys(body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(body).toMatchObject({ status: 'success', code: 's-101', message: 'OFS issues fetched successfully' });
    expect(body.data.server_time).toBe(new Date(T - HOUR).toISOString());
    expect(body.data.issues.map((i: { symbol: string }) => i.symbol)).toEqual(['NEWCO', 'SBIN', 'OLDCO']);
    expect(body.data.issues[0]).toEqual({
      exchange: 'BSE_EQ',
      scrip_token: 543210,
      symbol: 'NEWCO',
      series: 'OF',
      floor_price: 250.05,
      tick_size: 0.05,
      offer_quantity: 2_500_000,
      retail_reserve_pct: 25,
      retail_cutoff_price: 251,
      allocation: 'PROPORTIONATE',
      order_value_upper_limit: null,
      non_retail_opens_at: '2026-11-25T03:45:00.000Z',
      non_retail_closes_at: '2026-11-25T09:45:00.000Z',
      retail_opens_at: '2026-11-26T03:45:00.000Z',
      retail_closes_at: '2026-11-26T09:45:00.000Z',
      retail_window: 'UPCOMING',
      non_retail_window: 'UPCOMING',
      allocated: false,
      state: 'UPCOMING',
    });
    expect(body.data.issues[1]).toMatchObject({ symbol: 'SBIN', retail_cutoff_price: null, floor_price: 100 });
  });

  it("gives the state of the caller's own window, and both windows, as the server's clock moves through days T and T+1", async () => {
    // Before day T: everything ahead but the allocated issue.
    expect(statesOf(await list(nora))).toMatchObject({
      SBIN: ['UPCOMING', 'UPCOMING', 'UPCOMING', false],
      OLDCO: ['ALLOCATED', 'CLOSED', 'CLOSED', true],
    });

    server.clock.now = T; // day T opens: non-retail bids
    expect(statesOf(await list(nora)).SBIN).toEqual(['OPEN', 'OPEN', 'UPCOMING', false]);
    expect(statesOf(await list(alice)).SBIN).toEqual(['UPCOMING', 'OPEN', 'UPCOMING', false]);

    server.clock.now = T + 24 * HOUR; // day T+1: the retail window
    expect(statesOf(await list(nora)).SBIN).toEqual(['CLOSED', 'CLOSED', 'OPEN', false]);
    const retail = await list(alice);
    expect(statesOf(retail).SBIN).toEqual(['OPEN', 'CLOSED', 'OPEN', false]);
    expect(retail.data.server_time).toBe('2026-11-24T03:45:00.000Z');

    server.clock.now = T + 30 * HOUR; // both closed, allocation not yet run
    expect(statesOf(await list(alice)).SBIN).toEqual(['CLOSED', 'CLOSED', 'CLOSED', false]);
    expect(statesOf(await list(alice)).OLDCO).toEqual(['ALLOCATED', 'CLOSED', 'CLOSED', true]);
  });

  it('needs an access token, and takes no query parameters', async () => {
    server.clock.now = T - HOUR;
    const anonymous = await server.call('GET', ISSUES);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ status: 'error', code: 'e-201' });
    const query = await server.call('GET', `${ISSUES}?symbol=SBIN`, { token: alice.token });
    expect(query.status).toBe(400);
    expect(query.body).toMatchObject({ status: 'error', code: 'e-110' });
  });
});
