/** The OFS bid rules as plain functions (src/domain/ofs/bid.ts): cross-field, caller and issue rules. */
import { describe, expect, it } from 'vitest';
import { callerViolations, crossFieldViolations, issueViolations, type OfsBid } from '../../src/domain/ofs/bid.js';
import { rupeesToPaise } from '../../src/domain/ofs/issue/issue.js';
import { Errors } from '../../src/domain/errors.js';
import { sbinIssue } from '../support/fixtures.js';

const issue = sbinIssue();

function bid(overrides: Partial<OfsBid> = {}): OfsBid {
  return {
    scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
    order_type: 'RL',
    quantity: '10',
    price: 101.5,
    ...overrides,
  };
}

const codesAndFields = (violations: { kind: { code: string }; field: string }[]) =>
  violations.map((v) => [v.kind.code, v.field]);

describe('rupeesToPaise', () => {
  it.each([
    [0, 0],
    [-0, 0],
    [0.05, 5],
    [0.15, 15],
    [101.05, 10105],
    [101.5, 10150],
    [583096607.3, 58309660730],
    [1_000_000_000, 100_000_000_000],
  ])('converts %d rupees to %d paise exactly', (rupees, paise) => {
    expect(Object.is(rupeesToPaise(rupees), paise)).toBe(true);
  });

  it.each([1e-9, 5e-324, 0.001, 101.051, 0.0500000001, 1e300])(
    'answers null for %d, which is no whole number of paise',
    (rupees) => {
      expect(rupeesToPaise(rupees)).toBeNull();
    },
  );
});

describe('crossFieldViolations', () => {
  it('finds nothing wrong with a limit bid above 0 or a cut-off bid at 0', () => {
    expect(crossFieldViolations(bid())).toEqual([]);
    expect(crossFieldViolations(bid({ order_type: 'RL-MKT', price: 0 }))).toEqual([]);
  });

  it('refuses RL at price 0 and RL-MKT above 0, on price (e-304)', () => {
    expect(codesAndFields(crossFieldViolations(bid({ order_type: 'RL', price: 0 })))).toEqual([['e-304', 'price']]);
    expect(codesAndFields(crossFieldViolations(bid({ order_type: 'RL-MKT', price: 0.05 })))).toEqual([
      ['e-304', 'price'],
    ]);
  });

  it('allows disclosed_quantity from 0 up to quantity and refuses one above it (e-311)', () => {
    expect(crossFieldViolations(bid({ quantity: '10', disclosed_quantity: 0 }))).toEqual([]);
    expect(crossFieldViolations(bid({ quantity: '10', disclosed_quantity: 10 }))).toEqual([]);
    expect(codesAndFields(crossFieldViolations(bid({ quantity: '10', disclosed_quantity: 11 })))).toEqual([
      ['e-311', 'disclosed_quantity'],
    ]);
  });

  it('compares quantities as numbers, not as strings', () => {
    expect(crossFieldViolations(bid({ quantity: '100', disclosed_quantity: 20 }))).toEqual([]);
    expect(crossFieldViolations(bid({ quantity: '100', freeze_quantity: 200 }))).toEqual([]);
    expect(codesAndFields(crossFieldViolations(bid({ quantity: '9', disclosed_quantity: 10 })))).toEqual([
      ['e-311', 'disclosed_quantity'],
    ]);
  });

  it('applies freeze_quantity only when above 0, refusing a larger quantity on quantity (e-312)', () => {
    expect(crossFieldViolations(bid({ quantity: '10', freeze_quantity: 0 }))).toEqual([]);
    expect(crossFieldViolations(bid({ quantity: '10', freeze_quantity: 10 }))).toEqual([]);
    expect(codesAndFields(crossFieldViolations(bid({ quantity: '10', freeze_quantity: 9 })))).toEqual([
      ['e-312', 'quantity'],
    ]);
  });

  it('reports every broken rule, each with its own code', () => {
    const violations = crossFieldViolations(
      bid({ price: 0, quantity: '10', disclosed_quantity: 11, freeze_quantity: 5 }),
    );
    expect(codesAndFields(violations)).toEqual([
      ['e-304', 'price'],
      ['e-311', 'disclosed_quantity'],
      ['e-312', 'quantity'],
    ]);
    for (const violation of violations) expect(violation.kind.status).toBe(400);
  });

  it('handles the largest quantity exactly', () => {
    expect(crossFieldViolations(bid({ quantity: '999999999999999', disclosed_quantity: 999_999_999_999_999 }))).toEqual(
      [],
    );
    expect(
      codesAndFields(crossFieldViolations(bid({ quantity: '999999999999999', freeze_quantity: 999_999_999_999_998 }))),
    ).toEqual([['e-312', 'quantity']]);
  });
});

describe('callerViolations', () => {
  it("allows client_id absent, empty or the caller's own id", () => {
    expect(callerViolations(bid(), 'alice')).toEqual([]);
    expect(callerViolations(bid({ client_id: '' }), 'alice')).toEqual([]);
    expect(callerViolations(bid({ client_id: 'alice' }), 'alice')).toEqual([]);
  });

  it("refuses another user's id (403 e-315), case included", () => {
    expect(codesAndFields(callerViolations(bid({ client_id: 'bob' }), 'alice'))).toEqual([['e-315', 'client_id']]);
    expect(codesAndFields(callerViolations(bid({ client_id: 'ALICE' }), 'alice'))).toEqual([['e-315', 'client_id']]);
    expect(callerViolations(bid({ client_id: 'bob' }), 'alice')[0]!.kind).toBe(Errors.OFS_CLIENT_ID);
  });
});

describe('issueViolations', () => {
  it('finds nothing wrong with a bid that matches its issue', () => {
    expect(issueViolations(bid(), issue)).toEqual([]);
    expect(issueViolations(bid({ order_type: 'RL-MKT', price: 0 }), issue)).toEqual([]);
  });

  it('refuses a bid for no registered issue on scrip_token (422 e-351), and nothing else', () => {
    const violations = issueViolations(bid({ price: 101.52 }), undefined);
    expect(codesAndFields(violations)).toEqual([['e-351', 'scrip_info.scrip_token']]);
    expect(violations[0]!.kind.status).toBe(422);
  });

  it('refuses a symbol or series that differs from the issue (422 e-352), each on its field', () => {
    const violations = issueViolations(
      bid({ scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'sbin', series: 'EQ' } }),
      issue,
    );
    expect(codesAndFields(violations)).toEqual([
      ['e-352', 'scrip_info.symbol'],
      ['e-352', 'scrip_info.series'],
    ]);
  });

  it.each([101.05, 101.1, 0.05, 1_000_000_000, 583096607.3])('accepts %d, a multiple of the 0.05 tick', (price) => {
    expect(issueViolations(bid({ price }), issue)).toEqual([]);
  });

  it.each([101.52, 101.01, 0.01, 101.051, 1e-9])('refuses %d, off the 0.05 tick (422 e-353)', (price) => {
    expect(codesAndFields(issueViolations(bid({ price }), issue))).toEqual([['e-353', 'price']]);
  });

  it("applies the issue's own tick size", () => {
    const coarse = { ...issue, tickSizePaise: 100 };
    expect(issueViolations(bid({ price: 101 }), coarse)).toEqual([]);
    expect(codesAndFields(issueViolations(bid({ price: 101.5 }), coarse))).toEqual([['e-353', 'price']]);
  });
});
