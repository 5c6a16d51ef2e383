/**
 * The OMS inside `npm start` (startServer): running by default, absent with OMS_EMBEDDED=false, and
 * stopped with the server. Also how the two settings are read.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { HOUR, OmsBench, recordingLogger, sleep } from './fixture.js';

import { DEFAULT_LEASE_MS } from '../../src/oms/worker.js';
let bench: OmsBench;
let server: RunningServer | undefined;
beforeEach(async () => {
  bench = await OmsBench.open();
  bench.clock.now = Date.now();
  await bench.registerIssue({ retailOpensAt: bench.clock.now - HOUR, retailClosesAt: bench.clock.now + HOUR });
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  await bench.close();
});

const configFor = (env: Record<string, string>) =>
  loadConfig({ DATABASE_URL: bench.databaseUrl, PORT: '0', OMS_POLL_MS: '20', ...env });

describe('the embedded OMS', () => {
  it('runs inside the server by default and takes an accepted order to PENDING', async () => {
    const orderId = await bench.placeOrder();
    const { logger, lines } = recordingLogger();
    server = await startServer(configFor({}), logger);
    expect(server.oms).not.toBeNull();

    for (let i = 0; i < 200 && (await bench.status(orderId)) !== 'PENDING'; i += 1) await sleep(20);
    expect(await bench.status(orderId)).toBe('PENDING');

    await server.stop();
    server = undefined;
    expect(lines().map((line) => line.msg)).toEqual(
      expect.arrayContaining(['OMS worker started', 'OMS worker stopped']),
    );
  });

  it('is absent with OMS_EMBEDDED=false: orders wait for `ordergate oms`', async () => {
    const orderId = await bench.placeOrder();
    server = await startServer(configFor({ OMS_EMBEDDED: 'false' }), recordingLogger().logger);
    expect(server.oms).toBeNull();
    await sleep(300);
    expect(await bench.status(orderId)).toBe('OMSXMITTED');
    expect(await bench.openOutbox()).toBe(1);
  });
});

describe('OMS settings', () => {
  it('defaults to an embedded worker polling every 200 ms, its outbox leases 30 s', () => {
    expect(loadConfig({})).toMatchObject({ omsEmbedded: true, omsPollMs: 50, omsLeaseMs: 30_000 });
    expect(DEFAULT_LEASE_MS).toBe(30_000);
  });

  it('reads OMS_EMBEDDED=true|false, OMS_POLL_MS and OMS_LEASE_MS', () => {
    expect(loadConfig({ OMS_EMBEDDED: 'false', OMS_POLL_MS: '50', OMS_LEASE_MS: '2000' })).toMatchObject({
      omsEmbedded: false,
      omsPollMs: 50,
      omsLeaseMs: 2_000,
    });
    expect(loadConfig({ OMS_EMBEDDED: 'true' })).toMatchObject({ omsEmbedded: true });
  });

  it.each(['yes', 'FALSE', '0', '1', 'no'])('refuses OMS_EMBEDDED=%s', (value) => {
    expect(() => loadConfig({ OMS_EMBEDDED: value })).toThrow(
      new ConfigError(`OMS_EMBEDDED must be true or false, got "${value}"`),
    );
  });

  it.each([
    ['fast', 'OMS_POLL_MS must be a whole number, got "fast"'],
    ['0', 'OMS_POLL_MS must be between 10 and 60000, got 0'],
    ['600000', 'OMS_POLL_MS must be between 10 and 60000, got 600000'],
  ])('refuses OMS_POLL_MS=%s', (value, message) => {
    expect(() => loadConfig({ OMS_POLL_MS: value })).toThrow(new ConfigError(message));
  });

  it.each([
    ['30s', 'OMS_LEASE_MS must be a whole number, got "30s"'],
    ['999', 'OMS_LEASE_MS must be between 1000 and 3600000, got 999'],
  ])('refuses OMS_LEASE_MS=%s', (value, message) => {
    expect(() => loadConfig({ OMS_LEASE_MS: value })).toThrow(new ConfigError(message));
  });
});
