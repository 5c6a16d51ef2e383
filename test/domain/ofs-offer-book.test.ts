/** An offer's book for the operator (src/domain/ofs/offer/book.ts): sums per category and listing, and the open non-retail demand by price. */
import { describe, expect, it } from 'vitest';
import { offerBook, type OfferBookRow } from '../../src/domain/ofs/offer/book.js';

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
  openQuantity: 0n,
  allottedQuantity: 0n,
  allottedValuePaise: 0n,
  bids: 1,
  ...r,
});

describe('offerBook', () => {
  it('sums each category in all and per listing, and lists every category in the framework order', () => {
    const book = offerBook(terms, [
      row({ openQuantity: 200n, allottedQuantity: 300n, allottedValuePaise: 3_030_000n }),
      row({ exchange: 'BSE_EQ', scripToken: 2, openQuantity: 100n, bids: 2 }),
      row({ category: 'MF', live: false, allottedQuantity: 250n, allottedValuePaise: 2_550_000n }),
    ]);
    expect(book.portions).toMatchObject({ total: 1200, retailReserved: 150, nonRetail: 1050 });
    expect(book.categories.map((c) => c.category)).toEqual(['RETAIL', 'EMPLOYEE', 'NII', 'MF', 'IC', 'OTHS']);
    const nii = book.categories[2]!;
    expect(nii).toEqual({
      category: 'NII',
      bids: 3,
      openQuantity: 300n,
      allottedQuantity: 300n,
      allottedValuePaise: 3_030_000n,
      byListing: [
        {
          exchange: 'BSE_EQ',
          scripToken: 2,
          bids: 2,
          openQuantity: 100n,
          allottedQuantity: 0n,
          allottedValuePaise: 0n,
        },
        {
          exchange: 'NSE_EQ',
          scripToken: 1,
          bids: 1,
          openQuantity: 200n,
          allottedQuantity: 300n,
          allottedValuePaise: 3_030_000n,
        },
      ],
    });
    expect(book.categories[3]).toMatchObject({ category: 'MF', openQuantity: 0n, allottedQuantity: 250n });
  });

  it('lists the open non-retail demand by price, highest first, with the demand at or above each price; retail and finished bids apart', () => {
    const book = offerBook(terms, [
      row({ pricePaise: 10_050, openQuantity: 300n }),
      row({ category: 'OTHS', pricePaise: 10_200, openQuantity: 100n }),
      row({ category: 'IC', pricePaise: 10_050, openQuantity: 50n, bids: 2 }),
      row({ category: 'RETAIL', pricePaise: 0, openQuantity: 999n }),
      row({ category: 'MF', live: false, pricePaise: 10_300, allottedQuantity: 10n }),
    ]);
    expect(book.nonRetailDemand).toEqual([
      { pricePaise: 10_200, quantity: 100n, cumulative: 100n, bids: 1 },
      { pricePaise: 10_050, quantity: 350n, cumulative: 450n, bids: 3 },
    ]);
  });

  it('sums past 2^53 exactly (issue 47 row 3)', () => {
    const most = 999_999_999_999_999n;
    const book = offerBook(terms, [row({ openQuantity: 11n * most }), row({ pricePaise: 10_050, openQuantity: 42n })]);
    expect(book.categories[2]).toMatchObject({ openQuantity: 11_000_000_000_000_031n });
    expect(book.nonRetailDemand.map((level) => level.cumulative)).toEqual([
      10_999_999_999_999_989n,
      11_000_000_000_000_031n,
    ]);
  });
});
