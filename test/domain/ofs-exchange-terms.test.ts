/**
 * An imported offer's terms against the exchange's answer for its listing (src/domain/ofs/offer/exchange-terms.ts):
 * nothing when they match; each field's difference named with both values.
 */
import { describe, expect, it } from 'vitest';
import {
  describeTermsDifference,
  exchangeTermsDifferences,
  type ExchangeListingTerms,
  type ExchangeSeriesTerms,
} from '../../src/domain/ofs/offer/exchange-terms.js';
import type { OfferListing } from '../../src/domain/ofs/offer/offer.js';

const HOUR = 60 * 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const offer = {
  floorPricePaise: 10_000,
  tickSizePaise: 5,
  tDay: { opensAt: T, closesAt: T + 6.25 * HOUR },
  t1Day: { opensAt: T + 24 * HOUR, closesAt: T + 30.25 * HOUR },
};
const listing: OfferListing = {
  exchange: 'NSE_EQ',
  scripToken: 700101,
  series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
  valueLimitsPaise: { RETAIL: 20_000_000, NON_RETAIL: null, EMPLOYEE: 50_000_000 },
};

function series(name: string, session: { opensAt: number; closesAt: number }, valueLimitPaise: number | null) {
  return {
    series: name,
    floorPricePaise: 10_000,
    openOnDate: new Date(session.opensAt + 5.5 * HOUR).toISOString().slice(0, 10),
    opensAt: session.opensAt,
    closesAt: session.closesAt,
    modCxlOpensAt: session.opensAt,
    modCxlClosesAt: session.closesAt,
    valueLimitPaise,
  };
}

/** The exchange's answer as the offer would have it. */
function matching(): ExchangeListingTerms {
  return {
    symbol: 'DEMOCO',
    tickSizePaise: 5,
    lotSize: 1,
    series: [
      series('IS', offer.tDay, null),
      series('RS', offer.t1Day, 20_000_000),
      series('ES', offer.t1Day, 50_000_000),
    ],
  };
}

function withSeries(name: string, change: Partial<ExchangeSeriesTerms>): ExchangeListingTerms {
  const terms = matching();
  return { ...terms, series: terms.series.map((s) => (s.series === name ? { ...s, ...change } : s)) };
}

describe('exchangeTermsDifferences', () => {
  it('finds nothing when the exchange says what the offer says', () => {
    expect(exchangeTermsDifferences(offer, listing, matching())).toEqual([]);
  });

  it('names each field that differs, with both values', () => {
    const one = (terms: ExchangeListingTerms) => {
      const found = exchangeTermsDifferences(offer, listing, terms);
      expect(found).toHaveLength(1);
      return describeTermsDifference(found[0]!);
    };
    expect(one({ ...matching(), tickSizePaise: 10 })).toBe("NSE_EQ 700101: tick: ours 0.05, the exchange's 0.10");
    expect(one({ ...matching(), lotSize: 5 })).toBe("NSE_EQ 700101: lot: ours 1, the exchange's 5");
    expect(one(withSeries('IS', { floorPricePaise: 10_100 }))).toBe(
      "NSE_EQ 700101 series IS: floor: ours 100.00, the exchange's 101.00",
    );
    expect(one(withSeries('RS', { openOnDate: '2026-12-03' }))).toBe(
      "NSE_EQ 700101 series RS: date: ours 2026-12-02, the exchange's 2026-12-03",
    );
    expect(one(withSeries('IS', { opensAt: T + 0.25 * HOUR }))).toBe(
      "NSE_EQ 700101 series IS: opens: ours 2026-12-01T03:45:00Z, the exchange's 2026-12-01T04:00:00Z",
    );
    expect(one(withSeries('RS', { closesAt: T + 30 * HOUR }))).toBe(
      "NSE_EQ 700101 series RS: closes: ours 2026-12-02T10:00:00Z, the exchange's 2026-12-02T09:45:00Z",
    );
    expect(one(withSeries('ES', { modCxlOpensAt: Number.NaN }))).toBe(
      "NSE_EQ 700101 series ES: mod_cxl_opens: ours 2026-12-02T03:45:00Z, the exchange's not a time",
    );
    expect(one(withSeries('IS', { modCxlClosesAt: T + 6 * HOUR }))).toBe(
      "NSE_EQ 700101 series IS: mod_cxl_closes: ours 2026-12-01T10:00:00Z, the exchange's 2026-12-01T09:45:00Z",
    );
    expect(one(withSeries('RS', { valueLimitPaise: null }))).toBe(
      "NSE_EQ 700101 series RS: value_limit: ours 200000.00, the exchange's none",
    );
    expect(one(withSeries('IS', { valueLimitPaise: 1_000_000_000 }))).toBe(
      "NSE_EQ 700101 series IS: value_limit: ours none, the exchange's 10000000.00",
    );
  });

  it('names a series the exchange does not list, and one it lists that the offer does not name', () => {
    const terms = matching();
    terms.series = [terms.series[0]!, terms.series[1]!, { ...terms.series[2]!, series: 'EX' }];
    expect(exchangeTermsDifferences(offer, listing, terms).map(describeTermsDifference)).toEqual([
      "NSE_EQ 700101 series ES: series: ours ES (EMPLOYEE), the exchange's not listed",
      "NSE_EQ 700101 series EX: series: ours none, the exchange's EX (not in the offer)",
    ]);
  });

  it('reports several differences of one series in a fixed order', () => {
    const found = exchangeTermsDifferences(
      offer,
      listing,
      withSeries('IS', { floorPricePaise: 9_950, closesAt: T + 7 * HOUR, valueLimitPaise: 100 }),
    );
    expect(found.map((d) => [d.series, d.field, d.ours, d.theirs])).toEqual([
      ['IS', 'floor', '100.00', '99.50'],
      ['IS', 'closes', '2026-12-01T10:00:00Z', '2026-12-01T10:45:00Z'],
      ['IS', 'value_limit', 'none', '1.00'],
    ]);
  });
});
