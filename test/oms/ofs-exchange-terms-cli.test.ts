/**
 * `ordergate ofs exchange-terms OFFER` (issue 50, item 3): the built bin over the run's database (both
 * dialects), the exchange's answers kept as the refresher keeps them (src/store/ofs/exchange-terms.ts).
 * Each listing: not yet read, matches as read at a time, or each difference; exit 3 when it shows one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NseActiveSecurity, NseActiveSeries } from '../../src/oms/links/nse-eofs/mapping.js';
import { AdminService } from '../../src/services/admin.js';
import { UserRepository } from '../../src/store/access/users.js';
import { ExchangeTermsRepository } from '../../src/store/ofs/exchange-terms.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { expectOneLineFailure, runOrdergate } from '../cli/run-ordergate.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';

const READ_AT = Date.parse('2026-11-30T12:00:00Z');

let database: TestDatabase;
let store: Store;
let terms: ExchangeTermsRepository;
beforeEach(async () => {
  database = await createMigratedTestDatabase('ordergate_xterms_cli');
  store = openStore(database.databaseUrl);
  terms = new ExchangeTermsRepository(store.db);
  // ACME on NSE_EQ 700001 (RS, IS, ES) and BSE_EQ 800001 (A): floor 100.00, tick 0.05; T on 1 December
  // 03:45-10:00 UTC, T+1 on 2 December.
  await new AdminService(new UserRepository(store.db, store.dialect), new OfsOfferRepository(store.db)).importOfs([
    offerImport({ offer_id: 'ACME-OFS' }),
  ]);
});
afterEach(async () => {
  await store.close();
  await database.dispose();
});

function series(name: string, day: '01' | '02', change: Partial<NseActiveSeries> = {}): NseActiveSeries {
  return {
    series: name,
    issueSize: 1,
    basePrice: 100,
    openOnDate: `2026-12-${day}`,
    mktOpenTime: `2026-12-${day}T03:45:00.000Z`,
    mktCloseTime: `2026-12-${day}T10:00:00.000Z`,
    mktModCxlOpenTime: `2026-12-${day}T03:45:00.000Z`,
    mktModCxlCloseTime: `2026-12-${day}T10:00:00.000Z`,
    isNewOrderAllowed: true,
    isModificationAllowed: true,
    isCancellationAllowed: true,
    orderValueUpperLimit: null,
    ...change,
  };
}

/** NSE's answer for ACME as the offer has it, with `is` changed in the non-retail series. */
function acme(is: Partial<NseActiveSeries> = {}): NseActiveSecurity {
  return {
    symbol: 'ACME',
    tickSize: 0.05,
    regularLotSize: 1,
    series: [series('IS', '01', is), series('RS', '02'), series('ES', '02')],
  };
}

const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: database.databaseUrl } });

describe('ordergate ofs exchange-terms', () => {
  it('says a listing is not yet read, then that it matches the exchange as read at its time', async () => {
    const unread = await ordergate(['ofs', 'exchange-terms', 'ACME-OFS']);
    expect(unread.code, unread.stderr).toBe(0);
    expect(unread.stdout).toBe(
      [
        'offer: ACME-OFS ACME',
        'listing: BSE_EQ 800001: not yet read from the exchange',
        'listing: NSE_EQ 700001: not yet read from the exchange',
        '',
      ].join('\n'),
    );

    await terms.recordRead('NSE_EQ', [{ symbol: 'ACME', terms: acme() }], READ_AT);
    const matching = await ordergate(['ofs', 'exchange-terms', 'ACME-OFS']);
    expect(matching.code, matching.stderr).toBe(0);
    expect(matching.stdout).toContain(
      '\nlisting: NSE_EQ 700001: matches the exchange as read at 2026-11-30T12:00:00Z\n',
    );
  });

  it('prints each difference with both values and exits 3; a failed later read is noted', async () => {
    await terms.recordRead(
      'NSE_EQ',
      [
        {
          symbol: 'ACME',
          terms: acme({ basePrice: 101, mktCloseTime: '2026-12-01T10:30:00Z', orderValueUpperLimit: 5e6 }),
        },
      ],
      READ_AT,
    );
    await terms.recordFailure('NSE_EQ', "could not read the exchange's listings: HTTP 503", READ_AT + 300_000);
    const result = await ordergate(['ofs', 'exchange-terms', 'ACME-OFS']);
    expect(result.code).toBe(3);
    expect(result.stdout.split('\n')).toEqual([
      'offer: ACME-OFS ACME',
      'listing: BSE_EQ 800001: not yet read from the exchange',
      'listing: NSE_EQ 700001: 3 differences with the exchange as read at 2026-11-30T12:00:00Z',
      "difference: NSE_EQ 700001 series IS: floor: ours 100.00, the exchange's 101.00",
      "difference: NSE_EQ 700001 series IS: closes: ours 2026-12-01T10:00:00Z, the exchange's 2026-12-01T10:30:00Z",
      "difference: NSE_EQ 700001 series IS: value_limit: ours none, the exchange's 5000000.00",
      "note: NSE_EQ 700001: the last read of NSE_EQ's listings failed at 2026-11-30T12:05:00Z: could not read the exchange's listings: HTTP 503",
      '',
    ]);
    expect(result.stderr).toBe(
      "ordergate: 3 differences between the offer and the exchange's terms (nothing applied)\n",
    );

    const json = await ordergate(['ofs', 'exchange-terms', 'ACME-OFS', '--json']);
    expect(json.code).toBe(3);
    const nse = JSON.parse(json.stdout).listings.find((l: { exchange: string }) => l.exchange === 'NSE_EQ');
    expect(nse).toMatchObject({ state: 'differs', read_at: '2026-11-30T12:00:00Z' });
    expect(nse.differences[0]).toEqual({ series: 'IS', field: 'floor', ours: '100.00', exchange: '101.00' });
  });

  it('notes a listing the last answer left out, and refuses an offer that is not registered', async () => {
    await terms.recordRead('NSE_EQ', [{ symbol: 'ACME', terms: acme() }], READ_AT);
    await terms.recordRead('NSE_EQ', [], READ_AT + 300_000);
    const result = await ordergate(['ofs', 'exchange-terms', 'ACME-OFS']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "\nnote: NSE_EQ 700001: the exchange's last answer (2026-11-30T12:05:00Z) did not list ACME: compared with the answer of 2026-11-30T12:00:00Z\n",
    );
    expectOneLineFailure(await ordergate(['ofs', 'exchange-terms', 'NO-SUCH']), /no OFS offer has offer_id "NO-SUCH"/);
  });
});
