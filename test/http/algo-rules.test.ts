/**
 * SEBI's rules for API and algo orders at the API (issue 23; docs/design/sebi-algo.md): every order carries
 * an algo ID (the exchange's generic one stamped, a registered one of the caller kept, any other refused
 * e-601); past the threshold of orders a second per user and segment, only a registered algo's orders are
 * taken (e-603, refused, not queued), counted across nodes through Redis; the kill switch stops an algo
 * (e-602) and cancels its live orders, on every order-entry path, and is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCallLog, memoryAdmit } from '../../src/rate-limit/call-logs.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { AdminError } from '../../src/domain/errors.js';
import { AlgoRepository } from '../../src/store/orders/algos.js';
import type { GenericAlgoIds } from '../../src/domain/orders/algo-rules.js';
import { sql } from 'kysely';
import { testDialect } from '../support/databases.js';
import { TEST_REDIS_URL, uniqueRedisPrefix, withRedis } from '../support/redis.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE = '/transactional/v1/orders/regular';
const ORDERS = '/transactional/v1/orders';
const CART = '/transactional/v1/ordercart';
const GENERIC: GenericAlgoIds = { NSE_EQ: 'NSEGEN', BSE_EQ: 'BSEGEN' };
const BSE_BID = {
  scrip_info: {
    exchange: 'BSE_EQ',
    scrip_token: 500113,
    symbol: 'SBIN',
    series: 'OF',
    expiry_date: '',
    strike_price: '',
    option_type: '',
  },
};
const MODIFY = { order_type: 'RL', quantity: '20', price: 101.5, disclosed_quantity: 0 };

const redisRuns = await withRedis();

/** A server with the rules on, its threshold counted on a clock the test moves (`threshold.now`). */
async function serverWithRules(thresholdPerSecond = 3): Promise<{ server: TestServer; threshold: { now: number } }> {
  const threshold = { now: 0 };
  const server = await startTestServer({
    algo: { genericIds: GENERIC, thresholdPerSecond, counter: memoryAdmit(new MemoryCallLog(() => threshold.now)) },
  });
  await server.registerIssue();
  await server.registerIssue({ exchange: 'BSE_EQ', scripToken: 500113 });
  return { server, threshold };
}

const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });

function expectRefused(res: CallResult, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ status: 'error', code });
}

async function algoIdsOf(server: TestServer, user: TestUser): Promise<(string | null)[]> {
  const rows = await server.store.db
    .selectFrom('orders')
    .select(['order_id', 'algo_id'])
    .where('user_id', '=', user.userId)
    .orderBy('order_id')
    .execute();
  return rows.map((row) => row.algo_id);
}

describe('the algo ID every order carries (ALGO_GENERIC_ID set)', () => {
  let server: TestServer;
  let threshold: { now: number };
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    ({ server, threshold } = await serverWithRules());
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    await server.algos.register(
      { algoId: 'A100', exchange: 'NSE_EQ', approvalRef: 'NSE/ALGO/1', name: 'Momentum', userIds: ['alice'] },
      'ops',
    );
  });
  afterAll(() => server.close());

  const place = (user: TestUser, overrides: Record<string, unknown> = {}) =>
    server.call('POST', PLACE, { body: validBid(overrides), ...as(user) });

  it("stamps the segment's generic ID on an order that sends none, keeps a registered one, and shows it in the order book and history", async () => {
    const stamped = await place(alice);
    expect(stamped.status, stamped.text).toBe(200);
    expect((await place(alice, { ...BSE_BID, algo_id: '' })).status).toBe(200);
    const registered = await place(alice, { algo_id: 'A100' });
    expect(registered.status, registered.text).toBe(200);
    expect(await algoIdsOf(server, alice)).toEqual(['NSEGEN', 'BSEGEN', 'A100']);

    const book = await server.call('GET', ORDERS, as(alice));
    expect(book.body.data.map((order: { algo_id: string }) => order.algo_id).sort()).toEqual([
      'A100',
      'BSEGEN',
      'NSEGEN',
    ]);
    const history = await server.call('GET', `${ORDERS}/${registered.body.data.orderId}`, as(alice));
    expect(history.body.data[0]).toMatchObject({ algo_id: 'A100' });
  });

  it("refuses an unknown ID, another user's, and one registered on the other segment, storing nothing", async () => {
    threshold.now += 1000;
    expectRefused(await place(bob, { algo_id: 'A100' }), 422, 'e-601');
    expectRefused(await place(bob, { algo_id: 'NOPE' }), 422, 'e-601');
    expectRefused(await place(alice, { ...BSE_BID, algo_id: 'A100' }), 422, 'e-601');
    expectRefused(await place(alice, { algo_id: 'BSEGEN' }), 422, 'e-601');
    expect(await algoIdsOf(server, bob)).toEqual([]);
  });

  it('refuses to register a generic ID, an unknown user, or the same ID under another approval', async () => {
    await expect(
      server.algos.register(
        { algoId: 'NSEGEN', exchange: 'NSE_EQ', approvalRef: 'x', name: null, userIds: ['bob'] },
        'ops',
      ),
    ).rejects.toThrow(AdminError);
    await expect(
      server.algos.register(
        { algoId: 'A101', exchange: 'NSE_EQ', approvalRef: 'x', name: null, userIds: ['nobody'] },
        'ops',
      ),
    ).rejects.toThrow(/no user nobody/);
    await expect(
      server.algos.register(
        { algoId: 'A100', exchange: 'NSE_EQ', approvalRef: 'other', name: null, userIds: ['bob'] },
        'ops',
      ),
    ).rejects.toThrow(/NSE\/ALGO\/1/);
    // Again with the same approval: bob is added, and may then use it.
    const again = await server.algos.register(
      { algoId: 'A100', exchange: 'NSE_EQ', approvalRef: 'NSE/ALGO/1', name: null, userIds: ['alice', 'bob'] },
      'ops',
    );
    expect(again).toMatchObject({ created: false, added: ['bob'] });
    expect((await place(bob, { algo_id: 'A100' })).status).toBe(200);
  });
});

describe('the threshold of orders a second per user and segment', () => {
  let server: TestServer;
  let threshold: { now: number };
  let carol: TestUser;

  beforeAll(async () => {
    ({ server, threshold } = await serverWithRules(3));
    carol = await server.createUser('carol', { category: 'NON_RETAIL' });
    await server.algos.register(
      { algoId: 'FAST1', exchange: 'NSE_EQ', approvalRef: 'NSE/ALGO/2', name: null, userIds: ['carol'] },
      'ops',
    );
  });
  afterAll(() => server.close());

  const place = (overrides: Record<string, unknown> = {}) =>
    server.call('POST', PLACE, { body: validBid(overrides), ...as(carol) });

  it('refuses, not queues, an order past it without a registered algo ID; the other segment, a registered algo and the next second are not held', async () => {
    const placed: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await place();
      expect(res.status, res.text).toBe(200);
      placed.push(res.body.data.orderId);
    }
    const over = await place();
    expectRefused(over, 429, 'e-603');
    expect(over.headers.get('retry-after')).toBe('1');
    expect(over.body.errors).toEqual([
      { field: 'algo_id', message: 'more than 3 orders a second on NSE_EQ need a registered algo ID' },
    ]);
    // A modification counts as an order: refused too.
    expectRefused(
      await server.call('PUT', `${PLACE}/NSE_EQ/${placed[0]}`, { body: MODIFY, ...as(carol) }),
      429,
      'e-603',
    );
    // Not stored, not queued: three orders, none modified.
    expect(await algoIdsOf(server, carol)).toEqual(['NSEGEN', 'NSEGEN', 'NSEGEN']);
    expect(
      (
        await server.store.db
          .selectFrom('orders')
          .select('quantity')
          .where('order_id', '=', placed[0]!)
          .executeTakeFirst()
      )?.quantity,
    ).toBe(10);

    // The other segment has its own count; a registered algo's orders pass (and count).
    expect((await place(BSE_BID)).status).toBe(200);
    expect((await place({ algo_id: 'FAST1' })).status).toBe(200);
    expect((await place({ algo_id: 'FAST1' })).status).toBe(200);

    // A second later the window is empty again.
    threshold.now += 1000;
    expect((await server.call('PUT', `${PLACE}/NSE_EQ/${placed[0]}`, { body: MODIFY, ...as(carol) })).status).toBe(200);
    expect((await place()).status).toBe(200);
  });

  it("refuses a cart execution's lines past it, one by one, and places the rest", async () => {
    threshold.now += 1000;
    const dave = await server.createUser('dave', { category: 'NON_RETAIL' });
    const lines = Array.from({ length: 5 }, (_, i) => ({ ...EXAMPLE_ORDER_LINE, Quantity: 10 + i }));
    const cart = await server.call('POST', CART, {
      body: {
        ordercartName: 'Five',
        orders: JSON.stringify(lines),
        version: '1',
        createdBy: 'dave',
        modifiedBy: 'dave',
        executedNoTime: 0,
      },
      token: dave.token,
    });
    expect(cart.status, cart.text).toBe(200);
    const execution = await server.call('POST', `${CART}/${cart.body.data.ordercartId}/execute`, as(dave));
    expect(execution.status, execution.text).toBe(200);
    expect(execution.body.data.map((line: { status: string; code?: string }) => line.code ?? line.status)).toEqual([
      'success',
      'success',
      'success',
      'e-603',
      'e-603',
    ]);
    expect(await algoIdsOf(server, dave)).toEqual(['NSEGEN', 'NSEGEN', 'NSEGEN']);
  });
});

describe('the kill switch', () => {
  let server: TestServer;
  let threshold: { now: number };
  let erin: TestUser;

  beforeAll(async () => {
    ({ server, threshold } = await serverWithRules(1000));
    erin = await server.createUser('erin', { category: 'NON_RETAIL' });
    for (const algoId of ['K1', 'K2', 'K3', 'K4']) {
      await server.algos.register(
        { algoId, exchange: 'NSE_EQ', approvalRef: `NSE/ALGO/${algoId}`, name: null, userIds: ['erin'] },
        'ops',
      );
    }
  });
  afterAll(() => server.close());

  const place = (overrides: Record<string, unknown> = {}) =>
    server.call('POST', PLACE, { body: validBid(overrides), ...as(erin) });
  const orderIdOf = (res: CallResult) => {
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  };

  it('cancels every live order of the algo, refuses its new orders until enabled, leaves the other orders, and records it all', async () => {
    const k1 = [orderIdOf(await place({ algo_id: 'K1' })), orderIdOf(await place({ algo_id: 'K1' }))];
    const other = orderIdOf(await place());

    const result = await server.algos.disable('K1', 'NSE instruction 7', 'ops');
    expect(result).toMatchObject({ stoppedNow: true, notCancelled: [] });
    expect(result.cancelled.sort()).toEqual([...k1].sort());
    for (const orderId of k1) {
      const history = await server.call('GET', `${ORDERS}/${orderId}`, as(erin));
      expect(history.body.data.at(-1)).toMatchObject({
        algo_id: 'K1',
        reason: 'Cancelled by the kill switch of algo K1: NSE instruction 7',
      });
    }
    const untouched = await server.store.db
      .selectFrom('orders')
      .select('cancel_requested_at')
      .where('order_id', '=', other)
      .executeTakeFirst();
    expect(untouched?.cancel_requested_at).toBeNull();

    const refused = await place({ algo_id: 'K1' });
    expectRefused(refused, 422, 'e-602');
    expect(refused.body.message).toContain('NSE instruction 7');
    // Again: nothing left to cancel.
    expect(await server.algos.disable('K1', 'again', 'ops')).toMatchObject({
      stoppedNow: false,
      cancelled: [],
      notCancelled: [],
    });

    await server.algos.enable('K1', 'NSE allowed it again', 'ops');
    expect((await place({ algo_id: 'K1' })).status).toBe(200);
    const { changes } = await server.algos.history('K1');
    expect(changes.map((c) => [c.action, c.actor])).toEqual([
      ['register', 'ops'],
      ['disable', 'ops'],
      ['cancel-orders', 'ops'],
      ['cancel-orders', 'ops'],
      ['enable', 'ops'],
    ]);
    expect(changes[2]!.detail).toBe(`cancelled 2: ${result.cancelled.join(',')}; not cancelled 0`);
  });

  it('refuses a modification of an order whose algo was stopped since (the stop committed, its sweep not there yet); its owner may still cancel it', async () => {
    threshold.now += 1000;
    const orderId = orderIdOf(await place({ algo_id: 'K2' }));
    const algos = new AlgoRepository(server.store.db, server.store.dialect);
    await server.store.writeTransaction((tx) =>
      algos.setDisabled(tx, 'K2', server.clock.now, 'stopped on another node'),
    );
    expectRefused(await server.call('PUT', `${PLACE}/NSE_EQ/${orderId}`, { body: MODIFY, ...as(erin) }), 422, 'e-602');
    expect((await server.call('DELETE', `${PLACE}/NSE_EQ/${orderId}`, as(erin))).status).toBe(200);
  });

  it('leaves no live order of the algo behind when orders arrive while it is stopped', async () => {
    threshold.now += 1000;
    const bids = Array.from({ length: 24 }, () => place({ algo_id: 'K3' }));
    const stop = server.algos.disable('K3', 'runaway', 'ops');
    const answers = await Promise.all(bids);
    await stop;
    // Every bid was either refused by the stop or placed and then cancelled by it (or by a sweep after it).
    for (const answer of answers) if (answer.status !== 200) expectRefused(answer, 422, 'e-602');
    const sweep = await server.algos.disable('K3', 'sweep', 'ops');
    const live = await server.store.db
      .selectFrom('orders')
      .select('order_id')
      .where('algo_id', '=', 'K3')
      .where('cancel_requested_at', 'is', null)
      .execute();
    expect(live).toEqual([]);
    // The first stop's sweep found every order placed before it; the second found none.
    expect(sweep.cancelled).toEqual([]);
    expect(answers.filter((a) => a.status === 200).length + answers.filter((a) => a.status === 422).length).toBe(24);
  });

  it.runIf(testDialect() === 'postgres')(
    'waits, on PostgreSQL, for a commit that read the algo before stopping it: no order slips past its sweep',
    async () => {
      threshold.now += 1000;
      const algos = new AlgoRepository(server.store.db, server.store.dialect);
      let release!: () => void;
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      // A batch that has read K4 (as order entry's does, share-locked) and not committed yet.
      const batch = server.store.writeTransaction(async (tx) => {
        expect((await algos.lockForOrders(tx, ['K4'])).get('K4')?.disabledAt).toBeNull();
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await isLocked;
      const stop = server.algos.disable('K4', 'runaway', 'ops');
      try {
        // The stop's lock of the algo's row waits for the batch's: seen in PostgreSQL's own view of who waits for a lock.
        await until(async () => {
          const { rows } = await sql<{ waiting: string }>`select count(*) as waiting from pg_stat_activity
          where wait_event_type = 'Lock' and query like '%from "algos"%for update%'`.execute(server.store.db);
          return Number(rows[0]!.waiting) === 1;
        });
        expect((await algos.find('K4'))?.disabledAt).toBeNull();
      } finally {
        release();
      }
      await batch;
      expect((await stop).stoppedNow).toBe(true);
    },
  );
});

/** Resolves once `condition` holds (asked every 10 ms, for at most 10 s). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (const started = Date.now(); !(await condition());) {
    if (Date.now() - started > 10_000) throw new Error('the condition did not come true within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('with the rules off (ALGO_GENERIC_ID unset)', () => {
  let server: TestServer;
  let frank: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    frank = await server.createUser('frank');
    await server.algos.register(
      { algoId: 'K9', exchange: 'NSE_EQ', approvalRef: 'NSE/ALGO/9', name: null, userIds: ['frank'] },
      'ops',
    );
  });
  afterAll(() => server.close());

  it('stores an algo_id as sent and none as none, but still refuses a stopped algo', async () => {
    const place = (overrides: Record<string, unknown> = {}) =>
      server.call('POST', PLACE, { body: validBid(overrides), ...as(frank) });
    expect((await place({ algo_id: 'my-tag' })).status).toBe(200);
    expect((await place()).status).toBe(200);
    expect((await place({ algo_id: 'K9' })).status).toBe(200);
    expect(await algoIdsOf(server, frank)).toEqual(['my-tag', null, 'K9']);
    await server.algos.disable('K9', 'stop', 'ops');
    expectRefused(await place({ algo_id: 'K9' }), 422, 'e-602');
  });
});

describe.runIf(redisRuns)('the threshold across nodes, counted in Redis', () => {
  it("counts a user's orders on every node together", async () => {
    const shared = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() };
    const nodes = await Promise.all(
      [0, 1].map(() => startTestServer({ algo: { genericIds: GENERIC, thresholdPerSecond: 2 }, rateLimits: shared })),
    );
    try {
      const users = await Promise.all(
        nodes.map(async (node) => {
          await node.registerIssue();
          return node.createUser('gina');
        }),
      );
      const place = (i: number) => nodes[i]!.call('POST', PLACE, { body: validBid(), ...as(users[i]!) });
      expect((await place(0)).status).toBe(200);
      expect((await place(1)).status).toBe(200);
      expectRefused(await place(0), 429, 'e-603');
      expectRefused(await place(1), 429, 'e-603');
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
    }
  });
});
