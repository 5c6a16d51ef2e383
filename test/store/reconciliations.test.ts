/**
 * Reconciliation's reports and requests (migration 0029, src/store/ofs/reconciliations.ts): a request
 * queued, claimed by one node under a lease (taken again once the lease runs out), its report written back
 * whole; a close's run written once per close and listing, whoever runs it; the closes due at an instant;
 * the metric's figures from the latest report of each listing. On both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type BookBid, type OurBid } from '../../src/domain/ofs/reconciliation.js';
import { AdminService } from '../../src/services/admin.js';
import { UserRepository } from '../../src/store/access/users.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { ReconciliationRepository } from '../../src/store/ofs/reconciliations.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';

const MINUTE = 60_000;
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1_CLOSE = T_CLOSE + 24 * 60 * MINUTE;

let database: TestDatabase;
let store: Store;
let reports: ReconciliationRepository;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  const admin = new AdminService(
    new UserRepository(store.db, store.dialect),
    new OfsOfferRepository(store.db),
    () => T,
    TEST_PASSWORD_HASHER,
    new TradingHolidayRepository(store.db),
  );
  await admin.importOfs([offerImport({}, T)]);
  reports = new ReconciliationRepository(store.db);
});
afterAll(async () => {
  await store?.close();
  await database?.dispose();
});

const our: OurBid = {
  orderId: 'o-1',
  status: 'PENDING',
  orderType: 'RL',
  pricePaise: 10_100,
  quantity: 10,
  exchangeOrderId: 'X1',
  carriedForward: false,
  inFlight: false,
};
const entry: BookBid = { ...our, reference: 'r1', status: 'LIVE', orderId: 'o-1', exchangeOrderId: 'X1' };

describe('reconciliation reports', () => {
  it('names the listings of an offer, none of an offer it does not know', async () => {
    expect(await reports.listings('ACME-OFS-1')).toEqual([
      { offerId: 'ACME-OFS-1', exchange: 'BSE_EQ', symbol: 'ACME' },
      { offerId: 'ACME-OFS-1', exchange: 'NSE_EQ', symbol: 'ACME' },
    ]);
    expect(await reports.listings('NO-SUCH')).toEqual([]);
  });

  it('queues a request, leases it to one node, and keeps its report', async () => {
    const [bse, nse] = await reports.request(await reports.listings('ACME-OFS-1'), 'ops', T);
    expect(nse).toMatchObject({ state: 'QUEUED', trigger: 'operator', requestedBy: 'ops', result: null });
    const claimed = await reports.claimQueued('node-a', T, T + MINUTE);
    expect(claimed.map((r) => r.id)).toEqual([bse!.id, nse!.id]);
    // Leased: another node gets none until the lease runs out.
    expect(await reports.claimQueued('node-b', T + 1, T + MINUTE)).toEqual([]);
    expect((await reports.claimQueued('node-b', T + MINUTE + 1, T + 2 * MINUTE)).map((r) => r.id)).toEqual([
      bse!.id,
      nse!.id,
    ]);

    const result = reconcile(
      [our, { ...our, orderId: 'o-2', exchangeOrderId: 'X2' }],
      [entry, { ...entry, orderId: null, reference: null, exchangeOrderId: 'X9' }],
    );
    await reports.complete(nse!.id, result, T - 5, T + 10);
    await reports.fail(bse!.id, 'the exchange did not answer (timeout)', T + 11);
    // Done once: a late second run changes nothing.
    await reports.complete(bse!.id, result, T, T + 12);

    const done = await reports.find(nse!.id);
    expect(done).toMatchObject({
      state: 'DONE',
      runAt: T + 10,
      bookAsOf: T - 5,
      result: { ours: 2, book: 2, matched: 1, inFlight: 0, counts: { MISSING_AT_EXCHANGE: 1, UNKNOWN_TO_US: 1 } },
      error: null,
      // A book 15 ms old is not told.
      note: null,
    });
    expect(done!.differences).toEqual(result.differences);
    expect(await reports.find(bse!.id)).toMatchObject({
      state: 'FAILED',
      error: 'the exchange did not answer (timeout)',
      result: null,
      note: null,
    });
    expect(await reports.claimQueued('node-a', T + 3 * MINUTE, T + 4 * MINUTE)).toEqual([]);
    expect((await reports.list('ACME-OFS-1', { exchange: 'NSE_EQ' })).map((r) => r.id)).toEqual([nse!.id]);
  });

  it('says the age of a book written well before its run', async () => {
    const [request] = await reports.request([{ offerId: 'ACME-OFS-1', exchange: 'BSE_EQ', symbol: 'ACME' }], 'ops', T);
    await reports.claimQueued('node-a', T, T + MINUTE);
    await reports.complete(request!.id, reconcile([{ ...our, inFlight: true }], [entry]), T - 2 * MINUTE, T + 500);
    expect(await reports.find(request!.id)).toMatchObject({
      state: 'DONE',
      bookAsOf: T - 2 * MINUTE,
      result: { inFlight: 1 },
      note: `the exchange's book is as of 2026-12-01T03:43:00.000Z, 120 s before this run; orders changed since are left out`,
    });
  });

  it('runs each close once per listing, from its day’s close on, within the look-back', async () => {
    const after = 2 * MINUTE;
    const lookback = 3 * 24 * 60 * MINUTE;
    expect(await reports.dueCloses(T_CLOSE + MINUTE, after, lookback)).toEqual([]);
    const dueT = await reports.dueCloses(T_CLOSE + after, after, lookback);
    expect(dueT.map((d) => `${d.exchange} ${d.trigger}`)).toEqual(['BSE_EQ close-T', 'NSE_EQ close-T']);

    const result = reconcile([our], [entry]);
    expect(await reports.recordClose(dueT[1]!, 'close-T', result, T_CLOSE, T_CLOSE + after)).toBe(true);
    // A second node that ran it too keeps the first report.
    expect(await reports.recordClose(dueT[1]!, 'close-T', result, T_CLOSE, T_CLOSE + after + 1)).toBe(false);
    expect((await reports.dueCloses(T_CLOSE + after, after, lookback)).map((d) => d.exchange)).toEqual(['BSE_EQ']);

    const dueBoth = await reports.dueCloses(T1_CLOSE + after, after, lookback);
    expect(dueBoth.map((d) => `${d.exchange} ${d.trigger}`)).toEqual([
      'BSE_EQ close-T',
      'BSE_EQ close-T1',
      'NSE_EQ close-T1',
    ]);
    // Past the look-back, nothing is due.
    expect(await reports.dueCloses(T1_CLOSE + lookback + MINUTE, after, lookback)).toEqual([]);
  });

  it('counts the differences of the latest report of each listing, by exchange and kind', async () => {
    const listing = { offerId: 'ACME-OFS-1', exchange: 'BSE_EQ', symbol: 'ACME' };
    await reports.recordClose(listing, 'close-T1', reconcile([our], []), T1_CLOSE, T1_CLOSE + 5);
    const counts = await reports.latestCounts(T1_CLOSE);
    expect(counts.filter((c) => c.count > 0)).toEqual([{ exchange: 'BSE_EQ', kind: 'MISSING_AT_EXCHANGE', count: 1 }]);
    expect(counts).toHaveLength(7);
    // The NSE listing's latest report ran before `since`; a later one with no difference shows zeros.
    await reports.recordClose(
      { ...listing, exchange: 'NSE_EQ' },
      'close-T1',
      reconcile([our], [entry]),
      T1_CLOSE,
      T1_CLOSE + 6,
    );
    const both = await reports.latestCounts(T1_CLOSE);
    expect(both.filter((c) => c.exchange === 'NSE_EQ').every((c) => c.count === 0)).toBe(true);
    expect(both).toHaveLength(14);
  });
});
