/**
 * The OMS through the e-OFS link to the exchange simulator over HTTP (the path `npm start` takes): bids,
 * changes and allotments over the wire, and the faults of the issue, each from a hook of the simulator's
 * (never a sleep): the simulator killed between taking a batch and answering it, a 5xx and a 429 before it
 * takes one, ordergate killed after sending, the session ended mid-batch, the stream dropped, a slow
 * exchange. In each: every bid at the exchange once, none twice, none lost, and the order's history says
 * what happened. On both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExchangeSim, type ExchangeSim, type FaultCall } from '../../src/exchange-sim/exchange-sim.js';
import { NseEofsClient } from '../../src/oms/links/nse-eofs/client.js';
import { NseEofsLink } from '../../src/oms/links/nse-eofs/link.js';
import { ExchangeRouter } from '../../src/oms/links/router.js';
import { openStore } from '../../src/store/sql/database.js';
import { StreamCursorRepository } from '../../src/store/orders/exchange-sessions.js';
import { DEFAULT_LEASE_MS } from '../../src/oms/worker.js';
import { crash, HOUR, ObservedExchange, OmsBench, recordingLogger, T0 } from './fixture.js';

const API_USER = { memberCode: 'M0001', loginId: 'ordergate-test', password: 'a-password-for-tests' };
/** The client's timeout: a lost answer is retried after twice this. */
const TIMEOUT_MS = 2_000;

let bench: OmsBench;
let sim: ExchangeSim;

beforeEach(async () => {
  bench = await OmsBench.open();
  sim = await createExchangeSim({
    store: bench.store,
    users: [API_USER],
    now: bench.now,
    runSteps: false,
    heartbeatMs: 60_000,
    streamPollMs: 20,
  });
});
afterEach(async () => {
  await sim.close();
  await bench.close();
});

function link(cursor?: string) {
  const client = new NseEofsClient({
    baseUrl: sim.baseUrl('NSE_EQ'),
    credentials: API_USER,
    now: bench.now,
    timeoutMs: TIMEOUT_MS,
  });
  return new NseEofsLink({
    exchange: 'NSE_EQ',
    client,
    now: bench.now,
    ...(cursor !== undefined && { cursor: { name: cursor, store: new StreamCursorRepository(bench.store.db) } }),
  });
}

function wired(
  options: {
    hooks?: ConstructorParameters<typeof ObservedExchange>[1];
    store?: typeof bench.store;
    cursor?: string;
  } = {},
) {
  const nse = link(options.cursor);
  const exchange = new ObservedExchange(new ExchangeRouter(new Map([['NSE_EQ', nse]])), options.hooks);
  return { nse, exchange, worker: bench.worker({ exchange, ...(options.store && { store: options.store }) }) };
}

const isPlacement = (call: FaultCall) => call.method === 'POST';

const notes = async (orderId: string) => (await bench.history(orderId)).map((entry) => entry.reason);

describe('the OMS through the e-OFS link to the simulator', () => {
  it('places a batch over the wire, and applies the allotments the exchange streams at the close', async () => {
    const ids = [
      await bench.placeOrder({ quantity: 40 }),
      await bench.placeOrder({ quantity: 60, userId: 'retail2' }),
      await bench.placeOrder({ quantity: 500, userId: 'inst1', pricePaise: 10_200 }),
    ];
    const { worker, exchange } = wired();
    expect(await worker.runOnce()).toBe(3);
    for (const id of ids) {
      expect(await bench.status(id)).toBe('PENDING');
      expect((await bench.order(id)).exchange_order_id).toMatch(/^SIM/);
      expect(await bench.exchangeBid(id)).toMatchObject({ transmissions: 1, status: 'LIVE' });
    }
    // One batch call for the three, and no book read for bids that could not be there.
    expect(exchange.count('find')).toBe(0);

    bench.clock.now = T0 + 2 * HOUR + 1;
    await sim.step();
    await worker.runOnce();
    for (const id of ids) expect(['EXECUTED', 'CANCELLED']).toContain(await bench.status(id));
    expect(await bench.status(ids[2]!)).toBe('EXECUTED');
    expect((await bench.history(ids[2]!)).at(-1)).toMatchObject({ status: 'EXECUTED', traded_quantity: 500 });
  });

  it('modifies and cancels over the wire', async () => {
    const modified = await bench.placeOrder({ quantity: 10 });
    const cancelled = await bench.placeOrder({ quantity: 20 });
    const { worker } = wired();
    await worker.runOnce();
    await bench.requestModification(modified, { quantity: 15, pricePaise: 10_300 });
    await bench.requestCancellation(cancelled);
    await worker.runOnce();
    expect(await bench.exchangeBid(modified)).toMatchObject({ quantity: 15, price_paise: 10_300, status: 'LIVE' });
    expect(await bench.exchangeBid(cancelled)).toMatchObject({ status: 'CANCELLED' });
    expect(await bench.status(cancelled)).toBe('CANCELLED');
    expect(await bench.openOutbox()).toBe(0);
  });

  it('refuses in the exchange’s words a bid the exchange refuses, and places the others of its batch', async () => {
    const good = await bench.placeOrder({ quantity: 10 });
    const low = await bench.placeOrder({ quantity: 10, pricePaise: 9_000 });
    const { worker } = wired();
    await worker.runOnce();
    expect(await bench.status(good)).toBe('PENDING');
    expect(await bench.status(low)).toBe('ORDERERROR');
    expect((await bench.order(low)).error_reason).toMatch(/floor/i);
  });

  it('the simulator killed between taking a batch and answering it: each bid found in the book, none sent twice', async () => {
    const ids = [await bench.placeOrder({ quantity: 11 }), await bench.placeOrder({ quantity: 12 })];
    let cut = true;
    sim.faults = { afterApply: (call) => (isPlacement(call) && cut ? ((cut = false), 'destroy') : undefined) };
    const { worker, exchange } = wired();

    expect(await worker.runOnce()).toBe(0);
    for (const id of ids) {
      expect(await bench.status(id)).toBe('EXXMITTED');
      expect(await bench.exchangeBid(id)).toMatchObject({ transmissions: 1 });
      expect((await notes(id)).at(-1)).toMatch(/^Waiting for the exchange's answer/);
    }
    // Not before the back-off (twice the timeout: a bid still on its way has arrived by then).
    bench.clock.now += 2 * TIMEOUT_MS - 1;
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(2);
    for (const id of ids) {
      expect(await bench.status(id)).toBe('PENDING');
      expect(await bench.exchangeBid(id)).toMatchObject({ transmissions: 1 });
      expect(exchange.count('place', id)).toBe(1);
      expect(exchange.count('find', id)).toBe(1);
    }
  });

  it('a 5xx before the exchange took the batch: the book is read, then the bids are sent again, once each', async () => {
    const orderId = await bench.placeOrder();
    let failures = 1;
    sim.faults = { beforeApply: (call) => (isPlacement(call) && failures-- > 0 ? { status: 503 } : undefined) };
    const { worker, exchange } = wired();
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    expect(await bench.exchangeBid(orderId)).toBeUndefined();
    bench.clock.now += 2 * TIMEOUT_MS + 1;
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(exchange.count('find', orderId)).toBe(1);
    expect(exchange.count('place', orderId)).toBe(2);
    expect(await bench.exchangeBid(orderId)).toMatchObject({ transmissions: 1 });
  });

  it('a 429 waits for its Retry-After, and the history says the bid is not yet taken', async () => {
    const orderId = await bench.placeOrder();
    let limited = true;
    sim.faults = {
      beforeApply: (call) =>
        isPlacement(call) && limited
          ? ((limited = false), { status: 429, headers: { 'retry-after': '7' } })
          : undefined,
    };
    const { worker } = wired();
    await worker.runOnce();
    expect((await notes(orderId)).at(-1)).toBe(
      'Not yet taken by the exchange (the exchange limits the rate (429)); tried again in 7 s',
    );
    bench.clock.now += 6_999;
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(1);
    expect(await bench.status(orderId)).toBe('PENDING');
  });

  it('ordergate killed after sending: the next worker finds the bids in the book and sends none again', async () => {
    const ids = [await bench.placeOrder({ quantity: 11 }), await bench.placeOrder({ quantity: 12 })];
    const dying = wired({ hooks: { after: (method) => (method === 'place' ? crash() : undefined) } });
    void dying.worker.runOnce();
    for (let i = 0; i < 200 && (await bench.exchangeBid(ids[1]!)) === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));

    const store = openStore(bench.databaseUrl);
    try {
      const successor = wired({ store });
      bench.clock.now += DEFAULT_LEASE_MS + 1;
      expect(await successor.worker.runOnce()).toBe(2);
      for (const id of ids) {
        expect(await bench.status(id)).toBe('PENDING');
        expect(successor.exchange.count('place', id)).toBe(0);
        expect(await bench.exchangeBid(id)).toMatchObject({ transmissions: 1 });
      }
    } finally {
      await store.close();
    }
  });

  it('the session ended mid-run: the link logs in again and the bid goes through', async () => {
    const first = await bench.placeOrder();
    const { worker } = wired();
    await worker.runOnce();
    sim.expireTokens();
    const second = await bench.placeOrder();
    await worker.runOnce();
    expect(await bench.status(first)).toBe('PENDING');
    expect(await bench.status(second)).toBe('PENDING');
  });

  it('a dropped stream is reopened from where it was, and the allotments come', async () => {
    const orderId = await bench.placeOrder({ quantity: 500, userId: 'inst1', pricePaise: 10_200 });
    const { worker, nse } = wired();
    await worker.runOnce();
    nse.start();
    try {
      for (let i = 0; i < 200 && sim.streams === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      sim.dropStreams();
      bench.clock.now = T0 + 2 * HOUR + 1;
      await sim.step();
      for (let i = 0; i < 400 && (await nse.pollEvents()).length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await nse.pollEvents()).toHaveLength(1);
    } finally {
      await nse.stop();
    }
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('EXECUTED');
  });

  it('a slow exchange: bids wait for it, and nothing is sent twice', async () => {
    const orderId = await bench.placeOrder();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    sim.faults = { beforeApply: async () => (await held, undefined) };
    const { worker, exchange } = wired();
    const pass = worker.runOnce();
    for (let i = 0; i < 200 && exchange.count('place', orderId) === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    release();
    await pass;
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(await bench.exchangeBid(orderId)).toMatchObject({ transmissions: 1 });
  });

  it('a restarted link resumes the stream after what the OMS applied, from the stored cursor', async () => {
    const ids = [await bench.placeOrder({ quantity: 40 }), await bench.placeOrder({ quantity: 500, userId: 'inst1' })];
    const { worker } = wired({ cursor: 'test:NSE_EQ' });
    await worker.runOnce();
    bench.clock.now = T0 + 2 * HOUR + 1;
    await sim.step();
    await worker.runOnce();
    for (const id of ids) expect(['EXECUTED', 'CANCELLED']).toContain(await bench.status(id));
    const stored = await new StreamCursorRepository(bench.store.db).read('test:NSE_EQ');
    expect(stored).toBeGreaterThan(0);

    // After a restart: from the cursor, nothing is read again; without one, the whole stream is.
    const restarted = link('test:NSE_EQ');
    await restarted.runOnce();
    expect(await restarted.pollEvents()).toEqual([]);
    const forgetful = link();
    await forgetful.runOnce();
    expect((await forgetful.pollEvents()).map((event) => event.orderId).sort()).toEqual([...ids].sort());
  });

  it('reads the securities open for bidding, as the exchange lists them', async () => {
    const client = new NseEofsClient({ baseUrl: sim.baseUrl('NSE_EQ'), credentials: API_USER, now: bench.now });
    const securities = await client.activeSecurities();
    const sbin = securities.find((security) => security.symbol === 'SBIN');
    expect(sbin).toBeDefined();
    expect(sbin!.tickSize).toBe(0.05);
    expect(sbin!.series.length).toBeGreaterThan(0);
    for (const series of sbin!.series) {
      expect(series.basePrice).toBe(100);
      expect(series.isNewOrderAllowed).toBe(true);
    }
  });

  it('leaves out of a poll the events already handed over in the pass, so that a head the OMS could not apply holds up none behind it', async () => {
    const ids = [await bench.placeOrder({ quantity: 40 }), await bench.placeOrder({ quantity: 500, userId: 'inst1' })];
    const nse = link();
    const router = new ExchangeRouter(new Map([['NSE_EQ', nse]]));
    await bench.worker({ exchange: router }).runOnce();
    bench.clock.now = T0 + 2 * HOUR + 1;
    await sim.step();
    await router.runOnce();
    const all = await router.pollEvents();
    expect(all.map((event) => event.orderId).sort()).toEqual([...ids].sort());
    const rest = await router.pollEvents(new Set([all[0]!.eventId]));
    expect(rest.map((event) => event.eventId)).toEqual(all.slice(1).map((event) => event.eventId));
    // Acknowledged, an event is gone; the others stay until they are.
    await router.acknowledge([all[0]!.eventId]);
    expect((await router.pollEvents()).map((event) => event.eventId)).toEqual(rest.map((event) => event.eventId));
  });

  it('takes a stream silent past its idle time for dead, and reopens it', async () => {
    // This simulator heartbeats once a minute: a link that waits 200 ms for a line takes it for dead.
    const log = recordingLogger();
    const client = new NseEofsClient({ baseUrl: sim.baseUrl('NSE_EQ'), credentials: API_USER, now: bench.now });
    const silent = new NseEofsLink({ exchange: 'NSE_EQ', client, now: bench.now, idleMs: 200, logger: log.logger });
    silent.start();
    try {
      const dead = () => log.lines().filter((line) => line.problem === 'the message stream was silent for 0.2 s');
      for (let i = 0; i < 300 && dead().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(dead().length).toBeGreaterThan(0);
      // And it opened the stream again.
      const opened = () => log.lines().filter((line) => line.msg === 'exchange stream open');
      for (let i = 0; i < 300 && opened().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(opened().length).toBeGreaterThanOrEqual(2);
    } finally {
      await silent.stop();
    }
  });
});
