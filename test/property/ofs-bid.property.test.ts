/**
 * Property tests of the OFS bid parser and validator, through the real server: whatever the body, the
 * answer is never a 5xx and is always our envelope with a catalog code whose status is the HTTP status;
 * every bid that keeps the rules of "The OFS bid" is accepted and stored as sent.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rupeesToPaise } from '../../src/domain/ofs/issue/issue.js';
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
const RUNS = 200;

const catalogByCode = new Map<string, ErrorKind>(Object.values(Errors).map((kind) => [kind.code, kind]));

/** Never a 5xx; a success envelope exactly, or the error envelope with a catalog code of this status. */
function expectOurEnvelope(res: CallResult): void {
  expect(res.status, res.text).toBeLessThan(500);
  expect(res.headers.get('content-type'), res.text).toMatch(/^application\/json/);
  if (res.status === 200) {
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(res.body).toMatchObject({ status: 'success', code: 's-101', data: { orderId: expect.any(String) } });
    return;
  }
  expect(Object.keys(res.body).sort(), res.text).toEqual(['code', 'errors', 'message', 'request_id', 'status']);
  expect(res.body.status).toBe('error');
  const kind = catalogByCode.get(res.body.code);
  expect(kind, res.text).toBeDefined();
  expect(res.status, res.text).toBe(kind!.status);
  expect(res.body.message).toEqual(expect.any(String));
  expect(Array.isArray(res.body.errors)).toBe(true);
  for (const error of res.body.errors) expect(Object.keys(error).sort()).toEqual(['field', 'message']);
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
}

// --- valid bids ---------------------------------------------------------------------------------------

const TOP_LEVEL_FIELDS = Object.keys(validBid());
const SCRIP_FIELDS = Object.keys(validBid().scrip_info as object);
const REQUIRED_TOP_LEVEL = ['scrip_info', 'transaction_type', 'product_type', 'order_type', 'quantity', 'price'];
const REQUIRED_SCRIP = ['exchange', 'scrip_token', 'symbol', 'series'];

/** A code point that is neither a control character nor a surrogate. */
const identifierChar = fc
  .integer({ min: 0x20, max: 0x10ffff })
  .filter((cp) => !(cp >= 0x7f && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff))
  .map((cp) => String.fromCodePoint(cp));

/** The largest quantity the wire schema takes (15 digits), and so the largest freeze_quantity too. */
const MAX_QUANTITY = 999_999_999_999_999n;

/** 1 to MAX_QUANTITY, small values favoured. */
const quantityValue = fc.oneof(fc.bigInt({ min: 1n, max: 10_000n }), fc.bigInt({ min: 1n, max: MAX_QUANTITY }));

/** A price on the 0.05 tick, from 0.05 to the 1,000,000,000 ceiling, as a client would write it. */
const limitPrice = fc
  .oneof(fc.bigInt({ min: 1n, max: 100_000n }), fc.bigInt({ min: 1n, max: 20_000_000_000n }))
  .map((ticks) => Number(ticks * 5n) / 100);

const optionalEmpty = fc.option(fc.constant(''), { nil: undefined });

interface GeneratedBid {
  body: Record<string, unknown>;
  /** Who bids: the retail user for cut-off bids, the non-retail user for price bids. */
  bidder: string;
  cutOff: boolean;
  quantity: bigint;
  price: number;
}

/**
 * Bids that keep every rule of "The OFS bid". Cut-off bids are small and placed by a retail user, price
 * bids by a non-retail user, so that the OFS market rules (only retail bids at cut-off, the retail
 * Rs 2,00,000 limit) cannot be what refuses them.
 */
function validBidArb(retailUserId: string, nonRetailUserId: string): fc.Arbitrary<GeneratedBid> {
  const instrument = fc.constantFrom(
    { exchange: 'NSE_EQ', scrip_token: 500112 },
    { exchange: 'BSE_EQ', scrip_token: 543210 },
  );
  const orderKind = fc.oneof(
    fc.record({ cutOff: fc.constant(true), quantity: fc.bigInt({ min: 1n, max: 100n }), price: fc.constant(0) }),
    fc.record({ cutOff: fc.constant(false), quantity: quantityValue, price: limitPrice }),
  );
  return fc
    .record({
      instrument,
      orderKind,
      disclosedShare: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
      freeze: fc.option(fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 1_000n })), { nil: undefined }),
      expiry_date: optionalEmpty,
      strike_price: optionalEmpty,
      option_type: optionalEmpty,
      optional: fc.record(
        {
          trigger_price: fc.constant(null),
          validity: fc.constant(''),
          validity_days: fc.constantFrom(0, null),
          is_amo: fc.constant(false),
          order_identifier: fc.string({ unit: identifierChar, maxLength: 10 }),
          algo_id: fc.string({ maxLength: 64 }),
          strategy_id: fc.string({ maxLength: 64 }),
          part_code: fc.string({ maxLength: 64 }),
          vender_code: fc.string({ maxLength: 64 }),
          ownClientId: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
    })
    .map(
      ({
        instrument: { exchange, scrip_token },
        orderKind,
        disclosedShare,
        freeze,
        expiry_date,
        strike_price,
        option_type,
        optional,
      }) => {
        const { quantity, price, cutOff } = orderKind;
        const bidder = cutOff ? retailUserId : nonRetailUserId;
        const { ownClientId, ...odinFields } = optional;
        const scrip_info: Record<string, unknown> = { exchange, scrip_token, symbol: 'SBIN', series: 'OF' };
        for (const [field, value] of Object.entries({ expiry_date, strike_price, option_type }))
          if (value !== undefined) scrip_info[field] = value;
        const body: Record<string, unknown> = {
          scrip_info,
          transaction_type: 'BUY',
          product_type: 'OFS',
          order_type: cutOff ? 'RL-MKT' : 'RL',
          quantity: quantity.toString(),
          price,
          ...odinFields,
        };
        // client_id, when sent, is empty or the bidder's own id.
        if (ownClientId !== undefined) body.client_id = ownClientId ? bidder : '';
        if (disclosedShare !== undefined) body.disclosed_quantity = Math.floor(Number(quantity) * disclosedShare);
        // freeze_quantity 0 means no limit; any other value must not be below quantity.
        if (freeze !== undefined)
          body.freeze_quantity =
            freeze === 0n ? 0 : Number(quantity + freeze > MAX_QUANTITY ? MAX_QUANTITY : quantity + freeze);
        return { body, bidder, cutOff, quantity, price };
      },
    );
}

// --- broken bids --------------------------------------------------------------------------------------

type Mutation = (body: Record<string, unknown>) => void;

/** A field of the bid: top level or inside scrip_info. */
const fieldPath = fc.oneof(
  fc.constantFrom(...TOP_LEVEL_FIELDS).map((field) => [field] as const),
  fc.constantFrom(...SCRIP_FIELDS).map((field) => ['scrip_info', field] as const),
);

function setAt(body: Record<string, unknown>, path: readonly string[], value: unknown): void {
  if (path.length === 1) body[path[0]!] = value;
  else if (typeof body.scrip_info === 'object' && body.scrip_info !== null && !Array.isArray(body.scrip_info)) {
    (body.scrip_info as Record<string, unknown>)[path[1]!] = value;
  }
}

function deleteAt(body: Record<string, unknown>, path: readonly string[]): void {
  if (path.length === 1) delete body[path[0]!];
  else if (typeof body.scrip_info === 'object' && body.scrip_info !== null)
    delete (body.scrip_info as Record<string, unknown>)[path[1]!];
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fieldPath.map((path) => (body: Record<string, unknown>) => deleteAt(body, path)),
  fc.tuple(fieldPath, fc.jsonValue()).map(
    ([path, value]) =>
      (body: Record<string, unknown>) =>
        setAt(body, path, value),
  ),
  fc.tuple(fieldPath, fc.string({ unit: 'binary' })).map(
    ([path, value]) =>
      (body: Record<string, unknown>) =>
        setAt(body, path, value),
  ),
  fc.tuple(fieldPath, fc.double()).map(
    ([path, value]) =>
      (body: Record<string, unknown>) =>
        setAt(body, path, value),
  ),
  fc.tuple(fc.boolean(), fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.jsonValue()).map(
    ([inScrip, key, value]) =>
      (body: Record<string, unknown>) =>
        setAt(body, inScrip ? ['scrip_info', key] : [key], value),
  ),
);

/** Fields typed as numbers (integers included) and as strings; a value of the other JSON type is a 400 e-104. */
const NUMBER_FIELDS = ['price', 'disclosed_quantity', 'freeze_quantity', 'scrip_info.scrip_token'];
const STRING_FIELDS = [
  'transaction_type',
  'product_type',
  'order_type',
  'quantity',
  'validity',
  'order_identifier',
  'algo_id',
  'strategy_id',
  'part_code',
  'vender_code',
  'client_id',
  'scrip_info.exchange',
  'scrip_info.symbol',
  'scrip_info.series',
  'scrip_info.expiry_date',
  'scrip_info.strike_price',
  'scrip_info.option_type',
];

describe('OFS bid: properties through the real server', () => {
  let server: TestServer;
  let rita: TestUser;
  let nora: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    // Floor and retail cut-off at one tick: this file is about the bid's own rules, not the OFS market's.
    // An issue as large as a quantity may be (a bid is for at most the issue's offer quantity, e-382).
    const marketRulesOpen = { floorPricePaise: 5, retailCutoffPricePaise: 5, offerQuantity: Number(MAX_QUANTITY) };
    await server.registerIssue(marketRulesOpen);
    await server.registerIssue({ ...marketRulesOpen, exchange: 'BSE_EQ', scripToken: 543210 });
    rita = await server.createUser('rita');
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
  });
  afterAll(() => server.close());

  const as = (user: TestUser): CallOptions => ({ token: user.token, apiKey: user.apiKey });
  const placeRaw = (rawBody: string, user: TestUser = rita) =>
    server.call('POST', PLACE_ORDER, { rawBody, ...as(user) });

  it('every valid bid is accepted (200) and stored with its quantity, price, order type and identifier', async () => {
    await fc.assert(
      fc.asyncProperty(validBidArb('rita', 'nora'), async ({ body, bidder, quantity, price, cutOff }) => {
        const user = bidder === rita.userId ? rita : nora;
        const res = await server.call('POST', PLACE_ORDER, { body, ...as(user) });
        expect(res.status, `${res.text}\n${JSON.stringify(body)}`).toBe(200);
        expectOurEnvelope(res);
        const order = await server.store.db
          .selectFrom('orders')
          .selectAll()
          .where('order_id', '=', res.body.data.orderId)
          .executeTakeFirstOrThrow();
        expect(order.user_id).toBe(user.userId);
        expect(BigInt(order.quantity)).toBe(quantity);
        expect(order.price_paise).toBe(rupeesToPaise(price));
        expect(order.order_type).toBe(cutOff ? 'RL-MKT' : 'RL');
        const identifier = body.order_identifier as string | undefined;
        expect(order.order_identifier).toBe(identifier === undefined || identifier === '' ? null : identifier);
      }),
      { numRuns: RUNS },
    );
  });

  it('any JSON value as the body answers our envelope, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expectOurEnvelope(await placeRaw(JSON.stringify(value)));
      }),
      { numRuns: RUNS },
    );
  });

  it('any text as the body answers our envelope, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary' }), fc.json()), async (text) => {
        expectOurEnvelope(await placeRaw(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('a valid bid broken in one to three places answers our envelope, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
        const body = validBid({ order_type: 'RL-MKT', price: 0 });
        for (const mutate of mutations) mutate(body);
        expectOurEnvelope(await placeRaw(JSON.stringify(body)));
      }),
      { numRuns: RUNS },
    );
  });

  it('a valid bid without one of its required fields answers 400 e-103 naming that field', async () => {
    const requiredPath = fc.oneof(
      fc.constantFrom(...REQUIRED_TOP_LEVEL).map((field) => [field] as const),
      fc.constantFrom(...REQUIRED_SCRIP).map((field) => ['scrip_info', field] as const),
    );
    await fc.assert(
      fc.asyncProperty(requiredPath, async (path) => {
        const body = validBid();
        deleteAt(body, path);
        const res = await placeRaw(JSON.stringify(body));
        expectOurEnvelope(res);
        expect(res.body.code).toBe(Errors.FIELD_REQUIRED.code);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(path.join('.'));
      }),
      { numRuns: 50 },
    );
  });

  it('a string where the contract wants a number, or a number where it wants a string, answers 400 e-104 naming the field', async () => {
    const wrongType = fc.oneof(
      fc.tuple(fc.constantFrom(...NUMBER_FIELDS), fc.oneof(fc.integer({ min: 0, max: 1000 }).map(String), fc.string())),
      fc.tuple(
        fc.constantFrom(...STRING_FIELDS),
        fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(wrongType, async ([field, value]) => {
        const body = validBid();
        setAt(body, field.split('.'), value);
        const res = await placeRaw(JSON.stringify(body));
        expectOurEnvelope(res);
        expect(res.body.code, res.text).toBe(Errors.WRONG_TYPE.code);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('rupeesToPaise: property', () => {
  it('converts every two-decimal price read from JSON text, up to the schema maximum, to its exact paise', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 100_000_000_000n }), (paise) => {
        const text = `${paise / 100n}.${(paise % 100n).toString().padStart(2, '0')}`;
        expect(rupeesToPaise(JSON.parse(text))).toBe(Number(paise));
      }),
      { numRuns: 10_000 },
    );
  });

  it('answers null for every price that is not a whole number of paise', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (price) => {
        const paise = rupeesToPaise(price);
        if (paise === null) return;
        expect(paise / 100).toBe(price);
      }),
      { numRuns: 10_000 },
    );
  });
});
