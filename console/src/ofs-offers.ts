/**
 * OFS offers of the exchanges' framework (docs/design/ofs.md) as the console bids in them. A bid's category
 * in an offer follows from the series it is sent in and the user's category: on NSE RS is retail, IS
 * non-retail and ES employees, while a listing may use one series for both retail and non-retail (BSE's A).
 * So the console never asks for a series: it takes it from the listing and what the user bids as.
 */
import { readData, type Session } from './api.js';
import { parseInstant } from './format.js';
import { syncServerClock } from './ofs-issues.js';
import type { OfsListing, OfsOffer, OfsOfferDetails } from './types.js';

/** What a user bids as in an offer: the keys of a listing's `series`. */
export type BidAs = keyof OfsListing['series'];

export const BID_AS_LABELS: Record<BidAs, string> = {
  RETAIL: 'Retail',
  NON_RETAIL: 'Non-retail',
  EMPLOYEE: 'Employee (at the cut-off)',
};

/** The bid categories of an order in an offer (`bid_category`) that are non-retail: the bids carried forward to T+1. */
export const NON_RETAIL_BID_CATEGORIES: ReadonlySet<string> = new Set(['NII', 'MF', 'IC', 'OTHS']);

/** The most offers the offers view reads: the list's largest page. */
export const MOST_OFFERS = 200;

/**
 * The current offers (the list's default: those running, and those finished in the last days, whose results
 * the user still wants), T day latest first, the first MOST_OFFERS of them; the server's clock is taken from
 * the answer.
 */
export async function loadOffers(): Promise<OfsOffer[]> {
  const started = Date.now();
  const answer = await readData((client) => client.offers({ state: 'current', limit: MOST_OFFERS }));
  syncServerClock(answer.server_time, started);
  return answer.offers;
}

/** One offer with its indicative prices through T, oldest first. */
export function loadOffer(offerId: string): Promise<OfsOfferDetails> {
  return readData((client) => client.offer(offerId));
}

/** The series a bid as `bidAs` is sent in on this listing; null when the listing takes no such bid (no employee series). */
export function seriesFor(listing: OfsListing, bidAs: BidAs): string | null {
  return listing.series[bidAs];
}

/** Whether a user of this category bids as non-retail: NII, MF, IC and OTHS do, retail users (and unknown ones) not. */
export const isNonRetailUser = (category: Session['offerCategory']): boolean =>
  category !== null && category !== 'RETAIL';

const within = (day: OfsOffer['t_day'], now: number) =>
  parseInstant(day.opens_at) <= now && now < parseInstant(day.closes_at);

/**
 * What a user of `category` may bid as in the offer at `now` (the server's clock): non-retail users on T;
 * retail users on T+1 once the T allocation has found the cut-off, as retail, or as employees when the offer
 * has employee shares (the server checks that the user is registered as one).
 */
export function openBids(offer: OfsOffer, category: Session['offerCategory'], now: number): BidAs[] {
  if (isNonRetailUser(category)) return offer.state === 'T_OPEN' && within(offer.t_day, now) ? ['NON_RETAIL'] : [];
  if (offer.state !== 'T1_OPEN' || !within(offer.t1_day, now)) return [];
  const employees = offer.portions.employee > 0 && offer.listings.some((listing) => listing.series.EMPLOYEE !== null);
  return employees ? ['RETAIL', 'EMPLOYEE'] : ['RETAIL'];
}
