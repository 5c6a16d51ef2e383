/**
 * The exchanges' holidays the operator imported (migration 0019), which settlement days skip
 * (src/domain/ofs/trading-calendar.ts). An exchange publishes its list per calendar year, so an import
 * replaces whole years: those its list names, all or nothing; the other years stay.
 */
import type { Kysely } from 'kysely';
import type { ExchangeHoliday, TradingCalendar } from '../../domain/ofs/trading-calendar.js';
import type { Database } from '../schema/tables.js';

/** What an import replaced: a year and how many holidays it now has. */
export interface ReplacedYear {
  year: number;
  holidays: number;
}

const yearOf = (date: string) => Number(date.slice(0, 4));

/** The first and last dates of a year; dates are 'YYYY-MM-DD', so text order is date order. */
const yearBounds = (year: number) => {
  const yyyy = String(year).padStart(4, '0');
  return [`${yyyy}-01-01`, `${yyyy}-12-31`] as const;
};

export class TradingHolidayRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every imported holiday: the calendar settlement reads. */
  async calendar(): Promise<TradingCalendar> {
    const holidays = await this.list();
    return { holidays: new Map(holidays.map((h) => [h.date, h.description])) };
  }

  /** The holidays by date, of one year or of all. */
  async list(year?: number): Promise<ExchangeHoliday[]> {
    let query = this.db.selectFrom('trading_holidays').select(['day', 'description']).orderBy('day');
    if (year !== undefined) {
      const [first, last] = yearBounds(year);
      query = query.where('day', '>=', first).where('day', '<=', last);
    }
    const rows = await query.execute();
    return rows.map((row) => ({ date: row.day, description: row.description }));
  }

  /**
   * Replaces, in one transaction, every year the list names with the list's holidays of that year; answers
   * the years replaced, in order. The list is checked before (parseHolidayList): a date twice fails the
   * insert, and nothing is written.
   */
  async replaceYears(holidays: readonly ExchangeHoliday[], now: number): Promise<ReplacedYear[]> {
    const counts = new Map<number, number>();
    for (const holiday of holidays) {
      const year = yearOf(holiday.date);
      counts.set(year, (counts.get(year) ?? 0) + 1);
    }
    const years = [...counts.keys()].sort((a, b) => a - b);
    if (years.length === 0) return [];
    await this.db.transaction().execute(async (trx) => {
      for (const year of years) {
        const [first, last] = yearBounds(year);
        await trx.deleteFrom('trading_holidays').where('day', '>=', first).where('day', '<=', last).execute();
      }
      await trx
        .insertInto('trading_holidays')
        .values(holidays.map((h) => ({ day: h.date, description: h.description, imported_at: now })))
        .execute();
    });
    return years.map((year) => ({ year, holidays: counts.get(year)! }));
  }
}
