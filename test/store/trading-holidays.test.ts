/**
 * The exchanges' holidays on the run's database (SQLite, or PostgreSQL in the postgres project): an import
 * replaces the years it names and keeps the others, all or nothing, and the calendar reads them all.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { whyNotTradingDay } from '../../src/domain/ofs/trading-calendar.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';

const NOW = Date.parse('2026-12-06T04:00:00Z');

let database: TestDatabase;
let store: Store;
let holidays: TradingHolidayRepository;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  holidays = new TradingHolidayRepository(store.db);
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});
beforeEach(async () => {
  await store.db.deleteFrom('trading_holidays').execute();
});

const LIST_2026 = [
  { date: '2026-06-26', description: 'Muharram' },
  { date: '2026-12-25', description: 'Christmas' },
];
const LIST_2027 = [{ date: '2027-01-26', description: 'Republic Day' }];

describe('importing holidays', () => {
  it('stores each year of the list and answers the years replaced, in order', async () => {
    expect(await holidays.replaceYears([...LIST_2027, ...LIST_2026], NOW)).toEqual([
      { year: 2026, holidays: 2 },
      { year: 2027, holidays: 1 },
    ]);
    expect(await holidays.list()).toEqual([...LIST_2026, ...LIST_2027]);
    expect(await holidays.list(2026)).toEqual(LIST_2026);
    expect(await holidays.list(2028)).toEqual([]);
    const row = await store.db
      .selectFrom('trading_holidays')
      .selectAll()
      .where('day', '=', '2027-01-26')
      .executeTakeFirstOrThrow();
    expect(Number(row.imported_at)).toBe(NOW);
  });

  it("replaces a year it names, dropping that year's holidays it no longer lists, and keeps the other years", async () => {
    await holidays.replaceYears([...LIST_2026, ...LIST_2027], NOW);

    const revised = [
      { date: '2026-01-26', description: 'Republic Day' },
      { date: '2026-12-25', description: 'Christmas Day' },
    ];
    expect(await holidays.replaceYears(revised, NOW + 1)).toEqual([{ year: 2026, holidays: 2 }]);

    expect(await holidays.list()).toEqual([...revised, ...LIST_2027]);
  });

  it('is all or nothing: an insert that fails leaves every year as it was', async () => {
    await holidays.replaceYears([...LIST_2026, ...LIST_2027], NOW);
    const christmas = { date: '2026-12-25', description: 'Christmas' };

    // The list is checked before it comes here; a date twice still fails the insert, after the deletes.
    await expect(
      holidays.replaceYears([{ date: '2026-01-26', description: 'Republic Day' }, christmas, christmas], NOW + 1),
    ).rejects.toThrow();

    expect(await holidays.list()).toEqual([...LIST_2026, ...LIST_2027]);
  });

  it('an empty list replaces nothing', async () => {
    await holidays.replaceYears(LIST_2026, NOW);
    expect(await holidays.replaceYears([], NOW + 1)).toEqual([]);
    expect(await holidays.list()).toEqual(LIST_2026);
  });
});

describe('the calendar', () => {
  it('holds every imported holiday, of every year', async () => {
    await holidays.replaceYears([...LIST_2026, ...LIST_2027], NOW);
    const calendar = await holidays.calendar();
    expect([...calendar.holidays]).toEqual([
      ['2026-06-26', 'Muharram'],
      ['2026-12-25', 'Christmas'],
      ['2027-01-26', 'Republic Day'],
    ]);
    expect(whyNotTradingDay(calendar, '2027-01-26')).toBe('2027-01-26 is an exchange holiday (Republic Day)');
  });

  it('is weekends only before any import', async () => {
    expect((await holidays.calendar()).holidays.size).toBe(0);
  });
});
