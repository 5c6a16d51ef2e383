/**
 * The exchange killed for real: `ordergate exchange-sim` as its own process (the built bin), the OMS
 * reaching it through the e-OFS link as it would reach NSE, and the simulator SIGKILLed while batches are
 * on their way, then started again on the same port. Whatever instant the kill falls on (a batch taken and
 * not answered, one half sent, none yet), every bid ends at the exchange once, none twice, none lost, and
 * each order PENDING. On both databases.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NseEofsClient } from '../../src/oms/links/nse-eofs/client.js';
import { NseEofsLink } from '../../src/oms/links/nse-eofs/link.js';
import { ExchangeRouter } from '../../src/oms/links/router.js';
import { CLI, cleanEnv, ROOT } from '../cli/run-ordergate.js';
import { HOUR, ObservedExchange, OmsBench } from './fixture.js';

const API_USER = { memberCode: 'M0001', loginId: 'api-kill', password: 'kill-test-password' };
const ORDERS = 30;

let bench: OmsBench;
let simulator: ChildProcess | undefined;

beforeEach(async () => {
  bench = await OmsBench.open();
  // The simulator runs on the real clock: the issue's windows are open now.
  bench.clock.now = Date.now();
  const now = bench.clock.now;
  await bench.registerIssue({
    nonRetailOpensAt: now - HOUR,
    nonRetailClosesAt: now + HOUR,
    retailOpensAt: now - HOUR,
    retailClosesAt: now + 2 * HOUR,
    offerQuantity: 100_000,
  });
});
afterEach(async () => {
  simulator?.kill('SIGKILL');
  await bench.close();
});

/** Starts `ordergate exchange-sim` on `port` (0: a free one); resolves with its NSE_EQ base URL and port. */
function startSimulator(port: number): Promise<{ base: string; port: number }> {
  const child = spawn(process.execPath, [CLI, 'exchange-sim', '--port', String(port)], {
    cwd: ROOT,
    env: cleanEnv({
      DATABASE_URL: bench.databaseUrl,
      EXCHANGE_SIM_MEMBER_CODE: API_USER.memberCode,
      EXCHANGE_SIM_LOGIN_ID: API_USER.loginId,
      EXCHANGE_SIM_PASSWORD: API_USER.password,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  simulator = child;
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const base = /^NSE_EQ: (\S+)$/m.exec(stdout)?.[1];
      if (base !== undefined) resolve({ base, port: Number(new URL(base).port) });
    });
    child.on('close', (code) => reject(new Error(`exchange-sim exited ${code} before listening: ${stderr}`)));
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.on('close', () => resolve());
    child.kill('SIGKILL');
  });

describe('the exchange simulator SIGKILLed under the OMS', () => {
  it('places every bid once, whatever instant the kill falls on', async () => {
    const { base, port } = await startSimulator(0);
    const client = new NseEofsClient({ baseUrl: base, credentials: API_USER, now: bench.now, timeoutMs: 1_000 });
    const exchange = new ObservedExchange(
      new ExchangeRouter(new Map([['NSE_EQ', new NseEofsLink({ exchange: 'NSE_EQ', client, now: bench.now })]])),
    );
    const worker = bench.worker({ exchange, batchSize: 5 });
    const ids: string[] = [];
    for (let i = 0; i < ORDERS; i++) ids.push(await bench.placeOrder({ quantity: 10 + i }));

    // The kill falls once the exchange has taken some bids, while batches are still on their way.
    const pass = worker.runOnce();
    for (let i = 0; i < 500; i++) {
      const taken = await bench.store.db.selectFrom('sim_exchange_bids').select('order_id').execute();
      if (taken.length >= 8) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await killed(simulator!);
    await pass;
    const before = await Promise.all(ids.map((id) => bench.status(id)));
    expect(before.filter((status) => status !== 'PENDING').length).toBeGreaterThan(0);

    await startSimulator(port);
    for (let round = 0; round < 10; round++) {
      bench.clock.now += 60_000;
      await worker.runOnce();
      if ((await bench.openOutbox()) === 0) break;
    }

    for (const id of ids) {
      expect(await bench.status(id), id).toBe('PENDING');
      expect(await bench.exchangeBid(id), id).toMatchObject({ transmissions: 1, status: 'LIVE' });
    }
    const book = await bench.store.db.selectFrom('sim_exchange_bids').select('order_id').execute();
    expect(book).toHaveLength(ORDERS);
  });
});
