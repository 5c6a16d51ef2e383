/**
 * `ordergate ofs forecast OFFER` (issue 50, item 2): the built bin over the run's database (both dialects),
 * ordergate's own orders of an offer on both listings written as order entry leaves them. The book is the
 * domain test's (test/domain/ofs-offer-forecast.test.ts), whose outcome is computed there by hand.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdminService } from '../../src/services/admin.js';
import { UserRepository } from '../../src/store/access/users.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { expectOneLineFailure, runOrdergate } from '../cli/run-ordergate.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';

const T = Date.parse('2026-12-01T03:45:00Z');

let database: TestDatabase;
let store: Store;
beforeEach(async () => {
  database = await createMigratedTestDatabase('ordergate_forecast');
  store = openStore(database.databaseUrl);
  const admin = new AdminService(new UserRepository(store.db, store.dialect), new OfsOfferRepository(store.db));
  await admin.importOfs([
    offerImport({
      offer_id: 'ACME-OFS',
      base_quantity: 1_000,
      green_shoe_quantity: 0,
      retail_reserve_pct: 10,
      retail_discount: null,
      employee_quantity: 0,
      employee_discount: null,
    }),
  ]);
  for (const [userId, category] of [
    ['m1', 'MF'],
    ['i1', 'IC'],
    ['n1', 'NII'],
    ['n2', 'NII'],
    ['n3', 'NII'],
    ['o1', 'OTHS'],
    ['r1', 'RETAIL'],
  ] as const)
    await admin.addUser(userId, 'forecast-password', { category });
});
afterEach(async () => {
  await store.close();
  await database.dispose();
});

let seq = 0;
/** An order of the offer as order entry and the OMS leave it. */
async function order(
  userId: string,
  category: string,
  pricePaise: number,
  quantity: number,
  more: { status?: string; listing?: 'NSE' | 'BSE' } = {},
): Promise<string> {
  const orderId = `0000000${++seq}-feed-4bad-8000-00000000000${seq}`;
  const bse = more.listing === 'BSE';
  await store.db
    .insertInto('orders')
    .values({
      order_id: orderId,
      user_id: userId,
      exchange: bse ? 'BSE_EQ' : 'NSE_EQ',
      scrip_token: bse ? 800001 : 700001,
      symbol: 'ACME',
      series: bse ? 'A' : category === 'RETAIL' ? 'RS' : 'IS',
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: pricePaise === 0 ? 'RL-MKT' : 'RL',
      quantity,
      price_paise: pricePaise,
      disclosed_quantity: 0,
      traded_quantity: 0,
      status: more.status ?? 'PENDING',
      error_reason: null,
      order_identifier: null,
      algo_id: null,
      strategy_id: null,
      part_code: null,
      vender_code: null,
      request_id: null,
      created_at: T + seq,
      updated_at: T + seq,
      category: category === 'RETAIL' ? 'RETAIL' : 'NON_RETAIL',
      cancel_requested_at: null,
      traded_price_paise: null,
      exchange_order_id: null,
      funds_blocked_paise: null,
      offer_id: 'ACME-OFS',
      offer_category: category,
      margin_type: 'H',
    })
    .execute();
  return orderId;
}

const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: database.databaseUrl } });

describe('ordergate ofs forecast', () => {
  it('prints the label, the cut-off and each category’s forecast over the orders of both listings', async () => {
    await order('m1', 'MF', 10_500, 100, { listing: 'BSE' });
    const n1 = await order('n1', 'NII', 11_000, 300, { status: 'OMSXMITTED' });
    await order('n2', 'NII', 10_400, 400, { status: 'EXXMITTED', listing: 'BSE' });
    await order('o1', 'OTHS', 10_200, 300);
    await order('i1', 'IC', 10_100, 200);
    await order('n3', 'NII', 10_150, 50);
    await order('n3', 'NII', 20_000, 900, { status: 'CANCELLED' });
    const retail = await order('r1', 'RETAIL', 0, 10, { status: 'OMSXMITTED' });

    const result = await ordergate(['ofs', 'forecast', 'ACME-OFS', '--day', 'T', '--bids']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(
      "FORECAST — ordergate's own computation over its own orders; the exchange's allocation file / messages settle",
    );
    expect(lines.slice(1, 6).filter((l) => !l.startsWith('at: '))).toEqual([
      'offer: ACME-OFS ACME',
      'day: T',
      'portions: total=1000 retail_reserved=100 non_retail=900 mf_ic_reserved=250 employee=0 single_bidder_cap=250',
      'cutoff: 102.00',
    ]);
    expect(lines).toContain('step: mf_ic_reserved on_offer=250 demand=300 allotted=250 clearing=101.00');
    expect(lines).toContain('step: non_retail on_offer=900 demand=1100 allotted=900 clearing=102.00');
    expect(lines).toContain(
      'category: NII portion=non_retail on_offer=900 cutoff=102.00 demand=750 allotted=500 price=104.00-110.00 value=53500.00 bids_allotted=0 bids_partly=2 bids_not=1',
    );
    expect(lines).toContain(
      'category: MF portion=non_retail on_offer=900 cutoff=102.00 demand=100 allotted=100 price=105.00 value=10500.00 bids_allotted=1 bids_partly=0 bids_not=0',
    );
    expect(lines).toContain(
      'category: IC portion=non_retail on_offer=900 cutoff=102.00 demand=200 allotted=150 price=101.00 value=15150.00 bids_allotted=0 bids_partly=1 bids_not=0',
    );
    expect(lines).toContain(
      'category: OTHS portion=non_retail on_offer=900 cutoff=102.00 demand=300 allotted=150 price=102.00 value=15300.00 bids_allotted=0 bids_partly=1 bids_not=0',
    );
    expect(lines).toContain(
      `bid: ${n1} n1 NII NSE_EQ:700001 OMSXMITTED price=110.00 quantity=300 allotted=250 at=110.00`,
    );
    expect(lines).toContain(`left_out: ${retail} RETAIL OMSXMITTED: a RETAIL bid is allotted on T+1`);

    const json = await ordergate(['ofs', 'forecast', 'ACME-OFS', '--day', 'T', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.label).toMatch(/^FORECAST/);
    expect(parsed.cutoff_price).toBe(102);
    expect(parsed.categories.find((c: { category: string }) => c.category === 'NII')).toMatchObject({
      demand: 750,
      allotted: 500,
      lowest_price: 104,
      highest_price: 110,
      bids: { allotted: 0, partly: 2, not: 1 },
    });
    expect(parsed.bids).toHaveLength(6);
  });

  it('an undersubscribed T day: the cut-off at the floor, and the operator’s wait as a note', async () => {
    await order('n1', 'NII', 11_000, 300);
    await order('m1', 'MF', 10_500, 100);
    const result = await ordergate(['ofs', 'forecast', 'ACME-OFS', '--day', 'T']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('\ncutoff: 100.00\n');
    expect(result.stdout).toContain(
      '\ncategory: NII portion=non_retail on_offer=900 cutoff=100.00 demand=300 allotted=250 price=110.00 value=27500.00 bids_allotted=0 bids_partly=1 bids_not=0\n',
    );
    expect(result.stdout).toContain(
      '\nnote: non-retail demand after the single-bidder cap (350) is short of the non-retail portion (900)',
    );
    expect(result.stdout).not.toContain('\nbid: ');
  });

  it('refuses an offer that is not registered, and a day that is not T or T+1', async () => {
    expectOneLineFailure(await ordergate(['ofs', 'forecast', 'NO-SUCH']), /no OFS offer has offer_id "NO-SUCH"/);
    const badDay = await ordergate(['ofs', 'forecast', 'ACME-OFS', '--day', 'T+2']);
    expect(badDay.code).not.toBe(0);
    expect(badDay.stderr).toMatch(/T\+2/);
  });
});
