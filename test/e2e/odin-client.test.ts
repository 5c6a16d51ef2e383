/**
 * A client written against ODIN's documentation, run unchanged against ordergate (odin-compat.md): the calls
 * the public ODIN SDK makes, with the bodies and reads it makes (the whole parameter object as the modify
 * body, lists read from `data`, counts from `metadata.total_records`, prices as strings), against two
 * server processes on one database (writes on one node, reads on the other): login, funds, place, modify,
 * cancel, order book, history, the allotment's trade, positions, settlement into holdings.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoOfsIssue } from '../../src/cli/demo.js';
import { closedNow, importOfsIssues, runOrdergate } from '../cli/run-ordergate.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { call, children, startServer, stopServer, type ServerProcess } from '../support/server-process.js';

const SETTLEMENT_SECONDS = 5;

/** The SDK's calls, as its methods make them: a base URL, the token after login, the API key for order entry. */
class OdinStyleClient {
  private token = '';

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  at(baseUrl: string): OdinStyleClient {
    const client = new OdinStyleClient(baseUrl, this.apiKey);
    client.token = this.token;
    return client;
  }

  private async request(method: string, path: string, body?: unknown, orderEntry = false) {
    const answer = await call(this.baseUrl, method, path, {
      body,
      token: this.token,
      ...(orderEntry && { apiKey: this.apiKey }),
    });
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(200);
    expect(answer.body.status).toBe('success');
    return answer.body;
  }

  async login(userId: string, password: string) {
    const body = {
      user_id: userId,
      login_type: 'PASSWORD',
      password,
      second_auth_type: '',
      second_auth: '',
      api_key: this.apiKey,
      source: 'WEBAPI',
    };
    const answer = await call(this.baseUrl, 'POST', '/authentication/v1/user/session', { body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    this.token = answer.body.data.access_token;
    return answer.body.data;
  }

  balance() {
    return this.request('GET', '/authentication/v1/user/balance');
  }

  placeOrder(params: Record<string, unknown>) {
    return this.request('POST', '/transactional/v1/orders/regular', params, true);
  }

  /** The SDK sends its whole parameter object, exchange and order_id included, numbers as numbers. */
  modifyOrder(params: { exchange: string; order_id: string } & Record<string, unknown>) {
    return this.request(
      'PUT',
      `/transactional/v1/orders/regular/${params.exchange}/${encodeURIComponent(params.order_id)}`,
      params,
      true,
    );
  }

  cancelOrder(exchange: string, orderId: string) {
    return this.request(
      'DELETE',
      `/transactional/v1/orders/regular/${exchange}/${encodeURIComponent(orderId)}`,
      undefined,
      true,
    );
  }

  getOrderBook(offset = 1, limit = 20, orderStatus = -1) {
    return this.request('GET', `/transactional/v1/orders?offset=${offset}&limit=${limit}&orderStatus=${orderStatus}`);
  }

  getOrderHistory(orderId: string) {
    return this.request('GET', `/transactional/v1/orders/${encodeURIComponent(orderId)}`);
  }

  getTradeBook(orderIds: string[]) {
    return this.request(
      'GET',
      `/transactional/v1/trades?offset=1&limit=20&order_ids=${orderIds.map(encodeURIComponent).join(',')}`,
    );
  }

  getPositions(type: 'all' | 'daily' | 'expiry') {
    return this.request('GET', `/transactional/v1/portfolio/positions/${type}?intropStatus=0`);
  }

  getHoldings() {
    return this.request('GET', '/transactional/v1/portfolio/holdings');
  }
}

let database: TestDatabase;
let writer: ServerProcess;
let reader: ServerProcess;
let demo: { user_id: string; password: string; api_key: string };
let env: Record<string, string>;
// A BSE issue of its own, open until the test closes it (an operator's re-import); settlement seconds after the allotment.
const issue = {
  ...demoOfsIssue(Date.now()),
  exchange: 'BSE_EQ',
  scrip_token: 543210,
  settlement_delay_seconds: SETTLEMENT_SECONDS,
};

beforeAll(async () => {
  database = await createTestDatabase('ordergate_odin_client');
  env = { DATABASE_URL: database.databaseUrl, OMS_POLL_MS: '50' };
  writer = await startServer(env);
  reader = await startServer(env);
  const created = await runOrdergate(['demo', '--json'], { env });
  expect(created.code, created.stderr).toBe(0);
  demo = JSON.parse(created.stdout);
  await importOfsIssues([issue], env);
}, 60_000);

afterAll(async () => {
  await Promise.all([writer, reader].map((node) => node && stopServer(node).catch(() => undefined)));
  for (const child of children) child.kill('SIGKILL');
  await database?.dispose();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type OrderRecord = Record<string, unknown> & { order_id: string; status: string };

it('runs a bid from funds to holding through the calls an ODIN client makes, on two nodes', async () => {
  const client = new OdinStyleClient(writer.url, demo.api_key);
  const session = await client.login(demo.user_id, demo.password);
  expect(session.others.messageSocket).toBe(writer.url);
  const other = client.at(reader.url);

  const funds = (await other.balance()).data;
  expect(funds).toMatchObject({ client_id: demo.user_id, funds_checked: true });
  const cashBefore = Number(funds.cash);

  const bid = {
    scrip_info: {
      exchange: 'BSE_EQ',
      scrip_token: 543210,
      symbol: 'SBIN',
      series: 'OF',
      expiry_date: '',
      strike_price: '',
      option_type: '',
    },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: 'RL',
    quantity: '50',
    price: 101.5,
    trigger_price: null,
    disclosed_quantity: 0,
    validity: '',
    validity_days: 0,
    is_amo: false,
    order_identifier: 'odin-sdk',
  };
  const kept = (await client.placeOrder(bid)).data.orderId as string;
  const dropped = (await client.placeOrder({ ...bid, quantity: '5' })).data.orderId as string;

  // The order book, read as the SDK reads it: data a list, metadata.total_records the count.
  const live = await until(
    () => other.getOrderBook(1, 20, 1),
    (book) => book.data.filter((o: OrderRecord) => o.status === 'PENDING').length === 2,
    'both bids PENDING on the other node',
  );
  expect(live.metadata.total_records).toBe(2);
  expect(live.data.find((o: OrderRecord) => o.order_id === kept)).toMatchObject({
    order_price: '101.50',
    total_quantity: 50,
    client_id: demo.user_id,
  });

  await client.modifyOrder({
    exchange: 'BSE_EQ',
    order_id: kept,
    order_type: 'RL',
    quantity: 60,
    traded_quantity: 0,
    price: 101.5,
    trigger_price: 0,
    disclosed_quantity: 0,
    validity: 'DAY',
    validity_days: 0,
  });
  await client.cancelOrder('BSE_EQ', dropped);
  const completed = await until(
    () => other.getOrderBook(1, 20, 2),
    (book) => book.metadata.total_records === 1,
    'the cancelled bid completed',
  );
  expect(completed.data.map((o: OrderRecord) => [o.order_id, o.status])).toEqual([[dropped, 'CANCELLED']]);
  // The modification reached the exchange, and the funds follow it: 60 x 101.50 blocked.
  await until(
    async () => (await other.getOrderHistory(kept)).data.map((e: OrderRecord) => e.reason),
    (reasons: string[]) => reasons.includes('Modified at the exchange'),
    'the modification at the exchange',
  );
  expect((await other.balance()).data.blocked).toBe('6090.00');

  // The close (the operator ends the windows now): the allotment, its trade, the debit.
  await importOfsIssues([closedNow(issue)], env);
  const allotted = await until(
    () => other.getOrderHistory(kept),
    (history) => history.data.at(-1).status === 'EXECUTED',
    'the allotment',
    15_000,
  );
  const executed = allotted.data.at(-1);
  expect(executed).toMatchObject({
    total_quantity: 60,
    traded_quantity: 60,
    pending_quantity: 0,
    traded_price: '101.50',
  });
  const trades = await other.getTradeBook([kept, dropped]);
  expect(trades.metadata.total_records).toBe(1);
  expect(trades.data[0]).toMatchObject({
    order_id: kept,
    traded_quantity: 60,
    traded_price: '101.50',
    exchange_order_no: executed.exchange_order_no,
  });
  const afterAllotment = (await other.balance()).data;
  expect(afterAllotment).toMatchObject({ blocked: '0.00', debited: '6090.00' });
  expect(Number(afterAllotment.cash)).toBeCloseTo(cashBefore - 6090, 2);

  // A position until it settles, then a holding.
  expect((await other.getPositions('all')).data).toEqual([
    expect.objectContaining({ exchange: 'BSE_EQ', buy_quantity: 60, buy_average_price: '101.50' }),
  ]);
  expect((await other.getHoldings()).data).toEqual([]);
  const holdings = await until(
    () => other.getHoldings(),
    (answer) => answer.data.some((h: Record<string, unknown>) => h.exchange === 'BSE_EQ'),
    'the holding after settlement',
    (SETTLEMENT_SECONDS + 5) * 1000,
  );
  expect(holdings.data).toEqual([
    expect.objectContaining({
      exchange: 'BSE_EQ',
      symbol: 'SBIN',
      quantity: 60,
      average_price: '101.50',
      value: '6090.00',
    }),
  ]);
  expect((await other.getPositions('all')).data).toEqual([]);
}, 60_000);
