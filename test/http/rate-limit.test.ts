/**
 * Rate limits (product.md "Several nodes, retries and faults"; docs/design/rate-limits.md): order-entry
 * calls per user per second, in memory and shared through Redis, and login attempts per user id and per
 * client address.
 *
 * Real time, and no assertion that a slow machine could break: a call is admitted somewhere between its
 * sending and its answer, so "more than N accepted within one second" is asserted only from calls whose
 * sending-to-answer span proves it, and "the next call is refused" only for bursts that provably fell within
 * one second (a burst that did not is tried again with a fresh user).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Errors } from '../../src/domain/errors.js';
import { SharedCallLog } from '../../src/rate-limit/call-logs.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { RedisLink } from '../../src/rate-limit/redis-link.js';
import { recordingLogger } from '../oms/fixture.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { TEST_REDIS_URL, uniqueRedisPrefix, withRedis } from '../support/redis.js';
import {
  startTestServer,
  TEST_PASSWORD,
  validBid,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const LOGIN = '/authentication/v1/user/session';
const LIMIT = 10;
const redisRuns = await withRedis();

interface Timed {
  res: CallResult;
  sent: number;
  received: number;
}

async function timed(call: () => Promise<CallResult>): Promise<Timed> {
  const sent = performance.now();
  const res = await call();
  return { res, sent, received: performance.now() };
}

const sleepUntil = (instant: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, instant - performance.now())));

let userCount = 0;
const newUser = (server: TestServer) => server.createUser(`rl${++userCount}`, { category: 'NON_RETAIL' });

function placeBid(server: TestServer, user: TestUser, n: number): Promise<Timed> {
  return timed(() =>
    server.call('POST', PLACE_ORDER, {
      body: validBid({ order_identifier: `b${n}` }),
      token: user.token,
      apiKey: user.apiKey,
    }),
  );
}

/**
 * `attempt` sends a sequence of calls with a fresh user; answers the first sequence that went from its
 * first sending to its last answer in under a second. A machine that cannot do that in 5 tries fails here,
 * saying so (it could not show the refusal, which is different from a limit that does not hold).
 */
async function withinOneSecond(attempt: () => Promise<Timed[]>): Promise<Timed[]> {
  for (let i = 0; i < 5; i += 1) {
    const calls = await attempt();
    if (calls.at(-1)!.received - calls[0]!.sent < 1000) return calls;
  }
  throw new Error('5 sequences of calls each took a second or more: this machine is too slow to show the refusal');
}

/**
 * More than `max` calls that were certainly accepted within one second of each other (each was admitted
 * between its sending and its answer), or undefined when there are none.
 */
function overLimit(calls: Timed[], max: number): Timed[] | undefined {
  const accepted = calls.filter((c) => c.res.status === 200);
  for (const first of accepted) {
    const group = accepted
      .filter((c) => c.sent >= first.sent)
      .sort((a, b) => a.received - b.received)
      .slice(0, max + 1);
    if (group.length === max + 1 && group.at(-1)!.received - first.sent < 1000) return group;
  }
  return undefined;
}

function expectRateLimited(res: CallResult, limit: number): number {
  expect(res.status, res.text).toBe(429);
  expect(res.body).toMatchObject({ status: 'error', code: Errors.RATE_LIMITED.code, errors: [] });
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
  const retryAfter = res.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(res.headers.get('x-ratelimit-reset')).toMatch(/^[1-9]\d*$/);
  return Number(retryAfter);
}

const stores = [
  { name: 'in memory', redis: false },
  { name: 'in Redis', redis: true },
];

describe.each(stores)('order entry limited to 10 calls per user in any one second, counted $name', ({ redis }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: {
        ordersPerSecond: LIMIT,
        ...(redis && { redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() }),
      },
    });
    await server.registerIssue();
  });
  afterAll(() => server?.close());

  it.skipIf(redis && !redisRuns)(
    'accepts 10, refuses the 11th within the second (429 e-429, Retry-After, headers), accepts again after Retry-After; user B is unaffected',
    async () => {
      let user!: TestUser;
      const calls = await withinOneSecond(async () => {
        user = await newUser(server);
        const sequence: Timed[] = [];
        for (let i = 0; i <= LIMIT; i += 1) sequence.push(await placeBid(server, user, i));
        return sequence;
      });
      calls.slice(0, LIMIT).forEach(({ res }, i) => {
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1 - i));
        expect(res.headers.get('x-ratelimit-reset')).toMatch(/^[1-9]\d*$/);
      });
      const refused = calls[LIMIT]!;
      const retryAfter = expectRateLimited(refused.res, LIMIT);
      expect(refused.res.body.message).toMatch(/at most 10 a second per user/);
      const stored = await server.store.db
        .selectFrom('orders')
        .select('order_id')
        .where('user_id', '=', user.userId)
        .execute();
      expect(stored).toHaveLength(LIMIT);

      const other = await newUser(server);
      const otherCall = await placeBid(server, other, 0);
      expect(otherCall.res.status, otherCall.res.text).toBe(200);
      expect(otherCall.res.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));

      // Retry-After is a promise: by then the oldest accepted call has left the window.
      await sleepUntil(refused.received + retryAfter * 1000 + 50);
      const again = await placeBid(server, user, 99);
      expect(again.res.status, again.res.text).toBe(200);
    },
  );

  it.skipIf(redis && !redisRuns)(
    'never accepts more than 10 in any one second, also across the edge of a second (a fixed window would take 20)',
    async () => {
      const user = await newUser(server);
      const burst = (from: number) =>
        Promise.all(Array.from({ length: 2 * LIMIT }, (_, i) => placeBid(server, user, from + i)));
      const start = performance.now();
      const calls = [await placeBid(server, user, 0)];
      // Near the end of the first second, then just after it: a window that restarts there takes 2 x 10.
      await sleepUntil(start + 800);
      const nearEdge = await burst(100);
      await sleepUntil(start + 1050);
      calls.push(...nearEdge, ...(await burst(200)));

      for (const { res } of calls) if (res.status !== 200) expectRateLimited(res, LIMIT);
      expect(overLimit(calls, LIMIT)).toBeUndefined();
      expect(calls.filter((c) => c.res.status === 200).length).toBeGreaterThanOrEqual(LIMIT);
      // 20 calls that provably fell within one second cannot all be accepted.
      if (Math.max(...nearEdge.map((c) => c.received)) - calls[0]!.sent < 1000)
        expect(nearEdge.filter((c) => c.res.status === 429).length).toBeGreaterThanOrEqual(LIMIT);
    },
  );

  it.skipIf(redis && !redisRuns)(
    'counts the calls later refused with 4xx (bad body, unknown cart) on both order-entry routes, not the ones refused by auth',
    async () => {
      const calls = await withinOneSecond(async () => {
        const user = await newUser(server);
        const sequence: Timed[] = [];
        // Refused by auth before counting: these do not use up the allowance.
        for (let i = 0; i < 5; i += 1) {
          sequence.push(
            await timed(() =>
              server.call('POST', PLACE_ORDER, { body: validBid(), token: user.token, apiKey: 'not-a-key' }),
            ),
          );
        }
        for (let i = 0; i < 5; i += 1) {
          sequence.push(
            await timed(() =>
              server.call('POST', PLACE_ORDER, {
                body: validBid({ quantity: 10 }),
                token: user.token,
                apiKey: user.apiKey,
              }),
            ),
          );
        }
        for (let i = 0; i < 4; i += 1) {
          sequence.push(
            await timed(() =>
              server.call('POST', '/transactional/v1/ordercart/999999/execute', {
                token: user.token,
                apiKey: user.apiKey,
              }),
            ),
          );
        }
        sequence.push(await placeBid(server, user, 1), await placeBid(server, user, 2));
        return sequence;
      });
      const statuses = calls.map((c) => c.res.status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5, 10)).toEqual([400, 400, 400, 400, 400]);
      expect(statuses.slice(10, 14)).toEqual([404, 404, 404, 404]);
      expect(calls[14]!.res.status, calls[14]!.res.text).toBe(200);
      expectRateLimited(calls[15]!.res, LIMIT);
    },
  );
});

describe('RATE_LIMIT_ORDERS_PER_SECOND=0', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { ordersPerSecond: 0 } });
    await server.registerIssue();
  });
  afterAll(() => server?.close());

  it('turns the limit off: 50 bids sent at once by one user are all accepted, without rate-limit headers', async () => {
    const user = await newUser(server);
    const calls = await Promise.all(Array.from({ length: 50 }, (_, i) => placeBid(server, user, i)));
    for (const { res } of calls) {
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

describe('RATE_LIMIT_CART_WRITES_PER_SECOND', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { cartWritesPerSecond: 3 } });
    await server.registerIssue();
  });
  afterAll(() => server?.close());

  const cartBody = (user: TestUser, name: string) => ({
    ordercartName: name,
    orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
    version: '1',
    createdBy: user.userId,
    modifiedBy: user.userId,
    executedNoTime: 0,
  });

  it('counts creates, updates and deletes of one user together: the 4th in a second is refused with 429 e-429 and stores nothing; reads, other users and order entry are not counted', async () => {
    const user = await newUser(server);
    const other = await newUser(server);
    // The three writes and the refused ones first, back to back: well within one second on any machine.
    const created = await server.call('POST', '/transactional/v1/ordercart', {
      body: cartBody(user, 'c1'),
      token: user.token,
      headers: { 'idempotency-key': 'k-1' },
    });
    const id = created.body.data.ordercartId as string;
    const updated = await server.call('PUT', '/transactional/v1/ordercart', {
      body: { ...cartBody(user, 'c1 renamed'), ordercartId: id },
      token: user.token,
    });
    const second = await server.call('POST', '/transactional/v1/ordercart', {
      body: cartBody(user, 'c2'),
      token: user.token,
      headers: { 'idempotency-key': 'k-2' },
    });
    const refused = await server.call('POST', '/transactional/v1/ordercart', {
      body: cartBody(user, 'c3'),
      token: user.token,
      headers: { 'idempotency-key': 'k-3' },
    });
    const refusedDelete = await server.call('DELETE', `/transactional/v1/ordercart/${id}`, { token: user.token });
    // While the user's second is full: reads, another user's write and the user's order entry still pass.
    const read = await server.call('GET', `/transactional/v1/ordercart/${id}`, { token: user.token });
    const othersWrite = await server.call('POST', '/transactional/v1/ordercart', {
      body: cartBody(other, 'theirs'),
      token: other.token,
    });
    const execution = await server.call('POST', `/transactional/v1/ordercart/${id}/execute`, {
      token: user.token,
      apiKey: user.apiKey,
    });

    expect([created, updated, second].map((res) => res.status)).toEqual([200, 200, 200]);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toMatchObject({
      status: 'error',
      code: 'e-429',
      message: expect.stringMatching(
        /^Too many cart changes: at most 3 creates, updates and deletes a second per user; retry after \d+ s$/,
      ),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refusedDelete.status, refusedDelete.text).toBe(429);
    expect([read.status, othersWrite.status, execution.status]).toEqual([200, 200, 200]);
    // The refusals stored nothing: two carts, no answer kept under the refused create's key.
    expect(
      await server.store.db
        .selectFrom('order_carts')
        .select('name')
        .where('user_id', '=', user.userId)
        .orderBy('name')
        .execute(),
    ).toEqual([{ name: 'c1 renamed' }, { name: 'c2' }]);
    expect(
      await server.store.db
        .selectFrom('idempotency_keys')
        .select('idempotency_key')
        .where('idempotency_key', '=', 'k-3')
        .execute(),
    ).toEqual([]);

    // The next second takes them again.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await server.call('DELETE', `/transactional/v1/ordercart/${id}`, { token: user.token })).status).toBe(200);
  });
});

describe.skipIf(!redisRuns)('two nodes with one REDIS_URL', () => {
  let database: TestDatabase;
  let nodes: TestServer[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_ratelimit');
    const rateLimits = { ordersPerSecond: LIMIT, redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() };
    const first = await startTestServer({ databaseUrl: database.databaseUrl, rateLimits });
    nodes = [first, await startTestServer({ databaseUrl: database.databaseUrl, rateLimits })];
    await first.registerIssue();
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database?.dispose();
  });

  it('share the count of each user: 5 calls to one and 5 to the other use up the second, on both', async () => {
    const calls = await withinOneSecond(async () => {
      const user = await newUser(nodes[0]!);
      const sequence: Timed[] = [];
      for (let i = 0; i < LIMIT; i += 1) sequence.push(await placeBid(nodes[i % 2]!, user, i));
      sequence.push(await placeBid(nodes[0]!, user, 50), await placeBid(nodes[1]!, user, 51));
      return sequence;
    });
    calls.slice(0, LIMIT).forEach(({ res }, i) => {
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1 - i));
    });
    expectRateLimited(calls[LIMIT]!.res, LIMIT);
    expectRateLimited(calls[LIMIT + 1]!.res, LIMIT);
  });
});

/** The names of the complete RESP commands at the start of `buffer`, and what is left of it. */
function respCommands(buffer: string): { names: string[]; rest: string } {
  const names: string[] = [];
  let rest = buffer;
  for (;;) {
    const header = /^\*(\d+)\r\n/.exec(rest);
    if (!header) return { names, rest };
    let at = header[0].length;
    const args: string[] = [];
    for (let i = 0; i < Number(header[1]); i += 1) {
      const bulk = /^\$(\d+)\r\n/.exec(rest.slice(at));
      if (!bulk || rest.length < at + bulk[0].length + Number(bulk[1]) + 2) return { names, rest };
      at += bulk[0].length;
      args.push(rest.slice(at, at + Number(bulk[1])));
      at += Number(bulk[1]) + 2;
    }
    names.push(args[0]!.toLowerCase());
    rest = rest.slice(at);
  }
}

/** A TCP server that answers Redis's connection handshake (CLIENT, INFO), then nothing: a hung Redis. */
async function hungRedis(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const fake: Server = createServer((socket) => {
    sockets.add(socket);
    let buffer = '';
    socket.on('data', (data) => {
      const { names, rest } = respCommands(buffer + String(data));
      buffer = rest;
      for (const name of names) {
        const info = 'redis_version:7.0.0\r\nloading:0\r\n';
        if (name === 'info') socket.write(`$${info.length}\r\n${info}\r\n`);
        else if (name === 'client') socket.write('+OK\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const { port } = fake.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => fake.close(() => resolve()));
    },
  };
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('a REDIS_URL that cannot be reached', () => {
  it('does not stop order entry: each node counts alone, and the 11th call within the second is still refused', async () => {
    const server = await startTestServer({
      rateLimits: { ordersPerSecond: LIMIT, redisUrl: `redis://127.0.0.1:${await closedPort()}` },
    });
    try {
      await server.registerIssue();
      const calls = await withinOneSecond(async () => {
        const user = await newUser(server);
        const sequence: Timed[] = [];
        for (let i = 0; i <= LIMIT; i += 1) sequence.push(await placeBid(server, user, i));
        return sequence;
      });
      for (const { res } of calls.slice(0, LIMIT)) expect(res.status, res.text).toBe(200);
      expectRateLimited(calls[LIMIT]!.res, LIMIT);
    } finally {
      await server.close();
    }
  });

  it('a Redis that stops answering once connected: each call is decided locally after the command timeout, and the change is logged once', async () => {
    const fake = await hungRedis();
    const { logger, lines } = recordingLogger();
    const link = new RedisLink(fake.url, logger);
    const shared = new SharedCallLog(link, uniqueRedisPrefix());
    try {
      await link.connect();
      expect(link.sharing, JSON.stringify(lines())).toBe(true);
      const decisions = [];
      // A one-minute window, so that the command timeouts cannot move a call out of it.
      for (let i = 0; i < 3; i += 1) decisions.push(await shared.admit('orders:u1', 60_000, 2));
      expect(decisions.map((d) => d.accepted)).toEqual([true, true, false]);
      expect(link.sharing).toBe(false);
      const warnings = lines().filter((line) => line.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        msg: expect.stringMatching(/rate limits and login failures are counted per node/),
        err: { message: 'Command timed out' },
      });
    } finally {
      await link.close();
      await fake.close();
    }
  });
});

describe('login attempts', () => {
  const login = (server: TestServer, userId: string, password = 'wrong-password-1') =>
    server.call('POST', LOGIN, {
      body: {
        user_id: userId,
        login_type: 'PASSWORD',
        password,
        second_auth_type: '',
        second_auth: '',
        source: 'WEBAPI',
      },
    });

  it('per user id (RATE_LIMIT_LOGINS_PER_MINUTE): the 4th attempt in a minute is refused even with the right password; another user id still logs in', async () => {
    const server = await startTestServer({ rateLimits: { loginsPerMinutePerUser: 3 } });
    try {
      await server.admin.addUser('victim', TEST_PASSWORD);
      await server.admin.addUser('bystander', TEST_PASSWORD);
      for (let i = 0; i < 3; i += 1) expect((await login(server, 'victim')).body.code).toBe(Errors.LOGIN_FAILED.code);
      const refused = await login(server, 'victim', TEST_PASSWORD);
      const retryAfter = expectRateLimited(refused, 3);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body.message).toMatch(/login attempts for this user_id: at most 3 a minute/);
      expect((await login(server, 'bystander', TEST_PASSWORD)).status).toBe(200);
      // A body whose user_id the schema refuses is not counted for any user id, and answers 400.
      expect(
        (await server.call('POST', LOGIN, { body: { user_id: 7, login_type: 'PASSWORD', password: 'x' } })).status,
      ).toBe(400);
    } finally {
      await server.close();
    }
  });

  it('per client address (RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS): the 4th attempt from one address is refused whatever the user id', async () => {
    const server = await startTestServer({ rateLimits: { loginsPerMinutePerAddress: 3 } });
    try {
      await server.admin.addUser('alice', TEST_PASSWORD);
      expect((await login(server, 'alice', TEST_PASSWORD)).status).toBe(200);
      expect((await login(server, 'bob')).status).toBe(401);
      expect((await login(server, 'carol')).status).toBe(401);
      const refused = await login(server, 'alice', TEST_PASSWORD);
      expectRateLimited(refused, 3);
      expect(refused.body.message).toMatch(/login attempts from this address: at most 3 a minute/);
    } finally {
      await server.close();
    }
  });

  it('is counted in Redis too, for all nodes', async ({ skip }) => {
    if (!redisRuns) skip();
    const rateLimits = { loginsPerMinutePerUser: 2, redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() };
    const database = await createMigratedTestDatabase('ordergate_ratelimit');
    const nodes = [await startTestServer({ databaseUrl: database.databaseUrl, rateLimits })];
    try {
      nodes.push(await startTestServer({ databaseUrl: database.databaseUrl, rateLimits }));
      await nodes[0]!.admin.addUser('dave', TEST_PASSWORD);
      expect((await login(nodes[0]!, 'dave')).status).toBe(401);
      expect((await login(nodes[1]!, 'dave')).status).toBe(401);
      expectRateLimited(await login(nodes[0]!, 'dave', TEST_PASSWORD), 2);
    } finally {
      for (const node of nodes) await node.close();
      await database.dispose();
    }
  });
});

describe('rate-limit settings', () => {
  it('default to 10 order-entry calls a second, 10 logins a minute per user id and 100 per address, counted per node', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      ordersPerSecond: 10,
      cartWritesPerSecond: 10,
      loginsPerMinutePerUser: 10,
      loginsPerMinutePerAddress: 100,
      loginBackoffAfterFailures: 5,
      loginBackoffMaxSeconds: 900,
      redisUrl: null,
    });
  });

  it('read RATE_LIMIT_* (0 turns a limit off) and REDIS_URL', () => {
    const config = loadConfig({
      RATE_LIMIT_ORDERS_PER_SECOND: '0',
      RATE_LIMIT_CART_WRITES_PER_SECOND: '3',
      RATE_LIMIT_LOGINS_PER_MINUTE: '5',
      RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS: '30',
      RATE_LIMIT_LOGIN_BACKOFF_AFTER: '0',
      RATE_LIMIT_LOGIN_BACKOFF_MAX_SECONDS: '60',
      REDIS_URL: 'redis://cache:6379/2',
    });
    expect(config.rateLimits).toEqual({
      ordersPerSecond: 0,
      cartWritesPerSecond: 3,
      loginsPerMinutePerUser: 5,
      loginsPerMinutePerAddress: 30,
      loginBackoffAfterFailures: 0,
      loginBackoffMaxSeconds: 60,
      redisUrl: 'redis://cache:6379/2',
    });
  });

  it.each([
    ['RATE_LIMIT_ORDERS_PER_SECOND', '1.5', 'RATE_LIMIT_ORDERS_PER_SECOND must be a whole number, got "1.5"'],
    ['RATE_LIMIT_ORDERS_PER_SECOND', 'abc', 'RATE_LIMIT_ORDERS_PER_SECOND must be a whole number, got "abc"'],
    ['RATE_LIMIT_ORDERS_PER_SECOND', '-1', 'RATE_LIMIT_ORDERS_PER_SECOND must be a whole number, got "-1"'],
    ['RATE_LIMIT_LOGINS_PER_MINUTE', '2.0', 'RATE_LIMIT_LOGINS_PER_MINUTE must be a whole number, got "2.0"'],
    [
      'RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS',
      'ten',
      'RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS must be a whole number, got "ten"',
    ],
    ['REDIS_URL', 'localhost:6379', 'REDIS_URL must be a redis:// or rediss:// URL, got "localhost:..."'],
    // A password in a malformed URL is not echoed.
    ['REDIS_URL', 'redis//:s3cret@cache:6379', 'REDIS_URL must be a redis:// or rediss:// URL, got "redis//:..."'],
  ])('refuse %s=%s with a clear message', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
  });
});
