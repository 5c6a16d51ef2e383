import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const PATH = '/transactional/v1/ordercart';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A delivery limit order whose scrip-master record carries fields ordergate does not read. */
const DELIVERY_LINE = {
  scripDetail: {
    symbol: 'RELIANCE',
    _Series: 'EQ',
    _InstrumentName: 'EQUITIES',
    _ExchangeName: 'NSE',
    MarketLot: 1,
    PriceTick: 0.05,
    scripToken: 2885,
    _ISIN: 'INE002A01018',
    Segment: { id: 1, flags: ['liquid', null] },
  },
  TransactionType: 'SELL',
  OrderType: 'SL',
  Quantity: 5,
  Price: '2450.00',
  ProductType: 'DELIVERY',
  TriggerPrice: '2455.5',
  is_amo: false,
  disclosed_quantity: 0,
  validity: 'DAY',
};

function createBody(userId: string, lines: unknown[] = [EXAMPLE_ORDER_LINE], name = 'OFS basket') {
  return {
    ordercartName: name,
    orders: JSON.stringify(lines),
    version: '1',
    createdBy: userId,
    modifiedBy: userId,
    executedNoTime: 0,
  };
}

describe('order carts (happy paths)', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.createUser('alice');
  });
  afterAll(() => server.close());

  async function createCart(lines: unknown[] = [EXAMPLE_ORDER_LINE], name = 'OFS basket'): Promise<string> {
    const res = await server.call('POST', PATH, { body: createBody('alice', lines, name), token: alice.token });
    expect(res.status).toBe(200);
    return res.body.data.ordercartId;
  }

  it('create answers exactly the success envelope with the new ordercartId (a UUIDv7)', async () => {
    const res = await server.call('POST', PATH, { body: createBody('alice'), token: alice.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Order cart created successfully',
      data: { ordercartId: expect.stringMatching(UUID) },
    });
  });

  it('details answer the stored cart with orders as a JSON array, kept as sent, and a strong ETag', async () => {
    server.clock.now += 60_000;
    const createdAt = new Date(server.clock.now).toISOString();
    const id = await createCart([EXAMPLE_ORDER_LINE, DELIVERY_LINE], 'Two orders');
    const res = await server.call('GET', `${PATH}/${id}`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Ordercart details fetched successfully',
      data: {
        ordercartId: id,
        ordercartName: 'Two orders',
        orders: [EXAMPLE_ORDER_LINE, DELIVERY_LINE],
        version: '1',
        createdBy: 'alice',
        modifiedBy: 'alice',
        executedNoTime: 0,
        createdAt,
        modifiedAt: createdAt,
      },
    });
    expect(createdAt).toMatch(ISO_TIME);
    // Kept as sent: the same JSON text, key order included.
    expect(JSON.stringify(res.body.data.orders)).toBe(JSON.stringify([EXAMPLE_ORDER_LINE, DELIVERY_LINE]));
  });

  it('update answers exactly the seed body, bumps the ETag, and details show the new name and orders', async () => {
    const id = await createCart();
    server.clock.now += 90 * 60_000;
    const modifiedAt = new Date(server.clock.now).toISOString();
    const update = { ...createBody('alice', [DELIVERY_LINE], 'Renamed'), ordercartId: id };
    const res = await server.call('PUT', PATH, { body: update, token: alice.token });
    expect(res.status).toBe(200);
    expect(res.text).toBe(
      '{"status":"success","code":"s-101","message":"Order cart updated successfully","data":[{"message":"success"}]}',
    );
    expect(res.headers.get('etag')).toBe('"2"');

    const details = await server.call('GET', `${PATH}/${id}`, { token: alice.token });
    expect(details.headers.get('etag')).toBe('"2"');
    expect(details.body.data).toMatchObject({ ordercartName: 'Renamed', orders: [DELIVERY_LINE], modifiedAt });
    expect(details.body.data.createdAt).not.toBe(details.body.data.modifiedAt);
  });

  it('update with the current ETag in If-Match succeeds, and each update moves the ETag on', async () => {
    const id = await createCart();
    const etag = (await server.call('GET', `${PATH}/${id}`, { token: alice.token })).headers.get('etag')!;
    const update = { ...createBody('alice', [EXAMPLE_ORDER_LINE], 'First'), ordercartId: id };
    const first = await server.call('PUT', PATH, { body: update, token: alice.token, headers: { 'if-match': etag } });
    expect(first.status).toBe(200);
    expect(first.body.message).toBe('Order cart updated successfully');
    const second = await server.call('PUT', PATH, {
      body: { ...update, ordercartName: 'Second' },
      token: alice.token,
      headers: { 'if-match': first.headers.get('etag')! },
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('etag')).toBe('"3"');
    const details = await server.call('GET', `${PATH}/${id}`, { token: alice.token });
    expect(details.body.data.ordercartName).toBe('Second');
  });

  it('If-Match "*" or a list that holds the current ETag matches', async () => {
    const id = await createCart();
    const update = { ...createBody('alice'), ordercartId: id };
    const star = await server.call('PUT', PATH, { body: update, token: alice.token, headers: { 'if-match': '*' } });
    expect(star.status).toBe(200);
    const list = await server.call('PUT', PATH, {
      body: update,
      token: alice.token,
      headers: { 'if-match': '"1", "2"' },
    });
    expect(list.status).toBe(200);
    expect(list.headers.get('etag')).toBe('"3"');
  });

  it("list answers the caller's carts, newest first, each with its orders as an array; without paging parameters, the first page of 100", async () => {
    const fresh = await startTestServer();
    try {
      const bob = await fresh.createUser('bob');
      const empty = await fresh.call('GET', PATH, { token: bob.token });
      expect(empty.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Ordercart list fetched successfully',
        data: [],
      });
      expect(empty.headers.get('x-total-count')).toBe('0');

      const olderAt = new Date(fresh.clock.now).toISOString();
      const older = await fresh.call('POST', PATH, {
        body: createBody('bob', [EXAMPLE_ORDER_LINE], 'Older'),
        token: bob.token,
      });
      fresh.clock.now += 1000;
      const newerAt = new Date(fresh.clock.now).toISOString();
      const newer = await fresh.call('POST', PATH, {
        body: createBody('bob', [DELIVERY_LINE], 'Newer'),
        token: bob.token,
      });

      const res = await fresh.call('GET', PATH, { token: bob.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Ordercart list fetched successfully',
        data: [
          {
            ordercartId: newer.body.data.ordercartId,
            ordercartName: 'Newer',
            orders: [DELIVERY_LINE],
            version: '1',
            createdBy: 'bob',
            modifiedBy: 'bob',
            executedNoTime: 0,
            createdAt: newerAt,
            modifiedAt: newerAt,
          },
          {
            ordercartId: older.body.data.ordercartId,
            ordercartName: 'Older',
            orders: [EXAMPLE_ORDER_LINE],
            version: '1',
            createdBy: 'bob',
            modifiedBy: 'bob',
            executedNoTime: 0,
            createdAt: olderAt,
            modifiedAt: olderAt,
          },
        ],
      });
      expect(res.headers.get('x-total-count')).toBe('2');
    } finally {
      await fresh.close();
    }
  });

  it('delete answers the ODIN body, and the cart is gone from details and list', async () => {
    const id = await createCart();
    const res = await server.call('DELETE', `${PATH}/${id}`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Ordercart deleted successfully',
      data: [{ message: 'success' }],
    });
    const details = await server.call('GET', `${PATH}/${id}`, { token: alice.token });
    expect(details.status).toBe(404);
    expect(details.body.code).toBe('e-405');
    const list = await server.call('GET', PATH, { token: alice.token });
    expect(list.body.data.map((c: { ordercartId: string }) => c.ordercartId)).not.toContain(id);
  });

  it('accepts a full cart of 50 lines of every order and product type', async () => {
    const lines = Array.from({ length: 50 }, (_, i) => {
      const orderType = ['RL', 'RL-MKT', 'SL', 'SL-MKT'][i % 4]!;
      const product = ['INTRADAY', 'DELIVERY', 'BTST', 'MTF'][i % 4]!;
      const market = orderType.endsWith('-MKT');
      return {
        ...DELIVERY_LINE,
        TransactionType: 'BUY',
        OrderType: orderType,
        ProductType: product,
        Price: market ? '0' : '100.25',
        ...(orderType.startsWith('SL') ? { TriggerPrice: 99.5 } : { TriggerPrice: 0 }),
        validity: ['DAY', 'IOC', 'GTD', 'GTC', 'EOS', 'EOSESS', 'EOTODY'][i % 7],
      };
    });
    const id = await createCart(lines, 'Fifty');
    const details = await server.call('GET', `${PATH}/${id}`, { token: alice.token });
    expect(details.body.data.orders).toEqual(lines);
  });

  it('the OpenAPI document describes all five cart operations', async () => {
    const res = await server.call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths[PATH]).sort()).toEqual(['get', 'post', 'put']);
    expect(Object.keys(res.body.paths[`${PATH}/{ordercartId}`]).sort()).toEqual(['delete', 'get']);
  });
});
