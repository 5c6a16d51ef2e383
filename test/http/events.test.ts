/**
 * The order-event stream over real HTTP: live events of the caller's own orders only, heartbeats, resuming
 * with Last-Event-ID without gap or repeat, the errors answered before the stream starts, and shutdown.
 * The streams are served by a second app over the same store (another node), with short heartbeat and
 * poll intervals; the orders are placed through the test server and moved on by the OMS worker.
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { closeHttp } from '../../src/server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import type { Store } from '../../src/store/sql/database.js';
import { createOmsWorker, createServices } from '../../src/wiring.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { EventStream, openEventStream } from '../support/sse.js';
import { offerImport } from '../support/offers.js';

const ORDERS = '/transactional/v1/orders';
const EVENTS = `${ORDERS}/events`;
const HEARTBEAT_MS = 100;
const WAIT_MS = 5_000;

/** A node serving the streams over the test server's store. */
async function startEventsNode(store: Store): Promise<{ app: App; url: string }> {
  const app = buildApp(
    createServices(store, {
      tokenTtlSeconds: 24 * 60 * 60,
      orderEvents: { heartbeatMs: HEARTBEAT_MS, pollMs: 50, batchSize: 3 },
    }),
    {
      logger: false,
    },
  );
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

describe('GET /transactional/v1/orders/events', () => {
  let server: TestServer;
  let node: { app: App; url: string };
  let oms: OmsWorker;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    carol = await server.createUser('carol');
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    node = await startEventsNode(server.store);
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    // As `serve` closes: a stream whose client left just as the close began is cut after the grace period
    // (app.close() alone once waited for it past the hook's 60 s in a clean-clone run).
    await closeHttp(node.app, { warn: () => undefined });
    await server.close();
  });

  async function open(user: TestUser, lastEventId?: string, url = node.url): Promise<EventStream> {
    const stream = await openEventStream(url, user.token, lastEventId);
    streams.push(stream);
    return stream;
  }

  async function bid(user: TestUser, quantity = 10): Promise<string> {
    const res = await server.call('POST', `${ORDERS}/regular`, {
      body: validBid({ quantity: String(quantity) }),
      token: user.token,
      apiKey: user.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  /** The event ids of the user's orders' history rows (the user's own count), in order. */
  async function historyIds(user: TestUser): Promise<number[]> {
    const rows = await server.store.db
      .selectFrom('order_history')
      .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
      .select('order_history.user_event_id')
      .where('orders.user_id', '=', user.userId)
      .orderBy('order_history.id')
      .execute();
    return rows.map((row) => Number(row.user_event_id));
  }

  it("streams the events of the caller's own orders as they happen, from the moment it connects", async () => {
    await bid(alice);
    const existing = await historyIds(alice);
    const aliceStream = await open(alice);
    const bobStream = await open(bob);
    expect(aliceStream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(aliceStream.response.headers.get('cache-control')).toBe('no-cache');
    expect(aliceStream.response.headers.get('x-accel-buffering')).toBe('no');
    expect(aliceStream.response.headers.get('request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const orderId = await bid(alice);
    await aliceStream.until(() => aliceStream.events.some((e) => e.data.status === 'OMSXMITTED'), 'OMSXMITTED');
    await oms.runOnce();
    await oms.runOnce();
    // Both bids move on; only the changes after the stream opened are sent.
    const expected = (await historyIds(alice)).filter((id) => id > existing.at(-1)!);
    await aliceStream.until(() => aliceStream.events.length >= expected.length, 'every event since the stream opened');
    const events = aliceStream.events;
    expect(events.map((e) => e.id)).toEqual(expected);
    const mine = events.filter((e) => e.data.order_id === orderId);
    expect(mine.map((e) => e.data.status)).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING']);
    for (const { id, event, data } of events) {
      expect(event).toBe('order_update');
      expect(data).toMatchObject({ event_id: id, type: 'order_update', order_id: data.order.order_id });
      expect(new Date(data.at).toISOString()).toBe(data.at);
      expect(typeof data.reason).toBe('string');
    }
    // `order` is the order as the order book shows it now.
    const book = await server.call('GET', `${ORDERS}?order_id=${orderId}`, { token: alice.token });
    expect(mine.at(-1)!.data.order).toEqual(book.body.data[0]);

    expect(bobStream.events).toEqual([]);
    aliceStream.close();
    bobStream.close();
  });

  it('sends heartbeat comments while nothing happens', async () => {
    const stream = await open(bob);
    await stream.until(() => stream.frames.filter((f) => f.comment === 'heartbeat').length >= 2, 'two heartbeats');
    stream.close();
  });

  it('resumes with Last-Event-ID: the missed events, then the live ones, with no gap and no repeat', async () => {
    const first = await open(carol);
    await bid(carol);
    await oms.runOnce();
    await bid(carol);
    await first.until(() => first.events.length >= 3, 'three events on the first connection');
    first.close();
    await first.until(() => first.ended, 'the first connection to end');
    const seenFirst = first.events.map((e) => e.id);

    // While the client is away: more bids and OMS work than one replay batch (3) holds.
    await bid(carol);
    await bid(carol);
    await oms.runOnce();
    await oms.runOnce();
    const missed = (await historyIds(carol)).filter((id) => id > seenFirst.at(-1)!);
    expect(missed.length).toBeGreaterThan(3);

    const second = await open(carol, String(seenFirst.at(-1)));
    await bid(carol);
    await oms.runOnce();
    await oms.runOnce();
    const all = await historyIds(carol);
    await second.until(() => seenFirst.length + second.events.length >= all.length, 'every event of carol');
    // A repeat would arrive within a few poll intervals.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(second.events.slice(0, missed.length).map((e) => e.id)).toEqual(missed);
    expect([...seenFirst, ...second.events.map((e) => e.id)]).toEqual(await historyIds(carol));
    second.close();
  });

  it('starts a live stream with an id alone: a client dropped before its first event resumes from it and misses nothing', async () => {
    await bid(bob);
    await oms.runOnce();
    const first = await open(bob);
    await first.until(() => first.frames.some((f) => f.id !== undefined), 'the opening id');
    // The first frame: an id and nothing else (no event type, no data: nothing is dispatched for it). It is
    // bob's last event id so far: the stream sends every later event of bob's (one written before it
    // opened but not yet dispatched by this node's poller included).
    expect(first.frames[0]).toEqual({ id: expect.stringMatching(/^\d+$/) });
    const startsAfter = Number(first.frames[0]!.id);
    first.close();
    await first.until(() => first.ended, 'the first connection to end');

    // Dropped as if before any event: what happened after that position comes on the next connection.
    const orderId = await bid(bob);
    await oms.runOnce();
    await oms.runOnce();
    const missed = (await historyIds(bob)).filter((id) => id > startsAfter);
    expect(missed.length).toBeGreaterThanOrEqual(3);
    const second = await open(bob, String(startsAfter));
    await second.until(() => second.events.length >= missed.length, 'the events made since the opening id');
    expect(second.events.map((e) => e.id)).toEqual(missed);
    expect(second.events.filter((e) => e.data.order_id === orderId).map((e) => e.data.status)).toEqual([
      'OMSXMITTED',
      'EXXMITTED',
      'PENDING',
    ]);
    // A resumed stream sends no opening id: its client has one.
    expect(second.frames.filter((f) => f.id !== undefined && f.data === undefined)).toEqual([]);
    second.close();
  });

  it("numbers each user's events by the user's own count: ids reveal nothing of other users' volume (issue 21 row 9)", async () => {
    // Others' events before and between: erin's ids are 1, 2, 3, ... all the same.
    await bid(alice);
    await oms.runOnce();
    const erin = await server.createUser('erin');
    const stream = await open(erin);
    await stream.until(() => stream.frames.some((f) => f.id !== undefined), 'the opening id');
    expect(stream.frames[0]).toEqual({ id: '0' });
    await bid(erin);
    await bid(alice);
    await bid(carol);
    await oms.runOnce();
    await bid(erin);
    await oms.runOnce();
    await stream.until(() => stream.events.length >= 6, "erin's six events");
    expect(stream.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stream.events.map((e) => e.data.event_id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await historyIds(erin)).toEqual([1, 2, 3, 4, 5, 6]);
    // Resumption by the user's own ids: after 4, the 5th and the 6th.
    const resumed = await open(erin, '4');
    await resumed.until(() => resumed.events.length >= 2, 'the events after 4');
    expect(resumed.events.map((e) => e.id)).toEqual([5, 6]);
    resumed.close();
    stream.close();
    // An id erin was never sent (a global id kept from before ids were per user): refused, before any stream.
    const ahead = await fetch(`${node.url}${EVENTS}`, {
      headers: { authorization: `Bearer ${erin.token}`, 'last-event-id': '7' },
    });
    expect(ahead.status).toBe(400);
    expect(await ahead.json()).toMatchObject({ status: 'error', code: 'e-124' });
  });

  it("sends every stream an offer's indicative price each time the exchange publishes a change, without an id", async () => {
    const stream = await open(carol);
    await stream.until(() => stream.frames.some((f) => f.id !== undefined), 'the opening id');
    const opening = stream.frames.find((f) => f.id !== undefined)!.id;
    await server.admin.importOfs([
      offerImport({ offer_id: 'EVENTS-OFS', settlement_delay_seconds: 60 }, server.clock.now - 60_000),
    ]);
    const nii = await server.createUser('events-nii', { category: 'NII' });
    const body = validBid({
      scrip_info: {
        exchange: 'NSE_EQ',
        scrip_token: 700001,
        symbol: 'ACME',
        series: 'IS',
        expiry_date: '',
        strike_price: '',
        option_type: '',
      },
      quantity: '300',
      price: 101.5,
    });
    const res = await server.call('POST', `${ORDERS}/regular`, { body, token: nii.token, apiKey: nii.apiKey });
    expect(res.status, res.text).toBe(200);
    await oms.runOnce();
    await stream.until(() => stream.frames.some((f) => f.event === 'indicative_price'), 'the indicative price');
    const frame = stream.frames.find((f) => f.event === 'indicative_price')!;
    expect(frame.id).toBeUndefined();
    expect(JSON.parse(frame.data!)).toEqual({
      offer_id: 'EVENTS-OFS',
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      price: 101.5,
      quantity: 300,
      margin_100: { price: 101.5, quantity: 300 },
      margin_0: { price: null, quantity: 0 },
    });
    // carol has no order: the frame is the same for everybody, and her Last-Event-ID is still the opening one.
    expect(stream.frames.filter((f) => f.id !== undefined).map((f) => f.id)).toEqual([opening]);
  });

  it("ends a session's streams when it logs out: on the node that took the logout at once, on another node within 2 s, and sends them nothing more (issue 21 row 3)", async () => {
    const dave = await server.createUser('dave');
    const login = await server.call('POST', '/authentication/v1/user/session', {
      body: {
        user_id: 'dave',
        login_type: 'PASSWORD',
        password: dave.password,
        second_auth_type: '',
        second_auth: '',
        api_key: dave.apiKey,
        source: 'WEBAPI',
      },
    });
    const token = login.body.data.access_token as string;
    const here = await openEventStream(server.url, token);
    const there = await openEventStream(node.url, token);
    streams.push(here, there);
    // Another session of the same user stays open.
    const other = await open(dave);
    for (const stream of [here, there, other])
      await stream.until(() => stream.frames.some((f) => f.id !== undefined), 'the opening id');

    const loggedOut = performance.now();
    expect((await server.call('DELETE', '/authentication/v1/user/session', { token })).status).toBe(200);
    await here.until(() => here.ended, 'the end of the stream on the node that took the logout');
    const hereAfter = performance.now() - loggedOut;
    await there.until(() => there.ended, 'the end of the stream on the other node');
    const thereAfter = performance.now() - loggedOut;
    expect(hereAfter).toBeLessThan(1_000);
    expect(thereAfter).toBeLessThan(2_000);
    for (const stream of [here, there]) {
      const last = stream.frames.at(-1)!;
      expect(last.event).toBe('stream_end');
      expect(JSON.parse(last.data!)).toMatchObject({
        status: 'error',
        code: 'e-204',
        message: 'The access token was revoked (a logout, or the operator ended the sessions of this user)',
      });
    }
    // The user's other session still gets its events; the ended streams get nothing more.
    const orderId = await bid(dave);
    await other.until(() => other.events.some((e) => e.data.order_id === orderId), "the other session's event");
    expect(here.events.some((e) => e.data.order_id === orderId)).toBe(false);
    expect(there.events.some((e) => e.data.order_id === orderId)).toBe(false);
  });

  it('answers a Last-Event-ID that is not a number with 400 e-111, before any stream', async () => {
    for (const value of ['abc', '-1', '1.5', '']) {
      const res = await fetch(node.url + EVENTS, {
        headers: { authorization: `Bearer ${alice.token}`, 'last-event-id': value },
      });
      expect(res.status, value).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ status: 'error', code: 'e-111' });
    }
  });

  it('answers without a valid token with the 401 envelope, before any stream', async () => {
    const missing = await fetch(node.url + EVENTS);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ status: 'error', code: 'e-201' });
    const unknown = await fetch(node.url + EVENTS, { headers: { authorization: 'Bearer not-a-token' } });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ status: 'error', code: 'e-202' });
  });

  it('ends the open streams when the server closes, saying why in a last stream_end event', async () => {
    const closing = await startEventsNode(server.store);
    const stream = await open(alice, undefined, closing.url);
    await stream.until(() => stream.frames.length > 0, 'a first heartbeat');
    await Promise.race([
      closing.app.close(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('app.close() hung')), WAIT_MS)),
    ]);
    await stream.until(() => stream.ended, 'the stream to end');
    const last = stream.frames.at(-1)!;
    expect(last.event).toBe('stream_end');
    expect(JSON.parse(last.data!)).toMatchObject({
      status: 'error',
      code: 'e-503',
      request_id: stream.response.headers.get('request-id'),
    });
  });
});
