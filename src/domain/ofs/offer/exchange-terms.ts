/**
 * An imported offer's terms against what the exchange says of its listing (issue 50, item 3; NSE's
 * `activeSecurities`, read by src/oms/exchange-terms.ts): the floor (NSE's `basePrice`), the tick, the lot,
 * each series' day and window, its modify/cancel window and its order value limit. Each difference is
 * named with both values; nothing is applied (the operator decides, and imports again if the exchange is
 * right). Plain data in paise and epoch ms: the wire's rupees and ISO instants are read in the oms layer.
 *
 * What the offer means by each (ordergate's rules, src/domain/ofs/offer/rules.ts): a listing's non-retail
 * series bids on T (tDay), its retail and employee series on T+1 (t1Day); a bid is modified or cancelled
 * while its day's session is open, so the modify/cancel window is the session; every series' floor is the
 * offer's; the lot is one share. A series shared by two categories (BSE's one series) is compared with the
 * first of non-retail, retail, employee.
 */
import { formatPrice } from '../issue/issue.js';
import { istDate } from '../trading-calendar.js';
import type { ListingSeries, Offer, OfferListing, Session } from './offer.js';

/** One series as the exchange answered it; an instant it wrote that is not one is NaN. */
export interface ExchangeSeriesTerms {
  series: string;
  floorPricePaise: number;
  /** The session's day in India, YYYY-MM-DD, as the exchange wrote it. */
  openOnDate: string;
  opensAt: number;
  closesAt: number;
  modCxlOpensAt: number;
  modCxlClosesAt: number;
  /** Null: none. */
  valueLimitPaise: number | null;
}

/** A listing as the exchange answered it. */
export interface ExchangeListingTerms {
  symbol: string;
  tickSizePaise: number;
  lotSize: number;
  series: ExchangeSeriesTerms[];
}

export const TERMS_FIELDS = [
  'tick',
  'lot',
  'series',
  'floor',
  'date',
  'opens',
  'closes',
  'mod_cxl_opens',
  'mod_cxl_closes',
  'value_limit',
] as const;
export type TermsField = (typeof TERMS_FIELDS)[number];

/** One difference: the field, ours and the exchange's, as text. */
export interface TermsDifference {
  exchange: string;
  scripToken: number;
  /** Null: a term of the listing, not of one series. */
  series: string | null;
  field: TermsField;
  ours: string;
  theirs: string;
}

const CATEGORY_KEYS = ['NON_RETAIL', 'RETAIL', 'EMPLOYEE'] as const satisfies readonly (keyof ListingSeries)[];

const instant = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : 'not a time');
/** A price the exchange wrote; one that is not a number shows as such. */
const priceText = (paise: number) =>
  Number.isSafeInteger(paise) ? formatPrice(paise) : Number.isFinite(paise) ? String(paise / 100) : 'not a price';
const limit = (paise: number | null) => (paise === null ? 'none' : priceText(paise));

/** Every difference between the offer's listing and the exchange's answer for it, in a fixed order; none: they match. */
export function exchangeTermsDifferences(
  offer: Pick<Offer, 'floorPricePaise' | 'tickSizePaise' | 'tDay' | 't1Day'>,
  listing: OfferListing,
  terms: ExchangeListingTerms,
): TermsDifference[] {
  const differences: TermsDifference[] = [];
  const differ = (series: string | null, field: TermsField, ours: string, theirs: string) => {
    if (ours !== theirs)
      differences.push({ exchange: listing.exchange, scripToken: listing.scripToken, series, field, ours, theirs });
  };
  differ(null, 'tick', formatPrice(offer.tickSizePaise), priceText(terms.tickSizePaise));
  differ(null, 'lot', '1', Number.isFinite(terms.lotSize) ? String(terms.lotSize) : 'not a number');

  const compared = new Set<string>();
  for (const key of CATEGORY_KEYS) {
    const name = listing.series[key];
    if (name === null || compared.has(name)) continue;
    compared.add(name);
    const session: Session = key === 'NON_RETAIL' ? offer.tDay : offer.t1Day;
    const theirs = terms.series.find((s) => s.series === name);
    if (theirs === undefined) {
      differ(name, 'series', `${name} (${key})`, 'not listed');
      continue;
    }
    differ(name, 'floor', formatPrice(offer.floorPricePaise), priceText(theirs.floorPricePaise));
    differ(name, 'date', istDate(session.opensAt), theirs.openOnDate);
    differ(name, 'opens', instant(session.opensAt), instant(theirs.opensAt));
    differ(name, 'closes', instant(session.closesAt), instant(theirs.closesAt));
    differ(name, 'mod_cxl_opens', instant(session.opensAt), instant(theirs.modCxlOpensAt));
    differ(name, 'mod_cxl_closes', instant(session.closesAt), instant(theirs.modCxlClosesAt));
    differ(name, 'value_limit', limit(listing.valueLimitsPaise?.[key] ?? null), limit(theirs.valueLimitPaise));
  }
  for (const theirs of terms.series) {
    if (!compared.has(theirs.series)) differ(theirs.series, 'series', 'none', `${theirs.series} (not in the offer)`);
  }
  return differences;
}

/** A difference in words: `NSE_EQ 700101 series IS: floor: ours 100.00, the exchange's 101.00`. */
export function describeTermsDifference(d: TermsDifference): string {
  return `${d.exchange} ${d.scripToken}${d.series === null ? '' : ` series ${d.series}`}: ${d.field}: ours ${d.ours}, the exchange's ${d.theirs}`;
}
