import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_CART_LINES, MAX_LINE_DEPTH } from '../../src/domain/orders/cart-line.js';
import { orderLineViolations, parseCartOrders } from '../../src/schemas/cart-lines.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { prototypeKeyIn, unstorableStringIn } from '../../src/domain/json-safety.js';

// e-117: a prototype key anywhere in a line (issue 21 row 7), refused as in a body.
// e-125: a NUL or a lone surrogate in any string of a line (issue 47 row 1), refused as in a body.
const CART_CODES = ['e-401', 'e-402', 'e-403', 'e-117', 'e-125'];
const KNOWN_SCRIP_FIELDS = [
  'symbol',
  '_Series',
  '_InstrumentName',
  '_ExchangeName',
  'MarketLot',
  'PriceTick',
  '_ExpiryDate',
  '_OptionType',
  '_StrikePrice',
  'scripToken',
];

/** parseCartOrders must answer, never throw; and a refusal names only the cart codes and `orders...` fields. */
function expectWellFormedAnswer(orders: string): void {
  const result = parseCartOrders(orders);
  if (result.ok) {
    expect(Array.isArray(result.lines)).toBe(true);
    expect(result.lines.length).toBeGreaterThanOrEqual(1);
    expect(result.lines.length).toBeLessThanOrEqual(MAX_CART_LINES);
    // What is stored must serialize again.
    expect(() => JSON.stringify(result.lines)).not.toThrow();
    return;
  }
  expect(result.violations.length).toBeGreaterThan(0);
  for (const violation of result.violations) {
    expect(CART_CODES).toContain(violation.kind.code);
    expect(violation.field).toMatch(/^orders(\[\d+\].*)?$/s);
    expect(violation.message.length).toBeGreaterThan(0);
  }
}

// ---- generators of valid lines ----

// A valid line holds no NUL and no lone surrogate (such a line is refused with e-125, issue 47 row 1).
const text = (maxLength: number, minLength = 0) =>
  fc.string({ unit: 'binary', minLength, maxLength }).filter((value) => unstorableStringIn(value) === undefined);
/** Rupees with up to 2 decimals, as the string the Price field carries. */
const rupees = (minPaise: number, maxPaise: number) =>
  fc.integer({ min: minPaise, max: maxPaise }).map((paise) => (paise / 100).toFixed(2));

// A valid line holds no prototype key at any depth (such a line is refused with e-117, issue 21 row 7).
const scripExtras = fc
  .dictionary(
    fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((key) => !KNOWN_SCRIP_FIELDS.includes(key) && key !== '__proto__'),
    fc.jsonValue({ maxDepth: 3 }),
    { maxKeys: 4 },
  )
  .filter((extras) => prototypeKeyIn(extras) === undefined && unstorableStringIn(extras) === undefined);

const scripDetail = (
  exchange: fc.Arbitrary<string>,
  derivative: { text: fc.Arbitrary<string>; strike: fc.Arbitrary<string | number> },
) =>
  fc
    .tuple(
      fc.record(
        {
          symbol: text(50, 1),
          _Series: text(20),
          _InstrumentName: text(30),
          _ExchangeName: exchange,
          MarketLot: fc.integer({ min: 1, max: 100_000 }),
          PriceTick: fc.double({ min: 0.0001, max: 1000, noNaN: true }),
          _ExpiryDate: derivative.text,
          _OptionType: derivative.text,
          _StrikePrice: derivative.strike,
          scripToken: fc.integer({ min: 1, max: 2147483647 }),
        },
        { requiredKeys: ['symbol', '_Series', '_InstrumentName', '_ExchangeName', 'MarketLot', 'PriceTick'] },
      ),
      scripExtras,
    )
    .map(([known, extras]) => ({ ...extras, ...known }));

/** Price and trigger that agree with the order type and side. */
const pricing = (orderTypes: string[]) =>
  fc
    .tuple(
      fc.constantFrom(...orderTypes),
      fc.constantFrom('BUY', 'SELL'),
      fc.integer({ min: 1, max: 100_000_000 }),
      fc.boolean(),
    )
    .chain(([orderType, side, pricePaise, triggerAsString]) => {
      const market = orderType.endsWith('-MKT');
      const price = market ? '0' : (pricePaise / 100).toFixed(2);
      if (!orderType.startsWith('SL')) {
        return fc.record(
          {
            OrderType: fc.constant(orderType),
            TransactionType: fc.constant(side),
            Price: fc.constant(price),
            TriggerPrice: fc.constantFrom(0, '0', '0.00'),
          },
          { requiredKeys: ['OrderType', 'TransactionType', 'Price'] },
        );
      }
      // A stop-loss limit: a buy triggers at or below its price, a sell at or above.
      const trigger = market
        ? rupees(1, 100_000_000)
        : side === 'BUY'
          ? rupees(1, pricePaise)
          : rupees(pricePaise, 100_000_000);
      return trigger.map((t) => ({
        OrderType: orderType,
        TransactionType: side,
        Price: price,
        TriggerPrice: triggerAsString ? t : Number(t),
      }));
    });

const nonOfsLine = fc
  .tuple(
    scripDetail(text(20, 1), {
      text: text(10),
      strike: fc.oneof(text(20), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    }),
    pricing(['RL', 'RL-MKT', 'SL', 'SL-MKT']),
    fc.integer({ min: 1, max: 1_000_000 }),
    fc.record(
      {
        ProductType: fc.constantFrom('INTRADAY', 'DELIVERY', 'BTST', 'MTF'),
        is_amo: fc.boolean(),
        validity: fc.constantFrom('DAY', 'IOC', 'GTD', 'GTC', 'EOS', 'EOSESS', 'EOTODY'),
        disclosedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      },
      { requiredKeys: ['ProductType'] },
    ),
  )
  .map(([scrip, price, quantity, { disclosedShare, ...rest }]) => ({
    scripDetail: scrip,
    ...price,
    Quantity: quantity,
    ...rest,
    ...(disclosedShare === undefined ? {} : { disclosed_quantity: Math.floor(quantity * disclosedShare) }),
  }));

const ofsLine = fc
  .tuple(
    scripDetail(fc.constantFrom('NSE', 'BSE'), { text: fc.constant(''), strike: fc.constant('') }),
    fc.constantFrom('RL', 'RL-MKT'),
    fc.integer({ min: 1, max: 100_000_000 }),
    fc.integer({ min: 1, max: 1_000_000 }),
    fc.record(
      { validity: fc.constant(''), is_amo: fc.constant(false), TriggerPrice: fc.constantFrom(0, '0') },
      { requiredKeys: [] },
    ),
  )
  .map(([scrip, orderType, pricePaise, quantity, optional]) => ({
    scripDetail: scrip,
    TransactionType: 'BUY',
    OrderType: orderType,
    Quantity: quantity,
    Price: orderType === 'RL-MKT' ? '0' : (pricePaise / 100).toFixed(2),
    ProductType: 'OFS',
    ...optional,
  }));

const validLine = fc.oneof(nonOfsLine, ofsLine);
const validCart = fc.array(validLine, { minLength: 1, maxLength: MAX_CART_LINES });

// ---- tests ----

describe('parseCartOrders: examples', () => {
  it('accepts the documented example line and answers it as parsed', () => {
    const orders = JSON.stringify([EXAMPLE_ORDER_LINE]);
    expect(parseCartOrders(orders)).toEqual({ ok: true, lines: [EXAMPLE_ORDER_LINE] });
  });

  it("e-401 for text that is not JSON, with the parser's reason", () => {
    const result = parseCartOrders("[{'single': 'quotes'}]");
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.violations).toHaveLength(1);
    expect(result.violations[0]).toMatchObject({ kind: { code: 'e-401' }, field: 'orders' });
    expect(result.violations[0]!.message).toMatch(/^orders must be a string holding JSON: /);
  });

  it.each([
    ['an object', '{}', 'orders must hold a JSON array of order objects, not an object'],
    ['a string', '"[]"', 'orders must hold a JSON array of order objects, not a string'],
    ['a boolean', 'true', 'orders must hold a JSON array of order objects, not a boolean'],
    ['no line', '[]', 'orders must hold 1 to 50 order objects, not 0'],
    ['51 lines', JSON.stringify(Array(51).fill(EXAMPLE_ORDER_LINE)), 'orders must hold 1 to 50 order objects, not 51'],
  ])('e-402 for %s', (_what, orders, message) => {
    expect(parseCartOrders(orders)).toEqual({
      ok: false,
      violations: [{ kind: expect.objectContaining({ code: 'e-402' }), field: 'orders', message }],
    });
  });

  it('accepts exactly 50 lines', () => {
    const result = parseCartOrders(JSON.stringify(Array(50).fill(EXAMPLE_ORDER_LINE)));
    expect(result.ok && result.lines.length).toBe(50);
  });

  it('reports the schema faults of a line before (and instead of) its cross-field faults', () => {
    // Quantity is missing, so the disclosed_quantity rule (which needs Quantity) is not run.
    const { Quantity: _dropped, ...line } = { ...EXAMPLE_ORDER_LINE, disclosed_quantity: 5, validity: 'DAY' };
    expect(orderLineViolations(line, 7).map((v) => [v.kind.code, v.field])).toEqual([['e-403', 'orders[7].Quantity']]);
  });

  it('words each cross-field fault for the user', () => {
    const line = {
      ...EXAMPLE_ORDER_LINE,
      ProductType: 'DELIVERY',
      OrderType: 'SL',
      TransactionType: 'BUY',
      Price: '100',
      TriggerPrice: '100.05',
      validity: 'DAY',
    };
    expect(orderLineViolations(line, 0)).toEqual([
      {
        kind: expect.objectContaining({ code: 'e-403' }),
        field: 'orders[0].TriggerPrice',
        message: 'orders[0].TriggerPrice of a BUY SL order may not exceed its Price',
      },
    ]);
  });

  it('lists every fault of an OFS line that breaks the OFS bid rules', () => {
    const line = {
      ...EXAMPLE_ORDER_LINE,
      scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, _ExchangeName: 'MCX', _OptionType: 'CE' },
      TransactionType: 'SELL',
      OrderType: 'SL-MKT',
      Price: '0',
      TriggerPrice: 100,
      is_amo: true,
      validity: 'IOC',
    };
    expect(orderLineViolations(line, 2).map((v) => v.field)).toEqual([
      'orders[2].validity',
      'orders[2].TransactionType',
      'orders[2].OrderType',
      'orders[2].is_amo',
      'orders[2].scripDetail._ExchangeName',
      'orders[2].scripDetail._OptionType',
    ]);
  });

  it(`refuses a line nested deeper than ${MAX_LINE_DEPTH} levels, however deep, without overflowing`, () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const orders = JSON.stringify([EXAMPLE_ORDER_LINE]).replace('"MarketLot"', `"deep":${deep},"MarketLot"`);
    const result = parseCartOrders(orders);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.violations.map((v) => [v.kind.code, v.field])).toEqual([['e-403', 'orders[0]']]);
  });
});

describe('parseCartOrders: properties', () => {
  it('any string is answered with lines or cart violations, never an exception', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 400 }), expectWellFormedAnswer), { numRuns: 500 });
  });

  it('any JSON text is answered with lines or cart violations, never an exception', () => {
    fc.assert(fc.property(fc.json({ maxDepth: 6 }), expectWellFormedAnswer), { numRuns: 500 });
  });

  it('arrays of arbitrary objects, and valid lines with fields changed to arbitrary values, never throw', () => {
    const fieldNames = [
      'scripDetail',
      'TransactionType',
      'OrderType',
      'Quantity',
      'Price',
      'ProductType',
      'TriggerPrice',
      'is_amo',
      'disclosed_quantity',
      'validity',
    ];
    const damagedLine = fc
      .tuple(validLine, fc.constantFrom(...fieldNames, 'Unknown'), fc.jsonValue({ maxDepth: 3 }))
      .map(([line, field, value]) => ({ ...line, [field]: value }));
    const element = fc.oneof(fc.jsonValue({ maxDepth: 4 }), damagedLine, validLine);
    fc.assert(
      fc.property(fc.array(element, { maxLength: 60 }), (lines) => expectWellFormedAnswer(JSON.stringify(lines))),
      { numRuns: 300 },
    );
  });

  it('every generated valid cart is accepted, its lines kept as sent', () => {
    fc.assert(
      fc.property(validCart, (lines) => {
        const orders = JSON.stringify(lines);
        const result = parseCartOrders(orders);
        if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.violations.map((v) => v.message))}`);
        expect(JSON.stringify(result.lines)).toBe(orders);
      }),
      { numRuns: 300 },
    );
  });

  it('a valid cart with one line broken is refused with e-403 naming only that line', () => {
    const breakages: fc.Arbitrary<(line: Record<string, unknown>) => void>[] = [
      fc
        .constantFrom('TransactionType', 'OrderType', 'Quantity', 'Price', 'ProductType', 'scripDetail')
        .map((field) => (line) => void delete line[field]),
      fc.constant((line) => void (line.Quantity = 0)),
      fc.constant((line) => void (line.Quantity = String(line.Quantity))),
      fc.constant((line) => void (line.Price = Number(line.Price))),
      fc
        .string({ minLength: 1, maxLength: 8 })
        .filter((s) => !['BUY', 'SELL'].includes(s))
        .map((s) => (line) => void (line.TransactionType = s)),
      fc.constant((line) => void (line.Validity = 'DAY')),
      fc.constant((line) => void (line.validity = 'SOMETIMES')),
      fc.constant((line) => void (line.disclosed_quantity = (line.Quantity as number) + 1)),
      fc.constant((line) => void ((line.scripDetail as Record<string, unknown>).MarketLot = 0)),
      // A market order with a price, or a limit order without one.
      fc.constant((line) => void (line.Price = String(line.OrderType).endsWith('-MKT') ? '1.00' : '0')),
    ];
    fc.assert(
      fc.property(validCart, fc.nat(), fc.oneof(...breakages), (lines, at, breakLine) => {
        const index = at % lines.length;
        const broken = JSON.parse(JSON.stringify(lines)) as Record<string, unknown>[];
        breakLine(broken[index]!);
        const result = parseCartOrders(JSON.stringify(broken));
        expect(result.ok).toBe(false);
        if (result.ok) return;
        for (const violation of result.violations) {
          expect(violation.kind.code).toBe('e-403');
          expect(violation.field.startsWith(`orders[${index}]`)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
