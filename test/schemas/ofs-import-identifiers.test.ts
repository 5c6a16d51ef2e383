/**
 * The exchange identifiers of `ordergate ofs import` (issue 47 row 5): an offer's `symbol` and its
 * listings' series, an issue's `symbol` and `series`, are taken only as NSE and BSE write them
 * (src/domain/ofs/display-text.ts): no line break that forges a line of the CLI's output, no bidirectional
 * control, no invisible or NUL character reaches the database. Each refusal is one violation, naming the field.
 */
import { describe, expect, it } from 'vitest';
import { OfsIssueImport } from '../../src/schemas/ofs-issue.js';
import { OfsOfferImport } from '../../src/schemas/ofs-offer.js';
import { compileChecker, createAjv } from '../../src/schemas/validator.js';
import { offerImport, SBIN_ISSUE_IMPORT } from '../support/offers.js';

const ajv = createAjv();
const checkOffer = compileChecker(ajv, OfsOfferImport);
const checkIssue = compileChecker(ajv, OfsIssueImport);

const issue = SBIN_ISSUE_IMPORT;

const withSeries = (series: Record<string, unknown>) =>
  offerImport({
    listings: [
      {
        exchange: 'NSE_EQ',
        scrip_token: 700001,
        series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES', ...series },
      },
    ],
  });

const BAD = [
  'ACME\nregistered: offer FAKE',
  'ACME\u202E',
  'AC\u200BME',
  'ACME\u0000',
  'ACME\r',
  'ACME\uD800',
  'acme',
  'AC.ME',
];
const BAD_SERIES = ['RS\nregistered: offer FAKE', 'R\u202ES', 'R\u200BS', 'RS\u0000', 'rs', 'RSX'];

describe('the symbol', () => {
  it.each(BAD)('of an offer refuses %j, naming the field', (symbol) => {
    const violations = checkOffer(offerImport({ symbol }));
    expect(violations.map((v) => v.field)).toEqual(['symbol']);
    expect(violations[0]!.message).toMatch(/^symbol is not valid: .*upper-case letters/);
    expect(violations[0]!.message).not.toMatch(/[\n\r\u0000\u200B\u202E]/);
  });

  it.each(BAD)('of an issue refuses %j, naming the field', (symbol) => {
    const violations = checkIssue({ ...issue, symbol });
    expect(violations.map((v) => v.field)).toEqual(['symbol']);
    expect(violations[0]!.message).toMatch(/^symbol is not valid: .*upper-case letters/);
  });

  it.each(['SBIN', 'M&M', 'BAJAJ-AUTO', 'L&TFH', '3MINDIA', 'MCDOWELL-N', 'J&KBANK', 'JK AGRI', 'PANKAJPIYUS'])(
    'takes the real symbol %s',
    (symbol) => {
      expect(checkOffer(offerImport({ symbol }))).toEqual([]);
      expect(checkIssue({ ...issue, symbol })).toEqual([]);
    },
  );

  it('has at most 20 characters', () => {
    expect(checkIssue({ ...issue, symbol: 'A'.repeat(20) })).toEqual([]);
    expect(checkIssue({ ...issue, symbol: 'A'.repeat(21) }).map((v) => v.field)).toEqual(['symbol']);
  });
});

describe('the series', () => {
  it.each(BAD_SERIES)('of an offer listing refuses %j in each category, naming the field', (bad) => {
    for (const category of ['RETAIL', 'NON_RETAIL', 'EMPLOYEE']) {
      const violations = checkOffer(withSeries({ [category]: bad }));
      expect(violations.map((v) => v.field)).toEqual([`listings[0].series.${category}`]);
      // EMPLOYEE may be null: a union, whose refusal the validator words as its own ("must match a schema
      // in anyOf"); the CLI names a refused character itself (test/cli/ofs-import-text.test.ts).
      if (category !== 'EMPLOYEE') {
        expect(violations[0]!.message).toMatch(
          new RegExp(`^listings\\[0\\]\\.series\\.${category} is not valid: .*1 or 2 upper-case letters or digits`),
        );
      }
    }
  });

  it.each(BAD_SERIES)('of an issue refuses %j, naming the field', (series) => {
    const violations = checkIssue({ ...issue, series });
    expect(violations.map((v) => v.field)).toEqual(['series']);
    expect(violations[0]!.message).toMatch(/^series is not valid: .*1 or 2 upper-case letters or digits/);
  });

  it.each(['RS', 'IS', 'ES', 'EQ', 'OF', 'A', 'XT'])('takes the real series %s', (series) => {
    expect(checkOffer(withSeries({ RETAIL: series, NON_RETAIL: series, EMPLOYEE: null }))).toEqual([]);
    expect(checkIssue({ ...issue, series })).toEqual([]);
  });
});
