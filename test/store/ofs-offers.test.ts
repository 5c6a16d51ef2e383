/**
 * The offer registry on the run's database (SQLite, or PostgreSQL in the postgres project), through the
 * operator's service: an import writes offers and issues of the one-listing format all or nothing, never
 * lets one instrument be both, fixes an offer's terms once its T allocation has run, and keeps the green
 * shoe and the eligible employees.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AdminError } from '../../src/domain/errors.js';
import { AdminService } from '../../src/services/admin.js';
import { parseOfsImport } from '../../src/schemas/ofs-import.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { SimExchangeRepository } from '../../src/store/ofs/sim-exchange.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';

const T_OPENS = Date.parse('2026-12-01T03:45:00Z');

let database: TestDatabase;
let store: Store;
let offers: OfsOfferRepository;
let now = T_OPENS - 60 * 60 * 1000;
let admin: AdminService;
let prefix = 0;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  offers = new OfsOfferRepository(store.db);
  admin = new AdminService(new UserRepository(store.db, store.dialect), offers, () => now, TEST_PASSWORD_HASHER);
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

/** Each test its own offer id and scrip tokens, on the one database. */
let ids: { offerId: string; nse: number; bse: number };
beforeEach(() => {
  prefix += 1;
  ids = { offerId: `OFFER-${prefix}`, nse: 700_000 + prefix, bse: 800_000 + prefix };
  now = T_OPENS - 60 * 60 * 1000;
});

function offer(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const base = offerImport({ offer_id: ids.offerId }, T_OPENS);
  const listings = (base.listings as { scrip_token: number }[]).map((l, i) => ({
    ...l,
    scrip_token: i === 0 ? ids.nse : ids.bse,
  }));
  return { ...base, listings, ...overrides };
}

function issue(scripToken: number): Record<string, unknown> {
  return {
    exchange: 'NSE_EQ',
    scrip_token: scripToken,
    symbol: 'OLD',
    series: 'OF',
    floor_price: 100,
    tick_size: 0.05,
    offer_quantity: 1000,
    retail_reserve_pct: 10,
    retail_cutoff_price: null,
    allocation: 'PROPORTIONATE',
    non_retail_opens_at: '2026-12-01T03:45:00Z',
    non_retail_closes_at: '2026-12-01T10:00:00Z',
    retail_opens_at: '2026-12-02T03:45:00Z',
    retail_closes_at: '2026-12-02T10:00:00Z',
  };
}

describe('importing offers', () => {
  it('stores every term and listing, and reads them back as imported', async () => {
    const imported = await admin.importOfs([offer()]);
    expect(imported.updatedOffers.size).toBe(0);
    const stored = await offers.find(ids.offerId);
    expect(stored?.offer).toEqual(imported.offers[0]);
    expect(stored?.offer).toMatchObject({
      symbol: 'ACME',
      listings: [
        { exchange: 'BSE_EQ', scripToken: ids.bse, series: { RETAIL: 'A', NON_RETAIL: 'A', EMPLOYEE: null } },
        { exchange: 'NSE_EQ', scripToken: ids.nse, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
      ],
      floorPricePaise: 10_000,
      tickSizePaise: 5,
      retailReservePct: 12.5,
      retailDiscount: { paise: 250 },
      employeeDiscount: { basisPoints: 500 },
      settlementDelayMs: null,
    });
    expect(stored?.progress).toEqual({ tAllocatedAt: null, t1AllocatedAt: null, cancelledAt: null });
    expect((await offers.findByListing('BSE_EQ', ids.bse))?.offer.offerId).toBe(ids.offerId);
  });

  it('updates an offer imported again, replacing its listings', async () => {
    await admin.importOfs([offer()]);
    const again = await admin.importOfs([
      offer({
        base_quantity: 2_000_000,
        listings: [
          { exchange: 'NSE_EQ', scrip_token: ids.nse, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
        ],
      }),
    ]);
    expect([...again.updatedOffers]).toEqual([ids.offerId]);
    const stored = await offers.find(ids.offerId);
    expect(stored?.offer.baseQuantity).toBe(2_000_000);
    expect(stored?.offer.listings.map((l) => l.exchange)).toEqual(['NSE_EQ']);
    expect(await offers.findByListing('BSE_EQ', ids.bse)).toBeUndefined();
  });

  it('refuses an instrument that is both a listing and an issue, writing nothing', async () => {
    await expect(admin.importOfs([offer(), issue(ids.nse)])).rejects.toThrow(
      new AdminError(
        `NSE_EQ ${ids.nse} is both a listing of offer ${ids.offerId} and an issue of the one-listing format`,
      ),
    );
    expect(await offers.find(ids.offerId)).toBeUndefined();
    // Across imports too, in either order.
    await admin.importOfs([issue(ids.nse)]);
    await expect(admin.importOfs([offer()])).rejects.toThrow(
      `NSE_EQ ${ids.nse} is already an issue of the one-listing format (OLD)`,
    );
    expect(await offers.find(ids.offerId)).toBeUndefined();
  });

  it('refuses a listing of another offer, and an issue on a listing', async () => {
    await admin.importOfs([offer()]);
    const other = { ...offer(), offer_id: `${ids.offerId}-B` };
    await expect(admin.importOfs([other])).rejects.toThrow(`is already a listing of offer ${ids.offerId}`);
    await expect(admin.importOfsIssues([issue(ids.nse)])).rejects.toThrow(
      `NSE_EQ ${ids.nse} is already a listing of offer ${ids.offerId}`,
    );
  });

  it('fixes the terms once the T allocation has run', async () => {
    await admin.importOfs([offer()]);
    await store.db
      .updateTable('ofs_offers')
      .set({ t_allocated_at: now, t_cutoff_price_paise: 10_100, t_unallotted: 0 })
      .where('offer_id', '=', ids.offerId)
      .execute();
    await expect(admin.importOfs([offer({ base_quantity: 5 })])).rejects.toThrow(
      `offer ${ids.offerId}: its T allocation has run, so its terms are fixed`,
    );
    await expect(admin.setGreenShoe(ids.offerId, true)).rejects.toThrow(
      'the green shoe is decided until the T allocation runs',
    );
    expect((await offers.find(ids.offerId))?.offer.baseQuantity).toBe(1_000_000);
  });
});

describe('the published indicative figures', () => {
  it('keeps quantities exact past 2^53, and stores a sum past 2^63 - 1 as that bound on both dialects', async () => {
    await admin.importOfs([offer()]);
    const book = new SimExchangeRepository(store.db, store.dialect);
    const figures = (all: bigint, t: bigint) => ({
      all: { pricePaise: 10_100, quantity: all },
      margin100: { pricePaise: 10_100, quantity: all - t },
      margin0: { pricePaise: 10_050, quantity: t },
    });
    // 2^53 + 1 is the first integer a double cannot hold.
    expect(await book.publishIndicative(ids.offerId, figures(9_007_199_254_740_993n, 1n), now)).toBe(true);
    expect((await offers.indicativeHistory(ids.offerId, 1))[0]?.all.quantity).toBe(9_007_199_254_740_993n);
    // A sum past the column's bound (no offer comes near: 2^13 bids of 2^50 shares) is published as the
    // bound, not refused (PostgreSQL) nor turned into a double (SQLite).
    expect(await book.publishIndicative(ids.offerId, figures(1n << 64n, 1n << 63n), now + 1000)).toBe(true);
    const [latest] = await offers.indicativeHistory(ids.offerId, 1);
    expect(latest?.all.quantity).toBe((1n << 63n) - 1n);
    expect(latest?.margin0.quantity).toBe((1n << 63n) - 1n);
    // The same figures again are not a new publication.
    expect(await book.publishIndicative(ids.offerId, figures(1n << 64n, 1n << 63n), now + 2000)).toBe(false);
  });
});

describe('the green shoe and the employees', () => {
  it('records the green-shoe decision, in whole or in part, with the portions the notice prints, until the T allocation', async () => {
    await admin.importOfs([offer()]);
    now = T_OPENS + 60_000;
    await admin.setGreenShoe(ids.offerId, true);
    expect((await offers.find(ids.offerId))?.offer).toMatchObject({
      greenShoeExercised: 1_000_000,
      greenShoeDecidedAt: now,
      printedPortions: null,
    });
    const printed = { retailReserved: 175_001, nonRetail: 1_224_999, mfIcReserved: 350_000, employee: 20_000 };
    await admin.setGreenShoe(ids.offerId, 400_000, printed);
    expect((await offers.find(ids.offerId))?.offer).toMatchObject({
      greenShoeExercised: 400_000,
      printedPortions: { greenShoe: 400_000, ...printed },
    });
    // A re-import keeps the seller's recorded decision over the file's default.
    await admin.importOfs([offer({ green_shoe_exercised: false })]);
    expect((await offers.find(ids.offerId))?.offer).toMatchObject({
      greenShoeExercised: 400_000,
      greenShoeDecidedAt: now,
    });
    await expect(admin.importOfs([offer({ green_shoe_quantity: 300_000 })])).rejects.toThrow(
      `offer ${ids.offerId}: the seller's recorded decision exercises 400000 shares of the green shoe, more than the file's green_shoe_quantity 300000`,
    );
    await expect(admin.setGreenShoe('NO-SUCH-OFFER', true)).rejects.toThrow('no offer NO-SUCH-OFFER');
    await expect(admin.setGreenShoe(ids.offerId, 1_000_001)).rejects.toThrow(
      'the green shoe is 1000000 shares; 1000001 cannot be exercised',
    );
    await store.db.updateTable('ofs_offers').set({ t_allocated_at: now }).where('offer_id', '=', ids.offerId).execute();
    await expect(admin.setGreenShoe(ids.offerId, 0)).rejects.toThrow(/the T allocation runs, and it has run/);
  });

  it("takes the notice's printed portions from the import, and refuses ones that do not add up", async () => {
    const printed = { retail_reserved: 125_001, non_retail: 874_999, mf_ic_reserved: 250_000, employee: 20_000 };
    await admin.importOfs([offer({ portions: printed })]);
    expect((await offers.find(ids.offerId))?.offer.printedPortions).toEqual({
      greenShoe: 0,
      retailReserved: 125_001,
      nonRetail: 874_999,
      mfIcReserved: 250_000,
      employee: 20_000,
    });
    expect(() => parseOfsImport([offer({ portions: { ...printed, non_retail: 875_000 } })])).toThrow(
      '[0].portions: retail_reserved 125001 + non_retail 875000 = 1000001, not the total 1000000 (base 1000000 + green shoe 0)',
    );
  });

  it("refuses an offer whose days are not the exchanges' trading days, unless it is a drill", async () => {
    const day = 24 * 60 * 60 * 1000;
    const sunday = T_OPENS + 5 * day;
    await expect(admin.importOfs([offerImport({ offer_id: ids.offerId }, sunday)])).rejects.toThrow(
      `offer ${ids.offerId}: t_day: 2026-12-06 is a Sunday, not a trading day`,
    );
    await admin.importOfs([
      { ...offerImport({ offer_id: ids.offerId, settlement_delay_seconds: 60 }, sunday), listings: offer().listings },
    ]);
    expect((await offers.find(ids.offerId))?.offer.settlementDelayMs).toBe(60_000);
  });

  it('registers existing users as employees until T+1 opens', async () => {
    await admin.importOfs([offer()]);
    await admin.addUser(`emp-a-${prefix}`, 'a long password');
    await admin.addUser(`emp-b-${prefix}`, 'a long password');
    await admin.addEmployees(ids.offerId, [`emp-b-${prefix}`, `emp-a-${prefix}`, `emp-a-${prefix}`]);
    expect(await admin.employees(ids.offerId)).toEqual([`emp-a-${prefix}`, `emp-b-${prefix}`]);
    expect(await offers.isEmployee(ids.offerId, `emp-a-${prefix}`)).toBe(true);
    await expect(admin.addEmployees(ids.offerId, ['nobody'])).rejects.toThrow('no user nobody');
    expect(await admin.removeEmployees(ids.offerId, [`emp-b-${prefix}`, 'nobody'])).toBe(1);
    expect(await admin.employees(ids.offerId)).toEqual([`emp-a-${prefix}`]);

    now = T_OPENS + 24 * 60 * 60 * 1000; // T+1 opens
    await expect(admin.addEmployees(ids.offerId, [`emp-b-${prefix}`])).rejects.toThrow(/registered until T\+1 opens/);
  });
});

describe('parseOfsImport', () => {
  it('refuses a bad offer naming each problem and its entry', () => {
    const bad = offer({
      floor_price: 100.02,
      retail_discount: { rupees: 100.1 },
      t1_day: { opens_at: '2026-12-01T05:00:00Z', closes_at: '2026-12-01T04:00:00Z' },
    });
    expect(() => parseOfsImport([issue(1), bad])).toThrow(
      new AdminError(
        '[1].floor_price: 100.02 is not a multiple of tick_size 0.05; [1].retail_discount: Rs 100.10 off would leave no price at the floor price 100.02; ' +
          '[1].t1_day: opens_at must not be before t_day.closes_at; [1].t1_day: closes_at must be after opens_at; ' +
          '[1].green_shoe_decision_by: must be before t1_day.opens_at',
      ),
    );
  });

  it('refuses schema faults with their field, and an offer twice in a file', () => {
    expect(() => parseOfsImport([offer({ base_quantity: 0 })])).toThrow(/^\[0\]\.base_quantity /);
    expect(() => parseOfsImport([offer({ listings: [] })])).toThrow(/^\[0\]\.listings /);
    expect(() =>
      parseOfsImport([
        offer({
          employee_quantity: 5,
          listings: [{ exchange: 'NSE_EQ', scrip_token: 1, series: { RETAIL: 'RS', NON_RETAIL: 'IS' } }],
        }),
      ]),
    ).toThrow('[0].employee_quantity: no listing has an EMPLOYEE series for the employees to bid in');
    expect(() => parseOfsImport([offer(), offer()])).toThrow(
      `[1].offer_id: offer ${ids.offerId} appears twice in the file`,
    );
    expect(() => parseOfsImport([])).toThrow('the file must be an array of 1 to 1000 offers or issues');
    // Instants of the years 1900 to 2999 only: a typo of a year never reaches the calendar's arithmetic.
    expect(() => parseOfsImport([offer({ green_shoe_decision_by: '9999-12-31T11:30:00Z' })])).toThrow(
      /^\[0\]\.green_shoe_decision_by /,
    );
    expect(() => parseOfsImport([offer({ retail_allocation_price: 'BID', allocation: 'PROPORTIONATE' })])).toThrow(
      '[0].retail_allocation_price: BID (each retail bid at its own price) needs allocation PRICE_PRIORITY',
    );
  });

  it('reads green_shoe_exercised as a quantity, or true and false as all and none; the deadline 17:00 IST on T by default', () => {
    const parse = (overrides: Record<string, unknown>) => parseOfsImport([offer(overrides)]).offers[0]!;
    expect(parse({ green_shoe_exercised: 250_000 }).greenShoeExercised).toBe(250_000);
    expect(parse({ green_shoe_exercised: true }).greenShoeExercised).toBe(1_000_000);
    expect(parse({ green_shoe_exercised: false }).greenShoeExercised).toBe(0);
    expect(() => parse({ green_shoe_exercised: 1_000_001 })).toThrow(
      '[0].green_shoe_exercised: 1000001 shares is more than the green shoe of 1000000',
    );
    expect(new Date(parse({ green_shoe_decision_by: undefined }).greenShoeDecisionBy).toISOString()).toBe(
      '2026-12-01T11:30:00.000Z',
    );
    expect(parse({ employee_green_shoe_quantity: 20_000 }).employeeGreenShoeQuantity).toBe(20_000);
  });

  it('takes percentages with two decimals exactly, and refuses a third', () => {
    const [parsed] = parseOfsImport([offer({ retail_reserve_pct: 33.33, retail_discount: { pct: 2.35 } })]).offers;
    expect(parsed).toMatchObject({ retailReservePct: 33.33, retailDiscount: { basisPoints: 235 } });
    expect(() => parseOfsImport([offer({ retail_discount: { pct: 2.355 } })])).toThrow(
      '[0].retail_discount.pct: 2.355 has more than two decimals',
    );
    expect(() => parseOfsImport([offer({ retail_reserve_pct: 12.125 })])).toThrow(
      '[0].retail_reserve_pct: 12.125 has more than two decimals',
    );
  });

  it('still takes the one-listing format alone, as before', () => {
    expect(parseOfsImport([issue(42)]).issues).toHaveLength(1);
    expect(parseOfsImport([issue(42)]).issues[0]?.valueLimitPaise).toBeNull();
  });

  it("takes an issue's order value upper limit in rupees, to the paisa", () => {
    expect(parseOfsImport([{ ...issue(42), order_value_upper_limit: 100000.5 }]).issues[0]?.valueLimitPaise).toBe(
      10_000_050,
    );
    expect(() => parseOfsImport([{ ...issue(42), order_value_upper_limit: 1.001 }])).toThrow(
      '[0].order_value_upper_limit: 1.001 is not a whole number of paise',
    );
    expect(() => parseOfsImport([{ ...issue(42), order_value_upper_limit: 0 }])).toThrow(/order_value_upper_limit/);
  });
});
