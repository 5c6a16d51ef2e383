/**
 * SESSION_DAILY_END (issue 23; docs/design/sebi-algo.md): a token issued before the daily end instant
 * (India time) is refused after it, 401 e-203, whatever its TTL; a login after it lasts until the next one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const ist = (text: string) => Date.parse(`${text}+05:30`);

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({ now: ist('2026-11-27T05:50:00'), sessionDailyEnd: '06:00' });
  await server.registerIssue({
    nonRetailOpensAt: ist('2026-11-27T00:00:00'),
    retailOpensAt: ist('2026-11-27T00:00:00'),
    nonRetailClosesAt: ist('2026-11-29T00:00:00'),
    retailClosesAt: ist('2026-11-29T00:00:00'),
  });
  alice = await server.createUser('alice');
});
afterAll(() => server.close());

const bid = (user: { token: string; apiKey: string }) =>
  server.call('POST', '/transactional/v1/orders/regular', { body: validBid(), token: user.token, apiKey: user.apiKey });

it('ends a session at the daily end, and a new login lasts until the next one', async () => {
  expect((await bid(alice)).status).toBe(200);
  server.clock.now = ist('2026-11-27T05:59:59');
  expect((await bid(alice)).status).toBe(200);
  server.clock.now = ist('2026-11-27T06:00:00');
  const expired = await bid(alice);
  expect(expired.status).toBe(401);
  expect(expired.body).toMatchObject({ code: 'e-203' });

  server.clock.now = ist('2026-11-27T06:01:00');
  const again = await server.call('POST', '/authentication/v1/user/session', {
    body: {
      user_id: 'alice',
      login_type: 'PASSWORD',
      password: alice.password,
      second_auth_type: '',
      second_auth: '',
      api_key: alice.apiKey,
      source: 'WEBAPI',
    },
  });
  expect(again.status, again.text).toBe(200);
  const token = again.body.data.access_token as string;
  server.clock.now = ist('2026-11-28T05:59:00');
  expect((await bid({ token, apiKey: alice.apiKey })).status).toBe(200);
  server.clock.now = ist('2026-11-28T06:00:00');
  expect((await bid({ token, apiKey: alice.apiKey })).body).toMatchObject({ code: 'e-203' });
});
