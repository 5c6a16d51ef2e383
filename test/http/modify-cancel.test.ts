/**
 * PUT / DELETE /transactional/v1/orders/regular/{exchange}/{order_id}: modify and cancel a live OFS bid
 * (product.md "Order book, history, modify and cancel"; issue 3 part 5). What the OMS is handed: the order
 * row changed in place, a history entry and an outbox entry. Then every refusal, with its status, code
 * and field, and nothing changed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import {
  startTestServer,
  validBid,
  type CallOptions,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const HOUR = 60 * 60 * 1000;

const modifyBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  order_type: 'RL',
  quantity: '20',
  price: 102,
  traded_quantity: 0,
  disclosed_quantity: 0,
  validity: '',
  validity_days: 0,
  trigger_price: null,
  ...overrides,
});

describe('modify and cancel an OFS bid', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nora: TestUser;
  let start: number;
  let retailClosesAt: number;

  beforeAll(async () => {
    server = await startTestServer();
    start = server.clock.now;
    const issue = await server.registerIssue();
    retailClosesAt = issue.retailClosesAt;
    await server.registerIssue({ exchange: 'BSE_EQ', scripToken: 543210 });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  beforeEach(() => {
    server.clock.now = start;
  });

  const as = (user: TestUser): CallOptions => ({ token: user.token, apiKey: user.apiKey });

  async function place(user: TestUser = alice, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await server.call('POST', PLACE_ORDER, { body: validBid(overrides), ...as(user) });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  const modify = (
    orderId: string,
    body: unknown,
    options: CallOptions = as(alice),
    exchange = 'NSE_EQ',
  ): Promise<CallResult> => server.call('PUT', `${PLACE_ORDER}/${exchange}/${orderId}`, { body, ...options });
  const cancel = (orderId: string, options: CallOptions = as(alice), exchange = 'NSE_EQ'): Promise<CallResult> =>
    server.call('DELETE', `${PLACE_ORDER}/${exchange}/${orderId}`, options);

  const orderRow = (orderId: string) =>
    server.store.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirstOrThrow();
  const historyOf = (orderId: string) =>
    server.store.db.selectFrom('order_history').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
  const outboxOf = async (orderId: string) =>
    (
      await server.store.db
        .selectFrom('outbox')
        .select('action')
        .where('order_id', '=', orderId)
        .orderBy('id')
        .execute()
    ).map((r) => r.action);

  /** Everything a refused call must leave as it was. */
  const snapshot = async (orderId: string) => ({
    order: await orderRow(orderId),
    history: await historyOf(orderId),
    outbox: await outboxOf(orderId),
  });

  async function expectRefusal(
    res: CallResult,
    kind: ErrorKind,
    field: string,
    orderId?: string,
    before?: unknown,
  ): Promise<void> {
    expect(res.status, res.text).toBe(kind.status);
    expect(res.body.code, res.text).toBe(kind.code);
    expect(res.body.status).toBe('error');
    expect(Object.keys(res.body).sort()).toEqual(['code', 'errors', 'message', 'request_id', 'status']);
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(
      res.body.errors.map((e: { field: string }) => e.field),
      res.text,
    ).toContain(field);
    if (orderId !== undefined) expect(await snapshot(orderId)).toEqual(before);
  }

  describe('modify', () => {
    it('answers "Order Modification Sent to OMS" and changes the order in place, with a history entry and a MODIFY for the OMS', async () => {
      const orderId = await place(alice, { quantity: '10', price: 101 });
      server.clock.now = start + 5000;
      const res = await modify(orderId, modifyBody({ quantity: '20', price: 102, disclosed_quantity: 5 }));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Order Modification Sent to OMS',
        data: { orderId },
      });
      expect(await orderRow(orderId)).toMatchObject({
        order_type: 'RL',
        quantity: 20,
        price_paise: 10_200,
        disclosed_quantity: 5,
        status: 'OMSXMITTED',
        created_at: start,
        updated_at: start + 5000,
        cancel_requested_at: null,
      });
      const history = await historyOf(orderId);
      expect(history).toHaveLength(2);
      expect(history[1]).toMatchObject({
        status: 'OMSXMITTED',
        reason: 'Modification requested: quantity 10 -> 20, price 101.00 -> 102.00, disclosed_quantity 0 -> 5',
        quantity: 20,
        price_paise: 10_200,
        traded_quantity: 0,
        at: start + 5000,
      });
      expect(await outboxOf(orderId)).toEqual(['PLACE', 'MODIFY']);
    });

    it("takes the body the ODIN SDK sends: the path's exchange and order_id repeated, quantities as numbers, validity DAY, trigger_price 0", async () => {
      const orderId = await place(alice, { quantity: '10', price: 101 });
      // pycloudrestapi's documented modify_order example, with this order's path values.
      const odin = {
        exchange: 'NSE_EQ',
        order_id: orderId,
        order_type: 'RL',
        quantity: 12,
        traded_quantity: 0,
        price: 101.5,
        trigger_price: 0,
        disclosed_quantity: 0,
        validity: 'DAY',
        validity_days: 0,
      };
      const res = await modify(orderId, odin);
      expect(res.status, res.text).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ quantity: 12, price_paise: 10_150 });
      // Digits as strings are taken for traded_quantity too; a traded quantity that is not the order's is stale.
      expect((await modify(orderId, { ...odin, quantity: '13', traded_quantity: '0' })).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ quantity: 13 });
      const before = await snapshot(orderId);
      await expectRefusal(
        await modify(orderId, { ...odin, traded_quantity: 3 }),
        Errors.ORDER_TRADED_QUANTITY_STALE,
        'traded_quantity',
        orderId,
        before,
      );
    });

    it.each([
      ['exchange', { exchange: 'BSE_EQ' }],
      ['exchange', { exchange: 'nse_eq' }],
      ['order_id', { order_id: '01890000-0000-7000-8000-000000000000' }],
      ['order_id', { order_id: '' }],
    ])("refuses a body whose %s is not the path's: 400 e-375, nothing changed", async (field, overrides) => {
      const orderId = await place();
      const before = await snapshot(orderId);
      const res = await modify(orderId, modifyBody(overrides));
      await expectRefusal(res, Errors.ORDER_PATH_MISMATCH, field, orderId, before);
      expect(res.body.errors).toEqual([
        { field, message: `${field} must be the path's, ${field === 'exchange' ? 'NSE_EQ' : orderId}, or left out` },
      ]);
    });

    it('takes the minimal body (order_type, quantity, price) and turns a price bid into a cut-off bid', async () => {
      const orderId = await place();
      const res = await modify(orderId, { order_type: 'RL-MKT', quantity: '10', price: 0 });
      expect(res.status, res.text).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ order_type: 'RL-MKT', quantity: 10, price_paise: 0 });
      expect((await historyOf(orderId)).at(-1)!.reason).toBe(
        'Modification requested: quantity 10 -> 10, price 101.50 -> 0.00, order_type RL -> RL-MKT',
      );
    });

    it('modifies a live order in each live status, on BSE too', async () => {
      for (const status of ['EXXMITTED', 'PENDING'] as const) {
        const orderId = await place(alice, {
          scrip_info: { exchange: 'BSE_EQ', scrip_token: 543210, symbol: 'SBIN', series: 'OF' },
        });
        await server.setOrderStatus(orderId, status);
        const res = await modify(orderId, modifyBody(), as(alice), 'BSE_EQ');
        expect(res.status, res.text).toBe(200);
        expect(await orderRow(orderId)).toMatchObject({ status, quantity: 20 });
      }
    });

    it("judges the retail limit on the new terms instead of the order's current ones", async () => {
      const lena = await server.createUser('lena');
      const big = await place(lena, { quantity: '1000', price: 101 }); // Rs 1,01,000
      await place(lena, { quantity: '900', price: 101 }); // Rs 90,900
      // 1080 x Rs 101 = Rs 1,09,080; with the other bid Rs 1,99,980: fits (counting the old terms too, it would not).
      expect((await modify(big, modifyBody({ quantity: '1080', price: 101 }), as(lena))).status).toBe(200);
      const before = await snapshot(big);
      // 1081 x Rs 101 = Rs 1,09,181; with the other bid Rs 2,00,081: over the limit.
      const res = await modify(big, modifyBody({ quantity: '1081', price: 101 }), as(lena));
      await expectRefusal(res, Errors.OFS_RETAIL_LIMIT, 'quantity', big, before);
      expect(res.body.message).toMatch(/at most 1080 shares/);
    });

    it('lets a non-retail user modify, with no value cap', async () => {
      const orderId = await place(nora, { quantity: '1' });
      // The whole issue (1,000,000 shares) at 101.50: Rs 10.15 crore.
      expect((await modify(orderId, modifyBody({ quantity: '1000000' }), as(nora))).status).toBe(200);
      const over = await modify(orderId, modifyBody({ quantity: '1000001' }), as(nora));
      expect(over.status, over.text).toBe(422);
      expect(over.body.code).toBe('e-382');
    });
  });

  describe('cancel', () => {
    it('answers "Order Cancellation Sent to OMS", marks the cancellation as requested, with a history entry and a CANCEL for the OMS', async () => {
      const orderId = await place();
      server.clock.now = start + 7000;
      const res = await cancel(orderId);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Order Cancellation Sent to OMS',
        data: { orderId },
      });
      // The order stays live until the OMS has cancelled it at the exchange.
      expect(await orderRow(orderId)).toMatchObject({
        status: 'OMSXMITTED',
        quantity: 10,
        cancel_requested_at: start + 7000,
        updated_at: start + 7000,
      });
      const history = await historyOf(orderId);
      expect(history.at(-1)).toMatchObject({
        status: 'OMSXMITTED',
        reason: 'Cancellation requested by the user',
        at: start + 7000,
      });
      expect(await outboxOf(orderId)).toEqual(['PLACE', 'CANCEL']);
    });

    it('takes a DELETE that carries Content-Type: application/json and no body', async () => {
      const orderId = await place();
      const res = await cancel(orderId, { ...as(alice), headers: { 'content-type': 'application/json' } });
      expect(res.status, res.text).toBe(200);
    });
  });

  describe('refusals of both', () => {
    it("another user's order: 404 e-371, as for an unknown id", async () => {
      const orderId = await place(bob);
      const before = await snapshot(orderId);
      await expectRefusal(await modify(orderId, modifyBody()), Errors.ORDER_NOT_FOUND, 'order_id', orderId, before);
      await expectRefusal(await cancel(orderId), Errors.ORDER_NOT_FOUND, 'order_id', orderId, before);
      await expectRefusal(
        await modify('01890000-0000-7000-8000-000000000000', modifyBody()),
        Errors.ORDER_NOT_FOUND,
        'order_id',
      );
      await expectRefusal(await cancel('01890000-0000-7000-8000-000000000000'), Errors.ORDER_NOT_FOUND, 'order_id');
    });

    it("the caller's order named with the other exchange: 404 e-371", async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      await expectRefusal(
        await modify(orderId, modifyBody(), as(alice), 'BSE_EQ'),
        Errors.ORDER_NOT_FOUND,
        'order_id',
        orderId,
        before,
      );
      await expectRefusal(
        await cancel(orderId, as(alice), 'BSE_EQ'),
        Errors.ORDER_NOT_FOUND,
        'order_id',
        orderId,
        before,
      );
    });

    it('an exchange that is not NSE_EQ or BSE_EQ in the path: 404 e-371', async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      await expectRefusal(
        await modify(orderId, modifyBody(), as(alice), 'NSE_FO'),
        Errors.ORDER_NOT_FOUND,
        'exchange',
        orderId,
        before,
      );
      await expectRefusal(
        await cancel(orderId, as(alice), 'nse_eq'),
        Errors.ORDER_NOT_FOUND,
        'exchange',
        orderId,
        before,
      );
    });

    it.each(['EXECUTED', 'CANCELLED', 'OMSREJECT', 'ORDERERROR'] as const)(
      'a finished order (%s): 409 e-372',
      async (status) => {
        const orderId = await place();
        await server.setOrderStatus(orderId, status);
        const before = await snapshot(orderId);
        const res = await modify(orderId, modifyBody());
        await expectRefusal(res, Errors.ORDER_NOT_LIVE, 'order_id', orderId, before);
        expect(res.body.message).toContain(status);
        await expectRefusal(await cancel(orderId), Errors.ORDER_NOT_LIVE, 'order_id', orderId, before);
      },
    );

    it('an order with a cancellation under way: 409 e-373', async () => {
      const orderId = await place();
      expect((await cancel(orderId)).status).toBe(200);
      const before = await snapshot(orderId);
      await expectRefusal(
        await modify(orderId, modifyBody()),
        Errors.ORDER_CANCEL_PENDING,
        'order_id',
        orderId,
        before,
      );
      await expectRefusal(await cancel(orderId), Errors.ORDER_CANCEL_PENDING, 'order_id', orderId, before);
    });

    it("outside the caller's window: 422 e-355 once it has closed, e-354 before it opens", async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      server.clock.now = retailClosesAt;
      await expectRefusal(await modify(orderId, modifyBody()), Errors.OFS_WINDOW_CLOSED, '', orderId, before);
      await expectRefusal(await cancel(orderId), Errors.OFS_WINDOW_CLOSED, '', orderId, before);
      server.clock.now = start - 2 * HOUR;
      await expectRefusal(await modify(orderId, modifyBody()), Errors.OFS_WINDOW_NOT_OPEN, '', orderId, before);
      await expectRefusal(await cancel(orderId), Errors.OFS_WINDOW_NOT_OPEN, '', orderId, before);
    });

    it("no token: 401 e-201; no API key: 401 e-205; another user's key: 403 e-207", async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      for (const send of [
        (o: CallOptions) => modify(orderId, modifyBody(), o),
        (o: CallOptions) => cancel(orderId, o),
      ]) {
        await expectRefusal(
          await send({ apiKey: alice.apiKey }),
          Errors.TOKEN_MISSING,
          'Authorization',
          orderId,
          before,
        );
        await expectRefusal(await send({ token: alice.token }), Errors.API_KEY_MISSING, 'x-api-key', orderId, before);
        await expectRefusal(
          await send({ token: alice.token, apiKey: bob.apiKey }),
          Errors.API_KEY_OTHER_USER,
          'x-api-key',
          orderId,
          before,
        );
      }
    });
  });

  describe('refusals of a modification', () => {
    it('traded_quantity other than the current one: 409 e-374', async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      const res = await modify(orderId, modifyBody({ traded_quantity: 5 }));
      await expectRefusal(res, Errors.ORDER_TRADED_QUANTITY_STALE, 'traded_quantity', orderId, before);
      expect(res.body.message).toContain('0');
    });

    it.each([
      ['price below the retail cut-off (e-359)', { price: 100.5 }, Errors.OFS_BELOW_RETAIL_CUTOFF, 'price'],
      ['price below the floor (e-356)', { price: 99 }, Errors.OFS_BELOW_FLOOR, 'price'],
      ['price off the tick (e-353)', { price: 102.02 }, Errors.OFS_PRICE_TICK, 'price'],
    ])('new terms that break a rule against the issue: %s', async (_what, overrides, kind, field) => {
      const orderId = await place();
      const before = await snapshot(orderId);
      await expectRefusal(await modify(orderId, modifyBody(overrides)), kind, field, orderId, before);
    });

    it("a non-retail user's order turned into a cut-off bid: 422 e-357", async () => {
      const orderId = await place(nora);
      const before = await snapshot(orderId);
      await expectRefusal(
        await modify(orderId, modifyBody({ order_type: 'RL-MKT', price: 0 }), as(nora)),
        Errors.OFS_CUTOFF_NOT_RETAIL,
        'order_type',
        orderId,
        before,
      );
    });

    it.each([
      ['an unknown field (e-105)', modifyBody({ scrip_info: {} }), Errors.UNKNOWN_FIELD, 'scrip_info'],
      ['quantity as a fraction (e-305)', modifyBody({ quantity: 2.5 }), Errors.OFS_QUANTITY, 'quantity'],
      ['quantity as a boolean (e-305)', modifyBody({ quantity: true }), Errors.OFS_QUANTITY, 'quantity'],
      ['quantity 0 (e-305)', modifyBody({ quantity: 0 }), Errors.OFS_QUANTITY, 'quantity'],
      ['quantity "0" (e-305)', modifyBody({ quantity: '0' }), Errors.OFS_QUANTITY, 'quantity'],
      ['exchange as a number (e-104)', modifyBody({ exchange: 1 }), Errors.WRONG_TYPE, 'exchange'],
      ['no quantity (e-103)', { order_type: 'RL', price: 102 }, Errors.FIELD_REQUIRED, 'quantity'],
      ['order_type SL (e-303)', modifyBody({ order_type: 'SL' }), Errors.OFS_ORDER_TYPE, 'order_type'],
      ['RL with price 0 (e-304)', modifyBody({ price: 0 }), Errors.OFS_PRICE_ORDER_TYPE, 'price'],
      ['validity GTC (e-308)', modifyBody({ validity: 'GTC' }), Errors.OFS_VALIDITY, 'validity'],
      ['validity day (e-308)', modifyBody({ validity: 'day' }), Errors.OFS_VALIDITY, 'validity'],
      ['validity_days 3 (e-308)', modifyBody({ validity_days: 3 }), Errors.OFS_VALIDITY, 'validity_days'],
      ['trigger_price 5 (e-307)', modifyBody({ trigger_price: 5 }), Errors.OFS_TRIGGER_PRICE, 'trigger_price'],
      ['trigger_price "0" (e-307)', modifyBody({ trigger_price: '0' }), Errors.OFS_TRIGGER_PRICE, 'trigger_price'],
      [
        'disclosed_quantity above quantity (e-311)',
        modifyBody({ quantity: '20', disclosed_quantity: 21 }),
        Errors.OFS_DISCLOSED_QUANTITY,
        'disclosed_quantity',
      ],
      ['traded_quantity -1 (e-106)', modifyBody({ traded_quantity: -1 }), Errors.INVALID_VALUE, 'traded_quantity'],
      [
        'traded_quantity "1.5" (e-106)',
        modifyBody({ traded_quantity: '1.5' }),
        Errors.INVALID_VALUE,
        'traded_quantity',
      ],
    ])('a bad body: %s answers 400', async (_what, body, kind, field) => {
      const orderId = await place();
      const before = await snapshot(orderId);
      await expectRefusal(await modify(orderId, body), kind, field, orderId, before);
    });

    it('a quantity above the maximum: 400 e-305, whose message names the maximum', async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      for (const quantity of ['99999999999999999999', 1_000_000_000_000_000]) {
        const res = await modify(orderId, modifyBody({ quantity }));
        await expectRefusal(res, Errors.OFS_QUANTITY, 'quantity', orderId, before);
        expect(res.body.message).toBe(
          'quantity must be a whole number from 1 to 999999999999999, or the string of its digits',
        );
      }
    });

    it('no body: 400 e-102', async () => {
      const orderId = await place();
      const before = await snapshot(orderId);
      const res = await server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, as(alice));
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.BODY_REQUIRED.code);
      expect(await snapshot(orderId)).toEqual(before);
    });

    it("request-alone rules (400) come before the order is looked up: a bad body for another user's order answers 400", async () => {
      const orderId = await place(bob);
      await expectRefusal(await modify(orderId, modifyBody({ price: 0 })), Errors.OFS_PRICE_ORDER_TYPE, 'price');
    });
  });
});
