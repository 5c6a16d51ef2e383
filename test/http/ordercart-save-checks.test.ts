/**
 * What saving a cart (create and update) checks beyond the line schema (issue 25, row 5;
 * docs/design/order-carts.md "Checked when a cart is saved"): a blank name is refused like an empty one
 * (400 e-411), and an OFS line of a registered issue whose price is off the issue's tick (e-353) or below
 * its floor (e-356) is refused (422) naming the line, `orders[i].Price`, with the single bid's words. Every
 * other line is kept as before and answered at execution. Runs on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';
import { DELIVERY_LINE } from '../support/fixtures.js';

const PATH = '/transactional/v1/ordercart';
const PLACE_ORDER = '/transactional/v1/orders/regular';

const line = (overrides: Record<string, unknown> = {}, scrip: Record<string, unknown> = {}) => ({
  ...EXAMPLE_ORDER_LINE,
  ...overrides,
  scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, ...scrip },
});

/** The test issue SBIN OF on NSE: floor 100.00, tick 0.05, retail cut-off 101.00. */
const OFF_TICK_LINE = line({ Price: '101.52' });
const BELOW_FLOOR_LINE = line({ Price: '99.00' });
const CUTOFF_LINE = line({ OrderType: 'RL-MKT', Price: '0' });

const fieldsOf = (res: CallResult) => (res.body.errors as { field: string }[]).map((e) => e.field);

describe('saving a cart: a blank name, and OFS prices against the registered issue', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    // On BSE the same symbol has a tick of 0.10: the registered issue's tick counts, not the line's PriceTick.
    await server.registerIssue({ exchange: 'BSE_EQ', scripToken: 543210, tickSizePaise: 10 });
    // Two issues of one symbol and series: a line without scripToken names neither (e-415 at execution).
    await server.registerIssue({ symbol: 'TWIN', scripToken: 700001 });
    await server.registerIssue({ symbol: 'TWIN', scripToken: 700002 });
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
  });
  afterAll(() => server.close());

  const body = (user: TestUser, lines: unknown[], ordercartName = 'Basket') => ({
    ordercartName,
    orders: JSON.stringify(lines),
    version: '1',
    createdBy: user.userId,
    modifiedBy: user.userId,
    executedNoTime: 0,
  });
  const create = (user: TestUser, lines: unknown[], name?: string) =>
    server.call('POST', PATH, { body: body(user, lines, name), token: user.token });
  const update = (user: TestUser, id: string, lines: unknown[], name?: string, headers: Record<string, string> = {}) =>
    server.call('PUT', PATH, { body: { ...body(user, lines, name), ordercartId: id }, token: user.token, headers });
  const details = (user: TestUser, id: string) => server.call('GET', `${PATH}/${id}`, { token: user.token });
  const cartCount = async (userId: string) =>
    Number(
      (
        await server.store.db
          .selectFrom('order_carts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  async function createdCart(user: TestUser, lines: unknown[], name?: string): Promise<string> {
    const res = await create(user, lines, name);
    expect(res.status, res.text).toBe(200);
    return res.body.data.ordercartId as string;
  }

  function expectRefused(res: CallResult, status: number, code: string, fields: string[]) {
    expect({ status: res.status, code: res.body?.code, fields: fieldsOf(res) }).toEqual({ status, code, fields });
    expect(res.body.status).toBe('error');
  }

  describe('a blank ordercartName is refused like an empty one (400 e-411)', () => {
    it.each([
      ['spaces', '   '],
      ['one space', ' '],
      ['no-break and ideographic spaces', '\u00A0\u3000\u2003'],
    ])('create: a name of %s', async (_what, name) => {
      const before = await cartCount('alice');
      const res = await create(alice, [EXAMPLE_ORDER_LINE], name);
      expectRefused(res, 400, 'e-411', ['ordercartName']);
      expect(res.body.errors).toEqual([
        {
          field: 'ordercartName',
          message: 'ordercartName must hold a character other than white space: a name of spaces only shows as no name',
        },
      ]);
      expect(res.body.message).toBe(
        'ordercartName must hold a character other than white space: a name of spaces only shows as no name',
      );
      expect(await cartCount('alice')).toBe(before);
    });

    it('update: a blank name changes nothing', async () => {
      const id = await createdCart(alice, [EXAMPLE_ORDER_LINE], 'Kept');
      expectRefused(await update(alice, id, [EXAMPLE_ORDER_LINE], '    '), 400, 'e-411', ['ordercartName']);
      const after = await details(alice, id);
      expect(after.body.data.ordercartName).toBe('Kept');
      expect(after.headers.get('etag')).toBe('"1"');
    });

    it('is a fault of the request alone: answered before the lines (e-403) and before ownership (404)', async () => {
      expectRefused(await create(alice, [line({ Quantity: 0 })], '  '), 400, 'e-411', ['ordercartName']);
      const id = await createdCart(alice, [EXAMPLE_ORDER_LINE]);
      expectRefused(await update(bob, id, [EXAMPLE_ORDER_LINE], '  '), 400, 'e-411', ['ordercartName']);
    });

    it('a name with other characters keeps its spaces as sent', async () => {
      const id = await createdCart(alice, [EXAMPLE_ORDER_LINE], '  My  basket ');
      expect((await details(alice, id)).body.data.ordercartName).toBe('  My  basket ');
    });
  });

  describe('an OFS line of a registered issue off its tick or below its floor is refused at save (422)', () => {
    it("create: off the tick is e-353 on orders[i].Price, with the single bid's message after the line; nothing is stored", async () => {
      const before = await cartCount('alice');
      const res = await create(alice, [EXAMPLE_ORDER_LINE, OFF_TICK_LINE]);
      expectRefused(res, 422, 'e-353', ['orders[1].Price']);
      const single = await server.call('POST', PLACE_ORDER, {
        body: validBid({ price: 101.52 }),
        token: alice.token,
        apiKey: alice.apiKey,
      });
      expect([single.status, single.body.code]).toEqual([422, 'e-353']);
      expect(single.body.message).toBe('price 101.52 is not a multiple of the tick size 0.05');
      expect(res.body.message).toBe(`orders[1]: ${single.body.message}`);
      expect(res.body.errors).toEqual([{ field: 'orders[1].Price', message: `orders[1]: ${single.body.message}` }]);
      expect(await cartCount('alice')).toBe(before);
    });

    it('create: below the floor is e-356 on orders[i].Price', async () => {
      const res = await create(alice, [BELOW_FLOOR_LINE]);
      expectRefused(res, 422, 'e-356', ['orders[0].Price']);
      expect(res.body.errors).toEqual([
        { field: 'orders[0].Price', message: 'orders[0]: price 99.00 is below the floor price 100.00' },
      ]);
    });

    it('every refused line is listed in line order; the first names the code; good lines and other products do not show', async () => {
      const res = await create(alice, [
        EXAMPLE_ORDER_LINE,
        BELOW_FLOOR_LINE,
        DELIVERY_LINE,
        OFF_TICK_LINE,
        CUTOFF_LINE,
      ]);
      expectRefused(res, 422, 'e-356', ['orders[1].Price', 'orders[3].Price']);
      expect(res.body.errors[1]).toEqual({
        field: 'orders[3].Price',
        message: 'orders[3]: price 101.52 is not a multiple of the tick size 0.05',
      });
    });

    it('a price both off the tick and below the floor shows the tick, as a single bid meets it first', async () => {
      expect((await create(alice, [line({ Price: '99.99' })])).body.errors).toEqual([
        { field: 'orders[0].Price', message: 'orders[0]: price 99.99 is not a multiple of the tick size 0.05' },
      ]);
    });

    it("the issue's tick counts, not the line's PriceTick: 101.55 is off the BSE issue's 0.10", async () => {
      const bse = { _ExchangeName: 'BSE', scripToken: 543210 };
      const res = await create(alice, [line({ Price: '101.55' }, bse)]);
      expectRefused(res, 422, 'e-353', ['orders[0].Price']);
      expect(res.body.message).toBe('orders[0]: price 101.55 is not a multiple of the tick size 0.1');
      await createdCart(alice, [line({ Price: '101.60' }, bse)]);
    });

    it('update: refused the same way, the cart unchanged', async () => {
      const id = await createdCart(alice, [EXAMPLE_ORDER_LINE], 'Before');
      const res = await update(alice, id, [OFF_TICK_LINE, EXAMPLE_ORDER_LINE], 'After');
      expectRefused(res, 422, 'e-353', ['orders[0].Price']);
      const after = await details(alice, id);
      expect(after.body.data).toMatchObject({ ordercartName: 'Before', orders: [EXAMPLE_ORDER_LINE] });
      expect(after.headers.get('etag')).toBe('"1"');
      expect((await update(alice, id, [line({ Price: '101.55' })], 'After')).status).toBe(200);
    });

    it('update: checked after the owner (404) and the state read (412), as a rule on stored data', async () => {
      const id = await createdCart(alice, [EXAMPLE_ORDER_LINE]);
      expectRefused(await update(bob, id, [OFF_TICK_LINE]), 404, 'e-405', ['ordercartId']);
      expectRefused(await update(alice, id, [OFF_TICK_LINE], 'x', { 'if-match': '"9"' }), 412, 'e-410', ['If-Match']);
    });
  });

  describe('other lines are saved as before and answered at execution', () => {
    it.each([
      ['a cut-off line (RL-MKT, Price "0")', CUTOFF_LINE],
      ['an OFS line of no registered issue, off any tick', line({ Price: '101.52' }, { symbol: 'NOPE' })],
      ['an OFS line naming two issues (no scripToken), off the tick', line({ Price: '101.52' }, { symbol: 'TWIN' })],
      ["an OFS line whose scripToken is not the issue's", line({ Price: '101.52' }, { scripToken: 1 })],
      [
        'an OFS line whose bid breaks the place-order schema (Price above 1,000,000,000)',
        line({ Price: '2000000000' }),
      ],
      ['a line of another product, whatever its price', { ...DELIVERY_LINE, Price: '1500.03' }],
    ])('%s', async (_what, kept) => {
      const id = await createdCart(alice, [kept]);
      expect((await details(alice, id)).body.data.orders).toEqual([kept]);
    });
  });
});
