/**
 * The exchanges' trading calendar (shared/spec/ofs-framework.md, "Settlement days are trading days"): T+1
 * and T+2 skip weekends and the exchanges' holidays, and securities are paid out at the pay-out time,
 * 13:30 IST (IRFC, June 2026: the T+1 bids of Thursday 25 June, with Friday 26 June a holiday, settled on
 * Monday 29 June). Dates are India calendar dates, 'YYYY-MM-DD'; India has no daylight saving, so a date
 * is a whole number of days and every instant here is integer arithmetic, with no locale or time-zone API.
 * The holiday list is the operator's (`ordergate ofs holidays import`), in a file format of ours, checked
 * here in full before anything is written.
 */
import { IST_OFFSET_MS } from './rules.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface TradingCalendar {
  /** The exchanges' holidays: India date 'YYYY-MM-DD' -> what the exchange calls it. */
  holidays: ReadonlyMap<string, string>;
}

/** Weekends only: what settlement reads before the operator has imported a holiday list. */
export const NO_HOLIDAYS: TradingCalendar = { holidays: new Map() };

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Whether `text` is a real calendar date written 'YYYY-MM-DD' (2026-02-30 is not). */
export function isIsoDate(text: string): boolean {
  const match = ISO_DATE.exec(text);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * Days from 1970-01-01 to the date (proleptic Gregorian; H. Hinnant's days_from_civil), so that a day's
 * successor and weekday are plain integer steps. A text that is no date is a RangeError: a caller's bug.
 */
function dayNumberOf(date: string): number {
  if (!isIsoDate(date)) throw new RangeError(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
  const month = Number(date.slice(5, 7));
  const day = Number(date.slice(8, 10));
  const year = Number(date.slice(0, 4)) - (month <= 2 ? 1 : 0);
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The date `days` days after 1970-01-01 (civil_from_days, the inverse of dayNumberOf). */
function dateOfDayNumber(days: number): string {
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) throw new RangeError(`year ${year} is outside 0000-9999`);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** The India date at an instant. */
export function istDate(epochMs: number): string {
  return dateOfDayNumber(Math.floor((epochMs + IST_OFFSET_MS) / DAY_MS));
}

export function weekdayOf(date: string): Weekday {
  // 1970-01-01 was a Thursday (index 3).
  return WEEKDAYS[(((dayNumberOf(date) + 3) % 7) + 7) % 7]!;
}

const isWeekend = (weekday: Weekday) => weekday === 'Saturday' || weekday === 'Sunday';

/** Monday to Friday, and not an exchange holiday. */
export function isTradingDay(calendar: TradingCalendar, date: string): boolean {
  return whyNotTradingDay(calendar, date) === null;
}

/** Why the exchanges do not trade on `date` ("2026-12-06 is a Sunday"), or null when they do. */
export function whyNotTradingDay(calendar: TradingCalendar, date: string): string | null {
  const weekday = weekdayOf(date);
  if (isWeekend(weekday)) return `${date} is a ${weekday}`;
  const holiday = calendar.holidays.get(date);
  return holiday === undefined ? null : `${date} is an exchange holiday (${holiday})`;
}

/**
 * How far nextTradingDay looks. An imported list keeps far below it (MAX_HOLIDAYS_PER_YEAR), so passing
 * it means a calendar nobody imported: a bug, not a date to settle on.
 */
const TRADING_DAY_SEARCH_DAYS = 366;

/** The first trading day strictly after `date`. */
export function nextTradingDay(calendar: TradingCalendar, date: string): string {
  const from = dayNumberOf(date);
  for (let day = from + 1; day <= from + TRADING_DAY_SEARCH_DAYS; day++) {
    const candidate = dateOfDayNumber(day);
    if (isTradingDay(calendar, candidate)) return candidate;
  }
  throw new RangeError(
    `no trading day within ${TRADING_DAY_SEARCH_DAYS} days after ${date}: the holiday calendar marks them all`,
  );
}

/** When the exchanges pay out securities on a settlement day, India time. */
export const PAYOUT_TIME_IST = '13:30';
const PAYOUT_AFTER_MIDNIGHT_MS =
  (Number(PAYOUT_TIME_IST.slice(0, 2)) * 60 + Number(PAYOUT_TIME_IST.slice(3, 5))) * 60 * 1000;

/** The pay-out instant (13:30 IST) of `date`. */
export function payoutInstant(date: string): number {
  return dayNumberOf(date) * DAY_MS - IST_OFFSET_MS + PAYOUT_AFTER_MIDNIGHT_MS;
}

/**
 * When the allotments of a session settle: the pay-out time of the first trading day after the session's
 * India date (a T-day session's allotments settle on T+1, a T+1 session's on T+2, weekends and holidays skipped).
 */
export function settlementInstant(calendar: TradingCalendar, sessionInstant: number): number {
  return payoutInstant(nextTradingDay(calendar, istDate(sessionInstant)));
}

/** One entry of an exchange's holiday list. */
export interface ExchangeHoliday {
  date: string;
  description: string;
}

/** The most entries one import file holds (about 15 a year: decades of lists). */
export const MAX_HOLIDAY_ENTRIES = 1000;
/**
 * NSE and BSE list 15 to 20 holidays a year; more in one year is not an exchange's list. It also bounds the
 * longest run of days without trading far under nextTradingDay's search.
 */
export const MAX_HOLIDAYS_PER_YEAR = 50;
export const MAX_DESCRIPTION_LENGTH = 100;

const CONTROL_OR_LINE_BREAK = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/**
 * Checks a whole holiday list (ours: a JSON array of `{"date": "YYYY-MM-DD", "description": "..."}`) and
 * answers it, or the first problem as one line naming the entry (`[3].date: ...`): a list is imported
 * whole or not at all. A weekend date is refused: an exchange never lists one, so it is a typo.
 */
export function parseHolidayList(json: unknown): { holidays: ExchangeHoliday[] } | { problem: string } {
  if (!Array.isArray(json)) return { problem: 'not a JSON array of {"date": "YYYY-MM-DD", "description": "..."}' };
  if (json.length === 0) return { problem: 'the list is empty: a year is replaced by importing its holidays' };
  if (json.length > MAX_HOLIDAY_ENTRIES)
    return { problem: `${json.length} entries: at most ${MAX_HOLIDAY_ENTRIES} in one file` };
  const holidays: ExchangeHoliday[] = [];
  const entryOf = new Map<string, number>();
  const perYear = new Map<string, number>();
  for (const [index, entry] of json.entries()) {
    const at = `[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return { problem: `${at}: not an object {"date", "description"}` };
    const unknown = Object.keys(entry).find((key) => key !== 'date' && key !== 'description');
    if (unknown !== undefined)
      return { problem: `${at}: unknown field ${JSON.stringify(unknown)} (fields: date, description)` };
    const { date, description } = entry as Record<string, unknown>;
    if (date === undefined) return { problem: `${at}.date: missing` };
    if (typeof date !== 'string' || !isIsoDate(date))
      return { problem: `${at}.date: ${JSON.stringify(date)} is not a calendar date YYYY-MM-DD` };
    const weekday = weekdayOf(date);
    if (isWeekend(weekday))
      return {
        problem: `${at}.date: ${date} is a ${weekday}: an exchange never lists a weekend as a holiday (a typo?)`,
      };
    const first = entryOf.get(date);
    if (first !== undefined) return { problem: `${at}.date: ${date} is listed twice (also [${first}])` };
    entryOf.set(date, index);
    const year = date.slice(0, 4);
    const inYear = (perYear.get(year) ?? 0) + 1;
    if (inYear > MAX_HOLIDAYS_PER_YEAR)
      return {
        problem: `${at}.date: more than ${MAX_HOLIDAYS_PER_YEAR} holidays in ${year}: an exchange lists 15 to 20 a year`,
      };
    perYear.set(year, inYear);
    if (description === undefined) return { problem: `${at}.description: missing` };
    if (typeof description !== 'string') return { problem: `${at}.description: not a string` };
    if (description.trim() === '') return { problem: `${at}.description: blank` };
    const length = [...description].length;
    if (length > MAX_DESCRIPTION_LENGTH)
      return { problem: `${at}.description: ${length} characters: at most ${MAX_DESCRIPTION_LENGTH}` };
    if (CONTROL_OR_LINE_BREAK.test(description))
      return { problem: `${at}.description: holds a control character or line break` };
    holidays.push({ date, description });
  }
  return { holidays };
}
