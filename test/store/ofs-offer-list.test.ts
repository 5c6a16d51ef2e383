/**
 * The offers list on the run's database (SQLite, or PostgreSQL in the postgres project), issue 47 row 7: one
 * list call reads a fixed number of statements however many offers there are (before: three, then one more
 * per offer for its latest indicative figures), and answers each offer as the per-offer reads did; the
 * state filter in SQL (offerStateCondition) agrees with offerState, and the current offers' filter with
 * isCurrentOffer, at every instant where either could change its mind.
 */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFER_STATES, offerState } from '../../src/domain/ofs/offer/offer.js';
import { AdminService } from '../../src/services/admin.js';
import { isCurrentOffer, listFilter, OfsOfferService } from '../../src/services/ofs-offers.js';
import { toOfferEntry } from '../../src/schemas/mappers/ofs-offer.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OfsOfferRepository, type OfferRegistration } from '../../src/store/ofs/offers.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** Tuesday 1 December 2026, 09:15 India time. */
const T = Date.parse('2026-12-01T03:45:00Z');

let database: TestDatabase;
let store: Store;
let admin: AdminService;
const now = T - HOUR;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  admin = new AdminService(
    new UserRepository(store.db, store.dialect),
    new OfsOfferRepository(store.db),
    () => now,
    TEST_PASSWORD_HASHER,
    new TradingHolidayRepository(store.db),
  );
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

let token = 0;
/** Offers `prefix-1` .. `prefix-count` in the import format, T at `tOpensAt(i)`, each with its own scrip tokens. */
function offers(
  prefix: string,
  count: number,
  tOpensAt: (i: number) => number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, k) => {
    token += 1;
    return offerImport(
      {
        offer_id: `${prefix}-${k + 1}`,
        symbol: `${prefix}${k + 1}`,
        listings: [
          {
            exchange: 'NSE_EQ',
            scrip_token: 720_000 + token,
            series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
          },
          { exchange: 'BSE_EQ', scrip_token: 820_000 + token, series: { RETAIL: 'A', NON_RETAIL: 'A' } },
        ],
        ...overrides,
      },
      tOpensAt(k),
    );
  });
}

/** Counts the statements a Kysely instance sends (SELECTs apart). */
function statementCounter() {
  const counts = { statements: 0, selects: 0 };
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      counts.statements += 1;
      if (args.node.kind === 'SelectQueryNode') counts.selects += 1;
      return args.node;
    },
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => args.result,
  };
  return { counts, plugin };
}

describe('one list call', () => {
  /** Publishes `points` indicative figures for the offer through T, each a minute apart. */
  async function publish(offerId: string, points: number): Promise<void> {
    const rows = Array.from({ length: points }, (_, k) => ({
      offer_id: offerId,
      at: T + (k + 1) * 60_000,
      price_paise: 10_000 + k,
      quantity: 100 * (k + 1),
      price_h_paise: 10_000 + k,
      quantity_h: 50 * (k + 1),
      price_t_paise: k % 2 === 0 ? null : 10_000 + k,
      quantity_t: 50 * (k + 1),
    }));
    await store.db.insertInto('ofs_offer_indicative').values(rows).execute();
  }

  it('reads a fixed number of statements whatever the number of offers, and answers each offer as its own reads do', async () => {
    const { counts, plugin } = statementCounter();
    const counted = store.db.withPlugin(plugin);
    const service = new OfsOfferService(
      new OfsOfferRepository(counted),
      new TradingHolidayRepository(counted),
      () => now,
    );
    /** The statements of one list call (every offer on one page). */
    const oneCall = async () => {
      counts.statements = 0;
      counts.selects = 0;
      const answer = await service.list({ state: 'all', limit: '200' });
      return { answer, ...counts };
    };

    // Settled by trading day (T on Tuesdays, T+1 on Wednesdays), with a holiday that moves a pay-out.
    await new TradingHolidayRepository(store.db).replaceYears([{ date: '2026-12-03', description: 'A holiday' }], now);
    await admin.importOfs(offers('COUNT', 3, (i) => T + i * 7 * DAY));
    for (const id of ['COUNT-1', 'COUNT-2']) await publish(id, 4);
    const few = await oneCall();
    expect(few.answer.data.offers).toHaveLength(3);

    await admin.importOfs(offers('MORE', 60, (i) => T - (i + 1) * 7 * DAY));
    for (let k = 1; k <= 60; k += 2) await publish(`MORE-${k}`, 1 + (k % 5));
    const many = await oneCall();
    expect(many.answer.data.offers).toHaveLength(63);

    // The calendar, the page, its count, the page's listings, their latest figures: 5 SELECTs for 3 offers as for 63.
    expect({ statements: many.statements, selects: many.selects }).toEqual({
      statements: few.statements,
      selects: few.selects,
    });
    expect(many.selects).toBeLessThanOrEqual(5);
    expect(many.answer.metadata).toEqual({ total_records: 63, offset: 1, limit: 200 });

    // Each offer as the per-offer reads answer it: its registration, its latest figures, the calendar.
    const repository = new OfsOfferRepository(store.db);
    const calendar = await new TradingHolidayRepository(store.db).calendar();
    for (const entry of many.answer.data.offers) {
      const registration = (await repository.find(entry.offer_id))!;
      const [latest] = await repository.indicativeHistory(entry.offer_id, 1);
      expect(entry, entry.offer_id).toEqual(toOfferEntry(registration, now, latest, calendar));
    }
    expect(many.answer.data.offers.find((entry) => entry.offer_id === 'COUNT-1')?.settlement_dates).toEqual({
      t_day: '2026-12-02T08:00:00.000Z',
      t1_day: '2026-12-04T08:00:00.000Z',
    });
    expect(many.answer.data.offers.filter((entry) => entry.indicative !== null)).toHaveLength(32);
  });
});

describe('the state filters in SQL', () => {
  const PREFIX = 'STATE';
  /** The fixture's offers: T at T0 + i days, moved on by their progress. */
  const progressOf: Record<string, number>[] = [
    {}, // never allocated: ANNOUNCED, then T_OPEN for ever
    { t_allocated_at: 7 * HOUR }, // T allocated: T_ALLOCATED, then T1_OPEN
    { t_allocated_at: 7 * HOUR, t1_allocated_at: DAY + 7 * HOUR }, // ALLOCATED after T+1
    { t_allocated_at: 7 * HOUR, t1_allocated_at: 20 * DAY }, // allocated 19 days after T+1 closed
    { cancelled_at: -2 * DAY }, // cancelled before T
    { t_allocated_at: 7 * HOUR, cancelled_at: 12 * HOUR }, // cancelled after the T allocation
    { t_allocated_at: 7 * HOUR, t1_allocated_at: DAY + 7 * HOUR, cancelled_at: DAY + 6 * HOUR }, // both: CANCELLED wins
  ];
  const T0 = T + 10 * DAY;
  let registrations: OfferRegistration[] = [];
  const repository = () => new OfsOfferRepository(store.db);
  const mine = (regs: { registration: OfferRegistration }[]) =>
    regs
      .map((r) => r.registration.offer.offerId)
      .filter((id) => id.startsWith(`${PREFIX}-`))
      .sort();

  beforeAll(async () => {
    await admin.importOfs(offers(PREFIX, progressOf.length, (i) => T0 + i * 2 * DAY, { settlement_delay_seconds: 60 }));
    for (const [k, progress] of progressOf.entries()) {
      const tOpensAt = T0 + k * 2 * DAY;
      const set = Object.fromEntries(Object.entries(progress).map(([column, offset]) => [column, tOpensAt + offset]));
      if (Object.keys(set).length > 0)
        await store.db
          .updateTable('ofs_offers')
          .set(set)
          .where('offer_id', '=', `${PREFIX}-${k + 1}`)
          .execute();
    }
    const all = await repository().listPage({ filter: { kind: 'all' }, page: 1, pageSize: 200 });
    registrations = all.offers.map((o) => o.registration).filter((r) => r.offer.offerId.startsWith(`${PREFIX}-`));
    expect(registrations).toHaveLength(progressOf.length);
  });

  /** Every instant where a state or the current filter may change, and a millisecond either side. */
  function instants(): number[] {
    const edges = new Set<number>();
    for (const { offer, progress } of registrations) {
      const finished = [offer.t1Day.closesAt, progress.t1AllocatedAt, progress.cancelledAt].filter(
        (at): at is number => at !== null,
      );
      for (const at of [offer.tDay.opensAt, offer.t1Day.opensAt, ...finished, ...finished.map((at) => at + 7 * DAY)]) {
        for (const d of [-1, 0, 1]) edges.add(at + d);
      }
    }
    return [T0 - 30 * DAY, ...[...edges].sort((a, b) => a - b), T0 + 400 * DAY];
  }

  it('keeps the offers in each state that offerState gives, at every instant', async () => {
    const seen = new Set<string>();
    for (const at of instants()) {
      for (const state of OFFER_STATES) {
        const page = await repository().listPage({ filter: listFilter(state, at), page: 1, pageSize: 200 });
        const expected = registrations
          .filter((r) => offerState(r.offer, r.progress, at) === state)
          .map((r) => r.offer.offerId);
        expect(mine(page.offers), `${state} at ${new Date(at).toISOString()}`).toEqual(expected.sort());
        if (expected.length > 0) seen.add(state);
        for (const { registration } of page.offers)
          expect(offerState(registration.offer, registration.progress, at)).toBe(state);
      }
    }
    // The fixture reaches every state.
    expect([...seen].sort()).toEqual([...OFFER_STATES].sort());
  });

  it('keeps the current offers that isCurrentOffer keeps, at every instant', async () => {
    let shown = 0;
    let hidden = 0;
    for (const at of instants()) {
      const page = await repository().listPage({ filter: listFilter('current', at), page: 1, pageSize: 200 });
      const expected = registrations.filter((r) => isCurrentOffer(r, at)).map((r) => r.offer.offerId);
      expect(mine(page.offers), `current at ${new Date(at).toISOString()}`).toEqual(expected.sort());
      shown += registrations.filter(
        (r) => ['ALLOCATED', 'CANCELLED'].includes(offerState(r.offer, r.progress, at)) && isCurrentOffer(r, at),
      ).length;
      hidden += registrations.length - expected.length;
    }
    // Finished offers were both shown (lately finished) and left out (long finished).
    expect(shown).toBeGreaterThan(0);
    expect(hidden).toBeGreaterThan(0);
  });

  it('keeps every offer with state=all', async () => {
    const page = await repository().listPage({ filter: listFilter('all', T0), page: 1, pageSize: 200 });
    expect(mine(page.offers)).toEqual(registrations.map((r) => r.offer.offerId).sort());
  });
});
