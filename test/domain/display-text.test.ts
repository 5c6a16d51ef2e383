/**
 * Text from outside (src/domain/ofs/display-text.ts), issue 47 row 5: the characters no imported text may hold,
 * named as U+XXXX; how a value is printed on a line of the CLI's output so that it cannot forge or hide a
 * line; and the exchange identifiers, symbol and series, taken only as NSE and BSE write them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  displayToken,
  EXCHANGE_SERIES_PATTERN,
  EXCHANGE_SYMBOL_MAX_LENGTH,
  EXCHANGE_SYMBOL_PATTERN,
  quoted,
  unsafeCharacter,
  unsafeTextIn,
} from '../../src/domain/ofs/display-text.js';

/** Every character the rule refuses, as the brief of issue 47 lists them, and the line and paragraph separators. */
const REFUSED = [
  ...Array.from({ length: 0x20 }, (_, cp) => cp), // C0, NUL included
  0x7f, // DEL
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i), // C1
  0x061c,
  0x200e,
  0x200f,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069, // bidi controls
  0x00ad,
  0x200b,
  0x200c,
  0x200d,
  0x2060,
  0x2061,
  0x2062,
  0x2063,
  0x2064,
  0xfeff, // invisible
  0x2028,
  0x2029, // line and paragraph separators
];

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

describe('unsafeCharacter', () => {
  it.each([
    ['ACME\nregistered: offer FAKE', 'U+000A (line feed), a control character'],
    ['ACME\u202E', 'U+202E (right-to-left override), a bidirectional control'],
    ['AC\u200BME', 'U+200B (zero width space), an invisible character'],
    ['ACME\u0000', 'U+0000 (null), a control character'],
    ['ACME\u0085', 'U+0085 (next line), a control character'],
    ['ACME\u00AD', 'U+00AD (soft hyphen), an invisible character'],
    ['ACME\uFEFF', 'U+FEFF (zero width no-break space, the byte order mark), an invisible character'],
    ['AC\uD800ME', 'U+D800, half of a surrogate pair alone (no character)'],
    ['ACME\uDC00', 'U+DC00, half of a surrogate pair alone (no character)'],
    ['ACME\u0007', 'U+0007, a control character'],
  ])('names the first refused character of %j', (text, named) => {
    expect(unsafeCharacter(text)).toBe(named);
  });

  it('names every refused character by its code point, and no other', () => {
    for (const cp of REFUSED)
      expect(unsafeCharacter(`A${String.fromCodePoint(cp)}B`), hex(cp)).toMatch(
        new RegExp(`^U\\+${hex(cp).slice(2)}\\b`),
      );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const refused = [...text].some((c) => REFUSED.includes(c.codePointAt(0)!));
        expect(unsafeCharacter(text) !== null).toBe(refused);
      }),
    );
  });

  it('takes what real names and text hold: spaces, accents, Devanagari, a pair of surrogates (an emoji)', () => {
    for (const text of ['M&M', 'BAJAJ-AUTO', 'JK AGRI', 'Société Générale', 'भारत', 'Diwali 🪔', ''])
      expect(unsafeCharacter(text)).toBeNull();
  });
});

describe('unsafeTextIn', () => {
  it("names where in an import file the first refused character is, in the import errors' field names", () => {
    expect(unsafeTextIn([{ symbol: 'ACME' }, { listings: [{ series: { RETAIL: 'R\u202ES' } }] }])).toBe(
      '[1].listings[0].series.RETAIL holds U+202E (right-to-left override), a bidirectional control',
    );
    expect(unsafeTextIn([{ symbol: 'ACME\nregistered: offer FAKE' }])).toBe(
      '[0].symbol holds U+000A (line feed), a control character',
    );
    expect(unsafeTextIn([{ 'sym\u200Bbol': 'ACME' }])).toBe(
      '[0] has a field name ("sym\\u200bbol") that holds U+200B (zero width space), an invisible character',
    );
    expect(unsafeTextIn('A\u0000')).toBe('the file holds U+0000 (null), a control character');
    expect(
      unsafeTextIn([
        { symbol: 'M&M', floor_price: 100, t_day: { opens_at: '2026-12-01T03:45:00Z' }, portions: null, ok: true },
      ]),
    ).toBeNull();
  });
});

describe('displayToken', () => {
  it('prints printable ASCII without spaces or quotes as it is', () => {
    for (const text of ['ACME', 'M&M', 'BAJAJ-AUTO', 'ACME-OFS-1', 'RS', 'a_b.c'])
      expect(displayToken(text)).toBe(text);
  });

  it('quotes anything else, escaping every refused character, a quote and a backslash', () => {
    expect(displayToken('ACME\nregistered: offer FAKE')).toBe('"ACME\\nregistered: offer FAKE"');
    expect(displayToken('ACME\u202E')).toBe('"ACME\\u202e"');
    expect(displayToken('AC\u200BME')).toBe('"AC\\u200bME"');
    expect(displayToken('ACME\u0000')).toBe('"ACME\\u0000"');
    expect(displayToken('A\r\tB\u007F\u0085\uD800')).toBe('"A\\r\\tB\\u007f\\u0085\\ud800"');
    expect(displayToken('JK AGRI')).toBe('"JK AGRI"');
    expect(displayToken('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(displayToken('Société')).toBe('"Société"');
    expect(displayToken('')).toBe('""');
  });

  it('never prints a line break, a refused character or a space outside quotes: one token, one line', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const token = displayToken(text);
        expect(unsafeCharacter(token)).toBeNull();
        if (!token.startsWith('"')) expect(token).toMatch(/^[!-~]+$/);
        // The quoted form reads back as the text, as JSON.
        else expect(JSON.parse(token)).toBe(text);
      }),
    );
  });

  it('quoted always quotes', () => {
    expect(quoted('203.0.113.7')).toBe('"203.0.113.7"');
    expect(quoted('203.0.113.7\nallowed_ips: 0.0.0.0')).toBe('"203.0.113.7\\nallowed_ips: 0.0.0.0"');
  });
});

/**
 * Symbols of the exchanges' own lists: NSE's EQUITY_L.csv (2,187 symbols, October 2025: upper-case letters,
 * digits, & and -, at most 10 characters) and BSE's list of equity scrips (3,951 security ids, July 2024:
 * the same, at most 11 characters, and two with a space: JK AGRI and ALAN SCOTT).
 */
const REAL_SYMBOLS = [
  'SBIN',
  'M&M',
  'M&MFIN',
  'BAJAJ-AUTO',
  'L&TFH',
  '3MINDIA',
  '20MICRONS',
  'J&KBANK',
  'IL&FSTRANS',
  'MCDOWELL-N',
  'NAM-INDIA',
  'ARE&M',
  'CAPTRU-RE1',
  'BAJAJHLDNG',
  'PANKAJPIYUS',
  'JK AGRI',
  'ALAN SCOTT',
  'RAMAPPR-B',
];

describe('EXCHANGE_SYMBOL_PATTERN', () => {
  const symbol = new RegExp(EXCHANGE_SYMBOL_PATTERN, 'u');

  it.each(REAL_SYMBOLS)('takes %s', (text) => {
    expect(text).toMatch(symbol);
    expect(text.length).toBeLessThanOrEqual(EXCHANGE_SYMBOL_MAX_LENGTH);
  });

  it.each([
    'ACME\nregistered: offer FAKE',
    'ACME\u202E',
    'AC\u200BME',
    'ACME\u0000',
    'acme',
    'ACME ',
    ' ACME',
    'JK  AGRI',
    '-ACME',
    'AC.ME',
    'ACMÉ',
    '',
  ])('refuses %j', (text) => {
    expect(text).not.toMatch(symbol);
  });
});

describe('EXCHANGE_SERIES_PATTERN', () => {
  const series = new RegExp(EXCHANGE_SERIES_PATTERN, 'u');

  it.each(['RS', 'IS', 'ES', 'EQ', 'BE', 'BZ', 'OF', 'A', 'B', 'T', 'XT', 'N1'])('takes %s', (text) => {
    expect(text).toMatch(series);
  });

  it.each(['RS\n', 'R\u202ES', 'E\u200BS', 'RS\u0000', 'rs', 'RSX', 'R S', ''])('refuses %j', (text) => {
    expect(text).not.toMatch(series);
  });
});
