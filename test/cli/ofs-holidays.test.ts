/**
 * `ordergate ofs holidays import|list`: the built bin as a real process over a real SQLite file. A file is
 * checked whole before anything is written; an import replaces the years it lists.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOneLineFailure, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';

const database = sqliteFilePerTest('ordergate-holidays-cli-');
const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}` } });

const filesDir = mkdtempSync(join(tmpdir(), 'ordergate-holiday-files-'));
afterAll(() => rmSync(filesDir, { recursive: true, force: true }));
let fileCounter = 0;

/** A holiday file holding `content` (JSON of it, or the text as given). */
function holidayFile(content: unknown): string {
  const file = join(filesDir, `holidays-${++fileCounter}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const NSE_2026 = [
  { date: '2026-12-25', description: 'Christmas' },
  { date: '2026-06-26', description: 'Muharram' },
  { date: '2026-10-02', description: 'Mahatma Gandhi Jayanti' },
];
const NSE_2027 = [{ date: '2027-01-26', description: 'Republic Day' }];

describe('ordergate ofs holidays import', () => {
  it('stores the holidays, prints one line per year, and list prints them by date with their weekday', async () => {
    const imported = await ordergate(['ofs', 'holidays', 'import', holidayFile([...NSE_2027, ...NSE_2026])]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('year 2026: 3 holidays\nyear 2027: 1 holidays\n');

    const listed = await ordergate(['ofs', 'holidays', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe(
      [
        '2026-06-26 Friday Muharram',
        '2026-10-02 Friday Mahatma Gandhi Jayanti',
        '2026-12-25 Friday Christmas',
        '2027-01-26 Tuesday Republic Day',
        '',
      ].join('\n'),
    );
    const of2027 = await ordergate(['ofs', 'holidays', 'list', '--year', '2027']);
    expect(of2027.stdout).toBe('2027-01-26 Tuesday Republic Day\n');
  });

  it('replaces a year it lists and keeps the others', async () => {
    expect((await ordergate(['ofs', 'holidays', 'import', holidayFile([...NSE_2026, ...NSE_2027])])).code).toBe(0);

    const revised = await ordergate([
      'ofs',
      'holidays',
      'import',
      holidayFile([{ date: '2026-12-25', description: 'Christmas Day' }]),
    ]);
    expect(revised.code, revised.stderr).toBe(0);
    expect(revised.stdout).toBe('year 2026: 1 holidays\n');

    expect((await ordergate(['ofs', 'holidays', 'list'])).stdout).toBe(
      '2026-12-25 Friday Christmas Day\n2027-01-26 Tuesday Republic Day\n',
    );
  });

  const christmas = { date: '2026-12-25', description: 'Christmas' };
  it.each([
    ['not JSON', '[{"date": "2026-12-25",', /: not valid JSON: /],
    [
      'not an array',
      { date: '2026-12-25', description: 'Christmas' },
      /: not a JSON array of \{"date": "YYYY-MM-DD", "description": "\.\.\."\}\n$/,
    ],
    [
      'more than 1000 entries',
      Array.from({ length: 1001 }, () => christmas),
      /: 1001 entries: at most 1000 in one file\n$/,
    ],
    [
      'a date that is no calendar date',
      [christmas, { date: '2026-02-30', description: 'x' }],
      /: \[1\]\.date: "2026-02-30" is not a calendar date YYYY-MM-DD\n$/,
    ],
    [
      'a date twice',
      [christmas, { date: '2026-06-26', description: 'Muharram' }, christmas],
      /: \[2\]\.date: 2026-12-25 is listed twice \(also \[0\]\)\n$/,
    ],
    [
      'a weekend date',
      [christmas, { date: '2026-12-27', description: 'x' }],
      /: \[1\]\.date: 2026-12-27 is a Sunday: an exchange never lists a weekend as a holiday \(a typo\?\)\n$/,
    ],
    ['a missing description', [christmas, { date: '2026-06-26' }], /: \[1\]\.description: missing\n$/],
  ])('refuses %s with one line, writing nothing', async (_name, content, reason) => {
    expect((await ordergate(['ofs', 'holidays', 'import', holidayFile(NSE_2027)])).code).toBe(0);
    const file = holidayFile(content);

    const refused = await ordergate(['ofs', 'holidays', 'import', file]);

    expectOneLineFailure(refused, reason);
    expect(refused.stderr.startsWith(`ordergate: ${file}: `)).toBe(true);
    expect((await ordergate(['ofs', 'holidays', 'list'])).stdout).toBe('2027-01-26 Tuesday Republic Day\n');
  });

  it('refuses a file that is not there', async () => {
    expectOneLineFailure(
      await ordergate(['ofs', 'holidays', 'import', join(filesDir, 'none.json')]),
      /none\.json: no such file\n$/,
    );
  });
});

describe('ordergate ofs holidays list', () => {
  it('prints nothing on stdout, and a hint on stderr, when no holiday was imported', async () => {
    const listed = await ordergate(['ofs', 'holidays', 'list', '--year', '2026']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toBe('no holidays imported for 2026\n');
  });

  it('refuses a year that is not four digits', async () => {
    const refused = await ordergate(['ofs', 'holidays', 'list', '--year', '26']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^ordergate: .*--year.*four digits/);
  });
});
