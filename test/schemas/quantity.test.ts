/**
 * The `quantity` of a bid (a string of digits) and of its modification (the same, or a JSON number, as ODIN
 * clients send it): each refusal names its real cause. A bid's plain number above the maximum is refused as
 * too large, naming the maximum; anything that is not a plain number of at least 1 is refused for its form,
 * whatever its length. A modification's refusal says both forms it takes, and the maximum.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { ModifyOrderRequest, OfsOrderRequest } from '../../src/schemas/orders.js';
import { compileChecker, createAjv } from '../../src/schemas/validator.js';

const TOO_LARGE = 'quantity must be at most 999999999999999 shares';

const ajv = createAjv();
const EITHER_FORM = 'quantity must be a whole number from 1 to 999999999999999, or the string of its digits';
const schemas = [
  ['the bid', compileChecker(ajv, OfsOrderRequest), { tooLarge: TOO_LARGE, malformed: Errors.OFS_QUANTITY.title }],
  ['its modification', compileChecker(ajv, ModifyOrderRequest), { tooLarge: EITHER_FORM, malformed: EITHER_FORM }],
] as const;

/** The violations of `quantity` alone (the body's other fields are left out, and their faults ignored). */
const quantityFaults = (check: (typeof schemas)[number][1], quantity: unknown) =>
  check({ quantity })
    .filter((violation) => violation.field === 'quantity')
    .map(({ kind, message }) => ({ code: kind.code, message }));

/** A plain number: digits without sign or leading zero. */
const plainNumber = (minDigits: number, maxDigits: number) =>
  fc
    .tuple(
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: minDigits - 1, maxLength: maxDigits - 1 }),
    )
    .map(([first, rest]) => [first, ...rest].join(''));

describe.each(schemas)('quantity of %s', (_name, check, messages) => {
  it('takes every plain number from 1 to 999999999999999', () => {
    expect(quantityFaults(check, '999999999999999')).toEqual([]);
    fc.assert(
      fc.property(plainNumber(1, 15), (quantity) => {
        expect(quantityFaults(check, quantity)).toEqual([]);
      }),
    );
  });

  it('refuses a plain number above 999999999999999 as too large, naming the maximum (e-305)', () => {
    expect(quantityFaults(check, '1000000000000000')).toEqual([
      { code: Errors.OFS_QUANTITY.code, message: messages.tooLarge },
    ]);
    fc.assert(
      fc.property(plainNumber(16, 40), (quantity) => {
        expect(quantityFaults(check, quantity)).toEqual([
          { code: Errors.OFS_QUANTITY.code, message: messages.tooLarge },
        ]);
      }),
    );
  });

  it('refuses anything else for its form, however long (e-305)', () => {
    const malformed = fc
      .oneof(
        fc.string({ maxLength: 15 }),
        fc.string({ minLength: 16, maxLength: 40 }),
        // Long digit strings spoilt in one place: a leading zero, a sign, a decimal point.
        fc.tuple(fc.constantFrom('0', '-', '+', '.'), plainNumber(15, 40)).map(([spoiler, digits]) => spoiler + digits),
        fc
          .tuple(plainNumber(15, 40), fc.constantFrom('.5', 'e3', ' ', 'x'))
          .map(([digits, spoiler]) => digits + spoiler),
      )
      .filter((text) => !/^[1-9][0-9]*$/.test(text));
    fc.assert(
      fc.property(malformed, (quantity) => {
        expect(quantityFaults(check, quantity)).toEqual([
          { code: Errors.OFS_QUANTITY.code, message: messages.malformed },
        ]);
      }),
    );
  });
});

describe('quantity of a modification as a JSON number', () => {
  const check = schemas[1][1];

  it('takes every whole number from 1 to 999999999999999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999_999_999 }), (quantity) => {
        expect(quantityFaults(check, quantity)).toEqual([]);
      }),
    );
  });

  it('refuses 0, negatives, fractions and numbers above the maximum, saying both forms and the maximum (e-305)', () => {
    const refused = fc.oneof(
      fc.integer({ max: 0 }),
      fc.integer({ min: 1_000_000_000_000_000, max: Number.MAX_SAFE_INTEGER }),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    );
    fc.assert(
      fc.property(refused, (quantity) => {
        expect(quantityFaults(check, quantity)).toEqual([{ code: Errors.OFS_QUANTITY.code, message: EITHER_FORM }]);
      }),
    );
  });
});
