/**
 * Idempotency-Key on cart execute across crashes (docs/design/idempotency.md): an execution keeps the
 * lines it read, each line's result (a placed line's in its order's own transaction) and its count under
 * the key, so that the retry after a node died half-way, or after a 5xx, places no line twice, counts
 * the execution once, and answers what one uninterrupted run would have. Runs on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LEASE_MS, REPLAY_WINDOW_MS } from '../../src/domain/orders/idempotency.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import type { Caller } from '../../src/services/auth.js';
import type { ClaimedKey } from '../../src/services/idempotency.js';
import { OrderCartService } from '../../src/services/order-carts.js';
import type { OrderEntryService } from '../../src/services/order-entry.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OrderCartRepository } from '../../src/store/orders/carts.js';
import { createServices } from '../../src/wiring.js';
import { startTestServer, TEST_PASSWORD, type CallResult, type TestServer, type TestUser } from '../support/server.js';
import { testMember } from '../support/member-data.js';

const CART = '/transactional/v1/ordercart';
const REPLAYED = 'idempotent-replayed';

/**
 * Price 100.50 is below the retail cut-off 101.00 (on the tick, above the floor, so the cart is saved):
 * refused inside order entry (e-359), after line 0 was placed.
 */
const BELOW_CUTOFF_LINE = { ...EXAMPLE_ORDER_LINE, Price: '100.50' };
const MARKET_LINE = { ...EXAMPLE_ORDER_LINE, OrderType: 'RL-MKT', Price: '0', Quantity: 20 };
const LINES = [EXAMPLE_ORDER_LINE, BELOW_CUTOFF_LINE, MARKET_LINE];

type PlaceOfsBid = OrderEntryService['placeOfsBid'];

describe('Idempotency-Key on cart execute: a retry after a crash or a 5xx places no line twice', () => {
  let server: TestServer;
  let start: number;
  let keyCount = 0;
  const newKey = () => `cart-key-${++keyCount}-${Math.random().toString(36).slice(2)}`;

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

  async function createCart(user: TestUser, lines: unknown[] = LINES): Promise<string> {
    const body = {
      ordercartName: 'Basket',
      orders: JSON.stringify(lines),
      version: '1',
      createdBy: user.userId,
      modifiedBy: user.userId,
      executedNoTime: 0,
    };
    const res = await server.call('POST', CART, { body, token: user.token });
    expect(res.status, res.text).toBe(200);
    return res.body.data.ordercartId as string;
  }

  const executePath = (ordercartId: string) => `${CART}/${ordercartId}/execute`;
  const execute = (user: TestUser, ordercartId: string, key?: string): Promise<CallResult> =>
    server.call('POST', executePath(ordercartId), {
      token: user.token,
      apiKey: user.apiKey,
      ...(key !== undefined && { headers: { 'Idempotency-Key': key } }),
    });

  async function ordersOf(userId: string) {
    return server.store.db
      .selectFrom('orders')
      .select(['order_id', 'quantity', 'order_type'])
      .where('user_id', '=', userId)
      .orderBy('order_id')
      .execute();
  }

  async function executedNoTime(ordercartId: string): Promise<number> {
    const row = await server.store.db
      .selectFrom('order_carts')
      .select('executed_no_time')
      .where('ordercart_id', '=', ordercartId)
      .executeTakeFirstOrThrow();
    return Number(row.executed_no_time);
  }

  /** A fresh access token at the test clock's time (tokens live 24 hours). */
  async function login(user: TestUser): Promise<TestUser> {
    const res = await server.call('POST', '/authentication/v1/user/session', {
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

  /**
   * A second node on the same database that claims `key` for the execution and runs the real cart
   * execution, whose order entry `placeOfsBid` stands between the cart and the node's real order entry.
   * No HTTP layer: whatever happens, no onSend keeps or frees the key.
   */
  async function nodeExecution(
    user: TestUser,
    ordercartId: string,
    key: string,
    placeOfsBid: (real: PlaceOfsBid, ...args: Parameters<PlaceOfsBid>) => Promise<string>,
  ) {
    const node = createServices(server.store, { tokenTtlSeconds: 60, now: () => server.clock.now });
    const outcome = await node.idempotency.claim(user.userId, key, {
      method: 'POST',
      path: executePath(ordercartId),
      body: undefined,
    });
    if (outcome.kind !== 'claimed') throw new Error(`expected a claim, got ${outcome.kind}`);
    const real: PlaceOfsBid = (...args) => node.orderEntry.placeOfsBid(...args);
    const carts = new OrderCartService(new OrderCartRepository(server.store.db), () => server.clock.now, {
      orderEntry: { placeOfsBid: (...args) => placeOfsBid(real, ...args) },
      issues: new OfsIssueRepository(server.store.db),
    });
    const caller: Caller = {
      userId: user.userId,
      category: 'RETAIL',
      member: testMember(user.userId),
      tokenHash: 'unused',
      expiresAt: Number.MAX_SAFE_INTEGER,
    };
    const claim: ClaimedKey = outcome.claim;
    return {
      claim,
      idempotency: node.idempotency,
      run: () => carts.execute(caller, ordercartId, null, node.idempotency.keptSteps(claim)),
    };
  }

  /**
   * A node that places line 0, has line 1 refused, and dies while line 2 is being placed: answers once it
   * is dead (its lease no longer renewed).
   */
  async function nodeDeadAtLine2(user: TestUser, ordercartId: string, key: string): Promise<void> {
    let calls = 0;
    let reachedLine2!: () => void;
    const died = new Promise<void>((resolve) => (reachedLine2 = resolve));
    const node = await nodeExecution(user, ordercartId, key, (real, ...args) => {
      calls += 1;
      if (calls < 3) return real(...args);
      reachedLine2();
      return new Promise<string>(() => undefined);
    });
    void node.run();
    await died;
    node.idempotency.stopRenewing(node.claim);
  }

  function expectAnswerOf(res: CallResult, line0OrderId: string): void {
    expect(res.status, res.text).toBe(200);
    expect(res.body.code).toBe('s-102');
    expect(res.body.data).toEqual([
      { index: 0, status: 'success', orderId: line0OrderId },
      expect.objectContaining({ index: 1, status: 'error', code: 'e-359' }),
      { index: 2, status: 'success', orderId: expect.any(String) },
    ]);
  }

  it('a node that dies after line 0 committed: after its 30 s lease the retry places only the lines not placed, answers line 0 with its first order, and counts once', async () => {
    const user = await server.createUser('crash-mid');
    const ordercartId = await createCart(user);
    const key = newKey();

    await nodeDeadAtLine2(user, ordercartId, key);
    const firstOrders = await ordersOf(user.userId);
    expect(firstOrders).toHaveLength(1);
    const line0OrderId = firstOrders[0]!.order_id;
    expect(await executedNoTime(ordercartId)).toBe(0);

    // During the lease the retry waits; once it ran out, the retry takes the key over and finishes the job.
    server.clock.now = start + LEASE_MS - 1;
    expect((await execute(user, ordercartId, key)).status).toBe(409);
    server.clock.now = start + LEASE_MS;
    const retry = await execute(user, ordercartId, key);
    expectAnswerOf(retry, line0OrderId);
    expect(retry.headers.get(REPLAYED)).toBeNull();

    const orders = await ordersOf(user.userId);
    expect(orders.map((order) => order.order_id).sort()).toEqual([line0OrderId, retry.body.data[2].orderId].sort());
    expect(orders.map((order) => order.order_type).sort()).toEqual(['RL', 'RL-MKT']);
    expect(await executedNoTime(ordercartId)).toBe(1);

    // From then on the key replays that answer and nothing more is placed.
    const replay = await execute(user, ordercartId, key);
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(replay.text).toBe(retry.text);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(1);
  });

  it('the retry places the lines the first run read, even when the cart was updated after the crash', async () => {
    const user = await server.createUser('crash-update');
    const ordercartId = await createCart(user);
    const key = newKey();
    await nodeDeadAtLine2(user, ordercartId, key);
    const line0OrderId = (await ordersOf(user.userId))[0]!.order_id;

    const update = {
      ordercartId,
      ordercartName: 'Other',
      orders: JSON.stringify([{ ...EXAMPLE_ORDER_LINE, Quantity: 7 }]),
      version: '1',
      createdBy: user.userId,
      modifiedBy: user.userId,
      executedNoTime: 0,
    };
    expect((await server.call('PUT', CART, { body: update, token: user.token })).status).toBe(200);

    server.clock.now = start + LEASE_MS;
    const retry = await execute(user, ordercartId, key);
    expectAnswerOf(retry, line0OrderId);
    expect((await ordersOf(user.userId)).map((order) => order.quantity).sort()).toEqual([10, 20]);
    expect(await executedNoTime(ordercartId)).toBe(1);
  });

  it('a node that dies after every line and the count committed, before the answer was kept: the retry places nothing and counts nothing', async () => {
    const user = await server.createUser('crash-end');
    const ordercartId = await createCart(user);
    const key = newKey();
    const node = await nodeExecution(user, ordercartId, key, (real, ...args) => real(...args));
    const execution = await node.run();
    node.idempotency.stopRenewing(node.claim);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(1);

    server.clock.now = start + LEASE_MS;
    const retry = await execute(user, ordercartId, key);
    expectAnswerOf(retry, (execution.lines[0] as { orderId: string }).orderId);
    expect(retry.body.data).toEqual(execution.lines);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(1);
  });

  it('a 5xx half-way frees the key; the immediate retry places only the rest, and the execution is counted once', async () => {
    const user = await server.createUser('fail-mid');
    const ordercartId = await createCart(user);
    const key = newKey();
    let calls = 0;
    const node = await nodeExecution(user, ordercartId, key, (real, ...args) => {
      calls += 1;
      if (calls < 3) return real(...args);
      return Promise.reject(new Error('the database went away'));
    });
    await expect(node.run()).rejects.toThrow('the database went away');
    // What the HTTP layer does with a 500: the key is freed.
    await node.idempotency.finish(node.claim, { statusCode: 500, body: '', headers: {} });
    const line0OrderId = (await ordersOf(user.userId))[0]!.order_id;
    // The orders placed before the failure were counted.
    expect(await executedNoTime(ordercartId)).toBe(1);

    const retry = await execute(user, ordercartId, key);
    expectAnswerOf(retry, line0OrderId);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(1);
  });

  it('without a crash a keyed execute replays as before; without a key every execute places and counts again', async () => {
    const user = await server.createUser('no-crash');
    const ordercartId = await createCart(user, [EXAMPLE_ORDER_LINE]);
    const key = newKey();
    const first = await execute(user, ordercartId, key);
    expect(first.status, first.text).toBe(200);
    expect(first.body.code).toBe('s-101');
    const replay = await execute(user, ordercartId, key);
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await ordersOf(user.userId)).toHaveLength(1);
    expect(await executedNoTime(ordercartId)).toBe(1);

    for (const expected of [2, 3]) {
      const plain = await execute(user, ordercartId);
      expect(plain.status, plain.text).toBe(200);
      expect(plain.headers.get(REPLAYED)).toBeNull();
      expect(await ordersOf(user.userId)).toHaveLength(expected);
      expect(await executedNoTime(ordercartId)).toBe(expected);
    }
  });

  it('a slow run whose key was taken over is refused (409 e-116) at its next line, before it places it', async () => {
    const user = await server.createUser('slow-run');
    const ordercartId = await createCart(user);
    const key = newKey();
    let reachedLine2!: () => void;
    const stalled = new Promise<void>((resolve) => (reachedLine2 = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    let calls = 0;
    const node = await nodeExecution(user, ordercartId, key, async (real, ...args) => {
      calls += 1;
      if (calls === 3) {
        reachedLine2();
        await resumed;
      }
      return real(...args);
    });
    const slow = node.run();
    await stalled;
    node.idempotency.stopRenewing(node.claim);
    const line0OrderId = (await ordersOf(user.userId))[0]!.order_id;

    server.clock.now = start + LEASE_MS;
    expectAnswerOf(await execute(user, ordercartId, key), line0OrderId);

    // The slow run wakes up and tries to place line 2 itself: refused, nothing written.
    resume();
    await expect(slow).rejects.toMatchObject({ kind: { code: 'e-116' } });
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(1);
  });

  it('a key abandoned by an execution of one cart, taken over by an execution of another: nothing the first kept is taken', async () => {
    const user = await server.createUser('other-cart');
    const firstCart = await createCart(user);
    const otherCart = await createCart(user, [{ ...EXAMPLE_ORDER_LINE, Quantity: 3 }]);
    const key = newKey();
    await nodeDeadAtLine2(user, firstCart, key);

    server.clock.now = start + LEASE_MS;
    const other = await execute(user, otherCart, key);
    expect(other.status, other.text).toBe(200);
    expect(other.body.code).toBe('s-101');
    expect(other.body.data).toEqual([{ index: 0, status: 'success', orderId: expect.any(String) }]);
    expect((await ordersOf(user.userId)).map((order) => order.quantity).sort((a, b) => a - b)).toEqual([3, 10]);
    expect(await executedNoTime(otherCart)).toBe(1);
    expect(await executedNoTime(firstCart)).toBe(0);
  });

  it('a key past its 24 hours is a new request: the lines it kept are not taken again, the cart is executed anew', async () => {
    let user = await server.createUser('day-later');
    const ordercartId = await createCart(user, [EXAMPLE_ORDER_LINE]);
    const key = newKey();
    const first = await execute(user, ordercartId, key);
    expect(first.status, first.text).toBe(200);

    server.clock.now = start + REPLAY_WINDOW_MS;
    user = await login(user);
    const again = await execute(user, ordercartId, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get(REPLAYED)).toBeNull();
    expect(again.body.data[0].orderId).not.toBe(first.body.data[0].orderId);
    expect(await ordersOf(user.userId)).toHaveLength(2);
    expect(await executedNoTime(ordercartId)).toBe(2);
  });
});
