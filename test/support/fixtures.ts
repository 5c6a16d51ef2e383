/** Plain test data shared by the domain and HTTP tests. */
import type { OfsIssue } from '../../src/domain/ofs/issue/issue.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import type { Order } from '../../src/domain/orders/order.js';

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
  scripDetail: {
    symbol: 'INFY',
    _Series: 'EQ',
    _InstrumentName: 'EQUITIES',
    _ExchangeName: 'NSE',
    MarketLot: 1,
    PriceTick: 0.05,
  },
  TransactionType: 'BUY',
  OrderType: 'RL',
  Quantity: 10,
  Price: '1500.00',
  ProductType: 'DELIVERY',
  validity: 'DAY',
};

/** A stored retail bid: 10 at 100.00 in an issue, PENDING, not funds-checked. */
export function storedOrder(overrides: Partial<Order> = {}): Order {
  return {
    orderId: 'o1',
    userId: 'u1',
    exchange: 'NSE_EQ',
    scripToken: 1,
    symbol: 'ACME',
    series: 'RP',
    transactionType: 'BUY',
    productType: 'OFS',
    orderType: 'RL',
    quantity: 10,
    pricePaise: 10_000,
    disclosedQuantity: 0,
    tradedQuantity: 0,
    status: OrderStatus.PENDING,
    errorReason: null,
    orderIdentifier: null,
    algoId: null,
    strategyId: null,
    partCode: null,
    venderCode: null,
    requestId: null,
    createdAt: 1,
    updatedAt: 1,
    category: 'RETAIL',
    cancelRequestedAt: null,
    tradedPricePaise: null,
    exchangeOrderId: null,
    fundsBlockedPaise: null,
    offerId: null,
    offerCategory: null,
    marginType: null,
    carriedForwardAt: null,
    ucc: null,
    clientType: null,
    custodianCode: null,
    pan: null,
    ...overrides,
  };
}
