/**
 * POST /transactional/v1/orders/regular, one test per rule of seed 2.1, 2.2 and 4.1 and of product.md
 * "The OFS bid": each refusal answers its HTTP status, its catalog code and names the field at fault, and
 * stores nothing. Request-alone rules (400) are checked before the rules that need stored data (403/422).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';

type Body = Record<string, unknown>;

const scripInfo = (overrides: Record<string, unknown> = {}) => ({ ...(validBid().scrip_info as Body), ...overrides });

function withoutField(field: string): Body {
  const body = validBid();
  delete body[field];
  return body;
}

function withoutScripField(field: string): Body {
  const info = scripInfo();
  delete info[field];
  return validBid({ scrip_info: info });
}

describe('place an OFS bid: refusals', () => {
  let server: TestServer;
  let alice: TestUser;
  let ordersBefore: number;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
    await server.createUser('bob');
  });
  afterAll(() => server.close());

  const countOrders = async () =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeEach(async () => {
    ordersBefore = await countOrders();
  });

  const place = (body: unknown): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body, token: alice.token, apiKey: alice.apiKey });

  /** The refusal: status, code, the field named in errors, the envelope, and no order stored. */
  async function expectRefusal(res: CallResult, kind: ErrorKind, field: string): Promise<void> {
    expect(res.status, res.text).toBe(kind.status);
    expect(res.body.code, res.text).toBe(kind.code);
    expect(res.body.status).toBe('error');
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(Object.keys(res.body).sort()).toEqual(['code', 'errors', 'message', 'request_id', 'status']);
    expect(Array.isArray(res.body.errors)).toBe(true);
    expect(
      res.body.errors.map((e: { field: string }) => e.field),
      res.text,
    ).toContain(field);
    expect(await countOrders()).toBe(ordersBefore);
  }

  describe('seed 4.1 rule 1: BUY and OFS only', () => {
    it('refuses transaction_type SELL (400 e-301)', async () => {
      await expectRefusal(
        await place(validBid({ transaction_type: 'SELL' })),
        Errors.OFS_TRANSACTION_TYPE,
        'transaction_type',
      );
    });

    it('refuses a product_type other than OFS (400 e-302)', async () => {
      await expectRefusal(await place(validBid({ product_type: 'DELIVERY' })), Errors.OFS_PRODUCT_TYPE, 'product_type');
    });
  });

  describe('order_type and price (seed 4.1 rule 2)', () => {
    it('refuses an unknown order_type (400 e-303)', async () => {
      await expectRefusal(await place(validBid({ order_type: 'SL' })), Errors.OFS_ORDER_TYPE, 'order_type');
    });

    it('refuses RL (limit) with price 0 (400 e-304)', async () => {
      await expectRefusal(await place(validBid({ order_type: 'RL', price: 0 })), Errors.OFS_PRICE_ORDER_TYPE, 'price');
    });

    it('refuses RL-MKT (cut-off) with a price above 0 (400 e-304)', async () => {
      await expectRefusal(
        await place(validBid({ order_type: 'RL-MKT', price: 101.5 })),
        Errors.OFS_PRICE_ORDER_TYPE,
        'price',
      );
    });

    it('refuses a negative price (400 e-306)', async () => {
      await expectRefusal(await place(validBid({ price: -1 })), Errors.OFS_PRICE, 'price');
    });

    it('refuses a price above the 1,000,000,000 ceiling (400 e-306)', async () => {
      await expectRefusal(await place(validBid({ price: 1_000_000_000.05 })), Errors.OFS_PRICE, 'price');
    });
  });

  describe('quantity: a string of digits', () => {
    it('refuses quantity as a JSON number (400 e-104), with a message showing the string form', async () => {
      const res = await place(validBid({ quantity: 10 }));
      await expectRefusal(res, Errors.WRONG_TYPE, 'quantity');
      expect(res.body.message).toContain('"10"');
    });

    it.each(['0', '-1', '01', '1.5', 'abc', '', ' 10', '+1', '1e3', '1000000000000000'])(
      'refuses quantity %j (400 e-305)',
      async (quantity) => {
        await expectRefusal(await place(validBid({ quantity })), Errors.OFS_QUANTITY, 'quantity');
      },
    );

    it.each(['1000000000000000', '99999999999999999999'])(
      'refuses quantity %j as too large, naming the maximum (400 e-305)',
      async (quantity) => {
        const res = await place(validBid({ quantity }));
        await expectRefusal(res, Errors.OFS_QUANTITY, 'quantity');
        expect(res.body.message).toBe('quantity must be at most 999999999999999 shares');
        expect(res.body.errors).toEqual([
          { field: 'quantity', message: 'quantity must be at most 999999999999999 shares' },
        ]);
      },
    );

    it.each(['x'.repeat(20), `0${'9'.repeat(19)}`])(
      'refuses a long quantity %j that is not a plain number for its form, not its length (400 e-305)',
      async (quantity) => {
        const res = await place(validBid({ quantity }));
        await expectRefusal(res, Errors.OFS_QUANTITY, 'quantity');
        expect(res.body.message).toBe(Errors.OFS_QUANTITY.title);
      },
    );
  });

  describe('OFS-only fields (seed 4.1 rule 3)', () => {
    it('refuses a trigger_price that is not null (400 e-307)', async () => {
      await expectRefusal(await place(validBid({ trigger_price: 100 })), Errors.OFS_TRIGGER_PRICE, 'trigger_price');
    });

    it('refuses a non-empty validity (400 e-308)', async () => {
      await expectRefusal(await place(validBid({ validity: 'DAY' })), Errors.OFS_VALIDITY, 'validity');
    });

    it('refuses validity_days 5 (400 e-308)', async () => {
      await expectRefusal(await place(validBid({ validity_days: 5 })), Errors.OFS_VALIDITY, 'validity_days');
    });

    it('refuses is_amo true (400 e-309)', async () => {
      await expectRefusal(await place(validBid({ is_amo: true })), Errors.OFS_AMO, 'is_amo');
    });

    it.each([
      ['expiry_date', '27NOV2026'],
      ['strike_price', '100'],
      ['option_type', 'CE'],
    ])('refuses a non-empty scrip_info.%s (400 e-310)', async (field, value) => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ [field]: value }) })),
        Errors.OFS_DERIVATIVE_FIELDS,
        `scrip_info.${field}`,
      );
    });
  });

  describe('quantities across fields', () => {
    it('refuses disclosed_quantity above quantity (400 e-311)', async () => {
      await expectRefusal(
        await place(validBid({ quantity: '10', disclosed_quantity: 11 })),
        Errors.OFS_DISCLOSED_QUANTITY,
        'disclosed_quantity',
      );
    });

    it('refuses a negative disclosed_quantity (400 e-311)', async () => {
      await expectRefusal(
        await place(validBid({ disclosed_quantity: -1 })),
        Errors.OFS_DISCLOSED_QUANTITY,
        'disclosed_quantity',
      );
    });

    it('refuses a quantity above a freeze_quantity > 0 (400 e-312)', async () => {
      await expectRefusal(
        await place(validBid({ quantity: '10', freeze_quantity: 9 })),
        Errors.OFS_FREEZE_QUANTITY,
        'quantity',
      );
    });
  });

  describe('order_identifier', () => {
    it('refuses 11 characters (400 e-313)', async () => {
      await expectRefusal(
        await place(validBid({ order_identifier: 'ABCDEFGHIJK' })),
        Errors.OFS_ORDER_IDENTIFIER,
        'order_identifier',
      );
    });

    it.each([
      ['a C0 control character', 'ab\u0001c'],
      ['a newline', 'ab\nc'],
      ['DEL', 'ab\u007Fc'],
      ['a C1 control character', 'ab\u0085c'],
    ])('refuses %s (400 e-313)', async (_what, order_identifier) => {
      await expectRefusal(await place(validBid({ order_identifier })), Errors.OFS_ORDER_IDENTIFIER, 'order_identifier');
    });

    it('refuses a lone surrogate, which could not be stored as sent, by the rule for every string (400 e-125)', async () => {
      await expectRefusal(
        await place(validBid({ order_identifier: 'ab\uD800c' })),
        Errors.STRING_NOT_STORABLE,
        'order_identifier',
      );
    });
  });

  describe('scrip_info', () => {
    it('refuses an exchange other than NSE_EQ or BSE_EQ (400 e-314)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ exchange: 'NSE_FO' }) })),
        Errors.OFS_EXCHANGE,
        'scrip_info.exchange',
      );
    });
  });

  describe('unknown fields', () => {
    it('refuses an unknown top-level field, naming it (400 e-105)', async () => {
      await expectRefusal(await place(validBid({ limit_price: 5 })), Errors.UNKNOWN_FIELD, 'limit_price');
    });

    it('refuses an unknown field inside scrip_info, naming it with its path (400 e-105)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ isin: 'INE062A01020' }) })),
        Errors.UNKNOWN_FIELD,
        'scrip_info.isin',
      );
    });
  });

  describe('required fields', () => {
    it.each(['scrip_info', 'transaction_type', 'product_type', 'order_type', 'quantity', 'price'])(
      'refuses a body without %s (400 e-103)',
      async (field) => {
        await expectRefusal(await place(withoutField(field)), Errors.FIELD_REQUIRED, field);
      },
    );

    it.each(['exchange', 'scrip_token', 'symbol', 'series'])(
      'refuses a body without scrip_info.%s (400 e-103)',
      async (field) => {
        await expectRefusal(await place(withoutScripField(field)), Errors.FIELD_REQUIRED, `scrip_info.${field}`);
      },
    );
  });

  describe('wrong JSON types: nothing is coerced (400 e-104)', () => {
    it.each([
      ['scrip_info', validBid({ scrip_info: 'NSE_EQ|500112' })],
      ['scrip_info', validBid({ scrip_info: null })],
      ['scrip_info.scrip_token', validBid({ scrip_info: scripInfo({ scrip_token: '500112' }) })],
      ['scrip_info.scrip_token', validBid({ scrip_info: scripInfo({ scrip_token: 500112.5 }) })],
      ['scrip_info.exchange', validBid({ scrip_info: scripInfo({ exchange: 1 }) })],
      ['scrip_info.symbol', validBid({ scrip_info: scripInfo({ symbol: 42 }) })],
      ['transaction_type', validBid({ transaction_type: true })],
      ['order_type', validBid({ order_type: 1 })],
      ['price', validBid({ price: '101.5' })],
      ['disclosed_quantity', validBid({ disclosed_quantity: '0' })],
      ['disclosed_quantity', validBid({ disclosed_quantity: 1.5 })],
      ['freeze_quantity', validBid({ freeze_quantity: '100' })],
      ['is_amo', validBid({ is_amo: 'false' })],
      ['validity', validBid({ validity: null })],
      ['order_identifier', validBid({ order_identifier: 12345 })],
      ['client_id', validBid({ client_id: 7 })],
      ['algo_id', validBid({ algo_id: ['x'] })],
    ])('refuses a wrong type for %s', async (field, body) => {
      await expectRefusal(await place(body), Errors.WRONG_TYPE, field);
    });
  });

  describe('the caller', () => {
    it('refuses a client_id naming another user (403 e-315)', async () => {
      await expectRefusal(await place(validBid({ client_id: 'bob' })), Errors.OFS_CLIENT_ID, 'client_id');
    });
  });

  describe('the registered OFS issue', () => {
    it('refuses a scrip_token that is not a registered OFS issue (422 e-351)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ scrip_token: 999_999 }) })),
        Errors.OFS_ISSUE_NOT_FOUND,
        'scrip_info.scrip_token',
      );
    });

    it('refuses a registered scrip_token on the other exchange (422 e-351)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ exchange: 'BSE_EQ' }) })),
        Errors.OFS_ISSUE_NOT_FOUND,
        'scrip_info.scrip_token',
      );
    });

    it('refuses a symbol that does not match the issue (422 e-352)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ symbol: 'SBI' }) })),
        Errors.OFS_SCRIP_MISMATCH,
        'scrip_info.symbol',
      );
    });

    it('refuses a series that does not match the issue (422 e-352)', async () => {
      await expectRefusal(
        await place(validBid({ scrip_info: scripInfo({ series: 'EQ' }) })),
        Errors.OFS_SCRIP_MISMATCH,
        'scrip_info.series',
      );
    });

    it("refuses a price off the issue's 0.05 tick (422 e-353)", async () => {
      await expectRefusal(await place(validBid({ price: 101.52 })), Errors.OFS_PRICE_TICK, 'price');
    });

    it('refuses a price above 0 that is less than one paisa, instead of storing a limit bid at 0 (422 e-353)', async () => {
      await expectRefusal(await place(validBid({ price: 1e-9 })), Errors.OFS_PRICE_TICK, 'price');
    });
  });

  describe('request-alone rules (400) win over rules that need stored data (403/422)', () => {
    const unregistered = scripInfo({ scrip_token: 999_999 });

    it('a schema rule wins over an unregistered issue', async () => {
      await expectRefusal(
        await place(validBid({ transaction_type: 'SELL', scrip_info: unregistered })),
        Errors.OFS_TRANSACTION_TYPE,
        'transaction_type',
      );
    });

    it('the price/order_type rule wins over an unregistered issue', async () => {
      await expectRefusal(
        await place(validBid({ price: 0, scrip_info: unregistered })),
        Errors.OFS_PRICE_ORDER_TYPE,
        'price',
      );
    });

    it('the disclosed_quantity rule wins over a symbol mismatch', async () => {
      await expectRefusal(
        await place(validBid({ disclosed_quantity: 11, scrip_info: scripInfo({ symbol: 'SBI' }) })),
        Errors.OFS_DISCLOSED_QUANTITY,
        'disclosed_quantity',
      );
    });

    it('the freeze_quantity rule wins over a price off the tick', async () => {
      await expectRefusal(
        await place(validBid({ freeze_quantity: 1, price: 101.52 })),
        Errors.OFS_FREEZE_QUANTITY,
        'quantity',
      );
    });

    it('a cross-field rule wins over a client_id of another user', async () => {
      await expectRefusal(await place(validBid({ price: 0, client_id: 'bob' })), Errors.OFS_PRICE_ORDER_TYPE, 'price');
    });
  });
});
