/**
 * Idempotency-Key on order-entry calls (product.md "Several nodes, retries and faults"; issue 5 item 3):
 * a retry with the same key and the same body replays the first answer and changes nothing; another
 * request with the key gets 422, a retry while the first runs 409; only 200 and 422 answers are kept; keys
 * are per user, kept 24 h, and a key abandoned by a dead node is free after 30 s. Runs on SQLite and on
 * PostgreSQL; the last block runs two nodes on one PostgreSQL database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Errors, type ErrorKind, DatabaseUnavailableError } from '../../src/domain/errors.js';
import { LEASE_MS, REPLAY_WINDOW_MS, requestFingerprint } from '../../src/domain/orders/idempotency.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { IdempotencyService } from '../../src/services/idempotency.js';
import { IdempotencyKeyRepository } from '../../src/store/orders/idempotency.js';
import { createServices } from '../../src/wiring.js';
import { createPostgresDatabase, testDialect, type TestDatabase } from '../support/databases.js';
import {
  startTestServer,
  TEST_PASSWORD,
  validBid,
  type CallOptions,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';
import { testMember } from '../support/member-data.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const CART = '/transactional/v1/ordercart';
const SESSION = '/authentication/v1/user/session';
const REPLAYED = 'idempotent-replayed';

function expectError(res: CallResult, kind: ErrorKind): void {
  expect(res.status, res.text).toBe(kind.status);
  expect(res.body.code, res.text).toBe(kind.code);
}

function expectReplayOf(replay: CallResult, first: CallResult): void {
  expect(replay.status, replay.text).toBe(first.status);
  expect(replay.headers.get(REPLAYED)).toBe('true');
  expect(replay.text).toBe(first.text);
  // The replay is a request of its own: its Request-Id header is new.
  expect(replay.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
}

/** The same JSON value with its keys in reverse order at every level, sent with other white space. */
function reordered(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  );
}

describe('Idempotency-Key on order entry', () => {
  let server: TestServer;
  let start: number;
  let keyCount = 0;
  /** A key never used before in this file. */
  const newKey = () => `key-${++keyCount}-${Math.random().toString(36).slice(2)}`;

  beforeAll(async () => {
    server = await startTestServer();
    start = server.clock.now;
    // Windows wide enough to bid again after 24 hours.
    await server.registerIssue({
      retailClosesAt: start + 3 * REPLAY_WINDOW_MS,
      nonRetailClosesAt: start + 3 * REPLAY_WINDOW_MS,
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.clock.now = start;
  });

  const as = (user: TestUser, key?: string): CallOptions => ({
    token: user.token,
    apiKey: user.apiKey,
    ...(key !== undefined && { headers: { 'Idempotency-Key': key } }),
  });
  const place = (user: TestUser, key: string | undefined, body: unknown = validBid()) =>
    server.call('POST', PLACE_ORDER, { body, ...as(user, key) });

  async function ordersOf(userId: string) {
    return server.store.db
      .selectFrom('orders')
      .select(['order_id', 'status', 'quantity'])
      .where('user_id', '=', userId)
      .execute();
  }

  /** A fresh access token for the user at the test clock's time (tokens live 24 hours). */
  async function login(user: TestUser): Promise<TestUser> {
    const res = await server.call('POST', SESSION, {
      body: {
        user_id: user.userId,
        login_type: 'PASSWORD',
        password: TEST_PASSWORD,
        second_auth_type: '',
        second_auth: '',
        api_key: user.apiKey,
        source: 'WEBAPI',
      },
    });
    expect(res.status, res.text).toBe(200);
    return { ...user, token: res.body.data.access_token };
  }

  it('the same key and body (other key order and white space) places one order; the retry replays the answer, marked', async () => {
    const user = await server.createUser('same1');
    const key = newKey();
    const first = await place(user, key);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get(REPLAYED)).toBeNull();

    const rawBody = JSON.stringify(reordered(validBid()), null, 3);
    expect(rawBody).not.toBe(JSON.stringify(validBid()));
    const retry = await server.call('POST', PLACE_ORDER, { rawBody, ...as(user, key) });
    expectReplayOf(retry, first);
    const again = await place(user, key);
    expectReplayOf(again, first);

    expect(await ordersOf(user.userId)).toEqual([expect.objectContaining({ order_id: first.body.data.orderId })]);
    // Without a key every call is a new order.
    expect((await place(user, undefined)).status).toBe(200);
    expect(await ordersOf(user.userId)).toHaveLength(2);
  });

  it('the same key with another body, or on another call: 422 e-115, and nothing more is placed', async () => {
    const user = await server.createUser('other1');
    const key = newKey();
    const first = await place(user, key);
    expect(first.status, first.text).toBe(200);

    expectError(await place(user, key, validBid({ quantity: '11' })), Errors.IDEMPOTENCY_KEY_REUSED);
    const orderId = first.body.data.orderId as string;
    expectError(
      await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/${orderId}`, as(user, key)),
      Errors.IDEMPOTENCY_KEY_REUSED,
    );
    expect(await ordersOf(user.userId)).toEqual([expect.objectContaining({ order_id: orderId, quantity: 10 })]);
    // The kept answer is still replayed to the request it belongs to.
    expectReplayOf(await place(user, key), first);
  });

  it('20 retries of one key at once place exactly one order; the others are 409 e-116 or replays, none 5xx', async () => {
    const user = await server.createUser('burst1');
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => place(user, key)));
    const orders = await ordersOf(user.userId);
    expect(orders).toHaveLength(1);
    const orderId = orders[0]!.order_id;
    const ran = answers.filter((res) => res.status === 200 && res.headers.get(REPLAYED) === null);
    expect(ran).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 200) expect(res.body.data.orderId, res.text).toBe(orderId);
      else {
        expectError(res, Errors.IDEMPOTENCY_KEY_RUNNING);
        expect(res.headers.get('retry-after')).toBe('1');
      }
    }
    expectReplayOf(await place(user, key), ran[0]!);
    expect(await ordersOf(user.userId)).toHaveLength(1);
  });

  it('a 400 or a 401 is not kept: the corrected retry with the same key runs and places the order', async () => {
    const user = await server.createUser('fix1');
    const key = newKey();
    expectError(await place(user, key, validBid({ quantity: '0' })), Errors.OFS_QUANTITY);
    expectError(await place(user, key, validBid({ surprise: 1 })), Errors.UNKNOWN_FIELD);
    expectError(
      await server.call('POST', PLACE_ORDER, {
        body: validBid(),
        token: user.token,
        headers: { 'Idempotency-Key': key },
      }),
      Errors.API_KEY_MISSING,
    );
    expect(await ordersOf(user.userId)).toHaveLength(0);

    const fixed = await place(user, key);
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.headers.get(REPLAYED)).toBeNull();
    expect(await ordersOf(user.userId)).toHaveLength(1);
  });

  it('a 422 business refusal is kept and replayed, even once the request would now pass', async () => {
    const user = await server.createUser('refused1');
    const key = newKey();
    // Before the windows open: 422 e-354.
    server.clock.now = start - 2 * 60 * 60 * 1000;
    const refused = await place(user, key);
    expectError(refused, Errors.OFS_WINDOW_NOT_OPEN);

    server.clock.now = start;
    const retry = await place(user, key);
    expectReplayOf(retry, refused);
    // The kept body is the first answer's, request_id included (the id the refusal was logged under).
    expect(retry.body.request_id).toBe(refused.headers.get('request-id'));
    expect(await ordersOf(user.userId)).toHaveLength(0);
  });

  it('keys are per user: two users with one key each get their own order', async () => {
    const [ann, ben] = [await server.createUser('scope1'), await server.createUser('scope2')];
    const key = newKey();
    const [a, b] = await Promise.all([place(ann, key), place(ben, key)]);
    for (const res of [a, b]) {
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get(REPLAYED)).toBeNull();
    }
    expect(a.body.data.orderId).not.toBe(b.body.data.orderId);
    expect(await ordersOf(ann.userId)).toHaveLength(1);
    expect(await ordersOf(ben.userId)).toHaveLength(1);
  });

  it('a key is kept 24 hours: a retry just before replays, one at 24 hours is a new request', async () => {
    let user = await server.createUser('expiry1');
    const key = newKey();
    const first = await place(user, key);
    expect(first.status, first.text).toBe(200);

    server.clock.now = start + REPLAY_WINDOW_MS - 1;
    user = await login(user);
    expectReplayOf(await place(user, key), first);
    expect(await ordersOf(user.userId)).toHaveLength(1);

    server.clock.now = start + REPLAY_WINDOW_MS;
    user = await login(user);
    const later = await place(user, key);
    expect(later.status, later.text).toBe(200);
    expect(later.headers.get(REPLAYED)).toBeNull();
    expect(later.body.data.orderId).not.toBe(first.body.data.orderId);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    // The key now holds the new answer.
    expectReplayOf(await place(user, key), later);
  });

  it('a key held by a request that a dead node abandoned: 409 e-116 during its 30 s lease, then taken over and run', async () => {
    const user = await server.createUser('abandoned1');
    const key = newKey();
    const body = validBid();
    await server.store.db
      .insertInto('idempotency_keys')
      .values({
        user_id: user.userId,
        idempotency_key: key,
        owner: 'a request of a node that died',
        method: 'POST',
        path: PLACE_ORDER,
        fingerprint: requestFingerprint({ method: 'POST', path: PLACE_ORDER, body }),
        state: 'RUNNING',
        locked_until: start + LEASE_MS,
        status_code: null,
        response_body: null,
        response_headers: null,
        created_at: start,
      })
      .execute();

    server.clock.now = start + LEASE_MS - 1;
    expectError(await place(user, key, body), Errors.IDEMPOTENCY_KEY_RUNNING);
    expect(await ordersOf(user.userId)).toHaveLength(0);

    server.clock.now = start + LEASE_MS;
    const taken = await place(user, key, body);
    expect(taken.status, taken.text).toBe(200);
    expect(taken.headers.get(REPLAYED)).toBeNull();
    expect(await ordersOf(user.userId)).toHaveLength(1);
    expectReplayOf(await place(user, key, body), taken);
  });

  it('an invalid Idempotency-Key header: 400 e-114, and nothing is placed', async () => {
    const user = await server.createUser('badkey1');
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await place(user, key);
      expectError(res, Errors.IDEMPOTENCY_KEY_INVALID);
      expect(
        res.body.errors.map((e: { field: string }) => e.field),
        res.text,
      ).toContain('idempotency-key');
    }
    expect(await ordersOf(user.userId)).toHaveLength(0);
    // The bounds: 255 characters, and any printable ASCII (space and punctuation included).
    for (const key of ['k'.repeat(255), ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~']) {
      const res = await place(user, key);
      expect(res.status, res.text).toBe(200);
    }
    expect(await ordersOf(user.userId)).toHaveLength(2);
  });

  it('modify and cancel: a retry replays the answer and the change is queued once', async () => {
    const user = await server.createUser('modcan1');
    const placed = await place(user, undefined);
    const orderId = placed.body.data.orderId as string;
    const path = `${PLACE_ORDER}/NSE_EQ/${orderId}`;
    const outbox = async (action: string) =>
      (
        await server.store.db
          .selectFrom('outbox')
          .select('id')
          .where('order_id', '=', orderId)
          .where('action', '=', action)
          .execute()
      ).length;

    const change = {
      order_type: 'RL',
      quantity: '20',
      price: 102,
      traded_quantity: 0,
      disclosed_quantity: 0,
      validity: '',
      validity_days: 0,
      trigger_price: null,
    };
    const modifyKey = newKey();
    const modified = await server.call('PUT', path, { body: change, ...as(user, modifyKey) });
    expect(modified.status, modified.text).toBe(200);
    expectReplayOf(
      await server.call('PUT', path, { rawBody: JSON.stringify(reordered(change)), ...as(user, modifyKey) }),
      modified,
    );
    expect(await outbox('MODIFY')).toBe(1);

    const cancelKey = newKey();
    const cancelled = await server.call('DELETE', path, as(user, cancelKey));
    expect(cancelled.status, cancelled.text).toBe(200);
    // Without the key the retry would be refused: a cancellation is already under way.
    expectError(await server.call('DELETE', path, as(user)), Errors.ORDER_CANCEL_PENDING);
    expectReplayOf(await server.call('DELETE', path, as(user, cancelKey)), cancelled);
    expect(await outbox('CANCEL')).toBe(1);
  });

  it('cart create, update and execute: a retry replays the answer (ETag too) and the change happens once', async () => {
    const user = await server.createUser('cart1');
    const carts = async () =>
      server.store.db.selectFrom('order_carts').selectAll().where('user_id', '=', user.userId).execute();
    const cart = {
      ordercartName: 'Basket',
      orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
      version: '1',
      createdBy: user.userId,
      modifiedBy: user.userId,
      executedNoTime: 0,
    };

    const createKey = newKey();
    const created = await server.call('POST', CART, {
      body: cart,
      token: user.token,
      headers: { 'Idempotency-Key': createKey },
    });
    expect(created.status, created.text).toBe(200);
    expectReplayOf(
      await server.call('POST', CART, {
        rawBody: JSON.stringify(reordered(cart)),
        token: user.token,
        headers: { 'Idempotency-Key': createKey },
      }),
      created,
    );
    expect(await carts()).toHaveLength(1);
    const ordercartId = created.body.data.ordercartId as string;

    const updateKey = newKey();
    const update = { ...cart, ordercartId, ordercartName: 'Renamed' };
    const headers = { 'Idempotency-Key': updateKey, 'If-Match': '"1"' };
    const updated = await server.call('PUT', CART, { body: update, token: user.token, headers });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.headers.get('etag')).toBe('"2"');
    const updateReplay = await server.call('PUT', CART, { body: update, token: user.token, headers });
    expectReplayOf(updateReplay, updated);
    expect(updateReplay.headers.get('etag')).toBe('"2"');
    expect((await carts())[0]!.revision).toBe(2);

    const executeKey = newKey();
    const executePath = `${CART}/${ordercartId}/execute`;
    const executed = await server.call('POST', executePath, as(user, executeKey));
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.code).toBe('s-101');
    expectReplayOf(await server.call('POST', executePath, as(user, executeKey)), executed);
    expect(await ordersOf(user.userId)).toHaveLength(1);
    expect((await carts())[0]!.executed_no_time).toBe(1);
  });

  it("place-order keeps its answer in the order's own transaction: a node that dies right after the commit leaves no key to run twice", async () => {
    const user = await server.createUser('crash1');
    const key = newKey();
    const body = validBid();
    // A second node on the same database that claims the key and places the order, then dies before its
    // HTTP layer could do anything more (no onSend: the answer was never sent).
    const node = createServices(server.store, { tokenTtlSeconds: 60, now: () => server.clock.now });
    const caller = {
      userId: user.userId,
      category: 'RETAIL' as const,
      member: testMember(user.userId),
      tokenHash: 'unused',
      expiresAt: start + 60_000,
    };
    const outcome = await node.idempotency.claim(user.userId, key, { method: 'POST', path: PLACE_ORDER, body });
    if (outcome.kind !== 'claimed') throw new Error(`expected a claim, got ${outcome.kind}`);
    const answer = node.idempotency.answerInTransaction<string>(outcome.claim, (orderId) => ({
      statusCode: 200,
      body: JSON.stringify({ status: 'success', code: 's-101', message: 'Order Entry Sent to OMS', data: { orderId } }),
      headers: {},
    }));
    const orderId = await node.orderEntry.placeOfsBid(caller, body as never, null, answer);

    // Long after the lease, the client's retry gets the order that was placed, not a second one.
    server.clock.now = start + 10 * LEASE_MS;
    const retry = await place(user, key, body);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers.get(REPLAYED)).toBe('true');
    expect(retry.body.data.orderId).toBe(orderId);
    expect(await ordersOf(user.userId)).toHaveLength(1);
    node.idempotency.stopRenewing(outcome.claim);
  });

  it('a slow request whose key was taken over after its lease is refused (409 e-116) before it writes anything', async () => {
    const user = await server.createUser('slow1');
    const key = newKey();
    const body = validBid();
    const node = createServices(server.store, { tokenTtlSeconds: 60, now: () => server.clock.now });
    const caller = {
      userId: user.userId,
      category: 'RETAIL' as const,
      member: testMember(user.userId),
      tokenHash: 'unused',
      expiresAt: start + 60_000,
    };
    const outcome = await node.idempotency.claim(user.userId, key, { method: 'POST', path: PLACE_ORDER, body });
    if (outcome.kind !== 'claimed') throw new Error(`expected a claim, got ${outcome.kind}`);

    server.clock.now = start + LEASE_MS;
    const taken = await place(user, key, body);
    expect(taken.status, taken.text).toBe(200);

    const answer = node.idempotency.answerInTransaction<string>(outcome.claim, () => ({
      statusCode: 200,
      body: '{}',
      headers: {},
    }));
    const late = node.orderEntry.placeOfsBid(caller, body as never, null, answer);
    await expect(late).rejects.toMatchObject({ kind: Errors.IDEMPOTENCY_KEY_RUNNING });
    expect(await ordersOf(user.userId)).toHaveLength(1);
    expectReplayOf(await place(user, key, body), taken);
    node.idempotency.stopRenewing(outcome.claim);
  });

  it('a live node renews the lease of a request that runs longer than 30 s; the key is taken over only once it stops', async () => {
    const user = await server.createUser('renew1');
    const key = newKey();
    const body = validBid();
    const node = createServices(server.store, {
      tokenTtlSeconds: 60,
      now: () => server.clock.now,
      idempotency: { renewEveryMs: 20 },
    });
    const outcome = await node.idempotency.claim(user.userId, key, { method: 'POST', path: PLACE_ORDER, body });
    if (outcome.kind !== 'claimed') throw new Error(`expected a claim, got ${outcome.kind}`);
    const lockedUntil = async () =>
      Number(
        (
          await server.store.db
            .selectFrom('idempotency_keys')
            .select('locked_until')
            .where('user_id', '=', user.userId)
            .where('idempotency_key', '=', key)
            .executeTakeFirstOrThrow()
        ).locked_until,
      );

    server.clock.now = start + 25_000;
    await expect.poll(lockedUntil, { timeout: 10_000 }).toBe(start + 25_000 + LEASE_MS);
    server.clock.now = start + 40_000;
    expectError(await place(user, key, body), Errors.IDEMPOTENCY_KEY_RUNNING);

    // The request ends with an answer that is not kept: the key is free at once.
    await node.idempotency.finish(outcome.claim, { statusCode: 503, body: '', headers: {} });
    const ran = await place(user, key, body);
    expect(ran.status, ran.text).toBe(200);
    expect(ran.headers.get(REPLAYED)).toBeNull();
    expect(await ordersOf(user.userId)).toHaveLength(1);
  });

  it('keys past their 24 hours are purged', async () => {
    const user = await server.createUser('purge1');
    const stored = (key: string, createdAt: number) => ({
      user_id: user.userId,
      idempotency_key: key,
      owner: `owner-${key}`,
      method: 'POST',
      path: PLACE_ORDER,
      fingerprint: 'f',
      state: 'DONE',
      locked_until: createdAt + LEASE_MS,
      status_code: 200,
      response_body: '{}',
      response_headers: '{}',
      created_at: createdAt,
    });
    await server.store.db
      .insertInto('idempotency_keys')
      .values([stored('old', start - REPLAY_WINDOW_MS - 1), stored('recent', start - REPLAY_WINDOW_MS + 60_000)])
      .execute();
    const keys = async () =>
      (
        await server.store.db
          .selectFrom('idempotency_keys')
          .select('idempotency_key')
          .where('user_id', '=', user.userId)
          .execute()
      )
        .map((row) => row.idempotency_key)
        .sort();

    // A fresh node purges at its first claim.
    const node = createServices(server.store, { tokenTtlSeconds: 60, now: () => server.clock.now });
    const outcome = await node.idempotency.claim(user.userId, 'new', {
      method: 'POST',
      path: PLACE_ORDER,
      body: validBid(),
    });
    expect(outcome.kind).toBe('claimed');
    await expect.poll(keys, { timeout: 10_000 }).toEqual(['new', 'recent']);
    if (outcome.kind === 'claimed')
      await node.idempotency.finish(outcome.claim, { statusCode: 400, body: '', headers: {} });
    expect(await keys()).toEqual(['recent']);
  });
});

/** Several nodes on one PostgreSQL database (vitest project "postgres"): retries spread over two servers. */
describe.runIf(testDialect() === 'postgres')('Idempotency-Key across two nodes on one PostgreSQL database', () => {
  let database: TestDatabase;
  let nodes: TestServer[] = [];

  beforeAll(async () => {
    database = await createPostgresDatabase('ordergate_idem');
    const now = Date.now();
    const first = await startTestServer({ databaseUrl: database.databaseUrl, now });
    nodes = [first, await startTestServer({ databaseUrl: database.databaseUrl, now })];
    await first.registerIssue();
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database.dispose();
  });

  it('20 retries of one key sent at once through both nodes place exactly one order, and both nodes replay it', async () => {
    const user = await nodes[0]!.createUser('twonodes');
    const key = 'one-order-please';
    const send = (i: number) =>
      nodes[i % 2]!.call('POST', PLACE_ORDER, {
        body: validBid(),
        token: user.token,
        apiKey: user.apiKey,
        headers: { 'Idempotency-Key': key },
      });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
    const orders = await nodes[1]!.store.db
      .selectFrom('orders')
      .select('order_id')
      .where('user_id', '=', user.userId)
      .execute();
    expect(orders).toHaveLength(1);
    const ran = answers.filter((res) => res.status === 200 && res.headers.get(REPLAYED) === null);
    expect(ran).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 200) expect(res.body.data.orderId, res.text).toBe(orders[0]!.order_id);
      else expectError(res, Errors.IDEMPOTENCY_KEY_RUNNING);
    }
    for (const i of [0, 1]) expectReplayOf(await send(i), ran[0]!);
  });

  it('many keys of several users through both nodes at once: one order per key, nobody waits on a deadlock', async () => {
    const users: TestUser[] = [];
    for (let i = 0; i < 4; i++) users.push(await nodes[0]!.createUser(`crowd${i}`));
    const answers = await Promise.all(
      users.flatMap((user, u) =>
        Array.from({ length: 30 }, (_, i) =>
          nodes[(i + u) % 2]!.call('POST', PLACE_ORDER, {
            body: validBid({ quantity: '1' }),
            token: user.token,
            apiKey: user.apiKey,
            headers: { 'Idempotency-Key': `k${i % 6}` },
          }),
        ),
      ),
    );
    for (const res of answers) if (res.status !== 200) expectError(res, Errors.IDEMPOTENCY_KEY_RUNNING);
    for (const user of users) {
      const orders = await nodes[0]!.store.db
        .selectFrom('orders')
        .select('order_id')
        .where('user_id', '=', user.userId)
        .execute();
      expect(orders).toHaveLength(6);
    }
  });
});

describe('Idempotency-Key when the database is out as the answer leaves', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await server.createUser('alice');
  });
  afterAll(() => server.close());

  it('frees a claim committed whose answer was lost (the database went away at that moment): at once for a retry on its node, soon for any node', async () => {
    const keys = new IdempotencyKeyRepository(server.store.db, server.store.dialect);
    let lose = true;
    const flaky = Object.create(keys) as IdempotencyKeyRepository;
    flaky.insertRunning = async (...args) => {
      const inserted = await keys.insertRunning(...args);
      if (lose) {
        lose = false;
        throw new DatabaseUnavailableError(
          Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }),
        );
      }
      return inserted;
    };
    // The node's own retry of the settle comes too late for the first checks.
    const service = new IdempotencyService(flaky, () => server.clock.now, { settleRetryMs: 60_000 });
    const otherNode = new IdempotencyService(keys, () => server.clock.now);
    const request = { method: 'POST', path: '/transactional/v1/orders/regular', body: { a: 3 } };
    await expect(service.claim('alice', 'lost-claim', request)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(service.unsettledCount).toBe(1);
    // Another node cannot know that the claim's request is over: for it the key is held, until it is freed.
    await expect(otherNode.claim('alice', 'lost-claim', request)).rejects.toMatchObject({
      kind: Errors.IDEMPOTENCY_KEY_RUNNING,
    });
    // The node that made it knows: the retry runs at once.
    expect((await service.claim('alice', 'lost-claim', request)).kind).toBe('claimed');
    expect(service.unsettledCount).toBe(0);

    // Not retried on its node, a lost claim is freed by the node's own settle once the database answers.
    lose = true;
    const settling = new IdempotencyService(flaky, () => server.clock.now, { settleRetryMs: 50 });
    await expect(settling.claim('alice', 'lost-claim-2', request)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect.poll(() => settling.unsettledCount, { timeout: 5_000 }).toBe(0);
    expect((await otherNode.claim('alice', 'lost-claim-2', request)).kind).toBe('claimed');
  });

  it('settles a 5xx whose key could not be freed by itself once the database is back, without any retry', async () => {
    const keys = new IdempotencyKeyRepository(server.store.db, server.store.dialect);
    let outage = 2;
    const flaky = Object.create(keys) as IdempotencyKeyRepository;
    flaky.release = async (claim) => {
      if (outage-- > 0)
        throw new DatabaseUnavailableError(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
      return keys.release(claim);
    };
    const service = new IdempotencyService(flaky, () => server.clock.now, { settleRetryMs: 50 });
    const request = { method: 'POST', path: '/transactional/v1/orders/regular', body: { a: 2 } };
    const first = await service.claim('alice', 'outage-key-2', request);
    if (first.kind !== 'claimed') throw new Error('not claimed');
    await expect(service.finish(first.claim, { statusCode: 503, body: '{}', headers: {} })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(service.unsettledCount).toBe(1);
    await expect.poll(() => service.unsettledCount, { timeout: 5_000 }).toBe(0);
    // Freed: another node's retry runs.
    expect(
      (await new IdempotencyService(keys, () => server.clock.now).claim('alice', 'outage-key-2', request)).kind,
    ).toBe('claimed');
  });

  it('frees the key of a 5xx once the database is back, so that a retry runs again instead of getting 409', async () => {
    const keys = new IdempotencyKeyRepository(server.store.db, server.store.dialect);
    let outage = 2;
    const flaky = Object.create(keys) as IdempotencyKeyRepository;
    flaky.release = async (claim) => {
      if (outage-- > 0)
        throw new DatabaseUnavailableError(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
      return keys.release(claim);
    };
    // The node's own retry of the settle comes too late to matter here: the retries settle it themselves.
    const service = new IdempotencyService(flaky, () => server.clock.now, { settleRetryMs: 60_000 });
    const otherNode = new IdempotencyService(keys, () => server.clock.now);
    const request = { method: 'POST', path: '/transactional/v1/orders/regular', body: { a: 1 } };
    const first = await service.claim('alice', 'outage-key', request);
    expect(first.kind).toBe('claimed');
    if (first.kind !== 'claimed') return;
    await expect(service.finish(first.claim, { statusCode: 503, body: '{}', headers: {} })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(service.unsettledCount).toBe(1);
    // A retry on this node settles the key first: while the database is still out, that is a 503...
    await expect(service.claim('alice', 'outage-key', request)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // ...another node knows nothing of it: the first is still running, as far as it can tell...
    await expect(otherNode.claim('alice', 'outage-key', request)).rejects.toMatchObject({
      kind: Errors.IDEMPOTENCY_KEY_RUNNING,
    });
    // ...and once the database answers, a retry on this node runs at once, well within the 30 s lease.
    const retry = await service.claim('alice', 'outage-key', request);
    expect(retry.kind).toBe('claimed');
    expect(service.unsettledCount).toBe(0);
    if (retry.kind === 'claimed')
      await service.finish(retry.claim, { statusCode: 200, body: '{"ok":true}', headers: {} });
  });
});
