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
}

/** Rupees (a JSON number such as 101.05) to integer paise; answers null when it is not a whole paisa. */
export function rupeesToPaise(rupees: number): number | null {
  const paise = Math.round(rupees * 100);
  return Math.abs(paise - rupees * 100) < 1e-6 && Number.isSafeInteger(paise) ? paise : null;
}

export function paiseToRupees(paise: number): number {
  return paise / 100;
}
