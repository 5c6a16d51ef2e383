/** An OFS issue as ordergate registers it: the instrument, its price rules and its two bidding windows. */
export type OfsExchange = 'NSE_EQ' | 'BSE_EQ';
export const OFS_EXCHANGES: readonly OfsExchange[] = ['NSE_EQ', 'BSE_EQ'];

export type AllocationMethod = 'PROPORTIONATE' | 'PRICE_PRIORITY';

export interface OfsIssue {
  exchange: OfsExchange;
  scripToken: number;
  symbol: string;
  series: string;
  floorPricePaise: number;
  tickSizePaise: number;
  offerQuantity: number;
  retailReservePct: number;
  /** Unknown (null) until day T closes. */
  retailCutoffPricePaise: number | null;
  allocation: AllocationMethod;
  nonRetailOpensAt: number;
  nonRetailClosesAt: number;
  retailOpensAt: number;
  retailClosesAt: number;
  /** How long after an allotment its trade settles (its shares become a holding); null: T+1 (src/domain/funds/trades.ts). */
  settlementDelayMs: number | null;
  /**
   * The order value upper limit the exchange sets for the issue's series, in paise (NSE's
   * orderValueUpperLimit; issue 47 row 3): a bid's value above it is refused (e-383). Absent or null: none.
   */
  valueLimitPaise?: number | null;
}

/** A registered issue with when its allocation ran (null: not yet, or re-opened since). */
export interface OfsIssueRegistration {
  issue: OfsIssue;
  allocatedAt: number | null;
}

/**
 * Rupees (a JSON number such as 101.05) to integer paise; null when it is not a whole number of paise.
 * Exact: paise / 100 is the double nearest to the decimal, which is what JSON parsing of that decimal
 * gives, so the test below accepts exactly the prices with at most two decimals, at any magnitude.
 */
export function rupeesToPaise(rupees: number): number | null {
  // `|| 0` turns the -0 of a JSON "-0" into 0.
  const paise = Math.round(rupees * 100) || 0;
  return Number.isSafeInteger(paise) && paise / 100 === rupees ? paise : null;
}

/** Paise as rupees with two decimals: 10150 -> "101.50", -5 -> "-0.05". */
export function formatPrice(paise: number | bigint): string {
  const value = BigInt(paise);
  const size = value < 0n ? -value : value;
  return `${value < 0n ? '-' : ''}${size / 100n}.${(size % 100n).toString().padStart(2, '0')}`;
}
