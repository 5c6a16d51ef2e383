/** An OFS issue and its book on the wire (OfsIssueEntry, OfsBookData), from the domain's registration and book. */
import { issueStatus, type AllottedBook, type CategoryClearing, type OfsBook } from '../../domain/ofs/issue/book.js';
import type { OfsIssueRegistration } from '../../domain/ofs/issue/issue.js';
import type { BidderCategory } from '../../domain/ofs/rules.js';
import type { OfsBookData, OfsIssueEntry } from '../ofs.js';

const rupees = (paise: number) => paise / 100;
const instant = (ms: number) => new Date(ms).toISOString();
const priceOrNull = (paise: number | null) => (paise === null ? null : rupees(paise));

/** An issue under the import format's names and units, with its windows' state for a bidder of `category`. */
export function toOfsIssueEntry(
  { issue, allocatedAt }: OfsIssueRegistration,
  category: BidderCategory,
  now: number,
): OfsIssueEntry {
  const status = issueStatus(issue, allocatedAt, category, now);
  return {
    exchange: issue.exchange,
    scrip_token: issue.scripToken,
    symbol: issue.symbol,
    series: issue.series,
    floor_price: rupees(issue.floorPricePaise),
    tick_size: rupees(issue.tickSizePaise),
    offer_quantity: issue.offerQuantity,
    retail_reserve_pct: issue.retailReservePct,
    retail_cutoff_price: issue.retailCutoffPricePaise === null ? null : rupees(issue.retailCutoffPricePaise),
    allocation: issue.allocation,
    order_value_upper_limit: issue.valueLimitPaise == null ? null : rupees(issue.valueLimitPaise),
    non_retail_opens_at: instant(issue.nonRetailOpensAt),
    non_retail_closes_at: instant(issue.nonRetailClosesAt),
    retail_opens_at: instant(issue.retailOpensAt),
    retail_closes_at: instant(issue.retailClosesAt),
    retail_window: status.retailWindow,
    non_retail_window: status.nonRetailWindow,
    allocated: status.allocated,
    state: status.state,
  };
}

export function toAllotted(allotted: AllottedBook): NonNullable<OfsBookData['allotted']> {
  return {
    retail: allotted.retail,
    non_retail: allotted.nonRetail,
    by_price: allotted.byPrice.map((level) => ({
      price: rupees(level.pricePaise),
      retail_quantity: level.retailQuantity,
      non_retail_quantity: level.nonRetailQuantity,
    })),
  };
}

/** A book's demand by price, the bids it leaves out and the clearing it implies, under the answer's names. */
export function toDemand(book: OfsBook): Pick<OfsBookData, 'demand' | 'ineligible' | 'clearing'> {
  const clearing = (c: CategoryClearing) => ({
    portion: c.portion,
    demand: c.demand,
    price: priceOrNull(c.clearingPricePaise),
  });
  return {
    demand: book.demand.map((level) => ({
      price: rupees(level.pricePaise),
      retail_quantity: level.retailQuantity,
      retail_cutoff_quantity: level.retailCutoffQuantity,
      non_retail_quantity: level.nonRetailQuantity,
      retail_cumulative: level.retailCumulative,
      non_retail_cumulative: level.nonRetailCumulative,
      bids: level.bids,
    })),
    ineligible: {
      retail_quantity: book.ineligible.retailQuantity,
      non_retail_quantity: book.ineligible.nonRetailQuantity,
      bids: book.ineligible.bids,
    },
    clearing: { retail: clearing(book.clearing.retail), non_retail: clearing(book.clearing.nonRetail) },
  };
}
