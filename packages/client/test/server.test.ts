/**
 * The client against the real server process (dist/main.js as `npm start` runs it) over a database seeded
 * with the CLI: every operation, the Idempotency-Key of order entry, typed errors, the order events across a
 * restart of the server, and a bid from placement to holding.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOrdergate } from '../../../test/cli/run-ordergate.js';
import { offerImport } from '../../../test/support/offers.js';
import { children, startServer, stopServer, type ServerProcess } from '../../../test/support/server-process.js';
import {
  OrdergateClient,
  OrdergateError,
  OrdergateTransportError,
  type CartLine,
  type OrderEvent,
  type PlaceBid,
} from '../src/index.js';
import { Forwarder } from './support/forwarder.js';
import { importClosingIssue, seedDemo, workspace, type Demo } from './support/seed.js';

// One demo user places every bid of this file, back to back: the server's per-user order-entry throttle
// (10 a second; tested in test/http/rate-limit.test.ts) refused the 11th with 429 on a fast machine, which
// is not what these tests are about. The client's handling of a 429 is in retries.test.ts.
const space = workspace('server', { RATE_LIMIT_ORDERS_PER_SECOND: '1000' });
let server: ServerProcess;
let forwarder: Forwarder;
let demo: Demo;

beforeAll(async () => {
  demo = await seedDemo(space);
  server = await startServer(space.env);
  forwarder = await Forwarder.start(server.url);
}, 60_000);

afterAll(async () => {
  await forwarder?.close();
  if (server) await stopServer(server).catch(() => undefined);
  for (const child of children) child.kill('SIGKILL');
  space.remove();
});

/** A client logged in as the demo user, through the forwarder, with `fetch` wrapped by the test when given. */
async function loggedIn(options: { fetch?: typeof fetch; idempotencyKeys?: boolean } = {}): Promise<OrdergateClient> {
  const client = new OrdergateClient({ baseUrl: forwarder.url, ...options });
  await client.login({ userId: demo.user_id, password: demo.password, apiKey: demo.api_key });
  return client;
}

function bid(overrides: Partial<PlaceBid> = {}): PlaceBid {
  const issue = demo.ofs_issues[0]!;
  return {
    scrip_info: {
      exchange: issue.exchange,
      scrip_token: issue.scrip_token,
      symbol: issue.symbol,
      series: issue.series,
    },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: 'RL',
    quantity: '10',
    price: 101.5,
    ...overrides,
  };
}

const isOrderEntry = (input: string | URL | Request, init?: RequestInit) =>
  (input instanceof Request ? input.url : String(input)).endsWith('/transactional/v1/orders/regular') &&
  init?.method === 'POST';

/** A fetch whose first bid reaches the server but whose answer is lost on the way back: a network error. */
function losingFirstAnswer(sent: Headers[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!isOrderEntry(input, init)) return response;
    sent.push(new Headers(init?.headers));
    if (sent.length > 1) return response;
    await response.text();
    throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
  };
}

/** What `read` answers once it is defined, read every 50 ms for at most 15 s (else it fails, saying what never came). */
async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function untilStatus(client: OrdergateClient, orderId: string, status: string): Promise<void> {
  await until(
    async () => ((await client.orderBook({ order_id: orderId })).data[0]?.status === status ? true : undefined),
    `order ${orderId} did not reach ${status}`,
  );
}

/**
 * The offer as the offers' list reads it, once its indicative figures are published and the exchange has
 * held its T allocation for the operator (T has closed with nobody bidding: the exchange records the hold
 * at a pass of its own, which the read calls then show).
 */
function untilHeld(client: OrdergateClient, offerId: string) {
  return until(async () => {
    const offer = (await client.offers()).data.offers.find((listed) => listed.offer_id === offerId);
    return offer !== undefined && offer.indicative !== null && offer.awaiting_operator ? offer : undefined;
  }, `offer ${offerId} got no indicative figures, or was not held for the operator`);
}

describe('sessions and reads', () => {
  it('logs in, keeps the token and the key, validates the session and reads the balance', async () => {
    const client = new OrdergateClient({ baseUrl: forwarder.url });
    const login = await client.login({ userId: demo.user_id, password: demo.password, apiKey: demo.api_key });
    expect(login.data.token_type).toBe('Bearer');
    expect(client.accessToken).toBe(login.data.access_token);
    expect(client.apiKey).toBe(demo.api_key);
    expect((await client.validate()).data.user_id).toBe(demo.user_id);
    const balance = await client.balance();
    expect(balance.data).toMatchObject({ cash: '1000000.00', debited: '0.00' });
  });

  it('withToken calls with a token obtained elsewhere; logout ends the session and its calls answer e-204', async () => {
    const client = new OrdergateClient({ baseUrl: forwarder.url }).withToken(demo.access_token, demo.api_key);
    expect((await client.validate()).data.user_id).toBe(demo.user_id);
    const other = await loggedIn();
    const stale = other.withToken(other.accessToken!);
    await other.logout();
    expect(other.accessToken).toBeUndefined();
    const error = await stale.balance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({ status: 401, code: 'e-204' });
  });
});

describe('profile, OFS issues and the operator books', () => {
  it("reads the profile, the issues and, as an operator (the demo user is one), an issue's book", async () => {
    const client = await loggedIn();
    const profile = await client.profile();
    expect(profile.data).toMatchObject({ user_id: demo.user_id, operator: true });
    const issues = await client.ofsIssues();
    expect(Date.parse(issues.data.server_time)).not.toBeNaN();
    const issue = demo.ofs_issues[0]!;
    const listed = issues.data.issues.find(
      (each) => each.exchange === issue.exchange && Number(each.scrip_token) === issue.scrip_token,
    );
    expect(listed).toMatchObject({ symbol: issue.symbol });
    const book = await client.issueBook(issue.exchange, issue.scrip_token);
    expect(Array.isArray(book.data.demand)).toBe(true);
    expect(book.data.allotted).toBeNull();
    // A token without a session is refused as any read's.
    const stale = new OrdergateClient({ baseUrl: forwarder.url }).withToken('not-a-token');
    expect(await stale.profile().catch((e: unknown) => e)).toBeInstanceOf(OrdergateError);
  });
});

describe('OFS offers', () => {
  it('reads the offers and one offer, typed; an unknown offer is an OrdergateError e-368', async () => {
    const file = join(space.dir, 'offer.json');
    // The server runs on the real clock: T opened 12 hours ago and T+1 is still ahead, whatever the day the
    // suite runs (fixed dates put the offer in another state each day).
    writeFileSync(
      file,
      JSON.stringify([
        offerImport({ settlement_delay_seconds: 60 }, Math.floor(Date.now() / 60_000) * 60_000 - 12 * 60 * 60 * 1000),
      ]),
    );
    const imported = await runOrdergate(['ofs', 'import', file], { env: space.env });
    expect(imported.code, imported.stderr).toBe(0);
    const client = await loggedIn();
    // The offer's first indicative figures appear at the OMS's first pass after the import (an idle node
    // passes every 250 ms), and later ones only as bids change them; the exchange holds the allocation at
    // a pass too: the two reads below are compared once both are there, so that no pass can fall between
    // them and change one read and not the other.
    const acme = await untilHeld(client, 'ACME-OFS-1');
    expect(acme.indicative).toMatchObject({ quantity: 0, price: null });
    // The list's query: a page of one, every offer.
    const page = await client.offers({ state: 'all', limit: 1 });
    expect(page.data.offers.map((offer) => offer.offer_id)).toEqual(['ACME-OFS-1']);
    expect(page.metadata).toEqual({ total_records: 1, offset: 1, limit: 1 });
    // The call as it read before it took a query: a signal in the first argument is the call's, sent as no
    // parameter (the server refuses an unknown one), and it aborts the call.
    const aborting = new AbortController();
    expect((await client.offers({ signal: aborting.signal })).metadata.total_records).toBe(1);
    aborting.abort();
    await expect(client.offers({ signal: aborting.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(acme.portions).toEqual({
      total: 1_000_000,
      retail_reserved: 125_000,
      non_retail: 875_000,
      mf_ic_reserved: 250_000,
      employee: 20_000,
      single_bidder_cap: 250_000,
      source: 'computed',
    });
    expect((await client.offer('ACME-OFS-1')).data.offer).toEqual(acme);
    const error = await client.offer('NOPE').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({ status: 404, code: 'e-368' });
    // The allotment explained: nothing bid yet, nothing to explain; an unknown offer as the offer read.
    const allotment = await client.allotment('ACME-OFS-1');
    expect(allotment.data).toMatchObject({ offer_id: 'ACME-OFS-1', bids: [], allocated: { t_day: false } });
    expect(await client.allotment('NOPE').catch((e: unknown) => e)).toMatchObject({ status: 404, code: 'e-368' });
    // The offer's book (the demo user is an operator): the offer as its read answers it, nothing bid yet.
    const book = await client.offerBook('ACME-OFS-1');
    expect(book.data.offer).toEqual(acme);
    expect(book.data.non_retail_demand).toEqual([]);
    expect(await client.offerBook('NOPE').catch((e: unknown) => e)).toMatchObject({ status: 404, code: 'e-368' });
  });
});

describe('order entry', () => {
  it('sends an Idempotency-Key with a bid and reuses it when the answer is lost: one order, the first answer', async () => {
    const sent: Headers[] = [];
    const client = await loggedIn({ fetch: losingFirstAnswer(sent) });
    const placed = await client.place(bid({ order_identifier: 'idem-1' }));
    expect(sent).toHaveLength(2);
    const key = sent[0]!.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(sent[1]!.get('idempotency-key')).toBe(key);
    const book = await client.orderBook();
    expect(book.data.filter((order) => order.order_identifier === 'idem-1').map((order) => order.order_id)).toEqual([
      placed.data.orderId,
    ]);
  });

  it('each logical call has its own key, and a caller-given key is sent as given', async () => {
    const sent: Headers[] = [];
    const recording: typeof fetch = (input, init) => {
      if (isOrderEntry(input, init)) sent.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    const client = await loggedIn({ fetch: recording });
    await client.place(bid({ order_identifier: 'keys-1' }));
    await client.place(bid({ order_identifier: 'keys-2' }));
    await client.place(bid({ order_identifier: 'keys-3' }), { idempotencyKey: 'my-own-key-1' });
    const keys = sent.map((headers) => headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(3);
    expect(keys[2]).toBe('my-own-key-1');
  });

  it('without keys, a bid whose answer is lost is not sent again (it may have been entered): one order, a transport error', async () => {
    const sent: Headers[] = [];
    const client = await loggedIn({ fetch: losingFirstAnswer(sent), idempotencyKeys: false });
    const error = await client.place(bid({ order_identifier: 'nokey-1' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.get('idempotency-key')).toBeNull();
    const book = await client.orderBook();
    expect(book.data.filter((order) => order.order_identifier === 'nokey-1')).toHaveLength(1);
  });

  it('places, reads the order book and the history, modifies and cancels a bid', async () => {
    const client = await loggedIn();
    const { data } = await client.place(bid({ order_identifier: 'life-1' }));
    await untilStatus(client, data.orderId, 'PENDING');
    const book = await client.orderBook({ order_id: data.orderId });
    expect(book.data[0]).toMatchObject({ order_id: data.orderId, total_quantity: 10, order_price: '101.50' });
    await client.modify('NSE_EQ', data.orderId, { order_type: 'RL', quantity: '20', price: 102 });
    const deadline = Date.now() + 15_000;
    while ((await client.orderBook({ order_id: data.orderId })).data[0]?.total_quantity !== 20 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await client.orderBook({ order_id: data.orderId })).data[0]).toMatchObject({
      total_quantity: 20,
      order_price: '102.00',
    });
    await client.cancel('NSE_EQ', data.orderId);
    await untilStatus(client, data.orderId, 'CANCELLED');
    const history = await client.orderHistory(data.orderId);
    const statuses = history.data.map((step) => step.status);
    expect(statuses[0]).toBe('OMSXMITTED');
    expect(statuses.at(-1)).toBe('CANCELLED');
  });

  it('a refused bid is an OrdergateError with the status, the catalog code, the field errors and the request id', async () => {
    const requestIds: string[] = [];
    const client = await loggedIn({
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        requestIds.push(response.headers.get('request-id') ?? '');
        return response;
      },
    });
    const error = await client.place(bid({ transaction_type: 'SELL' as 'BUY' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateError);
    const refused = error as OrdergateError;
    expect(refused).toMatchObject({ status: 400, code: 'e-301', name: 'OrdergateError' });
    expect(refused.is('OFS_TRANSACTION_TYPE')).toBe(true);
    expect(refused.errors).toContainEqual(expect.objectContaining({ field: 'transaction_type' }));
    expect(refused.requestId).toBe(requestIds.at(-1));
    expect(refused.requestId).not.toBe('');

    const below = await client.place(bid({ price: 99 })).catch((e: unknown) => e);
    expect(below).toMatchObject({ status: 422, code: 'e-356' });
    const anonymous = await new OrdergateClient({ baseUrl: forwarder.url }).orderBook().catch((e: unknown) => e);
    expect(anonymous).toMatchObject({ status: 401, code: 'e-201' });
  });
});

describe('order carts', () => {
  const ofsLine = (quantity: number): CartLine => ({
    scripDetail: {
      symbol: 'SBIN',
      _Series: 'OF',
      _InstrumentName: 'EQUITIES',
      _ExchangeName: 'NSE',
      MarketLot: 1,
      PriceTick: 0.05,
    },
    TransactionType: 'BUY',
    OrderType: 'RL',
    Quantity: quantity,
    Price: '101.50',
    ProductType: 'OFS',
    validity: '',
  });

  it('creates, lists, reads with an ETag, updates with If-Match, refuses a stale If-Match (412 e-410), executes and deletes', async () => {
    const client = await loggedIn();
    const me = demo.user_id;
    const created = await client.createCart({
      ordercartName: 'Client basket',
      orders: [ofsLine(5)],
      version: '1',
      createdBy: me,
      modifiedBy: me,
      executedNoTime: 0,
    });
    const id = created.data.ordercartId;
    const page = await client.listCarts({ offset: 1, limit: 10 });
    expect(page.data.map((cart) => cart.ordercartId)).toContain(id);
    expect(page.totalCount).toBeGreaterThanOrEqual(1);

    const details = await client.cartDetails(id);
    expect(details.data).toMatchObject({ ordercartName: 'Client basket', executedNoTime: 0 });
    expect(details.data.orders[0]).toMatchObject({ Quantity: 5, ProductType: 'OFS' });
    expect(details.etag).not.toBe('');

    const change = {
      ordercartId: id,
      ordercartName: 'Renamed basket',
      orders: [ofsLine(5), ofsLine(7)],
      version: '1' as const,
      createdBy: me,
      modifiedBy: me,
      executedNoTime: 0,
    };
    const updated = await client.updateCart(change, { ifMatch: details.etag });
    expect(updated.etag).not.toBe(details.etag);
    const stale = await client
      .updateCart({ ...change, ordercartName: 'Lost update' }, { ifMatch: details.etag })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(OrdergateError);
    expect(stale).toMatchObject({ status: 412, code: 'e-410' });
    expect((await client.cartDetails(id)).data.ordercartName).toBe('Renamed basket');

    const execution = await client.executeCart(id);
    expect(execution.code).toBe('s-101');
    expect(execution.data.map((line) => line.status)).toEqual(['success', 'success']);
    expect((await client.cartDetails(id)).data.executedNoTime).toBe(1);

    await client.deleteCart(id);
    const gone = await client.cartDetails(id).catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 404, code: 'e-405' });
  });
});

describe('order events', () => {
  it('iterates the events of bids live, across a dropped connection and a restart of the server, without loss or repeat', async () => {
    const client = await loggedIn();
    const seen: OrderEvent[] = [];
    const stream = client.events();
    const reading = (async () => {
      for await (const event of stream) seen.push(event);
    })();
    const until = async (condition: () => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!condition()) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; seen: ${JSON.stringify(seen.map((e) => [e.event_id, e.status]))}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const statusesOf = (orderId: string) =>
      seen.filter((event) => event.order_id === orderId).map((event) => event.status);
    // The stream is live only: the first bid is placed once it is open.
    await stream.opened;

    const first = (await client.place(bid({ order_identifier: 'ev-1' }))).data.orderId;
    await until(() => statusesOf(first).includes('PENDING'), 'the first bid to be PENDING');

    // A drop without a goodbye, while the OMS moves a second bid on: its events come on the next connection.
    forwarder.refuse();
    forwarder.cut();
    const direct = new OrdergateClient({ baseUrl: server.url }).withToken(client.accessToken!, client.apiKey);
    const second = (await direct.place(bid({ order_identifier: 'ev-2' }))).data.orderId;
    await untilStatus(direct, second, 'PENDING');
    forwarder.pointAt(server.url);
    await until(() => statusesOf(second).includes('PENDING'), 'the second bid, missed while dropped');

    // A restart: the server ends the stream with e-503 and stops; a new process on the same database takes
    // its place (on another port, behind the same address); a bid placed meanwhile is not missed.
    forwarder.refuse();
    await stopServer(server);
    server = await startServer(space.env);
    const third = (
      await new OrdergateClient({ baseUrl: server.url })
        .withToken(client.accessToken!, client.apiKey)
        .place(bid({ order_identifier: 'ev-3' }))
    ).data.orderId;
    forwarder.pointAt(server.url);
    await until(() => statusesOf(third).includes('PENDING'), 'the third bid, placed on the new server');
    await client.cancel('NSE_EQ', first);
    await until(() => statusesOf(first).includes('CANCELLED'), 'the cancellation of the first bid, live');
    await stream.close();
    await reading;

    const ids = seen.map((event) => event.event_id);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    for (const orderId of [first, second, third]) {
      const history = (await client.orderHistory(orderId)).data.map((step) => step.status);
      expect(statusesOf(orderId), orderId).toEqual(history);
    }
  }, 90_000);
});

describe('order events after an early drop', () => {
  it('misses nothing when the connection drops before the first event: it resumes from the id the stream opened with', async () => {
    const client = await loggedIn();
    const seen: OrderEvent[] = [];
    const stream = client.events();
    const reading = (async () => {
      for await (const event of stream) seen.push(event);
    })();
    await stream.opened;
    // The stream's opening id follows its headers at once; give it time to arrive, then drop the connection.
    await new Promise((resolve) => setTimeout(resolve, 500));
    forwarder.refuse();
    forwarder.cut();
    const direct = new OrdergateClient({ baseUrl: server.url }).withToken(client.accessToken!, client.apiKey);
    const orderId = (await direct.place(bid({ order_identifier: 'early-1' }))).data.orderId;
    await untilStatus(direct, orderId, 'PENDING');
    forwarder.pointAt(server.url);

    const deadline = Date.now() + 20_000;
    while (!seen.some((event) => event.order_id === orderId && event.status === 'PENDING')) {
      if (Date.now() > deadline)
        throw new Error(
          `the bid's events did not come after the reconnection; seen: ${JSON.stringify(seen.map((e) => [e.event_id, e.status]))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const history = (await client.orderHistory(orderId)).data.map((step) => step.status);
    expect(seen.filter((event) => event.order_id === orderId).map((event) => event.status)).toEqual(history);
    await stream.close();
    await reading;
  }, 60_000);
});

describe('a bid from placement to holding', () => {
  it('places a cut-off bid on an issue closing in seconds, sees it EXECUTED, in the trade book, as a position, then as a holding', async () => {
    const issue = await importClosingIssue(space, 4_000, 3);
    const client = await loggedIn();
    const events = client.events();
    await events.opened;
    const { data } = await client.place({
      scrip_info: {
        exchange: issue.exchange,
        scrip_token: issue.scrip_token,
        symbol: issue.symbol,
        series: issue.series,
      },
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL-MKT',
      quantity: '100',
      price: 0,
    });
    let executed: OrderEvent | undefined;
    for await (const event of events) {
      if (event.order_id === data.orderId && event.status === 'EXECUTED') {
        executed = event;
        break;
      }
    }
    expect(executed).toMatchObject({
      order_id: data.orderId,
      status: 'EXECUTED',
      order: { traded_quantity: 100, traded_price: '101.00' },
    });

    const trades = await client.tradeBook({ order_id: data.orderId });
    expect(trades.data).toHaveLength(1);
    const positions = await client.positions('all');
    expect(positions.data.some((position) => position.scrip_token === issue.scrip_token)).toBe(true);
    const deadline = Date.now() + 15_000;
    let holdings = await client.holdings();
    while (!holdings.data.some((holding) => holding.scrip_token === issue.scrip_token) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      holdings = await client.holdings();
    }
    expect(holdings.data.find((holding) => holding.scrip_token === issue.scrip_token)).toMatchObject({
      quantity: 100,
      average_price: '101.00',
    });
  }, 60_000);
});
