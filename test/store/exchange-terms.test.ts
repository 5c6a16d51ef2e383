/**
 * What the exchange last said of its listings (migration 0030, src/store/ofs/exchange-terms.ts) and the
 * refresher that reads it (src/oms/exchange-terms.ts), with a read that the test answers: each answer kept
 * per listing with its time, a failed read kept as the last error and never thrown, the last answers
 * standing; only the session's holder reads; start() reads at once and stop() ends it. On both databases.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NseActiveSecurity } from '../../src/oms/links/nse-eofs/mapping.js';
import { ExchangeTermsRefresher, listingTermsOf } from '../../src/oms/exchange-terms.js';
import { ExchangeTermsRepository } from '../../src/store/ofs/exchange-terms.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { createMigratedTestDatabase } from '../support/databases.js';

let store: Store;
let dispose: () => Promise<void>;
beforeEach(async () => {
  const database = await createMigratedTestDatabase('ordergate_xterms');
  dispose = database.dispose;
  store = openStore(database.databaseUrl);
});
afterEach(async () => {
  await store.close();
  await dispose();
});

function security(symbol: string, basePrice = 100): NseActiveSecurity {
  return {
    symbol,
    tickSize: 0.05,
    regularLotSize: 1,
    series: [
      {
        series: 'IS',
        issueSize: 8_750,
        basePrice,
        openOnDate: '2026-12-01',
        mktOpenTime: '2026-12-01T03:45:00.000Z',
        mktCloseTime: '2026-12-01T10:00:00.000Z',
        mktModCxlOpenTime: '2026-12-01T03:45:00.000Z',
        mktModCxlCloseTime: '2026-12-01T10:00:00.000Z',
        isNewOrderAllowed: true,
        isModificationAllowed: true,
        isCancellationAllowed: true,
        orderValueUpperLimit: null,
      },
    ],
  };
}

describe('the exchange terms refresher', () => {
  it('keeps the last answer per listing with its time; a listing no longer listed keeps its last', async () => {
    const repository = new ExchangeTermsRepository(store.db);
    let now = 1_000;
    let answer = [security('DEMOCO'), security('OTHERCO')];
    const refresher = new ExchangeTermsRefresher({ read: async () => answer, repository, now: () => now });
    expect(await refresher.refresh()).toEqual({ kind: 'read', listings: 2, at: 1_000 });

    now = 2_000;
    answer = [security('DEMOCO', 101)];
    await refresher.refresh();
    const democo = await repository.find('NSE_EQ', 'DEMOCO');
    expect(democo).toEqual({ exchange: 'NSE_EQ', symbol: 'DEMOCO', terms: security('DEMOCO', 101), readAt: 2_000 });
    expect(listingTermsOf(democo!.terms as NseActiveSecurity).series[0]!.floorPricePaise).toBe(10_100);
    expect((await repository.find('NSE_EQ', 'OTHERCO'))?.readAt).toBe(1_000);
    expect(await repository.find('BSE_EQ', 'DEMOCO')).toBeUndefined();
    expect(await repository.reads('NSE_EQ')).toEqual({ exchange: 'NSE_EQ', readAt: 2_000, error: null, errorAt: null });
    expect(refresher.lastReadAt).toBe(2_000);
  });

  it('keeps a failed read as the last error, throws nothing, and leaves the last answers standing', async () => {
    const repository = new ExchangeTermsRepository(store.db);
    let now = 1_000;
    let fail = false;
    const refresher = new ExchangeTermsRefresher({
      read: async () => {
        if (fail) throw new Error('e-OFS activeSecurities: HTTP 503');
        return [security('DEMOCO')];
      },
      repository,
      now: () => now,
    });
    await refresher.refresh();
    now = 2_000;
    fail = true;
    const failed = await refresher.refresh();
    expect(failed).toEqual({
      kind: 'failed',
      error: "could not read the exchange's listings: e-OFS activeSecurities: HTTP 503",
      at: 2_000,
    });
    expect(refresher.lastError).toEqual({ error: failed.kind === 'failed' ? failed.error : '', at: 2_000 });
    expect(await repository.reads('NSE_EQ')).toEqual({
      exchange: 'NSE_EQ',
      readAt: 1_000,
      error: "could not read the exchange's listings: e-OFS activeSecurities: HTTP 503",
      errorAt: 2_000,
    });
    expect((await repository.find('NSE_EQ', 'DEMOCO'))?.readAt).toBe(1_000);

    // The next read succeeds: the error is the refresher's no more; the store keeps when the last one was.
    now = 3_000;
    fail = false;
    expect((await refresher.refresh()).kind).toBe('read');
    expect(refresher.lastError).toBeNull();
    expect(await repository.reads('NSE_EQ')).toMatchObject({ readAt: 3_000, errorAt: 2_000 });
  });

  it('a failure before any read, and a store that fails, are kept and not thrown', async () => {
    const repository = new ExchangeTermsRepository(store.db);
    const refresher = new ExchangeTermsRefresher({
      read: async () => Promise.reject(new Error('no session')),
      repository,
      now: () => 5,
    });
    expect((await refresher.refresh()).kind).toBe('failed');
    expect(await repository.reads('NSE_EQ')).toEqual({
      exchange: 'NSE_EQ',
      readAt: null,
      error: "could not read the exchange's listings: no session",
      errorAt: 5,
    });
    const broken = new ExchangeTermsRefresher({
      read: async () => [security('DEMOCO')],
      repository: {
        recordRead: async () => Promise.reject(new Error('database down')),
        recordFailure: async () => Promise.reject(new Error('database down')),
      },
      now: () => 6,
    });
    expect(await broken.refresh()).toEqual({
      kind: 'failed',
      error: 'could not keep what the exchange answered: database down',
      at: 6,
    });
  });

  it('reads only while this node holds the session; start reads at once, stop ends the reads', async () => {
    const repository = new ExchangeTermsRepository(store.db);
    let reads = 0;
    let holder = false;
    const refresher = new ExchangeTermsRefresher({
      read: async () => {
        reads += 1;
        return [security('DEMOCO')];
      },
      repository,
      now: () => 1,
      shouldRead: () => holder,
      intervalMs: 60_000,
    });
    expect(await refresher.refresh()).toEqual({ kind: 'skipped' });
    expect(reads).toBe(0);
    holder = true;
    refresher.start();
    await refresher.stop();
    expect(reads).toBe(1);
    expect((await repository.find('NSE_EQ', 'DEMOCO'))?.readAt).toBe(1);
  });

  it('started before this node holds the session (just after the node starts), reads within seconds once it does', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let reads = 0;
      let holder = false;
      const refresher = new ExchangeTermsRefresher({
        read: async () => {
          reads += 1;
          return [security('DEMOCO')];
        },
        repository: new ExchangeTermsRepository(store.db),
        now: () => 1,
        shouldRead: () => holder,
        intervalMs: 5 * 60_000,
      });
      refresher.start();
      await vi.advanceTimersByTimeAsync(1);
      expect(reads).toBe(0);
      holder = true;
      await vi.advanceTimersByTimeAsync(10_000);
      expect(reads).toBe(1);
      // Then every interval.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(reads).toBe(1);
      await refresher.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
