import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IST_OFFSET_MS } from '../../src/domain/ofs/rules.js';
import {
  MAX_HOLIDAYS_PER_YEAR,
  NO_HOLIDAYS,
  PAYOUT_TIME_IST,
  isIsoDate,
  isTradingDay,
  istDate,
  nextTradingDay,
  parseHolidayList,
  payoutInstant,
  settlementInstant,
  weekdayOf,
  whyNotTradingDay,
  type TradingCalendar,
} from '../../src/domain/ofs/trading-calendar.js';

const DAY_MS = 86_400_000;
const at = (ist: string) => Date.parse(`${ist}+05:30`);
const dayAfter = (date: string) => istDate(at(`${date}T12:00:00`) + DAY_MS);
const calendarOf = (holidays: Record<string, string>): TradingCalendar => ({
  holidays: new Map(Object.entries(holidays)),
});

/** NSE's 2026 holidays around the examples below. */
const CALENDAR_2026 = calendarOf({
  '2026-06-26': 'Muharram',
  '2026-10-02': 'Mahatma Gandhi Jayanti',
  '2026-12-25': 'Christmas',
});

describe('dates', () => {
  it('are real calendar dates written YYYY-MM-DD', () => {
    for (const date of ['2026-01-01', '2026-12-31', '2028-02-29', '2000-02-29', '0001-01-01'])
      expect(isIsoDate(date), date).toBe(true);
    for (const text of [
      '2026-02-30',
      '2026-02-29',
      '1900-02-29',
      '2026-13-01',
      '2026-00-10',
      '2026-04-31',
      '2026-6-26',
      '2026-06-26T00:00',
      ' 2026-06-26',
      '',
    ])
      expect(isIsoDate(text), text).toBe(false);
  });

  it('have their weekday, across years and leap days', () => {
    expect(weekdayOf('1970-01-01')).toBe('Thursday');
    expect(weekdayOf('2026-06-25')).toBe('Thursday');
    expect(weekdayOf('2026-12-06')).toBe('Sunday');
    expect(weekdayOf('2027-01-01')).toBe('Friday');
    expect(weekdayOf('2028-02-29')).toBe('Tuesday');
    expect(weekdayOf('1969-12-31')).toBe('Wednesday');
  });

  it('refuse a text that is no date (a RangeError: a caller bug)', () => {
    expect(() => weekdayOf('2026-02-30')).toThrow(RangeError);
    expect(() => isTradingDay(NO_HOLIDAYS, 'tomorrow')).toThrow(RangeError);
  });

  it('are India dates: the day changes at midnight IST, 18:30 UTC', () => {
    expect(istDate(Date.parse('2026-06-25T18:29:59.999Z'))).toBe('2026-06-25');
    expect(istDate(Date.parse('2026-06-25T18:30:00.000Z'))).toBe('2026-06-26');
    expect(istDate(Date.parse('2026-12-31T18:30:00Z'))).toBe('2027-01-01');
    expect(istDate(Date.parse('2026-12-31T18:29:59Z'))).toBe('2026-12-31');
    expect(istDate(0)).toBe('1970-01-01');
    expect(istDate(-IST_OFFSET_MS - 1)).toBe('1969-12-31');
  });

  it('agree with the UTC date of the instant shifted by 05:30, for any instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: -2_000_000_000_000, max: 4_102_444_800_000 }), (t) => {
        expect(istDate(t)).toBe(new Date(t + IST_OFFSET_MS).toISOString().slice(0, 10));
      }),
    );
  });
});

describe('trading days', () => {
  it('are Monday to Friday', () => {
    expect(isTradingDay(NO_HOLIDAYS, '2026-12-04')).toBe(true);
    expect(whyNotTradingDay(NO_HOLIDAYS, '2026-12-05')).toBe('2026-12-05 is a Saturday');
    expect(whyNotTradingDay(NO_HOLIDAYS, '2026-12-06')).toBe('2026-12-06 is a Sunday');
    expect(whyNotTradingDay(NO_HOLIDAYS, '2026-12-07')).toBeNull();
  });

  it("skip the exchanges' holidays", () => {
    expect(isTradingDay(CALENDAR_2026, '2026-12-25')).toBe(false);
    expect(whyNotTradingDay(CALENDAR_2026, '2026-12-25')).toBe('2026-12-25 is an exchange holiday (Christmas)');
    expect(isTradingDay(NO_HOLIDAYS, '2026-12-25')).toBe(true);
  });

  it('next: the day after on a weekday, Monday after a Friday, past a Monday holiday', () => {
    expect(nextTradingDay(NO_HOLIDAYS, '2026-12-01')).toBe('2026-12-02');
    expect(nextTradingDay(NO_HOLIDAYS, '2026-12-04')).toBe('2026-12-07');
    expect(nextTradingDay(NO_HOLIDAYS, '2026-12-05')).toBe('2026-12-07');
    expect(nextTradingDay(calendarOf({ '2026-12-07': 'A Monday holiday' }), '2026-12-04')).toBe('2026-12-08');
    // A holiday that is itself the day asked about changes nothing: the answer is strictly after it.
    expect(nextTradingDay(CALENDAR_2026, '2026-12-25')).toBe('2026-12-28');
  });

  it('next: across the year end', () => {
    expect(nextTradingDay(NO_HOLIDAYS, '2026-12-31')).toBe('2027-01-01');
    expect(nextTradingDay(calendarOf({ '2027-01-01': 'New Year' }), '2026-12-31')).toBe('2027-01-04');
    expect(nextTradingDay(NO_HOLIDAYS, '2027-12-31')).toBe('2028-01-03');
  });

  it('next: a calendar with no trading day for a year is a RangeError, not an endless search', () => {
    const everyDay = new Map<string, string>();
    for (let day = '2026-01-01'; day < '2027-06-01'; day = dayAfter(day)) everyDay.set(day, 'x');
    expect(() => nextTradingDay({ holidays: everyDay }, '2026-01-01')).toThrow(RangeError);
  });

  it('next is a trading day, strictly after, with no trading day between', () => {
    const dates = fc.integer({ min: 0, max: 3 * 365 }).map((n) => istDate(at('2026-01-01T12:00:00') + n * DAY_MS));
    fc.assert(
      fc.property(fc.uniqueArray(dates, { maxLength: 60 }), dates, (holidayDates, date) => {
        const calendar = calendarOf(Object.fromEntries(holidayDates.map((d) => [d, 'holiday'])));
        const next = nextTradingDay(calendar, date);
        expect(isTradingDay(calendar, next)).toBe(true);
        expect(next > date).toBe(true);
        for (let day = dayAfter(date); day < next; day = dayAfter(day))
          expect(isTradingDay(calendar, day), day).toBe(false);
      }),
    );
  });
});

describe('settlement', () => {
  it(`pays out at ${PAYOUT_TIME_IST} IST`, () => {
    expect(payoutInstant('2026-06-29')).toBe(Date.parse('2026-06-29T08:00:00Z'));
    expect(payoutInstant('2027-01-01')).toBe(at('2027-01-01T13:30:00'));
  });

  it('IRFC, June 2026: a session on Thursday 25 June, Friday 26 a holiday, settles on Monday 29 June at 13:30 IST', () => {
    expect(settlementInstant(CALENDAR_2026, at('2026-06-25T15:30:00'))).toBe(Date.parse('2026-06-29T08:00:00Z'));
    // Without the holiday it is Friday's pay-out.
    expect(settlementInstant(NO_HOLIDAYS, at('2026-06-25T15:30:00'))).toBe(at('2026-06-26T13:30:00'));
  });

  it("is read off the session's India date, whatever the hour", () => {
    expect(settlementInstant(NO_HOLIDAYS, at('2026-06-25T00:00:00'))).toBe(at('2026-06-26T13:30:00'));
    expect(settlementInstant(NO_HOLIDAYS, at('2026-06-25T23:59:59'))).toBe(at('2026-06-26T13:30:00'));
    // 19:00 UTC on the 25th is already the 26th in India (a Friday): it settles on Monday.
    expect(settlementInstant(NO_HOLIDAYS, Date.parse('2026-06-25T19:00:00Z'))).toBe(at('2026-06-29T13:30:00'));
  });

  it('T+1 then T+2 over a weekend and a holiday: the T+1 session is the next trading day, its settlement the one after', () => {
    const tDay = at('2026-09-30T15:30:00');
    const t1Day = at(`${nextTradingDay(CALENDAR_2026, '2026-09-30')}T15:30:00`);
    expect(istDate(t1Day)).toBe('2026-10-01');
    expect(settlementInstant(CALENDAR_2026, tDay)).toBe(at('2026-10-01T13:30:00'));
    expect(settlementInstant(CALENDAR_2026, t1Day)).toBe(at('2026-10-05T13:30:00'));
  });
});

describe('the holiday list file', () => {
  const problemOf = (json: unknown) => {
    const checked = parseHolidayList(json);
    return 'problem' in checked ? checked.problem : null;
  };

  it('takes an array of {date, description}', () => {
    expect(
      parseHolidayList([
        { date: '2026-12-25', description: 'Christmas' },
        { date: '2027-01-26', description: 'Republic Day' },
      ]),
    ).toEqual({
      holidays: [
        { date: '2026-12-25', description: 'Christmas' },
        { date: '2027-01-26', description: 'Republic Day' },
      ],
    });
    expect(problemOf([{ date: '2026-12-25', description: 'x'.repeat(100) }])).toBeNull();
    expect(problemOf([{ date: '2026-12-25', description: 'दीपावली लक्ष्मी पूजन' }])).toBeNull();
  });

  it('refuses each bad entry with one line naming it', () => {
    const christmas = { date: '2026-12-25', description: 'Christmas' };
    expect(problemOf({ date: '2026-12-25' })).toMatch(/^not a JSON array/);
    expect(problemOf([])).toMatch(/^the list is empty/);
    expect(problemOf(Array.from({ length: 1001 }, () => christmas))).toBe('1001 entries: at most 1000 in one file');
    expect(problemOf([christmas, 'x'])).toBe('[1]: not an object {"date", "description"}');
    expect(problemOf([{ ...christmas, weekday: 'Friday' }])).toBe(
      '[0]: unknown field "weekday" (fields: date, description)',
    );
    expect(problemOf([christmas, { description: 'x' }])).toBe('[1].date: missing');
    expect(problemOf([christmas, { date: '2026-02-30', description: 'x' }])).toBe(
      '[1].date: "2026-02-30" is not a calendar date YYYY-MM-DD',
    );
    expect(problemOf([{ date: 20261225, description: 'x' }])).toBe(
      '[0].date: 20261225 is not a calendar date YYYY-MM-DD',
    );
    expect(problemOf([christmas, { date: '2026-12-26', description: 'x' }])).toBe(
      '[1].date: 2026-12-26 is a Saturday: an exchange never lists a weekend as a holiday (a typo?)',
    );
    expect(problemOf([christmas, { date: '2026-12-24', description: 'x' }, christmas])).toBe(
      '[2].date: 2026-12-25 is listed twice (also [0])',
    );
    expect(problemOf([{ date: '2026-12-25' }])).toBe('[0].description: missing');
    expect(problemOf([{ date: '2026-12-25', description: null }])).toBe('[0].description: not a string');
    expect(problemOf([{ date: '2026-12-25', description: ' ' }])).toBe('[0].description: blank');
    expect(problemOf([{ date: '2026-12-25', description: 'x'.repeat(101) }])).toBe(
      '[0].description: 101 characters: at most 100',
    );
    expect(problemOf([{ date: '2026-12-25', description: 'Christmas\nDay' }])).toBe(
      '[0].description: holds a control character or line break',
    );
  });

  it(`refuses more than ${MAX_HOLIDAYS_PER_YEAR} holidays in one year (no exchange list; a year of them would stall settlement)`, () => {
    // Thursday 1 January 2026 and the weekdays after it.
    const weekdays = [{ date: '2026-01-01', description: 'holiday' }];
    while (weekdays.length <= MAX_HOLIDAYS_PER_YEAR)
      weekdays.push({ date: nextTradingDay(NO_HOLIDAYS, weekdays.at(-1)!.date), description: 'holiday' });
    expect(problemOf(weekdays.slice(0, MAX_HOLIDAYS_PER_YEAR))).toBeNull();
    expect(problemOf(weekdays)).toBe(
      `[${MAX_HOLIDAYS_PER_YEAR}].date: more than ${MAX_HOLIDAYS_PER_YEAR} holidays in 2026: an exchange lists 15 to 20 a year`,
    );
  });

  it('answers a list or a problem for any JSON, never throws', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (json) => {
        const checked = parseHolidayList(json);
        if ('holidays' in checked)
          for (const h of checked.holidays) expect(isTradingDay(NO_HOLIDAYS, h.date)).toBe(true);
      }),
    );
    const entry = fc.record({
      date: fc.oneof(fc.constantFrom('2026-12-25', '2026-12-26', '2026-02-30'), fc.string()),
      description: fc.string(),
    });
    fc.assert(fc.property(fc.array(entry, { maxLength: 5 }), (json) => void parseHolidayList(json)));
  });
});
