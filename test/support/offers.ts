/**
 * An offer in the import format (schemas/ofs-offer.ts), for tests: listed on both exchanges, T opens at
 * `tOpensAt` and T+1 a day later. The seller's green-shoe decision is due at T's close (the default stands
 * then: the T allocation runs at the close, as the tests of the other rules want); the tests of the wait
 * give a later `green_shoe_decision_by`. Settlement is by trading day: on the real clock, where T may fall
 * on a weekend, pass `settlement_delay_seconds` (a drill offer, whose days need not be trading days).
 */
export function offerImport(
  overrides: Record<string, unknown> = {},
  tOpensAt = Date.parse('2026-12-01T03:45:00Z'),
): Record<string, unknown> {
  const day = 24 * 60 * 60 * 1000;
  const at = (ms: number) => new Date(ms).toISOString();
  const offer: Record<string, unknown> = {
    offer_id: 'ACME-OFS-1',
    symbol: 'ACME',
    listings: [
      { exchange: 'NSE_EQ', scrip_token: 700001, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
      { exchange: 'BSE_EQ', scrip_token: 800001, series: { RETAIL: 'A', NON_RETAIL: 'A' } },
    ],
    floor_price: 100,
    tick_size: 0.05,
    base_quantity: 1_000_000,
    green_shoe_quantity: 1_000_000,
    green_shoe_exercised: false,
    retail_reserve_pct: 12.5,
    retail_discount: { rupees: 2.5 },
    retail_allocation_price: 'UNIFORM',
    employee_quantity: 20_000,
    employee_discount: { pct: 5 },
    allocation: 'PRICE_PRIORITY',
    t_day: { opens_at: at(tOpensAt), closes_at: at(tOpensAt + 6.25 * 60 * 60 * 1000) },
    t1_day: { opens_at: at(tOpensAt + day), closes_at: at(tOpensAt + day + 6.25 * 60 * 60 * 1000) },
    ...overrides,
  };
  if (!('green_shoe_decision_by' in overrides))
    offer.green_shoe_decision_by = (offer.t_day as { closes_at: string }).closes_at;
  return offer;
}

/**
 * The console tests' small offer DELTA: 1,000 shares (the single-bidder cap 250, non-retail 875 of which 250
 * for MF and IC first) on NSE_EQ 700004 (RS, IS, ES) and BSE_EQ 800004 (D); the rest as `overrides` say.
 */
export function deltaOffer(overrides: Record<string, unknown>, tOpensAt: number): Record<string, unknown> {
  return offerImport(
    {
      symbol: 'DELTA',
      listings: [
        { exchange: 'NSE_EQ', scrip_token: 700004, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
        { exchange: 'BSE_EQ', scrip_token: 800004, series: { RETAIL: 'D', NON_RETAIL: 'D' } },
      ],
      base_quantity: 1000,
      ...overrides,
    },
    tOpensAt,
  );
}

/** An issue of the one-listing model in the import format (schemas/ofs-issue.ts): SBIN OF on NSE, T on 23 November 2026. */
export const SBIN_ISSUE_IMPORT = {
  exchange: 'NSE_EQ',
  scrip_token: 500112,
  symbol: 'SBIN',
  series: 'OF',
  floor_price: 100,
  tick_size: 0.05,
  offer_quantity: 1_000_000,
  retail_reserve_pct: 10,
  retail_cutoff_price: null,
  allocation: 'PROPORTIONATE',
  non_retail_opens_at: '2026-11-23T03:45:00Z',
  non_retail_closes_at: '2026-11-23T10:00:00Z',
  retail_opens_at: '2026-11-24T03:45:00Z',
  retail_closes_at: '2026-11-24T10:00:00Z',
} as const;
