/** Plain test data shared by the domain and HTTP tests. */
import type { OfsIssue } from '../../src/domain/ofs-issue.js';

/**
 * The test OFS issue: NSE_EQ 500112 SBIN OF, floor 100.00, tick 0.05, retail cut-off 101.00, offer
 * 1,000,000, 10% retail, proportionate. Its windows are [0, 1) unless overridden.
 */
export function sbinIssue(overrides: Partial<OfsIssue> = {}): OfsIssue {
  return {
    exchange: 'NSE_EQ',
    scripToken: 500112,
    symbol: 'SBIN',
    series: 'OF',
    floorPricePaise: 10_000,
    tickSizePaise: 5,
    offerQuantity: 1_000_000,
    retailReservePct: 10,
    retailCutoffPricePaise: 10_100,
    allocation: 'PROPORTIONATE',
    nonRetailOpensAt: 0,
    nonRetailClosesAt: 1,
    retailOpensAt: 0,
    retailClosesAt: 1,
    settlementDelayMs: null,
    ...overrides,
  };
}

/** A cart line of a non-OFS product (the OFS-only OMS cannot route it; its stop-loss and validity rules apply). */
export const DELIVERY_LINE = {
  scripDetail: { symbol: 'INFY', _Series: 'EQ', _InstrumentName: 'EQUITIES', _ExchangeName: 'NSE', MarketLot: 1, PriceTick: 0.05 },
  TransactionType: 'BUY',
  OrderType: 'RL',
  Quantity: 10,
  Price: '1500.00',
  ProductType: 'DELIVERY',
  validity: 'DAY',
};
