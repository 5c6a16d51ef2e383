/**
 * Readiness follows the database (PostgreSQL only, through the TCP proxy of db-outage.test.ts): while it
 * cannot be reached, /health/ready answers 503 e-503 with Retry-After within about a second, /health/live
 * still 200, /metrics still answers (counting the calls answered 503 for the database); once it is back,
 * ready answers 200 again with no restart.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createPostgresDatabase, TEST_POSTGRES_URL, testDialect, type TestDatabase } from '../support/databases.js';
import { TcpProxy, type OutageMode } from './tcp-proxy.js';

/**
 * The promise is about a second (db-outage.test.ts says how); the bound is generous for a busy machine and
 * still below the 5 s query timeout the answer would wait without the probe.
 */
const ANSWER_BOUND_MS = 3_000;
const RECOVERY_BOUND_MS = 10_000;
const TOKEN = 'health-token-0123456789abcdef0123456789abcdef';

describe.skipIf(testDialect() !== 'postgres')(
  'health through a database outage (PostgreSQL behind a TCP proxy)',
  () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    let server: RunningServer;

    beforeAll(async () => {
      database = await createPostgresDatabase('ordergate_health');
      const target = new URL(TEST_POSTGRES_URL);
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
      const proxied = new URL(database.databaseUrl);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      const config = loadConfig({
        DATABASE_URL: proxied.toString(),
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0',
        METRICS_TOKEN: TOKEN,
        OMS_EMBEDDED: 'false',
      });
      server = await startServer(config, pino({ level: 'silent' }));
    });

    afterAll(async () => {
      await proxy?.restore();
      await server?.stop();
      await proxy?.close();
      await database?.dispose();
    });

    const get = async (base: string, path: string) => {
      const started = performance.now();
      const response = await fetch(`${base}${path}`, {
        headers: path === '/metrics' ? { authorization: `Bearer ${TOKEN}` } : {},
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, ms: performance.now() - started };
    };
    const unavailableCount = async () =>
      Number(
        /^ordergate_database_unavailable_total (\S+)$/m.exec((await get(server.metricsUrl!, '/metrics')).text)?.[1],
      );

    it('is ready while the database answers', async () => {
      for (const base of [server.url, server.metricsUrl!]) expect((await get(base, '/health/ready')).status).toBe(200);
    });

    for (const mode of ['refuse', 'blackhole'] as const satisfies readonly OutageMode[]) {
      it(
        `${mode}: not ready (503 e-503) within a second, still live, metrics still scraped; ready again once the database is back`,
        { timeout: 30_000 },
        async () => {
          const before = await unavailableCount();
          await proxy.outage(mode);
          try {
            for (const base of [server.url, server.metricsUrl!]) {
              for (const attempt of [1, 2]) {
                const ready = await get(base, '/health/ready');
                expect(ready.status, `${base} #${attempt}: ${ready.text}`).toBe(503);
                expect(JSON.parse(ready.text)).toMatchObject({
                  status: 'error',
                  code: 'e-503',
                  errors: [],
                  request_id: expect.any(String),
                });
                expect(ready.headers.get('retry-after')).toBe('1');
                expect(ready.ms, `${base} #${attempt} took ${ready.ms} ms`).toBeLessThan(ANSWER_BOUND_MS);
                const live = await get(base, '/health/live');
                expect(live.status).toBe(200);
                expect(JSON.parse(live.text)).toEqual({ status: 'ok' });
              }
            }
            // An API call that needs the database answers 503 and is counted; the scrape answers, the outbox's figures unknown.
            const orderBook = await fetch(`${server.url}/transactional/v1/orders`, {
              headers: { authorization: 'Bearer some-token' },
            });
            expect(orderBook.status).toBe(503);
            const scrape = await get(server.metricsUrl!, '/metrics');
            expect(scrape.status).toBe(200);
            expect(scrape.text).toMatch(/^ordergate_oms_outbox_open_entries Nan$/m);
            expect(scrape.text).toMatch(/^ordergate_oms_outbox_oldest_age_seconds Nan$/m);
            expect(await unavailableCount()).toBe(before + 1);
          } finally {
            await proxy.restore();
          }
          await expect
            .poll(async () => (await get(server.url, '/health/ready')).status, {
              timeout: RECOVERY_BOUND_MS,
              interval: 200,
            })
            .toBe(200);
          expect((await get(server.metricsUrl!, '/health/ready')).status).toBe(200);
          expect((await get(server.metricsUrl!, '/metrics')).text).toMatch(/^ordergate_oms_outbox_open_entries 0$/m);
        },
      );
    }
  },
);
