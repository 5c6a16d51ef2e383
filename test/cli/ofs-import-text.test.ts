/**
 * `ordergate ofs import` and the text it stores and prints (issue 47 row 5): the built bin as a real process
 * over a real SQLite file. A control, bidirectional or invisible character anywhere in the file is refused
 * in one line naming the field and the character (U+XXXX), and nothing is written; symbols and series are
 * taken only as the exchanges write them. What was stored before the rule is printed escaped, on its line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeOfsIssue } from '../../src/cli/ofs.js';
import { parseOfsImport } from '../../src/schemas/ofs-import.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { offerImport, SBIN_ISSUE_IMPORT } from '../support/offers.js';
import { expectOneLineFailure, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';

const database = sqliteFilePerTest('ordergate-ofs-text-cli-');
const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}` } });

const filesDir = mkdtempSync(join(tmpdir(), 'ordergate-ofs-text-files-'));
afterAll(() => rmSync(filesDir, { recursive: true, force: true }));
let fileCounter = 0;

/** An import file holding the entries (JSON escapes every control character: the file is valid JSON). */
function importFile(entries: unknown[]): string {
  const file = join(filesDir, `import-${++fileCounter}.json`);
  writeFileSync(file, JSON.stringify(entries));
  return file;
}

async function inStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const stored = () =>
  inStore(async (store) => ({
    offers: await store.db.selectFrom('ofs_offers').select(['offer_id', 'symbol']).execute(),
    listings: await store.db.selectFrom('ofs_offer_listings').selectAll().execute(),
    issues: await store.db.selectFrom('ofs_issues').select(['exchange', 'scrip_token', 'symbol', 'series']).execute(),
  }));

const issue = SBIN_ISSUE_IMPORT;

/** T opens a day from now: the seller's green-shoe decision is still taken; a drill, so any day will do. */
const offer = (overrides: Record<string, unknown> = {}) =>
  offerImport(
    { settlement_delay_seconds: 60, ...overrides },
    Math.floor(Date.now() / 60_000) * 60_000 + 24 * 60 * 60 * 1000,
  );

describe('ordergate ofs import refuses', () => {
  it.each([
    [
      'a line break',
      'ACME\nregistered: offer FAKE',
      /: \[0\]\.symbol holds U\+000A \(line feed\), a control character/,
    ],
    [
      'a right-to-left override',
      'ACME\u202E',
      /: \[0\]\.symbol holds U\+202E \(right-to-left override\), a bidirectional control/,
    ],
    ['a zero width space', 'AC\u200BME', /: \[0\]\.symbol holds U\+200B \(zero width space\), an invisible character/],
    ['a NUL', 'ACME\u0000', /: \[0\]\.symbol holds U\+0000 \(null\), a control character/],
  ])(
    "an offer's symbol with %s, in one line naming the field and the character, and writes nothing",
    async (_name, symbol, reason) => {
      const file = importFile([offer({ symbol })]);
      const result = await ordergate(['ofs', 'import', file]);
      expectOneLineFailure(result, reason);
      expect(result.stderr.startsWith(`ordergate: ${file}: `)).toBe(true);
      expect(await stored()).toEqual({ offers: [], listings: [], issues: [] });
    },
  );

  it("an issue's series and an offer's listing series likewise, whatever else the file holds", async () => {
    expectOneLineFailure(
      await ordergate(['ofs', 'import', importFile([issue, { ...issue, scrip_token: 500113, series: 'O\u202EF' }])]),
      /: \[1\]\.series holds U\+202E \(right-to-left override\), a bidirectional control/,
    );
    const listings = [
      { exchange: 'NSE_EQ', scrip_token: 700001, series: { RETAIL: 'RS', NON_RETAIL: 'I\u200DS', EMPLOYEE: 'ES' } },
    ];
    expectOneLineFailure(
      await ordergate(['ofs', 'import', importFile([offer({ listings })])]),
      /: \[0\]\.listings\[0\]\.series\.NON_RETAIL holds U\+200D \(zero width joiner\), an invisible character/,
    );
    expect(await stored()).toEqual({ offers: [], listings: [], issues: [] });
  });

  it('a symbol or a series not as the exchanges write them, saying what they write', async () => {
    expectOneLineFailure(
      await ordergate(['ofs', 'import', importFile([{ ...issue, symbol: 'sbin' }])]),
      /: \[0\]\.symbol is not valid: .*upper-case letters/,
    );
    expectOneLineFailure(
      await ordergate(['ofs', 'import', importFile([{ ...issue, series: 'OFS' }])]),
      /: \[0\]\.series is not valid: .*1 or 2 upper-case letters or digits/,
    );
    expect(await stored()).toEqual({ offers: [], listings: [], issues: [] });
  });
});

describe('ordergate ofs import takes', () => {
  it('the real symbols of NSE and BSE, and prints one line per entry (a symbol with a space quoted)', async () => {
    const listing = (scripToken: number) => [
      { exchange: 'NSE_EQ', scrip_token: scripToken, series: { RETAIL: 'RS', NON_RETAIL: 'IS' } },
    ];
    const result = await ordergate([
      'ofs',
      'import',
      importFile([
        offer({ offer_id: 'MM-OFS', symbol: 'M&M', listings: listing(700001), employee_quantity: 0 }),
        offer({ offer_id: 'BAJAJ-OFS', symbol: 'BAJAJ-AUTO', listings: listing(700002), employee_quantity: 0 }),
        offer({ offer_id: 'LTFH-OFS', symbol: 'L&TFH', listings: listing(700003), employee_quantity: 0 }),
        { ...issue, symbol: '3MINDIA', scrip_token: 523395 },
        { ...issue, exchange: 'BSE_EQ', symbol: 'JK AGRI', series: 'B', scrip_token: 536493 },
      ]),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').map((line) => line.split(' ').slice(0, 4).join(' '))).toEqual([
      'registered: offer MM-OFS M&M',
      'registered: offer BAJAJ-OFS BAJAJ-AUTO',
      'registered: offer LTFH-OFS L&TFH',
      'registered: NSE_EQ 523395 3MINDIA',
      'registered: BSE_EQ 536493 "JK',
      '',
    ]);
    expect(result.stdout).toMatch(/^registered: BSE_EQ 536493 "JK AGRI" B floor=100\.00 /m);
    expect((await stored()).offers.map((o) => o.symbol).sort()).toEqual(['BAJAJ-AUTO', 'L&TFH', 'M&M']);
  });
});

describe('text stored before the rule', () => {
  it('is printed escaped, on the one line of its offer: no forged line, no hidden character', async () => {
    // As the import stored it before the rule: the repository takes the offer as the parser made it.
    const [parsed] = parseOfsImport([offer()]).offers;
    const forged = {
      ...parsed!,
      symbol: 'ACME\nregistered: offer FAKE',
      listings: [
        {
          exchange: 'NSE_EQ' as const,
          scripToken: 700001,
          series: { RETAIL: 'R\u202ES', NON_RETAIL: 'I\u200BS', EMPLOYEE: 'E\u0000S' },
        },
      ],
    };
    await inStore((store) => new OfsOfferRepository(store.db).importAll([forged], [], Date.now()));
    expect((await stored()).offers).toEqual([{ offer_id: 'ACME-OFS-1', symbol: 'ACME\nregistered: offer FAKE' }]);

    const shoe = await ordergate(['ofs', 'green-shoe', 'ACME-OFS-1', 'true']);
    expect(shoe.code, shoe.stderr).toBe(0);
    expect(shoe.stdout.split('\n')).toHaveLength(2);
    expect(shoe.stdout).toMatch(
      /^updated: offer ACME-OFS-1 "ACME\\nregistered: offer FAKE" listings=NSE_EQ:700001\("R\\u202eS"\/"I\\u200bS"\/"E\\u0000S"\) floor=/,
    );
    expect(shoe.stdout).not.toMatch(/[\u0000\u200B\u202E]/);
  });

  it("is printed escaped in an issue's line too", () => {
    const [parsed] = parseOfsImport([issue]).issues;
    const line = describeOfsIssue({ ...parsed!, symbol: 'SBIN\r\nregistered: NSE_EQ 1 FAKE', series: 'O\u2066F' });
    expect(line).toMatch(/^NSE_EQ 500112 "SBIN\\r\\nregistered: NSE_EQ 1 FAKE" "O\\u2066F" floor=100\.00 /);
    expect(line).not.toMatch(/[\r\n\u2066]/);
  });
});
