/**
 * No one's bad input is anyone else's failure (issue 47, row 1; docs/design/security.md), on the run's
 * database. A string no store keeps as sent (NUL, a lone UTF-16 surrogate) is refused at the edge, 400
 * e-125, in a body, a path or a query, before any route reads it: PostgreSQL fails the whole transaction on
 * a NUL, and order entry shares its transactions between users. And a command the database refuses for a
 * reason of its own fails alone: the group commit runs its batch again in halves, and every other bid of
 * the batch is stored and answered 200.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';

describe('strings no store keeps, and a command the database refuses', () => {
  let server: TestServer;
  let clean: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue({ floorPricePaise: 5, retailCutoffPricePaise: 5 });
    clean = await server.createUser('clean', { category: 'NON_RETAIL' });
    other = await server.createUser('other', { category: 'NON_RETAIL' });
  });
  afterAll(() => server?.close());

  const place = (user: TestUser, overrides: Record<string, unknown> = {}) =>
    server.call('POST', PLACE_ORDER, { body: validBid(overrides), token: user.token, apiKey: user.apiKey });
  const expectRefused = (res: CallResult, field: string, character: RegExp) => {
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('e-125');
    expect(res.body.errors).toEqual([{ field, message: expect.stringMatching(character) }]);
  };
  const storedOf = async (user: TestUser) =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', user.userId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses a NUL in a bid, 400 e-125, and stores every clean bid sent beside it', async () => {
    const before = await storedOf(clean);
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => place(clean, { order_identifier: `c${i}` })),
      ...['strategy_id', 'part_code', 'vender_code', 'order_identifier'].flatMap((field) => [
        place(other, { [field]: 'S\u0000X' }),
        place(other, { [field]: '\u0000' }),
      ]),
    ]);
    for (const res of answers.slice(0, 8)) expect(res.status, res.text).toBe(200);
    for (const [i, res] of answers.slice(8).entries())
      expectRefused(
        res,
        ['strategy_id', 'part_code', 'vender_code', 'order_identifier'][Math.floor(i / 2)]!,
        /NUL \(U\+0000\)/,
      );
    expect((await storedOf(clean)) - before).toBe(8);
    expect(await storedOf(other)).toBe(0);
  });

  it('refuses a lone surrogate, and takes a pair (an emoji) where the field takes text', async () => {
    expectRefused(
      await place(other, { strategy_id: 'S\uD800X' }),
      'strategy_id',
      /a lone UTF-16 surrogate \(U\+D800\)/,
    );
    expectRefused(await place(other, { strategy_id: '\uDC00' }), 'strategy_id', /U\+DC00/);
    // A pair is one character (U+1F600): the cart is taken, 200, and kept as sent, whether the body
    // writes it as JSON escapes (the form the edge reads character by character) or as UTF-8 bytes.
    const name = 'a \uD83D\uDE00 cart';
    const body = {
      ordercartName: name,
      createdBy: 'other',
      modifiedBy: 'other',
      executedNoTime: 0,
      version: '1',
      orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
    };
    const escaped = JSON.stringify(body).replace('\uD83D\uDE00', '\\uD83D\\uDE00');
    expect(escaped).toContain('"ordercartName":"a \\uD83D\\uDE00 cart"');
    for (const rawBody of [escaped, JSON.stringify(body)]) {
      const cart = await server.call('POST', '/transactional/v1/ordercart', {
        rawBody,
        token: other.token,
        apiKey: other.apiKey,
      });
      expect(cart.status, cart.text).toBe(200);
      expect(cart.body.code).toBe('s-101');
      const read = await server.call('GET', `/transactional/v1/ordercart/${cart.body.data.ordercartId}`, {
        token: other.token,
      });
      expect(read.status, read.text).toBe(200);
      expect(read.body.data.ordercartName).toBe(name);
      expect([...read.body.data.ordercartName]).toHaveLength(8);
      expect(read.body.data.orders).toEqual([EXAMPLE_ORDER_LINE]);
    }
  });

  it('refuses them in a path, a query and a login, with no token needed for the login', async () => {
    const as = { token: other.token, apiKey: other.apiKey };
    expectRefused(await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/ab%00cd`, as), 'order_id', /NUL/);
    expectRefused(await server.call('POST', `${PLACE_ORDER}/NSE_EQ/ab%00cd/carry_forward`, as), 'order_id', /NUL/);
    expectRefused(await server.call('GET', '/transactional/v1/orders/ab%00cd', as), 'order_id', /NUL/);
    expectRefused(await server.call('GET', '/transactional/v1/orders?order_id=%00', as), 'order_id', /NUL/);
    expectRefused(await server.call('GET', '/transactional/v1/ofs/offers/X%00', as), 'offer_id', /NUL/);
    expectRefused(await server.call('GET', '/transactional/v1/trades?order_id=a%00', as), 'order_id', /NUL/);
    const login = await server.call('POST', '/authentication/v1/user/session', {
      body: {
        user_id: 'other\u0000',
        login_type: 'PASSWORD',
        password: 'x',
        second_auth_type: '',
        second_auth: '',
        api_key: '',
        source: 'WEBAPI',
      },
    });
    expectRefused(login, 'user_id', /NUL/);
  });

  it('takes a text that only spells the escape ("\\u0000" as six characters)', async () => {
    const res = await place(clean, { strategy_id: '\\u0000' });
    expect(res.status, res.text).not.toBe(500);
    expect(res.body.code).not.toBe('e-125');
  });

  it('a bid the database refuses for a reason of its own fails alone: the eight beside it are stored and answered 200', async () => {
    // A rule the database enforces that order entry does not know: the kind of failure the group commit
    // must keep to the command that met it.
    if (server.store.dialect === 'postgres') {
      await sql`create function refuse_poison() returns trigger language plpgsql as $$ begin if new.strategy_id = 'POISON' then raise exception 'poisoned'; end if; return new; end $$`.execute(
        server.store.db,
      );
      await sql`create trigger refuse_poison before insert on orders for each row execute function refuse_poison()`.execute(
        server.store.db,
      );
    } else {
      await sql`create trigger refuse_poison before insert on orders when new.strategy_id = 'POISON' begin select raise(abort, 'poisoned'); end`.execute(
        server.store.db,
      );
    }
    const before = await storedOf(clean);
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => place(clean, { order_identifier: `p${i}` })),
      place(other, { strategy_id: 'POISON' }),
      ...Array.from({ length: 4 }, (_, i) => place(clean, { order_identifier: `q${i}` })),
    ]);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 500, 200, 200, 200, 200]);
    expect(answers[4]!.body.code).toBe('e-501');
    expect((await storedOf(clean)) - before).toBe(8);
    expect(await storedOf(other)).toBe(0);
  });
});
