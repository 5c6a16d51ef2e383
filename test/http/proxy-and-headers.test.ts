/**
 * TRUST_PROXY (whose X-Forwarded-For names the client) and the Content-Security-Policy of the API and of
 * the docs page (issue 12, findings 10 and 13).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import helmet from 'helmet';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { securityHeaders } from '../../src/http/plugins/security-headers.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const login = (s: TestServer, forwardedFor: string) =>
  s.call('POST', '/authentication/v1/user/session', {
    body: {
      user_id: 'NOBODY',
      login_type: 'PASSWORD',
      password: 'wrong-password',
      second_auth_type: '',
      second_auth: '',
      api_key: '',
      source: 'WEBAPI',
    },
    headers: { 'x-forwarded-for': forwardedFor },
  });

describe('TRUST_PROXY', () => {
  it('reads false by default, true, and lists of addresses, CIDR ranges and proxy-addr names', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.1, 10.1.0.0/16,fd00::/8 ,loopback' }).trustProxy).toBe(
      '10.0.0.1,10.1.0.0/16,fd00::/8,loopback',
    );
  });

  it.each(['2', 'proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/1', '::1/129', '10.0.0.1,'])(
    'refuses %j with a line naming the setting',
    (value) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^TRUST_PROXY must be/);
    },
  );

  it('behind a named proxy, the per-address login limit counts each forwarded client apart', async () => {
    server = await startTestServer({ rateLimits: { loginsPerMinutePerAddress: 2 }, trustProxy: '127.0.0.1' });
    for (const client of ['203.0.113.7', '203.0.113.8']) {
      expect((await login(server, client)).status).toBe(401);
      expect((await login(server, client)).status).toBe(401);
    }
    const third = await login(server, '203.0.113.7');
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('e-429');
  });

  it('without it, X-Forwarded-For is ignored: a client cannot pick a fresh address per attempt', async () => {
    server = await startTestServer({ rateLimits: { loginsPerMinutePerAddress: 2 } });
    expect((await login(server, '203.0.113.7')).status).toBe(401);
    expect((await login(server, '203.0.113.8')).status).toBe(401);
    const third = await login(server, '203.0.113.9');
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('e-429');
  });
});

describe('limit settings', () => {
  it('an access token lives at most a week', () => {
    expect(loadConfig({ TOKEN_TTL_SECONDS: '604800' }).tokenTtlSeconds).toBe(604800);
    expect(() => loadConfig({ TOKEN_TTL_SECONDS: '604801' })).toThrow(
      'TOKEN_TTL_SECONDS must be between 1 and 604800, got 604801',
    );
  });

  it('read the caps, the login API key and static IP rules and the shedding thresholds, with their defaults', () => {
    expect(loadConfig({}).limits).toEqual({
      streamsPerUser: 10,
      streamsPerNode: 2000,
      pendingSocketsPerNode: 200,
      pendingSocketsPerAddress: 10,
      cartsPerUser: 100,
      cartExecutionsPerUser: 2,
      loginRequiresApiKey: false,
      staticIpRequired: false,
      secondFactorRequired: false,
      secondFactorBackoffAfter: 3,
      secondFactorBackoffMaxSeconds: 300,
      secondFactorLockoutAfter: 10,
    });
    expect(loadConfig({}).shedding).toEqual({ eventLoopDelayMs: 1000, commitWaitMs: 2000 });
    const config = loadConfig({
      MAX_STREAMS_PER_USER: '3',
      MAX_STREAMS_PER_NODE: '50',
      MAX_PENDING_SOCKETS_PER_NODE: '20',
      MAX_PENDING_SOCKETS_PER_ADDRESS: '2',
      MAX_CARTS_PER_USER: '7',
      MAX_CART_EXECUTIONS_PER_USER: '5',
      LOGIN_REQUIRES_API_KEY: 'true',
      STATIC_IP_REQUIRED: 'true',
      LOGIN_SECOND_FACTOR_REQUIRED: 'true',
      LOGIN_SECOND_FACTOR_BACKOFF_AFTER: '2',
      LOGIN_SECOND_FACTOR_BACKOFF_MAX_SECONDS: '60',
      LOGIN_SECOND_FACTOR_LOCKOUT_AFTER: '5',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      SHED_COMMIT_WAIT_MS: '500',
    });
    expect(config.limits).toEqual({
      streamsPerUser: 3,
      streamsPerNode: 50,
      pendingSocketsPerNode: 20,
      pendingSocketsPerAddress: 2,
      cartsPerUser: 7,
      cartExecutionsPerUser: 5,
      loginRequiresApiKey: true,
      staticIpRequired: true,
      secondFactorRequired: true,
      secondFactorBackoffAfter: 2,
      secondFactorBackoffMaxSeconds: 60,
      secondFactorLockoutAfter: 5,
    });
    expect(() => loadConfig({ LOGIN_SECOND_FACTOR_LOCKOUT_AFTER: '0' })).toThrow(
      'LOGIN_SECOND_FACTOR_LOCKOUT_AFTER must be between 1 and 1000, got 0',
    );
    expect(() => loadConfig({ STATIC_IP_REQUIRED: 'yes' })).toThrow(/STATIC_IP_REQUIRED/);
    expect(() => loadConfig({ MAX_PENDING_SOCKETS_PER_ADDRESS: '0' })).toThrow(
      'MAX_PENDING_SOCKETS_PER_ADDRESS must be between 1 and 1000000, got 0',
    );
    expect(config.shedding).toEqual({ eventLoopDelayMs: 0, commitWaitMs: 500 });
    expect(() => loadConfig({ MAX_CARTS_PER_USER: '0' })).toThrow(
      'MAX_CARTS_PER_USER must be between 1 and 1000000, got 0',
    );
    expect(() => loadConfig({ MAX_CART_EXECUTIONS_PER_USER: '0' })).toThrow(
      'MAX_CART_EXECUTIONS_PER_USER must be between 1 and 1000, got 0',
    );
    expect(() => loadConfig({ LOGIN_REQUIRES_API_KEY: 'yes' })).toThrow(
      'LOGIN_REQUIRES_API_KEY must be true or false, got "yes"',
    );
  });
});

describe("SEBI's algo settings", () => {
  it('are off by default, with a threshold of 10', () => {
    expect(loadConfig({}).algo).toEqual({ genericIds: null, thresholdPerSecond: 10 });
  });

  it('read one generic algo ID for both segments, or one per segment, and say what is wrong with any other', () => {
    expect(loadConfig({ ALGO_GENERIC_ID: '99999' }).algo.genericIds).toEqual({ NSE_EQ: '99999', BSE_EQ: '99999' });
    expect(loadConfig({ ALGO_GENERIC_ID: 'NSE_EQ=11,BSE_EQ=22', ALGO_THRESHOLD_ORDERS_PER_SECOND: '5' }).algo).toEqual({
      genericIds: { NSE_EQ: '11', BSE_EQ: '22' },
      thresholdPerSecond: 5,
    });
    expect(() => loadConfig({ ALGO_GENERIC_ID: 'NSE_EQ=11' })).toThrow(
      'ALGO_GENERIC_ID names no generic algo ID for BSE_EQ, got "NSE_EQ=11"',
    );
    expect(() => loadConfig({ ALGO_GENERIC_ID: 'a b' })).toThrow(/^ALGO_GENERIC_ID must be an algo ID/);
    expect(() => loadConfig({ ALGO_THRESHOLD_ORDERS_PER_SECOND: '0' })).toThrow(
      'ALGO_THRESHOLD_ORDERS_PER_SECOND must be between 1 and 1000, got 0',
    );
  });
});

describe('Content-Security-Policy', () => {
  it('the fixed set of security headers is what helmet sets on a real answer, header for header', async () => {
    const options = { contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"] } } };
    const middleware = helmet(options);
    const bare = createServer((request, response) => middleware(request, response, () => response.end()));
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/`);
      const fromHelmet = Object.fromEntries(
        [...answer.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(name)),
      );
      expect(Object.keys(fromHelmet).length).toBeGreaterThanOrEqual(10);
      expect({ ...securityHeaders(options) }).toEqual(fromHelmet);
    } finally {
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('refuses a Content-Security-Policy directive given as a function (a nonce), which no fixed set can carry', () => {
    const nonce = () => `'nonce-${Math.random()}'`;
    expect(() =>
      securityHeaders({
        contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], scriptSrc: [nonce] } },
      }),
    ).toThrow(/changes per request/);
  });

  it('a refusal carries the security headers too (the 401 of a bid without credentials)', async () => {
    server = await startTestServer();
    const answer = await server.call('POST', '/transactional/v1/orders/regular', { body: {} });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('strict-transport-security')).toMatch(/^max-age=/);
    expect(answer.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(answer.headers.get('content-security-policy')).toBe(
      "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
    );
  });

  it('API answers (success, error, 404) allow nothing to load and nothing to frame them', async () => {
    server = await startTestServer();
    for (const path of ['/openapi.json', '/transactional/v1/orders', '/no/such/route']) {
      const answer = await server.call('GET', path);
      expect(answer.headers.get('content-security-policy'), path).toBe(
        "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
      );
      expect(answer.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('the docs page loads its scripts and styles from this server only, with no inline script and no upgrade to https', async () => {
    server = await startTestServer();
    const page = await server.call('GET', '/docs/');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toContain('upgrade-insecure-requests');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    // Every script of the page is a file of this server, which the policy allows.
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\.?\/?[^":]+"/);
      expect(body!.trim()).toBe('');
    }
  });
});
