/**
 * An offer's terms and its bids as the allocations read them (src/domain/ofs/offer/allocation.ts), for the
 * domain tests of the allocations.
 */
import type { OfferBid } from '../../src/domain/ofs/offer/allocation.js';
import type { OfferCategory, OfferTerms } from '../../src/domain/ofs/offer/offer.js';

/**
 * 1,000 shares, no green shoe, no employees' portion: retail 100, non-retail 900, MF/IC reserved 250,
 * single-bidder cap 250. Floor 100.00, price priority, a uniform retail price.
 */
export function offerTerms(overrides: Partial<OfferTerms> = {}): OfferTerms {
  return {
    baseQuantity: 1_000,
    greenShoeQuantity: 0,
    greenShoeExercised: 0,
    retailReservePct: 10,
    employeeQuantity: 0,
    employeeGreenShoeQuantity: 0,
    printedPortions: null,
    allocation: 'PRICE_PRIORITY',
    floorPricePaise: 10_000,
    retailDiscount: null,
    retailAllocationPrice: 'UNIFORM',
    employeeDiscount: null,
    ...overrides,
  };
}

export function offerBid(
  orderId: string,
  bidderId: string,
  category: OfferCategory,
  pricePaise: number,
  quantity: number,
  placedSeq: number,
): OfferBid {
  return { orderId, bidderId, category, pricePaise, quantity, placedSeq };
}
