import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE, type UpdateOrderCartRequest } from '../../src/schemas/ordercart.js';
import type { Caller } from '../../src/services/auth.js';
import { OrderCartService, type CartPlacement } from '../../src/services/order-carts.js';
import { OrderCartRepository } from '../../src/store/orders/carts.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { DELIVERY_LINE } from '../support/fixtures.js';
import { testMember } from '../support/member-data.js';

const PATH = '/transactional/v1/ordercart';

function createBody(overrides: Record<string, unknown> = {}) {
  return {
    ordercartName: 'My cart',
    orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
    version: '1',
    createdBy: 'alice',
    modifiedBy: 'alice',
    executedNoTime: 0,
    ...overrides,
  };
}

function ordersOf(...lines: unknown[]): string {
  return JSON.stringify(lines);
}

const fieldsOf = (body: { errors: { field: string }[] }) => body.errors.map((e) => e.field);

describe('order cart errors: one rule each', () => {
  let server: TestServer;
  let alice: TestUser;
  let cartId: string;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.createUser('alice');
    await server.createUser('bob');
  });
  afterAll(() => server.close());

  beforeEach(async () => {
    const res = await server.call('POST', PATH, { body: createBody(), token: alice.token });
    expect(res.status).toBe(200);
    cartId = res.body.data.ordercartId;
  });

  const create = (overrides: Record<string, unknown>) =>
    server.call('POST', PATH, { body: createBody(overrides), token: alice.token });
  const update = (overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    server.call('PUT', PATH, {
      body: { ...createBody({ ordercartName: 'Changed' }), ordercartId: cartId, ...overrides },
      token: alice.token,
      headers,
    });

  async function storedCart() {
    return server.store.db
      .selectFrom('order_carts')
      .selectAll()
      .where('ordercart_id', '=', cartId)
      .executeTakeFirstOrThrow();
  }

  function expectError(res: Awaited<ReturnType<typeof create>>, status: number, code: string, fields: string[]) {
    expect({ status: res.status, code: res.body?.code, fields: res.body ? fieldsOf(res.body) : [] }).toEqual({
      status,
      code,
      fields,
    });
    expect(res.body.status).toBe('error');
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
  }

  describe('orders (400)', () => {
    it('e-401: orders that is not JSON', async () => {
      const res = await create({ orders: '[{"TransactionType": BUY}]' });
      expectError(res, 400, 'e-401', ['orders']);
      expect(res.body.message).toMatch(/^orders must be a string holding JSON/);
    });

    it('e-401: an empty orders string', async () => {
      expectError(await create({ orders: '' }), 400, 'e-401', ['orders']);
    });

    it('e-104: orders sent as a nested JSON array instead of a string (seed 4.2 rule 2)', async () => {
      expectError(await create({ orders: [EXAMPLE_ORDER_LINE] }), 400, 'e-104', ['orders']);
    });

    it.each([
      ['an object', JSON.stringify(EXAMPLE_ORDER_LINE)],
      ['a number', '42'],
      ['null', 'null'],
      ['an empty array', '[]'],
      ['51 lines', ordersOf(...Array.from({ length: 51 }, () => EXAMPLE_ORDER_LINE))],
    ])('e-402: orders holding %s', async (_what, orders) => {
      expectError(await create({ orders }), 400, 'e-402', ['orders']);
    });

    it('e-403: every bad field of every line is listed, named orders[i].Field', async () => {
      const { Quantity: _dropped, ...noQuantity } = DELIVERY_LINE;
      const res = await create({
        orders: ordersOf(
          EXAMPLE_ORDER_LINE,
          { ...noQuantity, OrderType: 'LIMIT', scripDetail: { ...DELIVERY_LINE.scripDetail, MarketLot: 0 } },
          'not a line',
          {
            ...DELIVERY_LINE,
            Price: 1500,
            Validity: 'DAY',
          },
        ),
      });
      expectError(res, 400, 'e-403', [
        'orders[1].Quantity',
        'orders[1].scripDetail.MarketLot',
        'orders[1].OrderType',
        'orders[2]',
        'orders[3].Validity',
        'orders[3].Price',
      ]);
      expect(res.body.errors).toContainEqual({
        field: 'orders[1].OrderType',
        message:
          'orders[1].OrderType must be RL (limit), RL-MKT (market), SL (stop-loss limit) or SL-MKT (stop-loss market)',
      });
      expect(res.body.errors).toContainEqual({
        field: 'orders[3].Price',
        message: 'orders[3].Price must be a string, e.g. "1500"',
      });
      expect(res.body.errors).toContainEqual({
        field: 'orders[3].Validity',
        message: 'orders[3].Validity is not a field of an order line; scrip-master fields belong in scripDetail',
      });
    });

    it.each([
      ['a stop-loss order without TriggerPrice', { OrderType: 'SL', Price: '1500' }, 'orders[0].TriggerPrice'],
      [
        'a stop-loss market order with TriggerPrice 0',
        { OrderType: 'SL-MKT', Price: '0', TriggerPrice: 0 },
        'orders[0].TriggerPrice',
      ],
      ['a limit order with a trigger price', { TriggerPrice: '1490' }, 'orders[0].TriggerPrice'],
      ['a BUY SL whose trigger is above its price', { OrderType: 'SL', TriggerPrice: 1501 }, 'orders[0].TriggerPrice'],
      [
        'a SELL SL whose trigger is below its price',
        { OrderType: 'SL', TransactionType: 'SELL', TriggerPrice: '1499.95' },
        'orders[0].TriggerPrice',
      ],
      ['a market order with a price', { OrderType: 'RL-MKT', Price: '1500' }, 'orders[0].Price'],
      ['a limit order at price 0', { Price: '0.00' }, 'orders[0].Price'],
      ['a Price that is not a decimal', { Price: '1,500' }, 'orders[0].Price'],
      ['a TriggerPrice that is not a number', { OrderType: 'SL', TriggerPrice: 'soon' }, 'orders[0].TriggerPrice'],
      ['disclosed_quantity above Quantity', { disclosed_quantity: 11 }, 'orders[0].disclosed_quantity'],
      ['an empty validity on a non-OFS line', { validity: '' }, 'orders[0].validity'],
      ['a validity outside the list', { validity: 'WEEK' }, 'orders[0].validity'],
      ['an unknown ProductType', { ProductType: 'CNC' }, 'orders[0].ProductType'],
      ['a Quantity of 0', { Quantity: 0 }, 'orders[0].Quantity'],
      ['a Quantity sent as a string', { Quantity: '10' }, 'orders[0].Quantity'],
      ['a fractional Quantity', { Quantity: 1.5 }, 'orders[0].Quantity'],
      [
        'a scripDetail without symbol',
        { scripDetail: { ...DELIVERY_LINE.scripDetail, symbol: undefined } },
        'orders[0].scripDetail.symbol',
      ],
      [
        'a PriceTick of 0',
        { scripDetail: { ...DELIVERY_LINE.scripDetail, PriceTick: 0 } },
        'orders[0].scripDetail.PriceTick',
      ],
      [
        'scrip-master data nested 20 levels deep',
        { scripDetail: { ...DELIVERY_LINE.scripDetail, x: JSON.parse('['.repeat(20) + ']'.repeat(20)) } },
        'orders[0]',
      ],
    ])('e-403: %s', async (_rule, change, field) => {
      const res = await create({ orders: ordersOf({ ...DELIVERY_LINE, ...change }) });
      expectError(res, 400, 'e-403', [field]);
      expect(res.body.message.startsWith(field)).toBe(true);
    });

    it.each([
      ['orders[0].Quantity', { Quantity: 1e15 }, 'orders[0].Quantity must be a whole number from 1 to 999999999999999'],
      [
        'orders[0].scripDetail.MarketLot',
        { scripDetail: { ...DELIVERY_LINE.scripDetail, MarketLot: 1e20 } },
        'orders[0].scripDetail.MarketLot must be a whole number from 1 to 999999999999999 (units per lot)',
      ],
    ])('e-403: %s above the maximum is refused with a message naming the maximum', async (field, change, message) => {
      const res = await create({ orders: ordersOf({ ...DELIVERY_LINE, ...change }) });
      expectError(res, 400, 'e-403', [field]);
      expect(res.body.message).toBe(message);
    });

    it.each([
      ['validity DAY', { validity: 'DAY' }, 'orders[0].validity'],
      ['TransactionType SELL', { TransactionType: 'SELL' }, 'orders[0].TransactionType'],
      ['a stop-loss OrderType', { OrderType: 'SL', TriggerPrice: 100 }, 'orders[0].OrderType'],
      ['is_amo true', { is_amo: true }, 'orders[0].is_amo'],
      [
        'an exchange other than NSE or BSE',
        { scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, _ExchangeName: 'NFO' } },
        'orders[0].scripDetail._ExchangeName',
      ],
      [
        'an expiry date',
        { scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, _ExpiryDate: '2026-12-31' } },
        'orders[0].scripDetail._ExpiryDate',
      ],
      [
        'a strike price',
        { scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, _StrikePrice: 100 } },
        'orders[0].scripDetail._StrikePrice',
      ],
    ])('e-403: an OFS line with %s', async (_rule, change, field) => {
      const res = await create({ orders: ordersOf({ ...EXAMPLE_ORDER_LINE, ...change }) });
      expectError(res, 400, 'e-403', [field]);
    });

    it('an OFS line without validity, or at the cut-off price, is valid', async () => {
      const { validity: _none, ...noValidity } = EXAMPLE_ORDER_LINE;
      const res = await create({
        orders: ordersOf(noValidity, { ...EXAMPLE_ORDER_LINE, OrderType: 'RL-MKT', Price: '0' }),
      });
      expect(res.status).toBe(200);
    });
  });

  describe('the other fields (400)', () => {
    it('e-404: version other than "1"', async () => {
      const res = await create({ version: '2' });
      expectError(res, 400, 'e-404', ['version']);
      expect(res.body.message).toBe('version must be "1", the only ordercart schema version.');
    });

    it('e-104: version sent as a number (it is not "1" either)', async () => {
      const res = await create({ version: 1 });
      expectError(res, 400, 'e-104', ['version']);
      expect(res.body.message).toBe('version must be a string, e.g. "1"');
    });

    it.each([
      ['empty', ''],
      ['101 characters', 'x'.repeat(101)],
      ['a control character', 'tab\there'],
    ])('e-411: ordercartName %s', async (_what, ordercartName) => {
      expectError(await create({ ordercartName }), 400, 'e-411', ['ordercartName']);
    });

    it('a name of exactly 100 characters (astral ones count once) is accepted', async () => {
      const res = await create({ ordercartName: '\u{1F4C8}'.repeat(100) });
      expect(res.status).toBe(200);
    });

    it('e-409: executedNoTime other than 0 on create', async () => {
      expectError(await create({ executedNoTime: 2 }), 400, 'e-409', ['executedNoTime']);
    });

    it('e-105: a field the contract does not define', async () => {
      expectError(await create({ ordercartId: 'mine' }), 400, 'e-105', ['ordercartId']);
    });

    it('e-103: the update without ordercartId', async () => {
      const res = await server.call('PUT', PATH, { body: createBody(), token: alice.token });
      expectError(res, 400, 'e-103', ['ordercartId']);
    });

    it('e-104: executedNoTime sent as a string', async () => {
      expectError(await update({ executedNoTime: '0' }), 400, 'e-104', ['executedNoTime']);
    });

    it('e-106: a negative executedNoTime on update', async () => {
      expectError(await update({ executedNoTime: -1 }), 400, 'e-106', ['executedNoTime']);
    });

    it('e-106: an ordercartId with characters no id has', async () => {
      expectError(await update({ ordercartId: 'two words' }), 400, 'e-106', ['ordercartId']);
    });

    it('request-alone rules come first: bad orders on an unknown cart answer 400, not 404', async () => {
      const res = await update({
        ordercartId: 'no-such-cart',
        orders: ordersOf({ ...EXAMPLE_ORDER_LINE, Quantity: 0 }),
      });
      expectError(res, 400, 'e-403', ['orders[0].Quantity']);
    });
  });

  describe('create: who writes (403)', () => {
    it('e-406: createdBy is not the caller', async () => {
      const res = await create({ createdBy: 'bob' });
      expectError(res, 403, 'e-406', ['createdBy']);
    });

    it('e-406: modifiedBy is not the caller', async () => {
      expectError(await create({ modifiedBy: 'bob' }), 403, 'e-406', ['modifiedBy']);
    });
  });

  describe('update: rules against the stored cart', () => {
    it('e-405: an ordercartId that does not exist (404)', async () => {
      const res = await update({ ordercartId: '0190a0c1-0000-7000-8000-000000000000' });
      expectError(res, 404, 'e-405', ['ordercartId']);
    });

    it('e-405: a path id with characters no id has (404, like any unknown cart)', async () => {
      expectError(await server.call('GET', `${PATH}/two%20words`, { token: alice.token }), 404, 'e-405', [
        'ordercartId',
      ]);
    });

    it('e-405: details and delete of an unknown cart (404)', async () => {
      expectError(await server.call('GET', `${PATH}/nope`, { token: alice.token }), 404, 'e-405', ['ordercartId']);
      expectError(await server.call('DELETE', `${PATH}/nope`, { token: alice.token }), 404, 'e-405', ['ordercartId']);
    });

    it('e-407: createdBy is not the creator of the cart (403), and the cart is unchanged', async () => {
      const res = await update({ createdBy: 'bob' });
      expectError(res, 403, 'e-407', ['createdBy']);
      expect(await storedCart()).toMatchObject({ name: 'My cart', revision: 1 });
    });

    it('e-406: modifiedBy is not the caller (403)', async () => {
      expectError(await update({ modifiedBy: 'bob' }), 403, 'e-406', ['modifiedBy']);
    });

    it('e-408: executedNoTime differs from the stored count (409); the stored count is accepted', async () => {
      // Two executions since the caller read the cart.
      await server.store.db
        .updateTable('order_carts')
        .set({ executed_no_time: 2 })
        .where('ordercart_id', '=', cartId)
        .execute();
      const stale = await update({ executedNoTime: 0 });
      expectError(stale, 409, 'e-408', ['executedNoTime']);
      expect((await storedCart()).name).toBe('My cart');
      const fresh = await update({ executedNoTime: 2 });
      expect(fresh.status).toBe(200);
      expect(await storedCart()).toMatchObject({ name: 'Changed', executed_no_time: 2 });
    });

    it('e-410: If-Match that no longer matches (412) answers the current ETag and changes nothing', async () => {
      expect((await update({ ordercartName: 'Someone else' })).status).toBe(200);
      const res = await update({}, { 'if-match': '"1"' });
      expectError(res, 412, 'e-410', ['If-Match']);
      expect(res.headers.get('etag')).toBe('"2"');
      expect(await storedCart()).toMatchObject({ name: 'Someone else', revision: 2 });
    });

    it.each([['W/"1"'], ['1'], ['"1"x']])('e-410: If-Match %s does not match the strong ETag "1"', async (ifMatch) => {
      expectError(await update({}, { 'if-match': ifMatch }), 412, 'e-410', ['If-Match']);
    });

    it('403 comes before 412 and 409; 412 comes before 409', async () => {
      await server.store.db
        .updateTable('order_carts')
        .set({ executed_no_time: 1, revision: 5 })
        .where('ordercart_id', '=', cartId)
        .execute();
      expectError(await update({ createdBy: 'bob' }, { 'if-match': '"1"' }), 403, 'e-407', ['createdBy']);
      expectError(await update({}, { 'if-match': '"1"' }), 412, 'e-410', ['If-Match']);
      expectError(await update({}, { 'if-match': '"5"' }), 409, 'e-408', ['executedNoTime']);
    });
  });
});

/**
 * In one process over SQLite, the requests of a burst never interleave between their read and their
 * write (better-sqlite3 answers synchronously), so the race is forced here: every update reads the cart,
 * then all of them write. The store is the real one; only the timing is arranged.
 */
describe('order cart updates are atomic when they race', () => {
  let server: TestServer;
  let cartId: string;
  const caller: Caller = {
    userId: 'alice',
    category: 'RETAIL',
    member: testMember('alice'),
    tokenHash: 'unused',
    expiresAt: Number.MAX_SAFE_INTEGER,
  };
  /**
   * These services only update carts: an execution reaching the placement would be a broken test. An update
   * reads the OFS registry, to check its OFS lines' prices: here it is empty, so no line is judged.
   */
  const refusingPlacement: CartPlacement = {
    orderEntry: { placeOfsBid: () => Promise.reject(new Error('an update placed an order')) },
    issues: { list: () => Promise.resolve([]) },
  };

  /** Holds each of the first `readers` reads until all of them have read. */
  class InterleavingRepository extends OrderCartRepository {
    private readonly held: (() => void)[] = [];
    constructor(
      db: TestServer['store']['db'],
      private readers: number,
    ) {
      super(db);
    }
    override async findOwned(ordercartId: string, userId: string) {
      const row = await super.findOwned(ordercartId, userId);
      if (this.readers > 0) {
        this.readers -= 1;
        await new Promise<void>((resolve) => {
          this.held.push(resolve);
          if (this.readers === 0) for (const release of this.held) release();
        });
      }
      return row;
    }
  }

  beforeAll(async () => {
    server = await startTestServer();
    const alice = await server.createUser('alice');
    const res = await server.call('POST', PATH, { body: createBody(), token: alice.token });
    cartId = res.body.data.ordercartId;
  });
  afterAll(() => server.close());

  const request = (name: string) =>
    ({ ...createBody({ ordercartName: name }), ordercartId: cartId }) as UpdateOrderCartRequest;

  async function storedCart() {
    return server.store.db
      .selectFrom('order_carts')
      .selectAll()
      .where('ordercart_id', '=', cartId)
      .executeTakeFirstOrThrow();
  }

  it('two updates with the same If-Match: one wins, the other answers 412 e-410', async () => {
    const { revision } = await storedCart();
    const service = new OrderCartService(
      new InterleavingRepository(server.store.db, 2),
      () => server.clock.now,
      refusingPlacement,
    );
    const outcomes = await Promise.allSettled([
      service.update(caller, request('A'), `"${revision}"`),
      service.update(caller, request('B'), `"${revision}"`),
    ]);
    // On PostgreSQL the two writes race on separate connections: either may be the one that wins.
    const winner = outcomes.findIndex((o) => o.status === 'fulfilled');
    expect(winner).toBeGreaterThanOrEqual(0);
    expect(outcomes[winner]).toEqual({ status: 'fulfilled', value: `"${revision + 1}"` });
    expect(outcomes[1 - winner]).toMatchObject({ status: 'rejected', reason: { kind: { code: 'e-410' } } });
    expect(await storedCart()).toMatchObject({ name: ['A', 'B'][winner], revision: revision + 1 });
  });

  it('two updates without If-Match: the later one is judged again on the state the first left, and both land', async () => {
    const { revision } = await storedCart();
    const service = new OrderCartService(
      new InterleavingRepository(server.store.db, 2),
      () => server.clock.now,
      refusingPlacement,
    );
    const etags = await Promise.all([
      service.update(caller, request('C'), undefined),
      service.update(caller, request('D'), undefined),
    ]);
    expect([...etags].sort()).toEqual([`"${revision + 1}"`, `"${revision + 2}"`]);
    // The update that answered the later revision is the one the cart holds.
    const last = etags.indexOf(`"${revision + 2}"`);
    expect(await storedCart()).toMatchObject({ name: ['C', 'D'][last], revision: revision + 2 });
  });

  it('an execution between the read and the write makes the update answer 409 e-408', async () => {
    class ExecutedMeanwhile extends OrderCartRepository {
      override async findOwned(ordercartId: string, userId: string) {
        const row = await super.findOwned(ordercartId, userId);
        // The first read is followed by an execution of the cart, before the update writes.
        if (row && row.executedNoTime === 0) {
          await server.store.db
            .updateTable('order_carts')
            .set({ executed_no_time: 1 })
            .where('ordercart_id', '=', ordercartId)
            .execute();
        }
        return row;
      }
    }
    const before = await storedCart();
    const service = new OrderCartService(
      new ExecutedMeanwhile(server.store.db),
      () => server.clock.now,
      refusingPlacement,
    );
    await expect(service.update(caller, request('E'), undefined)).rejects.toMatchObject({ kind: { code: 'e-408' } });
    expect(await storedCart()).toMatchObject({ name: before.name, revision: before.revision });
  });
});
