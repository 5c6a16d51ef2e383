/**
 * The README's quick start, end to end, with real processes: `npm start`'s server (dist/main.js) over a
 * fresh SQLite file, `ordergate demo`, a login, a bid and a cart over HTTP; then a SIGTERM, a restart on the
 * same file, and everything is still there.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql/database.js';
import { runOrdergate } from '../cli/run-ordergate.js';
import { call, children, eventually, startServer, stopServer, type ServerProcess } from '../support/server-process.js';
import { validBid } from '../support/server.js';

const cartLine = (quantity: number) => ({
  scripDetail: {
    symbol: 'SBIN',
    _Series: 'EQ',
    _InstrumentName: 'EQUITY',
    _ExchangeName: 'NSE',
    MarketLot: 1,
    PriceTick: 0.05,
  },
  TransactionType: 'BUY',
  OrderType: 'RL',
  Quantity: quantity,
  Price: '500.00',
  ProductType: 'DELIVERY',
  validity: 'DAY',
});

describe('quick start: npm start, ordergate demo, a bid and a cart, a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-e2e-'));
  const dbPath = join(dir, 'ordergate.db');
  const env = { DATABASE_URL: `sqlite:${dbPath}` };
  let server: ServerProcess;
  // Filled in as the walk-through goes; each step builds on the one before.
  const state = {} as {
    demo: {
      user_id: string;
      password: string;
      api_key: string;
      access_token: string;
      ofs_issues: { exchange: string; scrip_token: number; symbol: string; series: string }[];
    };
    token: string;
    orderId: string;
    ordercartId: string;
  };

  const bid = (overrides: Record<string, unknown> = {}) => {
    const issue = state.demo.ofs_issues[0]!;
    return validBid({
      scrip_info: {
        exchange: issue.exchange,
        scrip_token: issue.scrip_token,
        symbol: issue.symbol,
        series: issue.series,
        expiry_date: '',
        strike_price: '',
        option_type: '',
      },
      order_identifier: 'e2e-bid',
      ...overrides,
    });
  };

  beforeAll(async () => {
    server = await startServer(env);
  });

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('on an empty database the server prints one plain line telling the user to run `npx ordergate demo`', async () => {
    const hints = () =>
      server
        .stderr()
        .split('\n')
        .filter((line) => line.includes('npx ordergate demo'));
    expect(await eventually(() => hints().length > 0)).toBe(true);
    expect(hints()).toHaveLength(1);
    expect(hints()[0]!.startsWith('{')).toBe(false);
  });

  it('`ordergate demo --json` on the same file, while the server runs, gives credentials that log in over HTTP', async () => {
    const result = await runOrdergate(['demo', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    state.demo = JSON.parse(result.stdout);

    const login = await call(server.url, 'POST', '/authentication/v1/user/session', {
      body: {
        user_id: state.demo.user_id,
        login_type: 'PASSWORD',
        password: state.demo.password,
        second_auth_type: '',
        second_auth: '',
        api_key: state.demo.api_key,
        source: 'WEBAPI',
      },
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.data.access_token).toEqual(expect.any(String));
    state.token = login.body.data.access_token;
  });

  it('places an OFS bid on the demo issue', async () => {
    const placed = await call(server.url, 'POST', '/transactional/v1/orders/regular', {
      body: bid(),
      token: state.token,
      apiKey: state.demo.api_key,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    expect(placed.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order Entry Sent to OMS',
      data: { orderId: expect.any(String) },
    });
    state.orderId = placed.body.data.orderId;
  });

  it('creates an order cart and updates it', async () => {
    const cart = (name: string, quantity: number) => ({
      ordercartName: name,
      orders: JSON.stringify([cartLine(quantity)]),
      version: '1',
      createdBy: state.demo.user_id,
      modifiedBy: state.demo.user_id,
      executedNoTime: 0,
    });
    const created = await call(server.url, 'POST', '/transactional/v1/ordercart', {
      body: cart('e2e basket', 1),
      token: state.token,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ status: 'success', code: 's-101', data: { ordercartId: expect.any(String) } });
    state.ordercartId = created.body.data.ordercartId;

    const updated = await call(server.url, 'PUT', '/transactional/v1/ordercart', {
      body: { ...cart('e2e basket, renamed', 2), ordercartId: state.ordercartId },
      token: state.token,
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order cart updated successfully',
      data: [{ message: 'success' }],
    });
  });

  it('the shell snippet of `ordergate demo` runs as pasted against the server', async () => {
    const port = new URL(server.url).port;
    const demo = await runOrdergate(['demo'], { env: { ...env, PORT: port } });
    expect(demo.code, demo.stderr).toBe(0);
    const run = spawnSync('sh', ['-c', demo.stdout], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('"message":"Order Entry Sent to OMS"');
    expect(run.stdout).toMatch(
      /"message":"Order book fetched successfully","data":\[\{"order_id":"[^"]+".*"metadata":\{"total_records":[1-9][0-9]*,"offset":1,"limit":20\}\}/,
    );
    expect(run.stdout).toContain('"ordercartId":"');
    expect(run.stdout).toContain(
      '{"status":"success","code":"s-101","message":"Order cart updated successfully","data":[{"message":"success"}]}',
    );
    expect(run.stdout).toContain('"ordercartName":"demo cart, updated"');
    expect(run.stdout).toContain('"access_token":"');
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
  });

  it('after a restart on the same file, the token, the cart and the order are all still there', async () => {
    server = await startServer(env);
    // Users exist now: no hint.
    expect(server.stderr()).not.toContain('npx ordergate demo');

    const details = await call(server.url, 'GET', `/transactional/v1/ordercart/${state.ordercartId}`, {
      token: state.token,
    });
    expect(details.status, JSON.stringify(details.body)).toBe(200);
    expect(JSON.stringify(details.body.data)).toContain('e2e basket, renamed');
    expect(JSON.stringify(details.body.data)).toContain(`"ordercartId":"${state.ordercartId}"`);

    // The token and the API key still place orders.
    const again = await call(server.url, 'POST', '/transactional/v1/orders/regular', {
      body: bid({ order_identifier: 'e2e-bid2' }),
      token: state.token,
      apiKey: state.demo.api_key,
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);

    expect(await stopServer(server)).toEqual({ code: 0, signal: null });

    const store = openStore(`sqlite:${dbPath}`);
    try {
      const orders = await store.db
        .selectFrom('orders')
        .selectAll()
        .where('user_id', '=', state.demo.user_id)
        .orderBy('created_at')
        .execute();
      expect(orders.map((o) => o.order_identifier)).toContain('e2e-bid');
      expect(orders.find((o) => o.order_id === state.orderId)).toMatchObject({
        symbol: 'SBIN',
        quantity: 10,
        price_paise: 10150,
        order_identifier: 'e2e-bid',
      });
      expect(orders.find((o) => o.order_id === again.body.data.orderId)).toMatchObject({
        order_identifier: 'e2e-bid2',
      });
    } finally {
      await store.close();
    }
  });
});
