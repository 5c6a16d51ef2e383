/**
 * The batch statements' array parameters on PostgreSQL (store/sql/bulk.ts, arrayLiteral): the text is pg's own
 * for strings, and the server reads back exactly the values given, whatever the strings hold (quotes,
 * backslashes, commas, braces, spaces, the word NULL, any Unicode) and whatever the numbers are.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral } from '../../src/store/sql/bulk.js';
import { TEST_POSTGRES_URL, testDialect } from '../support/databases.js';

// pg's own conversion of a parameter (what it sends for a JS array); its types do not declare the module.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

const tricky = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', 'NULL', 'null', ' ', '"', '\\', '\\"', '{', '}', ',', '{"a",b}', 'a b', '\n', '\t', 'ü€😀'),
  fc.string({ unit: fc.constantFrom('"', '\\', ',', '{', '}', ' ', 'a', 'N', '\n') }),
);
const texts = fc.array(fc.option(tricky, { nil: null }), { maxLength: 30 });
const integers = fc.array(
  fc.option(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), { nil: null }),
  { maxLength: 30 },
);
const doubles = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 30 });

describe('arrayLiteral', () => {
  it('writes a list of strings exactly as pg writes the array, and a number as itself', () => {
    fc.assert(
      fc.property(texts, (values) => {
        expect(arrayLiteral(values)).toBe(prepareValue(values));
      }),
    );
    expect(arrayLiteral([1, -2, null, 3.5])).toBe('{1,-2,NULL,3.5}');
    expect(arrayLiteral([])).toBe('{}');
    expect(arrayLiteral(['a"b', 'c\\d'])).toBe('{"a\\"b","c\\\\d"}');
  });
});

describe.runIf(testDialect() === 'postgres')('arrayLiteral, read back by PostgreSQL', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  it('gives the server the same text, whole-number and double values', async () => {
    await fc.assert(
      fc.asyncProperty(texts, integers, doubles, async (text, int8, float8) => {
        const { rows } = await client.query<{ text: (string | null)[]; int8: (string | null)[]; float8: number[] }>(
          'select $1::text[] as text, $2::int8[] as int8, $3::float8[] as float8',
          [arrayLiteral(text), arrayLiteral(int8), arrayLiteral(float8)],
        );
        expect(rows[0]!.text).toEqual(text);
        // pg answers int8 as text (it may exceed a double).
        expect(rows[0]!.int8).toEqual(int8.map((n) => (n === null ? null : String(n))));
        // -0 is written as 0 (String(-0), as pg wrote it too), and toEqual tells -0 from 0.
        expect(rows[0]!.float8.map((n) => (Object.is(n, -0) ? 0 : n))).toEqual(
          float8.map((n) => (Object.is(n, -0) ? 0 : n)),
        );
      }),
      { numRuns: 200 },
    );
  });
});
