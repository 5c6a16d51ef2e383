/**
 * Failed logins slow an attacker down without locking the real user out (docs/design/rate-limits.md,
 * "Login attempts"; issue 12 finding 10). Each client address is a real TCP peer: the test binds its
 * connections to other loopback addresses (127.0.0.x), which the server sees as `request.ip`. Runs on
 * both dialects, in memory and (when Redis runs) shared through Redis by two nodes.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import type { RateLimitOptions } from '../../src/http/plugins/rate-limit.js';
import { createMigratedTestDatabase } from '../support/databases.js';
import { TEST_REDIS_URL, uniqueRedisPrefix, withRedis } from '../support/redis.js';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../support/server.js';

const SESSION = '/authentication/v1/user/session';
const WRONG = 'wrong-password-1';

/** The production defaults: 10 failures a minute per user id, 100 attempts per address, back-off after 5, at most 900 s. */
const DEFAULTS: Partial<RateLimitOptions> = {
  loginsPerMinutePerUser: 10,
  loginsPerMinutePerAddress: 100,
  loginBackoffAfterFailures: 5,
  loginBackoffMaxSeconds: 900,
};

interface Answer {
  status: number;
  retryAfter: number | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A login sent from the loopback address `from`, as a client on that address would. */
function loginFrom(
  server: TestServer,
  from: string,
  userId: string,
  password: string,
  apiKey?: string,
): Promise<Answer> {
  const url = new URL(server.url);
  const body = JSON.stringify({
    user_id: userId,
    login_type: 'PASSWORD',
    password,
    second_auth_type: '',
    second_auth: '',
    ...(apiKey !== undefined && { api_key: apiKey }),
    source: 'WEBAPI',
  });
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: url.hostname,
        port: url.port,
        path: SESSION,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const retryAfter = response.headers['retry-after'];
          resolve({
            status: response.statusCode!,
            retryAfter: retryAfter === undefined ? null : Number(retryAfter),
            body: JSON.parse(text),
          });
        });
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectBackedOff(answer: Answer, seconds: number): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  expect(answer.body.code).toBe(Errors.RATE_LIMITED.code);
  expect(answer.retryAfter).toBe(seconds);
  expect(answer.body.message).toMatch(/failed login attempts for this user_id from this address/);
}

describe('login failures with the default limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: DEFAULTS });
    await server.admin.addUser('trader', TEST_PASSWORD);
  });
  afterAll(() => server.close());

  it('an attacker failing 100 times with the user id from another address is backed off; the user logs in from their address meanwhile and after', async () => {
    expect((await loginFrom(server, '127.0.0.1', 'trader', TEST_PASSWORD)).status).toBe(200);

    const answers: Answer[] = [];
    for (let i = 0; i < 100; i += 1) {
      answers.push(await loginFrom(server, '127.0.0.2', 'trader', WRONG));
      if (i === 50) expect((await loginFrom(server, '127.0.0.1', 'trader', TEST_PASSWORD)).status).toBe(200);
    }
    // Five failures are checked; from then on the pair waits (a second after the fifth).
    expect(answers.slice(0, 5).map((answer) => answer.body.code)).toEqual(Array(5).fill(Errors.LOGIN_FAILED.code));
    const refused = answers.slice(5).filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThan(80);
    for (const answer of refused) expect(answer.retryAfter).toBeGreaterThanOrEqual(1);

    const user = await loginFrom(server, '127.0.0.1', 'trader', TEST_PASSWORD);
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    // The address limit still holds the attacker's address, whatever user id it tries next.
    const next = await loginFrom(server, '127.0.0.2', 'someone-else', WRONG);
    expect(next.status).toBe(429);
    expect(next.body.message).toMatch(/login attempts from this address: at most 100 a minute/);
  });
});

describe('the per-user-id failure limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: DEFAULTS });
    await server.admin.addUser('victim', TEST_PASSWORD);
  });
  afterAll(() => server.close());

  it('failures spread over many addresses stop new addresses for the user id, but not the address the user logged in from lately', async () => {
    expect((await loginFrom(server, '127.0.0.1', 'victim', TEST_PASSWORD)).status).toBe(200);
    // The user's own first login from a fresh address took a slot too (slots are taken before the password is checked).
    for (let i = 0; i < 9; i += 1)
      expect((await loginFrom(server, `127.0.0.${10 + i}`, 'victim', WRONG)).status).toBe(401);

    const stranger = await loginFrom(server, '127.0.0.60', 'victim', TEST_PASSWORD);
    expect(stranger.status).toBe(429);
    expect(stranger.body.message).toMatch(/failed login attempts for this user_id: at most 10 a minute/);
    expect(stranger.retryAfter).toBeGreaterThanOrEqual(1);
    expect(stranger.retryAfter).toBeLessThanOrEqual(60);

    const user = await loginFrom(server, '127.0.0.1', 'victim', TEST_PASSWORD);
    expect(user.status, JSON.stringify(user.body)).toBe(200);
  });

  it("lets the user in from a new address with an active API key of theirs; a wrong or another user's key does not open the way", async () => {
    await server.admin.addUser('traveller', TEST_PASSWORD);
    const { apiKey } = await server.admin.createApiKey('traveller');
    const { apiKey: othersKey } = await server.admin.createApiKey('victim');
    for (let i = 0; i < 10; i += 1)
      expect((await loginFrom(server, `127.0.1.${10 + i}`, 'traveller', WRONG)).status).toBe(401);

    expect((await loginFrom(server, '127.0.1.60', 'traveller', TEST_PASSWORD)).status).toBe(429);
    expect((await loginFrom(server, '127.0.1.61', 'traveller', TEST_PASSWORD, 'not-a-key')).status).toBe(429);
    expect((await loginFrom(server, '127.0.1.62', 'traveller', TEST_PASSWORD, othersKey)).status).toBe(429);
    const withKey = await loginFrom(server, '127.0.1.63', 'traveller', TEST_PASSWORD, apiKey);
    expect(withKey.status, JSON.stringify(withKey.body)).toBe(200);
    // The key opens the limit, not the password check: with a wrong password it is a failure like any other.
    expect((await loginFrom(server, '127.0.1.64', 'traveller', WRONG, apiKey)).status).toBe(401);
  });
});

describe('the per-user-id failure limit under concurrency (issue 21 row 4)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: DEFAULTS });
    await server.admin.addUser('crowd', TEST_PASSWORD);
  });
  afterAll(() => server.close());

  it('checks at most 10 of 16 wrong passwords sent at once from 16 addresses; the other 6 are refused unchecked', async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => loginFrom(server, `127.0.2.${10 + i}`, 'crowd', WRONG)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(6).fill(429)]);
    for (const answer of answers.filter((a) => a.status === 429))
      expect(answer.body.message).toMatch(/at most 10 a minute/);
  });
});

describe('the back-off of one (user id, address) pair', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: { ...DEFAULTS, loginBackoffAfterFailures: 1, loginBackoffMaxSeconds: 2 },
    });
    await server.admin.addUser('tom', TEST_PASSWORD);
  });
  afterAll(() => server.close());

  it('doubles the wait with each further failure up to the maximum, refuses even the right password meanwhile, and a success clears it', async () => {
    expect((await loginFrom(server, '127.0.0.3', 'tom', WRONG)).status).toBe(401);
    expectBackedOff(await loginFrom(server, '127.0.0.3', 'tom', TEST_PASSWORD), 1);
    // Another address of the same user id is not held back.
    expect((await loginFrom(server, '127.0.0.4', 'tom', TEST_PASSWORD)).status).toBe(200);

    await sleep(1100);
    expect((await loginFrom(server, '127.0.0.3', 'tom', WRONG)).status).toBe(401);
    expectBackedOff(await loginFrom(server, '127.0.0.3', 'tom', WRONG), 2);
    await sleep(2100);
    expect((await loginFrom(server, '127.0.0.3', 'tom', WRONG)).status).toBe(401);
    // 4 s, capped at the maximum of 2 s.
    expectBackedOff(await loginFrom(server, '127.0.0.3', 'tom', WRONG), 2);

    await sleep(2100);
    expect((await loginFrom(server, '127.0.0.3', 'tom', TEST_PASSWORD)).status).toBe(200);
    expect((await loginFrom(server, '127.0.0.3', 'tom', WRONG)).status).toBe(401);
    expectBackedOff(await loginFrom(server, '127.0.0.3', 'tom', WRONG), 1);
  });

  it("lets a login with an active API key of the user through the pair's back-off: the real user is not locked out of an address (issue 21 row 5)", async () => {
    await server.admin.addUser('kim', TEST_PASSWORD);
    const { apiKey } = await server.admin.createApiKey('kim');
    const { apiKey: othersKey } = await server.admin.createApiKey('tom');
    // Someone else fails from the address kim uses: the pair backs off.
    expect((await loginFrom(server, '127.0.0.5', 'kim', WRONG)).status).toBe(401);
    expectBackedOff(await loginFrom(server, '127.0.0.5', 'kim', TEST_PASSWORD), 1);
    expectBackedOff(await loginFrom(server, '127.0.0.5', 'kim', TEST_PASSWORD, othersKey), 1);
    const withKey = await loginFrom(server, '127.0.0.5', 'kim', TEST_PASSWORD, apiKey);
    expect(withKey.status, JSON.stringify(withKey.body)).toBe(200);
  });
});

describe('shared by the nodes through Redis', () => {
  let redisRuns = false;
  beforeAll(async () => {
    redisRuns = await withRedis();
  });

  it('failures counted on one node back the pair off on another', async ({ skip }) => {
    if (!redisRuns) skip();
    const rateLimits = {
      ...DEFAULTS,
      loginBackoffAfterFailures: 2,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: uniqueRedisPrefix(),
    };
    const database = await createMigratedTestDatabase('ordergate_login_backoff');
    const nodes = [await startTestServer({ databaseUrl: database.databaseUrl, rateLimits })];
    try {
      nodes.push(await startTestServer({ databaseUrl: database.databaseUrl, rateLimits }));
      await nodes[0]!.admin.addUser('uma', TEST_PASSWORD);
      expect((await loginFrom(nodes[0]!, '127.0.0.5', 'uma', WRONG)).status).toBe(401);
      expect((await loginFrom(nodes[1]!, '127.0.0.5', 'uma', WRONG)).status).toBe(401);
      expectBackedOff(await loginFrom(nodes[0]!, '127.0.0.5', 'uma', TEST_PASSWORD), 1);
      expectBackedOff(await loginFrom(nodes[1]!, '127.0.0.5', 'uma', TEST_PASSWORD), 1);
    } finally {
      for (const node of nodes) await node.close();
      await database.dispose();
    }
  });
});
