/**
 * One exchange session at a time across nodes (src/oms/links/session-lease.ts): two OMS nodes share one API
 * user's session through its lease. The holder sends; the other stands by (claims nothing, and says so in
 * its health), and takes over when the holder's lease runs out (its node died) or at once when the holder
 * stops cleanly. On both databases, through the simulator over HTTP.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExchangeSim, type ExchangeSim } from '../../src/exchange-sim/exchange-sim.js';
import { NseEofsClient } from '../../src/oms/links/nse-eofs/client.js';
import { NseEofsLink } from '../../src/oms/links/nse-eofs/link.js';
import { ExchangeRouter } from '../../src/oms/links/router.js';
import { LeasedExchange } from '../../src/oms/links/session-lease.js';
import { ExchangeSessionRepository } from '../../src/store/orders/exchange-sessions.js';
import { ObservedExchange, OmsBench } from './fixture.js';

const API_USER = { memberCode: 'M0001', loginId: 'ordergate-lease', password: 'a-password-for-tests' };
const LEASE_MS = 15_000;

let bench: OmsBench;
let sim: ExchangeSim;

beforeEach(async () => {
  bench = await OmsBench.open();
  sim = await createExchangeSim({ store: bench.store, users: [API_USER], now: bench.now, runSteps: false });
});
afterEach(async () => {
  await sim.close();
  await bench.close();
});

/** A node: its link to the simulator, under the session's lease, and its OMS worker. */
function node(name: string) {
  const client = new NseEofsClient({ baseUrl: sim.baseUrl('NSE_EQ'), credentials: API_USER, now: bench.now });
  const link = new NseEofsLink({ exchange: 'NSE_EQ', client, now: bench.now });
  const leased = new LeasedExchange(new ExchangeRouter(new Map([['NSE_EQ', link]])), {
    sessions: new ExchangeSessionRepository(bench.store.db),
    name: `NSE_EQ:${API_USER.loginId}`,
    holder: name,
    now: bench.now,
    leaseMs: LEASE_MS,
  });
  const observed = new ObservedExchange(leased);
  return { leased, observed, worker: bench.worker({ exchange: observed, workerId: name }) };
}

describe('one exchange session across nodes', () => {
  it('lets the holder send while the other stands by, and says so in the other’s health', async () => {
    const a = node('node-a');
    const b = node('node-b');
    expect(await a.leased.ready()).toBe(true);
    const orderId = await bench.placeOrder();

    expect(await b.worker.runOnce()).toBe(0);
    expect(b.observed.count('place')).toBe(0);
    expect(await bench.status(orderId)).toBe('OMSXMITTED');
    expect(b.leased.health()).toEqual([
      expect.objectContaining({
        exchange: 'NSE_EQ',
        connected: false,
        problem: 'standing by: another node holds the exchange session',
      }),
    ]);

    expect(await a.worker.runOnce()).toBe(1);
    expect(await bench.status(orderId)).toBe('PENDING');
  });

  it('hands the session over when its holder stops renewing it (its node died), not before', async () => {
    const a = node('node-a');
    const b = node('node-b');
    expect(await a.leased.ready()).toBe(true);
    const orderId = await bench.placeOrder();

    bench.clock.now += LEASE_MS - 1;
    expect(await b.worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await b.worker.runOnce()).toBe(1);
    expect(await bench.status(orderId)).toBe('PENDING');
    // The old holder, back, now stands by.
    expect(await a.leased.ready()).toBe(false);
  });

  it('hands the session over at once when its holder stops cleanly', async () => {
    const a = node('node-a');
    const b = node('node-b');
    expect(await a.leased.ready()).toBe(true);
    expect(await b.leased.ready()).toBe(false);
    await a.leased.stop();
    expect(await b.leased.ready()).toBe(true);
  });

  it('stops sending before its lease ends when a renewal hangs, so that a node taking over never sends beside it', async () => {
    const sessions = new ExchangeSessionRepository(bench.store.db);
    let calls = 0;
    const hanging = {
      take: (...args: Parameters<ExchangeSessionRepository['take']>) =>
        ++calls === 1 ? sessions.take(...args) : new Promise<never>(() => undefined),
      release: (name: string, holder: string) => sessions.release(name, holder),
    };
    const leased = new LeasedExchange(new ObservedExchange(bench.exchange()), {
      sessions: hanging,
      name: 'NSE_EQ:hanging',
      holder: 'node-a',
      now: bench.now,
      leaseMs: LEASE_MS,
    });
    leased.start();
    try {
      for (let i = 0; i < 200 && !(await leased.ready()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await leased.ready()).toBe(true);
      bench.clock.now += LEASE_MS * 0.8 - 1;
      expect(await leased.ready()).toBe(true);
      bench.clock.now += 2;
      expect(await leased.ready()).toBe(false);
    } finally {
      await leased.stop();
    }
  });
});
