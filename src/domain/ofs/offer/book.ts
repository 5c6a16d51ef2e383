/**
 * An offer's book as the operator sees it (docs/design/ofs.md, "What users and operators see"): per
 * category and per listing, the bids still open and what was allotted; the portions each category is
 * allotted from; and the open non-retail demand by price, highest first, with the demand at or above
 * each price. Plain functions over the sums the store reads (one row per listing, category, liveness and
 * price); no I/O, no clock.
 */
import {
  isNonRetailCategory,
  OFFER_CATEGORIES,
  offerPortions,
  type OfferCategory,
  type OfferPortions,
  type OfferTerms,
} from './offer.js';

/** The broker's bids of one listing, category and price, summed: a row of the store's aggregation. */
export interface OfferBookRow {
  exchange: string;
  scripToken: number;
  category: OfferCategory;
  /** Live bids (still open for an allocation) or finished ones (their allotments stand). */
  live: boolean;
  /** The bid price in paise (0: cut-off). */
  pricePaise: number;
  /** Shares still bid for (live bids: quantity less what was allotted on T); sums are exact (bigint). */
  openQuantity: bigint;
  allottedQuantity: bigint;
  /** What the allotments cost, in paise. */
  allottedValuePaise: bigint;
  bids: number;
}

export interface OfferBookFigures {
  bids: number;
  openQuantity: bigint;
  allottedQuantity: bigint;
  allottedValuePaise: bigint;
}

export interface OfferBookCategory extends OfferBookFigures {
  category: OfferCategory;
  byListing: ({ exchange: string; scripToken: number } & OfferBookFigures)[];
}

export interface OfferDemandLevel {
  pricePaise: number;
  quantity: bigint;
  /** Open non-retail demand at or above this price. */
  cumulative: bigint;
  bids: number;
}

export interface OfferBook {
  portions: OfferPortions;
  /** Every category, in the framework's order, with the listings it has bids on. */
  categories: OfferBookCategory[];
  /** Open non-retail bids by price, highest first. */
  nonRetailDemand: OfferDemandLevel[];
}

const empty = (): OfferBookFigures => ({ bids: 0, openQuantity: 0n, allottedQuantity: 0n, allottedValuePaise: 0n });

function add(into: OfferBookFigures, row: OfferBookRow): void {
  into.bids += row.bids;
  if (row.live) into.openQuantity += row.openQuantity;
  into.allottedQuantity += row.allottedQuantity;
  into.allottedValuePaise += row.allottedValuePaise;
}

export function offerBook(offer: OfferTerms, rows: readonly OfferBookRow[]): OfferBook {
  const categories = OFFER_CATEGORIES.map((category): OfferBookCategory => ({ category, ...empty(), byListing: [] }));
  const levels = new Map<number, { quantity: bigint; bids: number }>();
  for (const row of rows) {
    const entry = categories.find((c) => c.category === row.category);
    if (entry === undefined) continue;
    add(entry, row);
    let listing = entry.byListing.find((l) => l.exchange === row.exchange && l.scripToken === row.scripToken);
    if (listing === undefined)
      entry.byListing.push((listing = { exchange: row.exchange, scripToken: row.scripToken, ...empty() }));
    add(listing, row);
    if (row.live && isNonRetailCategory(row.category) && row.openQuantity > 0n) {
      const level = levels.get(row.pricePaise) ?? { quantity: 0n, bids: 0 };
      level.quantity += row.openQuantity;
      level.bids += row.bids;
      levels.set(row.pricePaise, level);
    }
  }
  for (const category of categories)
    category.byListing.sort((a, b) =>
      a.exchange === b.exchange ? a.scripToken - b.scripToken : a.exchange < b.exchange ? -1 : 1,
    );
  let cumulative = 0n;
  const nonRetailDemand = [...levels]
    .sort(([a], [b]) => b - a)
    .map(([pricePaise, level]) => ({
      pricePaise,
      quantity: level.quantity,
      cumulative: (cumulative += level.quantity),
      bids: level.bids,
    }));
  return { portions: offerPortions(offer), categories, nonRetailDemand };
}
