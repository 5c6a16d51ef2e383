/**
 * The live order socket end to end (odin-compat.md, "The live order socket"), with real processes: the
 * server as `npm start` runs it, `ordergate demo`, `users add` and `ofs import`, and Socket.IO
 * clients (socket.io-client, websocket transport, as ODIN's SDK connects) that log in with `loginAPI`. What
 * a client receives as `MSG:DATA` must be its orders' histories exactly, one ORD_NRML per history entry,
 * under ODIN's names and codes, and one TRD_MSG for the allotment; never another user's orders. The timers
 * (login timeout, token re-checks) are also tested in process, where they can be made short.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attachMessageSocket,
  type MessageSocket,
  type MessageSocketOptions,
} from '../../src/http/routes/message-socket.js';
import type { OrderEventsService } from '../../src/services/order-events.js';
import { createServices } from '../../src/wiring.js';
import { closedNow, fieldsOf, importOfsIssues, runOrdergate } from '../cli/run-ordergate.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { call, children, startServer, stopServer, type ServerProcess } from '../support/server-process.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { openEventStream } from '../support/sse.js';

const LOGIN_TIMEOUT_MS = 5_000;
const SESSION = '/authentication/v1/user/session';
const ORDERS = '/transactional/v1/orders/regular';

/** The spec's code tables (odin-compat.md), written out rather than read from the implementation. */
const STATUS_CODES: Record<string, number> = {
  OMSXMITTED: 3,
  EXXMITTED: 4,
  PENDING: 5,
  CANCELLED: 6,
  EXECUTED: 7,
  OMSREJECT: 10,
  ORDERERROR: 11,
};
const EXCHANGE_CODES: Record<string, number> = { NSE_EQ: 1, BSE_EQ: 3 };
const SIDE_CODES: Record<string, number> = { BUY: 1, SELL: 2 };
const ORDER_TYPE_CODES: Record<string, number> = { RL: 1, 'RL-MKT': 2 };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "2026-04-17 12:46:34" -> "17-Apr-2026 12.46.34" (both India time). */
const socketTime = (rest: string) => {
  const [date, time] = rest.split(' ') as [string, string];
  const [year, month, day] = date.split('-');
  return `${day}-${MONTHS[Number(month) - 1]}-${year} ${time.replaceAll(':', '.')}`;
};
const paise = (price: string) => Math.round(Number(price) * 100);

// Messages and answers are read field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Credentials {
  userId: string;
  password: string;
  apiKey: string;
}

/** A Socket.IO client as an ODIN client uses it, recording everything the server sends. */
class OrderSocketClient {
  readonly socket: Socket;
  readonly messages: Json[] = [];
  readonly errors: Json[] = [];
  readonly connectedAt = Date.now();
  disconnect: { reason: string; at: number } | null = null;

  constructor(url: string) {
    this.socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true });
    this.socket.on('MSG:DATA', (message: Json) => this.messages.push(message));
    this.socket.on('MSG:ERROR', (error: Json) => this.errors.push(error));
    this.socket.on('disconnect', (reason) => (this.disconnect = { reason, at: Date.now() }));
  }

  connected(): Promise<void> {
    if (this.socket.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('connect_error', reject);
    });
  }

  /** loginAPI as ODIN's SDK emits it, with an acknowledgement to know it is done. */
  login(token: unknown): Promise<Json> {
    return this.socket.timeout(5_000).emitWithAck('loginAPI', typeof token === 'string' ? { jToken: token } : token);
  }

  of(orderId: string, type = 'ORD_NRML'): Json[] {
    return this.messages.filter((m) => m.UniqueCode === orderId && m.MessageType === type);
  }

  async until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; messages: ${JSON.stringify(this.messages)}; errors: ${JSON.stringify(this.errors)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): void {
    this.socket.disconnect();
  }
}

describe('the live order socket (Socket.IO), end to end', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let server: ServerProcess;
  /** A second node over the same database. */
  let otherNode: ServerProcess;
  let demo: Credentials;
  /** The demo's issue, as `ordergate ofs import` takes it: the test closes its windows by importing it again. */
  let demoIssue: object;
  let bob: Credentials;
  /** Opened at the start and never logged in. */
  let idle: OrderSocketClient;
  const clients: OrderSocketClient[] = [];
  /** What the main walk-through leaves for the later checks. */
  const seen = {} as { alice: OrderSocketClient; bobSocket: OrderSocketClient; demoOrders: string[]; bobOrder: string };

  const open = (url = server.url) => {
    const client = new OrderSocketClient(url);
    clients.push(client);
    return client;
  };

  async function login(user: Credentials): Promise<Json> {
    const answer = await call(server.url, 'POST', SESSION, {
      body: { user_id: user.userId, login_type: 'PASSWORD', password: user.password, api_key: user.apiKey },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data;
  }

  async function place(user: Credentials, token: string, overrides: Record<string, unknown>): Promise<string> {
    const placed = await call(server.url, 'POST', ORDERS, {
      body: validBid({ order_identifier: 'socket-e2e', ...overrides }),
      token,
      apiKey: user.apiKey,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    return placed.body.data.orderId;
  }

  async function history(token: string, orderId: string): Promise<Json[]> {
    const answer = await call(server.url, 'GET', `/transactional/v1/orders/${encodeURIComponent(orderId)}`, { token });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data;
  }

  /**
   * Waits until the order's history satisfies the condition (the OMS works on its own), and answers it as
   * read once more.
   */
  async function historyUntil(
    token: string,
    orderId: string,
    condition: (entries: Json[]) => boolean,
    what: string,
    ms = 10_000,
  ): Promise<Json[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const entries = await history(token, orderId);
      if (condition(entries)) return history(token, orderId);
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(entries.map((e) => [e.status, e.reason]))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The ORD_NRML that a history entry must have been sent as (odin-compat.md's table). */
  const orderMessageOf = (entry: Json) => ({
    MessageType: 'ORD_NRML',
    UniqueCode: entry.order_id,
    Exchange: EXCHANGE_CODES[entry.exchange],
    ScripCode: entry.scrip_token,
    OrderNumber: entry.exchange_order_no,
    OrderStatus: STATUS_CODES[entry.status],
    Reason: entry.error_reason,
    Buy_Sell: SIDE_CODES[entry.transaction_type],
    Product: 'D',
    OrderType: ORDER_TYPE_CODES[entry.order_type],
    OrderOriginalQty: entry.total_quantity,
    PendingQty: entry.pending_quantity,
    TradedQTY: entry.traded_quantity,
    DQ: entry.disclosed_quantity,
    OrderPrice: paise(entry.order_price),
    TriggerPrice: 0,
    OrderValidity: '1',
    Days: 0,
    Symbol: entry.symbol,
    Series: entry.series,
    InstrumentName: 'EQUITY',
    ExpiryDate: '',
    StrikePrice: 0,
    Option_Type: '',
    OrderEntryTime: socketTime(entry.order_timestamp),
    LastModifiedTime: socketTime(entry.last_modified),
    InitiatedBy: entry.client_id,
    ModifiedBy: entry.client_id,
    UserRemarks: entry.order_identifier,
    AlgoId: entry.algo_id,
  });

  beforeAll(async () => {
    // A SQLite file, or a PostgreSQL database when the run's dialect is PostgreSQL.
    database = await createTestDatabase('ordergate_socket_e2e');
    env = { DATABASE_URL: database.databaseUrl, OMS_POLL_MS: '50' };
    server = await startServer(env);
    // Once the first has migrated the new database.
    otherNode = await startServer(env);
    idle = open();
    const added = await runOrdergate(['users', 'add', 'bob'], { env });
    expect(added.code, added.stderr).toBe(0);
    // The member data his bids need at the exchange (docs/design/member-data.md).
    const member = await runOrdergate(['users', 'set-member', 'bob', '--ucc', 'BOB1', '--pan', 'ABCPB1234B'], {
      env,
    });
    expect(member.code, member.stderr).toBe(0);
    const key = await runOrdergate(['apikeys', 'create', 'bob'], { env });
    expect(key.code, key.stderr).toBe(0);
    bob = {
      userId: 'bob',
      password: fieldsOf(added.stdout).password!,
      apiKey: key.stdout.trimEnd().split('\n').at(-1)!,
    };
    // Bob is there already: the demo's published login is accepted beside him, as here it must be.
    const created = await runOrdergate(['demo', '--json', '--allow-other-users'], { env });
    expect(created.code, created.stderr).toBe(0);
    const credentials = JSON.parse(created.stdout);
    demo = { userId: credentials.user_id, password: credentials.password, apiKey: credentials.api_key };
    demoIssue = credentials.ofs_issues[0];
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all([server, otherNode].map((node) => node && stopServer(node).catch(() => undefined)));
    for (const child of children) child.kill('SIGKILL');
    await database?.dispose();
  });

  it('names the socket in the login answer (same host and port) and serves Socket.IO there, beside the strict 404s', async () => {
    const session = await login(demo);
    expect(session.others).toEqual({ messageSocket: server.url });
    // The polling handshake is Socket.IO's (Engine.IO's open packet), not a Fastify 404.
    const polling = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
    expect(polling.status).toBe(200);
    expect(await polling.text()).toMatch(/^0\{"sid":"[^"]+"/);
    // Socket.IO 2 clients (Engine.IO protocol 3, length-prefixed packets) are served too.
    const eio3 = await fetch(`${server.url}/socket.io/?EIO=3&transport=polling`);
    expect(eio3.status).toBe(200);
    expect(await eio3.text()).toMatch(/^[0-9]+:0\{"sid":"[^"]+"/);
    const beside = await call(server.url, 'GET', '/socket.iox/');
    expect(beside.status).toBe(404);
    expect(beside.body.code).toBe('e-109');
  });

  it('names the socket by the Host the client used (a proxy, a DNS name), and by the address it reached when the Host is unusable', async () => {
    const loginVia = (host: string) =>
      new Promise<Json>((resolve, reject) => {
        const body = JSON.stringify({ user_id: demo.userId, login_type: 'PASSWORD', password: demo.password });
        const req = request(
          `${server.url}${SESSION}`,
          { method: 'POST', headers: { host, 'content-type': 'application/json' } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve(JSON.parse(text)));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect((await loginVia('orders.example.in:8443')).data.others).toEqual({
      messageSocket: 'http://orders.example.in:8443',
    });
    expect((await loginVia('[::1]:8080')).data.others).toEqual({ messageSocket: 'http://[::1]:8080' });
    expect((await loginVia('bad host/x')).data.others).toEqual({ messageSocket: server.url });
  });

  it('refuses a loginAPI without a token, with an unknown token or with a revoked one: MSG:ERROR, then disconnected', async () => {
    const revoked = (await login(bob)).access_token as string;
    expect((await call(server.url, 'DELETE', SESSION, { token: revoked })).status).toBe(200);
    const cases: [unknown, string][] = [
      [{ token: 'x' }, 'e-201'],
      ['not-a-token', 'e-202'],
      [revoked, 'e-204'],
    ];
    await Promise.all(
      cases.map(async ([payload, code]) => {
        const client = open();
        await client.connected();
        const answer = await client.login(payload);
        expect(answer).toMatchObject({ status: 'error', code, errors: [expect.objectContaining({ field: 'jToken' })] });
        await client.until(() => client.disconnect !== null, 'the disconnect');
        expect(client.errors).toEqual([answer]);
        expect(client.disconnect!.reason).toBe('io server disconnect');
        expect(client.messages).toEqual([]);
      }),
    );
  });

  it('sends each change of the orders as ORD_NRML, exactly as the order histories, and the allotment as TRD_MSG', async () => {
    const demoToken = (await login(demo)).access_token as string;
    const bobToken = (await login(bob)).access_token as string;
    const alice = open();
    // As ODIN's SDK does: loginAPI on connect, no acknowledgement asked for.
    alice.socket.on('connect', () => alice.socket.emit('loginAPI', { jToken: demoToken }));
    await alice.connected();
    // Logins are taken in order: the acknowledged second one of the same user (which keeps the
    // subscription) says that the first is done.
    expect(await alice.login(demoToken)).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Logged in to the order socket',
      data: { user_id: demo.userId },
    });
    const bobSocket = open();
    await bobSocket.connected();
    expect((await bobSocket.login(bobToken)).status).toBe('success');
    // Every node sends its own sockets the events of every node: the orders below go through the first.
    const elsewhere = open(otherNode.url);
    await elsewhere.connected();
    expect((await elsewhere.login(demoToken)).status).toBe('success');

    // A bid placed, modified and cancelled; each step once its messages have arrived.
    const first = await place(demo, demoToken, { quantity: '10', price: 101.5 });
    await alice.until(() => alice.of(first).some((m) => m.OrderStatus === 5), 'the first bid PENDING');
    const modified = await call(server.url, 'PUT', `${ORDERS}/NSE_EQ/${first}`, {
      body: {
        order_type: 'RL',
        quantity: '20',
        price: 102,
        traded_quantity: 0,
        disclosed_quantity: 0,
        validity: '',
        validity_days: 0,
        trigger_price: null,
      },
      token: demoToken,
      apiKey: demo.apiKey,
    });
    expect(modified.status, JSON.stringify(modified.body)).toBe(200);
    let entries = await historyUntil(
      demoToken,
      first,
      (h) => h.at(-1).reason === 'Modified at the exchange',
      'the modification at the exchange',
    );
    await alice.until(() => alice.of(first).length === entries.length, 'the modification messages');
    const cancelled = await call(server.url, 'DELETE', `${ORDERS}/NSE_EQ/${first}`, {
      token: demoToken,
      apiKey: demo.apiKey,
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    entries = await historyUntil(demoToken, first, (h) => h.at(-1).status === 'CANCELLED', 'the cancellation');
    await alice.until(() => alice.of(first).length === entries.length, 'the cancellation messages');

    // A cut-off bid, allotted when the windows close; and one of Bob's, on the same issue.
    const second = await place(demo, demoToken, { order_type: 'RL-MKT', quantity: '100', price: 0 });
    const bobOrder = await place(bob, bobToken, { quantity: '10', price: 101.5 });
    Object.assign(seen, { alice, bobSocket, demoOrders: [first, second], bobOrder });
    // Both at the exchange, the operator closes the windows: the allotment follows at the OMS's next pass.
    await historyUntil(demoToken, second, (h) => h.at(-1).status === 'PENDING', 'the cut-off bid PENDING');
    await historyUntil(bobToken, bobOrder, (h) => h.at(-1).status === 'PENDING', "Bob's bid PENDING");
    await importOfsIssues([closedNow(demoIssue)], env);
    const allotted = await historyUntil(
      demoToken,
      second,
      (h) => h.at(-1).status === 'EXECUTED',
      'the allotment',
      15_000,
    );
    await alice.until(() => alice.of(second, 'TRD_MSG').length > 0, 'the trade message');

    // One ORD_NRML per history entry, in order, with the history's values under ODIN's names and codes.
    const firstHistory = await history(demoToken, first);
    expect(alice.of(first)).toEqual(firstHistory.map(orderMessageOf));
    const firstCodes = alice.of(first).map((m) => m.OrderStatus);
    expect([...firstCodes.slice(0, 3), firstCodes.at(-1)]).toEqual([3, 4, 5, 6]);
    // Each message has the quantity of its change: 10 before the modification was asked for, 20 from then on.
    const asked = firstHistory.findIndex((e) => e.reason.startsWith('Modification requested'));
    expect(alice.of(first).map((m) => m.OrderOriginalQty)).toEqual(firstHistory.map((_, i) => (i < asked ? 10 : 20)));
    expect(alice.of(second)).toEqual(allotted.map(orderMessageOf));
    const secondCodes = alice.of(second).map((m) => m.OrderStatus);
    expect([...secondCodes.slice(0, 3), secondCodes.at(-1)]).toEqual([3, 4, 5, 7]);

    // The allotment: exactly one TRD_MSG, right after the EXECUTED ORD_NRML, with the trade's quantity and price.
    const executed = allotted.at(-1);
    expect(executed).toMatchObject({ traded_quantity: 100, traded_price: '101.00' });
    const trades = alice.messages.filter((m) => m.MessageType === 'TRD_MSG');
    const tradeBook = await call(server.url, 'GET', `/transactional/v1/trades?order_id=${encodeURIComponent(second)}`, {
      token: demoToken,
    });
    expect(tradeBook.body.data).toHaveLength(1);
    const [trade] = tradeBook.body.data;
    expect(trades).toEqual([
      {
        ...orderMessageOf(executed),
        MessageType: 'TRD_MSG',
        TradeNumber: trade.trade_id,
        TradeQty: 100,
        TradedPrice: 10100,
        TradeTime: socketTime(executed.last_modified),
      },
    ]);
    const index = alice.messages.indexOf(trades[0]);
    expect(alice.messages[index - 1]).toEqual(orderMessageOf(executed));
    expect(alice.errors).toEqual([]);
    // The same messages, in the same order. Only the terms may differ: a message carries the order's
    // quantity and price as they are when it is sent, and the other node may send a change's message after
    // the next modification (docs/design/message-socket.md).
    await elsewhere.until(() => elsewhere.messages.length === alice.messages.length, 'the messages on the other node');
    const withoutTerms = ({ OrderOriginalQty, OrderPrice, PendingQty, ...rest }: Json) => rest;
    expect(elsewhere.messages.map(withoutTerms)).toEqual(alice.messages.map(withoutTerms));
  }, 60_000);

  it("never sends one user another user's orders", async () => {
    const { alice, bobSocket, demoOrders, bobOrder } = seen;
    const bobToken = (await login(bob)).access_token as string;
    const bobHistory = await historyUntil(bobToken, bobOrder, (h) => h.at(-1).status === 'EXECUTED', "Bob's allotment");
    await bobSocket.until(() => bobSocket.of(bobOrder).length === bobHistory.length, "Bob's messages");
    expect(bobSocket.of(bobOrder)).toEqual(bobHistory.map(orderMessageOf));
    expect(new Set(bobSocket.messages.map((m) => m.UniqueCode))).toEqual(new Set([bobOrder]));
    expect(new Set(alice.messages.map((m) => m.UniqueCode))).toEqual(new Set(demoOrders));
  });

  it('disconnects a socket that does not log in within 5 seconds, saying why', async () => {
    await idle.until(() => idle.disconnect !== null, 'the login timeout', LOGIN_TIMEOUT_MS + 5_000);
    const after = idle.disconnect!.at - idle.connectedAt;
    expect(after).toBeGreaterThanOrEqual(LOGIN_TIMEOUT_MS - 100);
    expect(after).toBeLessThan(LOGIN_TIMEOUT_MS + 3_000);
    expect(idle.disconnect!.reason).toBe('io server disconnect');
    expect(idle.errors).toEqual([expect.objectContaining({ status: 'error', code: 'e-201' })]);
    expect(idle.messages).toEqual([]);
  });

  it('stops cleanly on SIGTERM with sockets open, telling them the server is shutting down', async () => {
    const { alice } = seen;
    expect(alice.disconnect).toBeNull();
    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
    await alice.until(() => alice.disconnect !== null, 'the disconnect');
    expect(alice.errors).toEqual([expect.objectContaining({ status: 'error', code: 'e-503' })]);
  });
});

/**
 * The socket's timers and its one-user rule, in process: the same server code with short timeouts and a
 * test clock, so that a logout, an expiry and a change of user show within a second.
 */
describe('the live order socket in process: login timeout, revoked and expired tokens, a change of user', () => {
  let server: TestServer;
  let socketServer: MessageSocket;
  let orderEvents: OrderEventsService;
  let socketAuth: MessageSocketOptions['auth'];
  let alice: TestUser;
  let bob: TestUser;
  const clients: OrderSocketClient[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    const services = createServices(server.store, {
      tokenTtlSeconds: 24 * 60 * 60,
      now: () => server.clock.now,
      orderEvents: { pollMs: 20 },
    });
    orderEvents = services.orderEvents;
    socketAuth = services.auth;
    socketServer = attachMessageSocket(server.app.server, {
      auth: services.auth,
      orderEvents,
      logger: pino({ level: 'silent' }),
      // Long enough for a password check on a loaded machine; the 300 ms deadline is tested on a socket of its own.
      loginTimeoutMs: 10_000,
      tokenRecheckMs: 100,
      now: () => server.clock.now,
    });
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await socketServer?.close();
    await orderEvents?.close();
    await server?.close();
  });

  const open = () => {
    const client = new OrderSocketClient(server.url);
    clients.push(client);
    return client;
  };
  const place = async (user: TestUser) => {
    const placed = await server.call('POST', ORDERS, { body: validBid(), token: user.token, apiKey: user.apiKey });
    expect(placed.status, placed.text).toBe(200);
    return placed.body.data.orderId as string;
  };
  const freshToken = async (user: TestUser) =>
    (
      await server.call('POST', SESSION, {
        body: { user_id: user.userId, login_type: 'PASSWORD', password: user.password },
      })
    ).body.data.access_token as string;

  it('takes its login timeout from the options', async () => {
    // A socket of its own on a bare HTTP server, so the short deadline cannot catch the other tests' logins.
    const bare = createServer();
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const hurried = attachMessageSocket(bare, {
      auth: socketAuth,
      orderEvents,
      logger: pino({ level: 'silent' }),
      loginTimeoutMs: 300,
    });
    try {
      const client = new OrderSocketClient(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`);
      clients.push(client);
      await client.until(() => client.disconnect !== null, 'the login timeout', 2_000);
      expect(client.disconnect!.at - client.connectedAt).toBeGreaterThanOrEqual(250);
      expect(client.errors).toEqual([expect.objectContaining({ code: 'e-201' })]);
    } finally {
      await hurried.close();
      await new Promise<void>((resolve) => bare.close(() => resolve()));
    }
  });

  it('disconnects a logged-in socket once its token is revoked by a logout (e-204) or has expired (e-203)', async () => {
    const token = await freshToken(alice);
    const expiringToken = await freshToken(alice);
    const loggedOut = open();
    await loggedOut.connected();
    expect((await loggedOut.login(token)).status).toBe('success');
    expect((await server.call('DELETE', SESSION, { token })).status).toBe(200);
    await loggedOut.until(() => loggedOut.disconnect !== null, 'the disconnect after logout', 2_000);
    expect(loggedOut.errors).toEqual([
      expect.objectContaining({ code: 'e-204', errors: [expect.objectContaining({ field: 'jToken' })] }),
    ]);

    const expiring = open();
    await expiring.connected();
    expect((await expiring.login(expiringToken)).status).toBe('success');
    server.clock.now += 24 * 60 * 60 * 1000 + 1;
    try {
      await expiring.until(() => expiring.disconnect !== null, 'the disconnect after expiry', 2_000);
    } finally {
      server.clock.now = Date.now();
    }
    expect(expiring.errors).toEqual([expect.objectContaining({ code: 'e-203' })]);
  });

  it("switches cleanly to another user's token: from then on only that user's orders; a bad token ends the socket", async () => {
    const client = open();
    await client.connected();
    expect(await client.login(alice.token)).toMatchObject({ status: 'success', data: { user_id: 'alice' } });
    const aliceFirst = await place(alice);
    await client.until(() => client.of(aliceFirst).length === 1, "alice's bid");

    expect(await client.login(bob.token)).toMatchObject({ status: 'success', data: { user_id: 'bob' } });
    const aliceSecond = await place(alice);
    const bobs = await place(bob);
    // Events go out in commit order: once Bob's has come, Alice's second one was passed over.
    await client.until(() => client.of(bobs).length === 1, "bob's bid");
    expect(client.messages.map((m) => m.UniqueCode)).toEqual([aliceFirst, bobs]);
    expect(client.of(aliceSecond)).toEqual([]);

    const answer = await client.login('not-a-token');
    expect(answer).toMatchObject({ status: 'error', code: 'e-202' });
    await client.until(() => client.disconnect !== null, 'the disconnect');
  });
  it("checks a socket's logins one at a time with at most two waiting: more at once are refused (e-429), the socket stays", async () => {
    const client = open();
    await client.connected();
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.login(alice.token)));
    const codes = answers.map((answer) => (answer as { code: string }).code);
    expect(codes.filter((code) => code === 's-101')).toHaveLength(2);
    expect(codes.filter((code) => code === 'e-429')).toHaveLength(4);
    expect(client.disconnect).toBeNull();
    expect(await client.login(alice.token)).toMatchObject({ status: 'success', data: { user_id: 'alice' } });
  });
});

describe('the live order socket ends with its session, whatever node took the logout (issue 21 row 3)', () => {
  let server: TestServer;
  let socketServer: MessageSocket;
  let orderEvents: OrderEventsService;
  let erin: TestUser;
  const clients: OrderSocketClient[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    // Another node's feed and socket over the same store; its own token check comes only every minute.
    const services = createServices(server.store, {
      tokenTtlSeconds: 24 * 60 * 60,
      now: () => server.clock.now,
      orderEvents: { pollMs: 20 },
    });
    orderEvents = services.orderEvents;
    socketServer = attachMessageSocket(server.app.server, {
      auth: services.auth,
      orderEvents,
      logger: pino({ level: 'silent' }),
      tokenRecheckMs: 60_000,
      now: () => server.clock.now,
    });
    await server.registerIssue();
    erin = await server.createUser('erin');
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await socketServer?.close();
    await orderEvents?.close();
    await server?.close();
  });

  it('disconnects a socket within 2 s of a logout taken by another node, long before its own token check, with e-204', async () => {
    const login = await server.call('POST', SESSION, {
      body: { user_id: 'erin', login_type: 'PASSWORD', password: erin.password },
    });
    const token = login.body.data.access_token as string;
    const client = new OrderSocketClient(server.url);
    clients.push(client);
    await client.connected();
    expect((await client.login(token)).status).toBe('success');
    const loggedOut = Date.now();
    expect((await server.call('DELETE', SESSION, { token })).status).toBe(200);
    await client.until(() => client.disconnect !== null, 'the disconnect after the logout', 2_000);
    expect(client.disconnect!.at - loggedOut).toBeLessThan(2_000);
    expect(client.errors).toEqual([
      expect.objectContaining({ code: 'e-204', errors: [expect.objectContaining({ field: 'jToken' })] }),
    ]);
    // A bid of the user's other session after the logout reaches no socket of the ended one.
    const placed = await server.call('POST', ORDERS, { body: validBid(), token: erin.token, apiKey: erin.apiKey });
    expect(placed.status, placed.text).toBe(200);
    expect(client.messages).toEqual([]);
  });
});

/**
 * The caps as an operator sets them (MAX_STREAMS_PER_USER, MAX_STREAMS_PER_NODE) on a real server: one
 * budget for the event stream and the live order socket (docs/design/message-socket.md, "Timeouts and limits").
 */
describe('the live order socket and the event stream share the stream caps, end to end', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  const tokens: Record<string, string> = {};
  const clients: OrderSocketClient[] = [];
  const open = () => {
    const client = new OrderSocketClient(server.url);
    clients.push(client);
    return client;
  };
  const refusal = async (token: string) => {
    const response = await fetch(`${server.url}/transactional/v1/orders/events`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Json,
    };
  };

  beforeAll(async () => {
    database = await createTestDatabase('ordergate_stream_caps_e2e');
    const env = { DATABASE_URL: database.databaseUrl, MAX_STREAMS_PER_USER: '1', MAX_STREAMS_PER_NODE: '2' };
    server = await startServer(env);
    for (const userId of ['carol', 'dave', 'frank']) {
      const added = await runOrdergate(['users', 'add', userId], { env });
      expect(added.code, added.stderr).toBe(0);
      const login = await call(server.url, 'POST', SESSION, {
        body: { user_id: userId, login_type: 'PASSWORD', password: fieldsOf(added.stdout).password },
      });
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      tokens[userId] = login.body.data.access_token;
    }
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    if (server) await stopServer(server).catch(() => undefined);
    for (const child of children) child.kill('SIGKILL');
    await database?.dispose();
  });

  it("refuses a socket's login beyond its user's cap (e-429) and beyond the node's (e-503), and frees a slot as a stream closes", async () => {
    // Carol's one: an event stream. Her socket's login is refused, and the socket disconnected.
    const stream = await openEventStream(server.url, tokens.carol!);
    const refused = open();
    await refused.connected();
    expect(await refused.login(tokens.carol)).toMatchObject({ status: 'error', code: 'e-429' });
    await refused.until(() => refused.disconnect !== null, 'the disconnect');
    expect(refused.errors).toEqual([expect.objectContaining({ code: 'e-429' })]);

    // Her stream closed, her socket logs in; now a stream of hers is the one too many.
    stream.close();
    // The server sees the stream's connection close a moment after the client closed it; a refused socket
    // is disconnected, so each try is a new one.
    const deadline = Date.now() + 5_000;
    for (;;) {
      const socket = open();
      await socket.connected();
      const answer = await socket.login(tokens.carol);
      if (answer.status === 'success' || Date.now() > deadline) {
        expect(answer).toMatchObject({ status: 'success' });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await refusal(tokens.carol!)).toMatchObject({
      status: 429,
      retryAfter: expect.stringMatching(/^[1-9]/),
      body: { code: 'e-429' },
    });

    // The node's two: Carol's socket and Dave's stream. A new socket connects (connections not logged in
    // have a budget of their own) and its login is refused: the node is full.
    await openEventStream(server.url, tokens.dave!);
    const beyond = open();
    await beyond.connected();
    expect(await beyond.login(tokens.frank)).toMatchObject({ status: 'error', code: 'e-503' });
    await beyond.until(() => beyond.disconnect !== null, 'the socket beyond the node cap to be disconnected');
    expect(beyond.errors).toEqual([expect.objectContaining({ status: 'error', code: 'e-503' })]);
  });
});
