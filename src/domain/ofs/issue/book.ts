/**
 * An OFS issue as the console shows it (docs/design/console-api.md): where its windows stand against the
 * clock, and its book: the offer split, the demand by price level with running totals, the clearing price
 * each category's demand implies, and what was allotted. Plain functions over the sums the store reads (one
 * row per category and price), no I/O and no clock of their own.
 *
 * The offer split, the portions and the clearing prices are not worked out again here: they are what
 * allocateOfs (domain/ofs/issue/allocation.ts) answers when fed one bid per category and price level. Its portions
 * and clearing prices depend on the bids only through those sums, so the chart cannot disagree with the
 * allocation at close; and the bids it would refuse (allocationViolations) are left out of the demand, as
 * the allocation leaves them out.
 */
import { allocateOfs, type AllocationBid } from './allocation.js';
import type { OfsIssue } from './issue.js';
import {
  allocationViolations,
  categoryWindow,
  CUTOFF_ORDER_TYPE,
  LIMIT_ORDER_TYPE,
  type BidderCategory,
} from '../rules.js';

export const WINDOW_STATES = ['UPCOMING', 'OPEN', 'CLOSED'] as const;
export type WindowState = (typeof WINDOW_STATES)[number];
export const ISSUE_STATES = [...WINDOW_STATES, 'ALLOCATED'] as const;
export type IssueState = (typeof ISSUE_STATES)[number];

/** A bidding window against `now`: open while `opensAt <= now < closesAt`, as bids are taken (ofs-rules.ts). */
export function windowState(window: { opensAt: number; closesAt: number }, now: number): WindowState {
  if (now < window.opensAt) return 'UPCOMING';
  return now < window.closesAt ? 'OPEN' : 'CLOSED';
}

export interface IssueStatus {
  retailWindow: WindowState;
  nonRetailWindow: WindowState;
  allocated: boolean;
  /** ALLOCATED once the allocation ran; before that, the state of the window `category` bids in. */
  state: IssueState;
}

/** Where an issue stands for a bidder of `category`; `allocatedAt` null: not allocated (or re-opened since). */
export function issueStatus(
  issue: OfsIssue,
  allocatedAt: number | null,
  category: BidderCategory,
  now: number,
): IssueStatus {
  const allocated = allocatedAt !== null;
  return {
    retailWindow: windowState(categoryWindow(issue, 'RETAIL'), now),
    nonRetailWindow: windowState(categoryWindow(issue, 'NON_RETAIL'), now),
    allocated,
    state: allocated ? 'ALLOCATED' : windowState(categoryWindow(issue, category), now),
  };
}

/** Newest windows first: the later of the two openings, latest first; then by exchange and scrip token. */
export function byNewestWindows(a: OfsIssue, b: OfsIssue): number {
  const opening = (issue: OfsIssue) => Math.max(issue.retailOpensAt, issue.nonRetailOpensAt);
  if (opening(a) !== opening(b)) return opening(b) - opening(a);
  if (a.exchange !== b.exchange) return a.exchange < b.exchange ? -1 : 1;
  return a.scripToken - b.scripToken;
}

/** The bids of one category at one price, summed: a row of the store's aggregation. */
export interface BookGroup {
  category: BidderCategory;
  /** Integer paise: the bid price (0: cut-off bids), or for allotments the trade price. */
  pricePaise: number;
  /** Shares bid (or allotted), summed exactly (issue 47 row 3: a sum may pass 2^53). */
  quantity: bigint;
  bids: number;
}

export interface DemandLevel {
  /** The price the bids count at in paise: a cut-off bid at the retail cut-off price. */
  pricePaise: number;
  retailQuantity: bigint;
  /** The part of retailQuantity bid at cut-off. */
  retailCutoffQuantity: bigint;
  nonRetailQuantity: bigint;
  /** Demand at this price or above. */
  retailCumulative: bigint;
  nonRetailCumulative: bigint;
  bids: number;
}

export interface CategoryClearing {
  /** The shares this category can be allotted: its reserve, after what the other category left it or took. */
  portion: number;
  demand: bigint;
  /**
   * When the demand exceeds the portion: PROPORTIONATE, the one price every allotted bid trades at (a
   * cut-off bid at the cut-off price); PRICE_PRIORITY, the lowest price allotted. Null when the demand fits
   * the portion (every bid is allotted in full) or nothing is left of the portion.
   */
  clearingPricePaise: number | null;
}

export interface OfferSplit {
  total: number;
  /** The retail reserve: floor(total * retail_reserve_pct / 100). */
  retail: number;
  nonRetail: number;
}

export interface OfsBook {
  offer: OfferSplit;
  /** Highest price first. */
  demand: DemandLevel[];
  /** Live bids the allocation would refuse (an issue re-imported with a higher floor, or without a cut-off price). */
  ineligible: { retailQuantity: bigint; nonRetailQuantity: bigint; bids: number };
  clearing: { retail: CategoryClearing; nonRetail: CategoryClearing };
}

type IssueTerms = Pick<
  OfsIssue,
  'offerQuantity' | 'retailReservePct' | 'allocation' | 'floorPricePaise' | 'retailCutoffPricePaise'
>;

/** The offer and its retail reserve, as the allocation splits them (it answers the reserve as the retail portion when nobody bids). */
export function offerSplit(issue: IssueTerms): OfferSplit {
  const { retail, nonRetail } = allocateOfs({ ...issue, bids: [] });
  return { total: issue.offerQuantity, retail: retail.portion, nonRetail: nonRetail.portion };
}

/** The book of the issue's live bids (`groups`: one per category and bid price). */
export function ofsBook(issue: IssueTerms, groups: readonly BookGroup[]): OfsBook {
  const levels = new Map<number, DemandLevel>();
  const ineligible = { retailQuantity: 0n, nonRetailQuantity: 0n, bids: 0 };
  for (const group of groups) {
    const retail = group.category === 'RETAIL';
    // Every bid is a whole number of shares, at least one (order entry's schema): the price terms are what can fail.
    const terms = {
      orderType: group.pricePaise === 0 ? CUTOFF_ORDER_TYPE : LIMIT_ORDER_TYPE,
      quantity: 1,
      pricePaise: group.pricePaise,
    };
    if (allocationViolations(terms, issue, group.category).length > 0) {
      if (retail) ineligible.retailQuantity += group.quantity;
      else ineligible.nonRetailQuantity += group.quantity;
      ineligible.bids += group.bids;
      continue;
    }
    const pricePaise = group.pricePaise === 0 ? issue.retailCutoffPricePaise! : group.pricePaise;
    const level = levels.get(pricePaise) ?? emptyLevel(pricePaise);
    if (retail) level.retailQuantity += group.quantity;
    else level.nonRetailQuantity += group.quantity;
    if (group.pricePaise === 0) level.retailCutoffQuantity += group.quantity;
    level.bids += group.bids;
    levels.set(pricePaise, level);
  }
  const demand = [...levels.values()].sort((a, b) => b.pricePaise - a.pricePaise);
  let retailCumulative = 0n;
  let nonRetailCumulative = 0n;
  for (const level of demand) {
    level.retailCumulative = retailCumulative += level.retailQuantity;
    level.nonRetailCumulative = nonRetailCumulative += level.nonRetailQuantity;
  }
  return { offer: offerSplit(issue), demand, ineligible, clearing: clearingOf(issue, demand) };
}

function emptyLevel(pricePaise: number): DemandLevel {
  return {
    pricePaise,
    retailQuantity: 0n,
    retailCutoffQuantity: 0n,
    nonRetailQuantity: 0n,
    retailCumulative: 0n,
    nonRetailCumulative: 0n,
    bids: 0,
  };
}

/**
 * allocateOfs over one bid per category and level. A level's sum may pass what one bid may hold (2^53);
 * it is fed as at most offer + 1 shares, which changes no portion and no clearing price: such a level is
 * more than any portion either way, and the portions only compare demands with the reserves.
 */
function clearingOf(issue: IssueTerms, demand: readonly DemandLevel[]): OfsBook['clearing'] {
  const most = BigInt(issue.offerQuantity) + 1n;
  const bids: AllocationBid[] = [];
  const levelBid = (category: BidderCategory, pricePaise: number, quantity: bigint) =>
    bids.push({
      orderId: `${category} ${pricePaise}`,
      category,
      pricePaise,
      quantity: Number(quantity < most ? quantity : most),
      placedSeq: bids.length,
    });
  for (const level of demand) {
    if (level.retailQuantity > 0n) levelBid('RETAIL', level.pricePaise, level.retailQuantity);
    if (level.nonRetailQuantity > 0n) levelBid('NON_RETAIL', level.pricePaise, level.nonRetailQuantity);
  }
  const result = allocateOfs({ ...issue, bids });
  const category = (portion: number, total: bigint, clearingPricePaise: number | null): CategoryClearing => ({
    portion,
    demand: total,
    clearingPricePaise: total > BigInt(portion) ? clearingPricePaise : null,
  });
  const last = demand.at(-1);
  return {
    retail: category(result.retail.portion, last?.retailCumulative ?? 0n, result.retail.clearingPricePaise),
    nonRetail: category(result.nonRetail.portion, last?.nonRetailCumulative ?? 0n, result.nonRetail.clearingPricePaise),
  };
}

export interface AllottedBook {
  retail: bigint;
  nonRetail: bigint;
  /** Highest trade price first. */
  byPrice: { pricePaise: number; retailQuantity: bigint; nonRetailQuantity: bigint }[];
}

/** What the allocation allotted (`groups`: the allotted quantities, one per category and trade price). */
export function allottedBook(groups: readonly BookGroup[]): AllottedBook {
  const byPrice = new Map<number, AllottedBook['byPrice'][number]>();
  let retail = 0n;
  let nonRetail = 0n;
  for (const group of groups) {
    const level = byPrice.get(group.pricePaise) ?? {
      pricePaise: group.pricePaise,
      retailQuantity: 0n,
      nonRetailQuantity: 0n,
    };
    if (group.category === 'RETAIL') {
      level.retailQuantity += group.quantity;
      retail += group.quantity;
    } else {
      level.nonRetailQuantity += group.quantity;
      nonRetail += group.quantity;
    }
    byPrice.set(group.pricePaise, level);
  }
  return { retail, nonRetail, byPrice: [...byPrice.values()].sort((a, b) => b.pricePaise - a.pricePaise) };
}
