/**
 * The exchange links' health as the operator reads it (docs/exchanges.md): `serve` with its default
 * EXCHANGE_LINK=sim shows both links connected on /health/ready and /health/exchanges (on the API's port
 * and on the metrics listener) and in the metrics; a link whose exchange is gone shows down, with why, and
 * the node stays ready (order entry goes on, bids wait). A server with the simulator in process shows no
 * links. On both databases.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createExchangeSim } from '../../src/exchange-sim/exchange-sim.js';
import { openStore } from '../../src/store/sql/database.js';
import { createMigratedTestDatabase } from '../support/databases.js';

const TOKEN = 'link-health-token-0123456789abcdef0123456789';

let servers: RunningServer[] = [];
let cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const running of servers) await running.stop();
  for (const cleanup of cleanups.reverse()) await cleanup();
  servers = [];
  cleanups = [];
});

async function start(env: Record<string, string> = {}, databaseUrl?: string): Promise<RunningServer> {
  if (databaseUrl === undefined) {
    const database = await createMigratedTestDatabase('ordergate_link_health');
    cleanups.push(database.dispose);
    databaseUrl = database.databaseUrl;
  }
  const server = await startServer(
    loadConfig({
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
      PASSWORD_HASH_COST: 'test-only-insecure',
      ...env,
    }),
    pino({ level: 'silent' }),
  );
  servers.push(server);
  return server;
}

const json = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** Polls until `check` holds (the links connect on their own), for at most five seconds. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('the exchange links’ health', () => {
  it('shows both links of the default simulator connected, on the API port, the metrics listener and in the metrics', async () => {
    const running = await start();
    const connected = async () =>
      ((await json(`${running.url}/health/exchanges`)).body as { status: string }).status === 'ok';
    await until(connected);

    const exchanges = await json(`${running.url}/health/exchanges`);
    expect(exchanges.status).toBe(200);
    expect(exchanges.body).toMatchObject({
      status: 'ok',
      links: [
        { exchange: 'NSE_EQ', connected: true, problem: null },
        { exchange: 'BSE_EQ', connected: true, problem: null },
      ],
      waiting: { entries: 0, oldest_since: null },
    });
    const ready = await json(`${running.url}/health/ready`);
    expect(ready).toEqual({
      status: 200,
      body: {
        status: 'ok',
        exchanges: [
          { exchange: 'NSE_EQ', connected: true },
          { exchange: 'BSE_EQ', connected: true },
        ],
      },
    });
    expect((await json(`${running.metricsUrl}/health/exchanges`)).body).toMatchObject({ status: 'ok' });
    const metrics = await (
      await fetch(`${running.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(metrics).toContain('ordergate_exchange_link_connected{exchange="NSE_EQ"} 1');
    expect(metrics).toContain('ordergate_exchange_link_connected{exchange="BSE_EQ"} 1');
    expect(metrics).toMatch(/ordergate_exchange_link_last_answer_age_seconds\{exchange="NSE_EQ"\} \d/);
  });

  it('shows a link down, with why, when its exchange or its folder is gone, and the node stays ready', async () => {
    const bseDir = mkdtempSync(join(tmpdir(), 'ordergate-link-health-'));
    try {
      const running = await start({ EXCHANGE_BSE_RECORD_DIR: bseDir });
      const linksOf = async () =>
        ((await json(`${running.url}/health/exchanges`)).body as {
          status: string;
          links: { exchange: string; connected: boolean; problem: string | null }[];
        }) ?? { status: '', links: [] };
      await until(async () => (await linksOf()).status === 'ok');
      await running.links!.simulator!.close();
      await until(async () => (await linksOf()).status === 'degraded');
      // The e-OFS link loses its stream; the iBBS link cannot tell (files wait for the exchange), its folders are fine.
      expect((await linksOf()).links).toEqual([
        {
          exchange: 'NSE_EQ',
          connected: false,
          problem: expect.stringMatching(/stream/),
          last_answer_at: expect.anything(),
        },
        { exchange: 'BSE_EQ', connected: true, problem: null, last_answer_at: null },
      ]);
      // Its inbox gone (a mount lost): the iBBS link is down, and says why.
      rmSync(join(bseDir, 'inbox'), { recursive: true, force: true });
      writeFileSync(join(bseDir, 'inbox'), 'not a folder');
      await until(async () => (await linksOf()).links[1]!.connected === false);
      expect((await linksOf()).links[1]!.problem).toMatch(/^the inbox cannot be read: .*inbox.*\(ENOTDIR\)/);
      expect((await json(`${running.url}/health/ready`)).status).toBe(200);
    } finally {
      rmSync(bseDir, { recursive: true, force: true });
    }
  });

  it('shows no links when the simulator runs in process', async () => {
    const running = await start({ EXCHANGE_LINK: 'in-process' });
    expect((await json(`${running.url}/health/exchanges`)).body).toEqual({
      status: 'ok',
      links: [],
      waiting: { entries: 0, oldest_since: null },
    });
    expect((await json(`${running.url}/health/ready`)).body).toEqual({ status: 'ok', exchanges: [] });
  });

  it('EXCHANGE_LINK=nse: one node holds the exchange session, a second on the same database stands by', async () => {
    const database = await createMigratedTestDatabase('ordergate_link_nse');
    cleanups.push(database.dispose);
    // The exchange: a simulator of its own, at its own address, as NSE's would be.
    const store = openStore(database.databaseUrl);
    cleanups.push(() => store.close());
    const apiUser = { memberCode: 'M0001', loginId: 'api-user', password: 'the-api-password' };
    const exchange = await createExchangeSim({ store, users: [apiUser], runSteps: false });
    cleanups.push(() => exchange.close());
    const env = {
      EXCHANGE_LINK: 'nse',
      EXCHANGE_NSE_URL: exchange.baseUrl('NSE_EQ'),
      EXCHANGE_NSE_MEMBER_CODE: apiUser.memberCode,
      EXCHANGE_NSE_LOGIN_ID: apiUser.loginId,
      EXCHANGE_NSE_PASSWORD: apiUser.password,
    };
    const first = await start(env, database.databaseUrl);
    await until(async () => ((await json(`${first.url}/health/exchanges`)).body as { status: string }).status === 'ok');
    const second = await start(env, database.databaseUrl);
    await until(
      async () =>
        ((await json(`${second.url}/health/exchanges`)).body as { links: { problem: string | null }[] }).links[0]
          ?.problem !== 'standing by: the session lease is not taken yet',
    );

    expect((await json(`${first.url}/health/exchanges`)).body).toMatchObject({
      status: 'ok',
      links: [{ exchange: 'NSE_EQ', connected: true, problem: null }],
    });
    const standby = (await json(`${second.url}/health/exchanges`)).body as {
      links: { connected: boolean; problem: string }[];
    };
    expect(standby).toMatchObject({ status: 'degraded', links: [{ exchange: 'NSE_EQ', connected: false }] });
    expect(standby.links[0]!.problem).toBe('standing by: another node holds the exchange session');
  });

  it('does not start a node whose exchange links cannot open: no API answers, nothing is left running', async () => {
    const freePort = async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      return port;
    };
    const apiPort = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const simPort = String((taken.address() as AddressInfo).port);
      await expect(start({ EXCHANGE_SIM_PORT: simPort, PORT: String(apiPort) })).rejects.toThrow(/EADDRINUSE/);
      await expect(fetch(`http://127.0.0.1:${apiPort}/health/live`)).rejects.toThrow();
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
