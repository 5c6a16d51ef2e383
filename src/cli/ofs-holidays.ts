/**
 * `ordergate ofs holidays import|list`: the exchanges' holidays, which settlement days (T+1, T+2) skip
 * with the weekends (src/domain/ofs/trading-calendar.ts). The file format is ours: a JSON array of
 * `{"date": "YYYY-MM-DD", "description": "..."}`; an import replaces each year it names, as the exchanges
 * publish their lists per year.
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_HOLIDAY_ENTRIES,
  MAX_HOLIDAYS_PER_YEAR,
  parseHolidayList,
  weekdayOf,
} from '../domain/ofs/trading-calendar.js';
import { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import { CliError, readJsonFile, withWorkspace, type CliIo } from './context.js';

function parseYear(value: string): number {
  if (!/^\d{4}$/.test(value)) throw new InvalidArgumentError('give a year as four digits, e.g. 2026.');
  return Number(value);
}

export function holidaysCommand(io: CliIo): Command {
  const holidays = new Command('holidays').description(
    "the exchanges' holidays: settlement days (T+1, T+2) skip them and weekends",
  );
  holidays
    .command('import')
    .description(
      "replace each year the file lists with the file's holidays of that year (other years stay); the whole file is checked first, all or nothing",
    )
    .argument('<file.json>')
    .addHelpText(
      'after',
      [
        '',
        `The file: a JSON array of at most ${MAX_HOLIDAY_ENTRIES} entries, e.g.`,
        '  [{"date": "2026-06-26", "description": "Muharram"}, {"date": "2026-12-25", "description": "Christmas"}]',
        `date: an India date YYYY-MM-DD, Monday to Friday, once; description: 1 to ${MAX_DESCRIPTION_LENGTH} characters, one line.`,
        `At most ${MAX_HOLIDAYS_PER_YEAR} holidays in one year (an exchange lists 15 to 20).`,
        'A refused file prints the first problem, naming the entry: [<index>].date: ... or [<index>].description: ...',
        '',
        'Prints on stdout one line per year replaced, in order:',
        '  year <YYYY>: <n> holidays',
      ].join('\n'),
    )
    .action(async (file: string) => {
      // Check the whole file before touching the database: a bad file writes nothing.
      const checked = parseHolidayList(await readJsonFile(file));
      if ('problem' in checked) throw new CliError(`${file}: ${checked.problem}`);
      await withWorkspace(io, async ({ store }) => {
        const replaced = await new TradingHolidayRepository(store.db).replaceYears(checked.holidays, Date.now());
        for (const { year, holidays: count } of replaced) io.stdout.write(`year ${year}: ${count} holidays\n`);
      });
    });
  holidays
    .command('list')
    .description('print the imported holidays, by date')
    .option('--year <YYYY>', 'only those of one year', parseYear)
    .addHelpText('after', '\nPrints on stdout one line per holiday, by date:\n  <YYYY-MM-DD> <weekday> <description>')
    .action(async (options: { year?: number }) => {
      await withWorkspace(io, async ({ store }) => {
        const listed = await new TradingHolidayRepository(store.db).list(options.year);
        for (const { date, description } of listed) io.stdout.write(`${date} ${weekdayOf(date)} ${description}\n`);
        if (listed.length === 0)
          io.stderr.write(`no holidays imported${options.year === undefined ? '' : ` for ${options.year}`}\n`);
      });
    });
  return holidays;
}
