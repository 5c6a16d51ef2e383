/**
 * Operator metrics and health, through the real start-up (startServer with the environment's settings):
 * /metrics on its own listener (METRICS_PORT, loopback, METRICS_TOKEN) in Prometheus's text format with
 * the request, order-entry, OMS and stream series moving as the server works; the API's port has no
 * /metrics; /health/live, /health/ready and /health/oms on both ports, without a token.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { AdminService } from '../../src/services/admin.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { openIssue, TEST_PASSWORD, validBid } from '../support/server.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { openEventStream } from '../support/sse.js';
import { testMemberData } from '../support/member-data.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789abcdef';
const PLACE_ROUTE = '/transactional/v1/orders/regular';

/** One sample of the Prometheus text format: its name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition text strictly: every line is a comment (HELP, TYPE) or a well-formed sample. */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a Prometheus line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g))
      labels[key!] = value!;
    // Prometheus reads values as Go's ParseFloat does: NaN in any case (prom-client writes "Nan"), +Inf, -Inf.
    const value = sample[3] === '+Inf' ? Infinity : sample[3] === '-Inf' ? -Infinity : Number(sample[3]);
    if (Number.isNaN(value) && sample[3]!.toLowerCase() !== 'nan') throw new Error(`not a number: ${line}`);
    samples.push({ name: sample[1]!, labels, value });
  }
  return { samples, types };
}

/** The value of the one sample with this name and (at least) these labels; undefined when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

describe('operator metrics and health', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let token: string;
  let apiKey: string;

  const scrape = async (authorization: string | null = `Bearer ${TOKEN}`) =>
    fetch(`${server.metricsUrl}/metrics`, { headers: authorization === null ? {} : { authorization } });
  const samples = async () => {
    const response = await scrape();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await response.text());
  };
  const placeBid = () =>
    fetch(`${server.url}${PLACE_ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-api-key': apiKey },
      body: JSON.stringify(validBid()),
    });

  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_metrics');
    const config = loadConfig({
      DATABASE_URL: database.databaseUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
      OMS_POLL_MS: '20',
      RATE_LIMIT_ORDERS_PER_SECOND: '0',
    });
    server = await startServer(config, pino({ level: 'silent' }));
    const admin = new AdminService(
      new UserRepository(server.store.db, server.store.dialect),
      new OfsOfferRepository(server.store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    );
    await admin.addUser('metrics1', TEST_PASSWORD, { category: 'NON_RETAIL', member: testMemberData('metrics1') });
    ({ apiKey } = await admin.createApiKey('metrics1'));
    await new OfsIssueRepository(server.store.db).upsert([openIssue(Date.now())], Date.now());
    const login = await fetch(`${server.url}/authentication/v1/user/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'metrics1',
        login_type: 'PASSWORD',
        password: TEST_PASSWORD,
        second_auth_type: '',
        second_auth: '',
        api_key: apiKey,
        source: 'WEBAPI',
      }),
    });
    token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  });

  afterAll(async () => {
    await server?.stop();
    await database?.dispose();
  });

  it('serves /metrics on its own listener, bound to loopback, and not on the API port', async () => {
    expect(server.metricsUrl).not.toBeNull();
    expect(new URL(server.metricsUrl!).hostname).toBe('127.0.0.1');
    expect(new URL(server.metricsUrl!).port).not.toBe(new URL(server.url).port);
    const onApi = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(onApi.status).toBe(404);
    expect(await onApi.json()).toMatchObject({ status: 'error', code: 'e-109', request_id: expect.any(String) });
  });

  it('refuses a scrape without METRICS_TOKEN or with another token, in the error envelope', async () => {
    for (const [authorization, code] of [
      [null, 'e-201'],
      ['Bearer wrong-token', 'e-202'],
      [`Bearer ${TOKEN}x`, 'e-202'],
      [TOKEN, 'e-202'],
    ] as const) {
      const response = await scrape(authorization);
      expect(response.status, String(authorization)).toBe(401);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'error', code, errors: [], request_id: expect.any(String) });
      expect(response.headers.get('request-id')).toBe(body.request_id);
      expect(JSON.stringify(body)).not.toContain('ordergate_');
    }
  });

  it('counts placed bids per route and status, their batches and commits, and the OMS calls they cause', async () => {
    const before = (await samples()).samples;
    const placeCount = (s: Sample[]) =>
      valueOf(s, 'ordergate_http_request_duration_seconds_count', {
        route: PLACE_ROUTE,
        method: 'POST',
        status_code: '200',
      }) ?? 0;
    const bids = 7;
    const answers = await Promise.all(Array.from({ length: bids }, () => placeBid()));
    expect(answers.map((a) => a.status)).toEqual(Array(bids).fill(200));
    // A refused bid is counted under its own status.
    const refused = await fetch(`${server.url}${PLACE_ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-api-key': apiKey },
      body: '{',
    });
    expect(refused.status).toBe(400);

    const { samples: after, types } = await samples();
    expect(placeCount(after) - placeCount(before)).toBe(bids);
    expect(
      valueOf(after, 'ordergate_http_request_duration_seconds_count', {
        route: PLACE_ROUTE,
        method: 'POST',
        status_code: '400',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(types.get('ordergate_http_request_duration_seconds')).toBe('histogram');
    // The route's pattern, never a raw URL: an unknown path is one label.
    await fetch(`${server.url}/no/such/path/${Date.now()}`);
    const routes = new Set(
      (await samples()).samples
        .filter((s) => s.name === 'ordergate_http_request_duration_seconds_count')
        .map((s) => s.labels.route),
    );
    expect(routes).toContain('unmatched');
    expect([...routes].filter((route) => route!.startsWith('/no/'))).toEqual([]);

    // Order entry: at least one batch, holding the bids.
    const batches = valueOf(after, 'ordergate_order_entry_batch_size_count')!;
    expect(batches).toBeGreaterThan(0);
    expect(valueOf(after, 'ordergate_order_entry_batch_size_sum')).toBeGreaterThanOrEqual(bids);
    expect(valueOf(after, 'ordergate_order_entry_commit_duration_seconds_count', { outcome: 'committed' })).toBe(
      batches,
    );

    // The embedded OMS sends them to the exchange, and its outbox empties.
    let oms: Sample[] = [];
    await expect
      .poll(
        async () => {
          oms = (await samples()).samples;
          return valueOf(oms, 'ordergate_oms_outbox_open_entries');
        },
        { timeout: 10_000 },
      )
      .toBe(0);
    expect(valueOf(oms, 'ordergate_oms_outbox_oldest_age_seconds')).toBe(0);
    expect(
      valueOf(oms, 'ordergate_oms_exchange_call_duration_seconds_count', { operation: 'place_bids', outcome: 'ok' }),
    ).toBeGreaterThan(0);
    expect(valueOf(oms, 'ordergate_oms_pass_failures_total')).toBe(0);
    expect(valueOf(oms, 'ordergate_webhook_pass_failures_total')).toBe(0);
    expect(valueOf(oms, 'ordergate_database_unavailable_total')).toBe(0);
    // Node's own figures, on the same registry.
    expect(valueOf(oms, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(oms, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('reports the outbox backlog and its age while the OMS has not taken it', async () => {
    await server.oms!.stop();
    try {
      const before = valueOf((await samples()).samples, 'ordergate_oms_outbox_open_entries')!;
      const placed = await placeBid();
      expect(placed.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { samples: now } = await samples();
      expect(valueOf(now, 'ordergate_oms_outbox_open_entries')).toBe(before + 1);
      expect(valueOf(now, 'ordergate_oms_outbox_oldest_age_seconds')).toBeGreaterThan(0.04);
    } finally {
      server.oms!.start();
    }
  });

  it('shows an open event stream in the stream gauge, and its close', async () => {
    const openStreams = async () => valueOf((await samples()).samples, 'ordergate_streams_open');
    expect(await openStreams()).toBe(0);
    const stream = await openEventStream(server.url, token);
    expect(stream.response.status).toBe(200);
    expect(await openStreams()).toBe(1);
    stream.close();
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0);
    expect(valueOf((await samples()).samples, 'ordergate_streams_refused_total', { limit: 'user' })).toBe(0);
  });

  it('answers /health/live, /health/ready and /health/oms 200 without a token, on both ports (ready with the exchange links)', async () => {
    for (const base of [server.url, server.metricsUrl!]) {
      const live = await fetch(`${base}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      // Ready names this node's exchange links (the simulator's, over loopback: test/oms/link-health.test.ts).
      const ready = await fetch(`${base}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: 'ok',
        exchanges: [{ exchange: 'NSE_EQ' }, { exchange: 'BSE_EQ' }],
      });
      const oms = await fetch(`${base}/health/oms`);
      expect(oms.status).toBe(200);
      expect(await oms.json()).toEqual({ status: 'ok', set_aside: [] });
    }
  });

  it('documents the health routes in the OpenAPI document', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    };
    for (const path of ['/health/live', '/health/ready', '/health/oms', '/health/exchanges']) {
      expect(Object.keys(document.paths[path]?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '503']));
    }
    expect(document.paths['/metrics']).toBeUndefined();
  });
});

describe('metrics settings', () => {
  const base = { DATABASE_URL: 'sqlite::memory:' };

  it('binds the metrics listener to loopback unless told otherwise, and only with METRICS_PORT', () => {
    expect(loadConfig(base).metrics).toEqual({ port: null, host: '127.0.0.1', token: null });
    expect(loadConfig({ ...base, METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
      token: null,
    });
  });

  it('stops the start when the metrics listener would be reachable beyond this machine without a token', () => {
    expect(() => loadConfig({ ...base, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' })).toThrow(/METRICS_TOKEN/);
    expect(
      loadConfig({ ...base, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: TOKEN }).metrics,
    ).toEqual({
      port: 9464,
      host: '0.0.0.0',
      token: TOKEN,
    });
  });

  it('refuses a bad port, host or token, and a host or token without a port, with a one-line reason', () => {
    for (const env of [
      { METRICS_PORT: '70000' },
      { METRICS_PORT: 'abc' },
      { METRICS_PORT: '9464', METRICS_HOST: 'metrics.local' },
      { METRICS_PORT: '9464', METRICS_TOKEN: 'short' },
      { METRICS_PORT: '9464', METRICS_TOKEN: `${TOKEN} with spaces` },
      { METRICS_TOKEN: TOKEN },
      { METRICS_HOST: '127.0.0.1' },
    ]) {
      expect(() => loadConfig({ ...base, ...env }), JSON.stringify(env)).toThrow(ConfigError);
      try {
        loadConfig({ ...base, ...env });
      } catch (error) {
        expect((error as Error).message).not.toContain('\n');
      }
    }
  });
});
