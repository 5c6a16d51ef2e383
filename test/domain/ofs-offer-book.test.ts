/** An offer's book for the operator (src/domain/ofs-offer-book.ts): sums per category and listing, and the open non-retail demand by price. */
import { describe, expect, it } from 'vitest';
import { offerBook, type OfferBookRow } from '../../src/domain/ofs-offer-book.js';

const terms = {
  baseQuantity: 1000,
  greenShoeQuantity: 200,
  greenShoeExercised: 200,
  employeeGreenShoeQuantity: 0,
  printedPortions: null,
  retailReservePct: 12.5,
  employeeQuantity: 50,
  allocation: 'PRICE_PRIORITY' as const,
  floorPricePaise: 10_000,
  retailDiscount: null,
  retailAllocationPrice: 'UNIFORM' as const,
  employeeDiscount: null,
};
const row = (r: Partial<OfferBookRow>): OfferBookRow => ({
  exchange: 'NSE_EQ',
  scripToken: 1,
  category: 'NII',
  live: true,
  pricePaise: 10_100,
  openQuantity: 0,
  allottedQuantity: 0,
  allottedValuePaise: 0,
  bids: 1,
  ...r,
});

describe('offerBook', () => {
  it('sums each category in all and per listing, and lists every category in the framework order', () => {
    const book = offerBook(terms, [
      row({ openQuantity: 200, allottedQuantity: 300, allottedValuePaise: 3_030_000 }),
      row({ exchange: 'BSE_EQ', scripToken: 2, openQuantity: 100, bids: 2 }),
      row({ category: 'MF', live: false, allottedQuantity: 250, allottedValuePaise: 2_550_000 }),
    ]);
    expect(book.portions).toMatchObject({ total: 1200, retailReserved: 150, nonRetail: 1050 });
    expect(book.categories.map((c) => c.category)).toEqual(['RETAIL', 'EMPLOYEE', 'NII', 'MF', 'IC', 'OTHS']);
    const nii = book.categories[2]!;
    expect(nii).toEqual({
      category: 'NII',
      bids: 3,
      openQuantity: 300,
      allottedQuantity: 300,
      allottedValuePaise: 3_030_000,
      byListing: [
        { exchange: 'BSE_EQ', scripToken: 2, bids: 2, openQuantity: 100, allottedQuantity: 0, allottedValuePaise: 0 },
        { exchange: 'NSE_EQ', scripToken: 1, bids: 1, openQuantity: 200, allottedQuantity: 300, allottedValuePaise: 3_030_000 },
      ],
    });
    expect(book.categories[3]).toMatchObject({ category: 'MF', openQuantity: 0, allottedQuantity: 250 });
  });

  it('lists the open non-retail demand by price, highest first, with the demand at or above each price; retail and finished bids apart', () => {
    const book = offerBook(terms, [
      row({ pricePaise: 10_050, openQuantity: 300 }),
      row({ category: 'OTHS', pricePaise: 10_200, openQuantity: 100 }),
      row({ category: 'IC', pricePaise: 10_050, openQuantity: 50, bids: 2 }),
      row({ category: 'RETAIL', pricePaise: 0, openQuantity: 999 }),
      row({ category: 'MF', live: false, pricePaise: 10_300, allottedQuantity: 10 }),
    ]);
    expect(book.nonRetailDemand).toEqual([
      { pricePaise: 10_200, quantity: 100, cumulative: 100, bids: 1 },
      { pricePaise: 10_050, quantity: 350, cumulative: 450, bids: 3 },
    ]);
  });
});
