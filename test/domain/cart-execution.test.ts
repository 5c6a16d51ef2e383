import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BID_TO_LINE_FIELD } from '../../src/domain/orders/cart-line.js';
import {
  executionOutcome,
  lineFieldOf,
  matchOfsIssue,
  type LineResult,
} from '../../src/domain/orders/cart-placement.js';
import { lineBid, unplaceableLineViolations } from '../../src/schemas/cart-lines.js';
import { EXAMPLE_ORDER_LINE, OrderLine } from '../../src/schemas/ordercart.js';
import { OfsOrderRequest } from '../../src/schemas/orders.js';
import { sbinIssue } from '../support/fixtures.js';

const issue = sbinIssue;

const line = (overrides: Partial<OrderLine> = {}, scrip: Partial<OrderLine['scripDetail']> = {}): OrderLine => ({
  ...EXAMPLE_ORDER_LINE,
  ...overrides,
  scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, ...scrip },
});

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
}

function hasPath(schema: SchemaNode, path: string): boolean {
  let node: SchemaNode | undefined = schema;
  for (const name of path.split('.')) node = node?.properties?.[name];
  return node !== undefined;
}

describe("field names: a bid's field -> the line's", () => {
  it('every translated field is a field of both the bid and the line', () => {
    for (const [bidField, lineField] of Object.entries(BID_TO_LINE_FIELD)) {
      expect({ bidField, inBid: hasPath(OfsOrderRequest as SchemaNode, bidField) }).toEqual({ bidField, inBid: true });
      expect({ lineField, inLine: hasPath(OrderLine as SchemaNode, lineField) }).toEqual({ lineField, inLine: true });
    }
  });

  it('names the line by its index; a fault of the whole bid, or of a field the line lacks, names orders[i]', () => {
    expect(lineFieldOf(3, 'price')).toBe('orders[3].Price');
    expect(lineFieldOf(0, 'scrip_info.series')).toBe('orders[0].scripDetail._Series');
    expect(lineFieldOf(7, '')).toBe('orders[7]');
    expect(lineFieldOf(7, 'client_id')).toBe('orders[7]');
  });
});

describe('which lines can be placed', () => {
  it('a line of another product fails with e-413 on its ProductType', () => {
    const delivery = { ...EXAMPLE_ORDER_LINE, ProductType: 'DELIVERY', validity: 'DAY' };
    expect(unplaceableLineViolations(delivery, 2)).toEqual([
      {
        kind: expect.objectContaining({ code: 'e-413' }),
        field: 'orders[2].ProductType',
        message: expect.stringContaining('DELIVERY'),
      },
    ]);
  });

  it('a stored line that breaks the line rules fails with e-403, as when saving', () => {
    const violations = unplaceableLineViolations({ ...EXAMPLE_ORDER_LINE, TransactionType: 'SELL' }, 1);
    expect(violations.map((v) => [v.kind.code, v.field])).toEqual([['e-403', 'orders[1].TransactionType']]);
  });

  it('a valid OFS line has nothing against it', () => {
    expect(unplaceableLineViolations(EXAMPLE_ORDER_LINE, 0)).toEqual([]);
  });
});

describe('the OFS issue a line names', () => {
  const registry = [
    issue(),
    issue({ exchange: 'BSE_EQ', scripToken: 543210 }),
    issue({ symbol: 'TWIN', scripToken: 1 }),
    issue({ symbol: 'TWIN', scripToken: 2 }),
  ];

  it('NSE means NSE_EQ and BSE means BSE_EQ', () => {
    expect(matchOfsIssue(line(), 0, registry)).toEqual({ ok: true, issue: registry[0] });
    expect(matchOfsIssue(line({}, { _ExchangeName: 'BSE' }), 0, registry)).toEqual({ ok: true, issue: registry[1] });
  });

  it('symbol and series must match exactly: none matching is e-414', () => {
    for (const scrip of [{ symbol: 'sbin' }, { _Series: 'EQ' }, { symbol: 'SBI' }]) {
      const match = matchOfsIssue(line({}, scrip), 4, registry);
      expect(match.ok ? [] : match.violations.map((v) => [v.kind.code, v.field])).toEqual([
        ['e-414', 'orders[4].scripDetail.symbol'],
      ]);
    }
  });

  it('several matching without scripToken is e-415; scripToken chooses among them', () => {
    const ambiguous = matchOfsIssue(line({}, { symbol: 'TWIN' }), 0, registry);
    expect(ambiguous.ok ? [] : ambiguous.violations.map((v) => [v.kind.code, v.field])).toEqual([
      ['e-415', 'orders[0].scripDetail.scripToken'],
    ]);
    expect(matchOfsIssue(line({}, { symbol: 'TWIN', scripToken: 2 }), 0, registry)).toEqual({
      ok: true,
      issue: registry[3],
    });
  });

  it("a scripToken that is not the matching issue's scrip_token is e-416", () => {
    const match = matchOfsIssue(line({}, { scripToken: 543210 }), 1, registry);
    expect(match.ok ? [] : match.violations.map((v) => [v.kind.code, v.field])).toEqual([
      ['e-416', 'orders[1].scripDetail.scripToken'],
    ]);
    expect(matchOfsIssue(line({}, { scripToken: 500112 }), 1, registry)).toEqual({ ok: true, issue: registry[0] });
  });
});

describe('the bid of a line', () => {
  const validOfsLine = fc.record({
    OrderType: fc.constantFrom('RL', 'RL-MKT'),
    Quantity: fc.integer({ min: 1, max: 999_999_999_999_999 }),
    paise: fc.integer({ min: 1, max: 100_000_000_000 }),
    disclosed: fc.option(fc.nat(), { nil: undefined }),
    validity: fc.constantFrom(undefined, ''),
    is_amo: fc.constantFrom(undefined, false),
    TriggerPrice: fc.constantFrom(undefined, 0, '0'),
  });

  it("carries the line's values under the bid's names and passes the place-order schema", () => {
    fc.assert(
      fc.property(validOfsLine, ({ OrderType, Quantity, paise, disclosed, validity, is_amo, TriggerPrice }) => {
        const price = OrderType === 'RL-MKT' ? '0' : (paise / 100).toFixed(2);
        const ofsLine = line({
          OrderType,
          Quantity,
          Price: price,
          ...(disclosed !== undefined && { disclosed_quantity: Math.min(disclosed, Quantity) }),
          ...(validity !== undefined ? { validity } : { validity: undefined }),
          ...(is_amo !== undefined && { is_amo }),
          ...(TriggerPrice !== undefined && { TriggerPrice }),
        });
        if (ofsLine.validity === undefined) delete ofsLine.validity;
        const result = lineBid(ofsLine, 5, issue());
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.bid).toMatchObject({
          scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
          transaction_type: 'BUY',
          product_type: 'OFS',
          order_type: OrderType,
          quantity: String(Quantity),
          price: Number(price),
        });
        expect(result.bid.trigger_price).toBeUndefined();
        expect(result.bid.disclosed_quantity).toBe(ofsLine.disclosed_quantity);
      }),
    );
  });

  it("a value a bid may not have fails with the bid's code, named as the line's field", () => {
    const result = lineBid(line({ Price: '1000000000.05' }), 2, issue());
    expect(result.ok ? [] : result.violations.map((v) => [v.kind.code, v.field])).toEqual([
      ['e-306', 'orders[2].Price'],
    ]);
    const trigger = lineBid(line({ TriggerPrice: 5 }), 0, issue());
    expect(trigger.ok ? [] : trigger.violations.map((v) => [v.kind.code, v.field])).toEqual([
      ['e-307', 'orders[0].TriggerPrice'],
    ]);
  });
});

describe('the outcome of an execution', () => {
  const placed: LineResult = { index: 0, status: 'success', orderId: 'a' };
  const failed: LineResult = { index: 1, status: 'error', code: 'e-413', message: 'm', errors: [] };

  it('is all, some or none placed', () => {
    expect(executionOutcome([placed, placed])).toBe('all-placed');
    expect(executionOutcome([placed, failed])).toBe('some-placed');
    expect(executionOutcome([failed, failed])).toBe('none-placed');
  });
});
