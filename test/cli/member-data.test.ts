/**
 * `ordergate users set-member` and `ordergate users import-clients` (issue 49 row 5): the built bin as a
 * real process over a real SQLite file (the import's work on both databases: test/store/client-import.test.ts).
 * Only the commands under test run as processes; the users they act on are added in this process, as
 * `users add` adds them (the same AdminService; the command itself is test/cli/cli.test.ts's).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UserCategory } from '../../src/domain/ofs/offer/offer.js';
import type { MemberDataChange } from '../../src/domain/access/member-data.js';
import { AdminService } from '../../src/services/admin.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { openStore } from '../../src/store/sql/database.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { expectOneLineFailure, fieldsOf, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';

const database = sqliteFilePerTest('ordergate-member-cli-');
const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}` } });

/** The operator's service over the test's database, for the set-up (and one check) the commands are not. */
async function admin<T>(work: (service: AdminService, users: UserRepository) => Promise<T>): Promise<T> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    const users = new UserRepository(store.db, store.dialect);
    return await work(new AdminService(users, new OfsOfferRepository(store.db), Date.now, TEST_PASSWORD_HASHER), users);
  } finally {
    await store.close();
  }
}

const addUser = (userId: string, category: UserCategory = 'RETAIL', member?: MemberDataChange) =>
  admin((service) => service.addUser(userId, `pw-${userId}-123456`, { category, ...(member && { member }) }));

function csvFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'ordergate-clients-')), 'clients.csv');
  writeFileSync(file, text);
  return file;
}

describe('ordergate users set-member', () => {
  it('sets only the fields given, capitalised, and prints the member data', async () => {
    await addUser('alice', 'MF');
    const first = await ordergate(['users', 'set-member', 'alice', '--ucc', 'al01', '--pan', 'abcpe1234f']);
    expect(first.code, first.stderr).toBe(0);
    expect(fieldsOf(first.stdout)).toEqual({
      user_id: 'alice',
      ucc: 'AL01',
      pan: 'ABCPE1234F',
      client_type: 'CLI',
      custodian_code: 'none',
    });
    // Lower case is taken and capitalised, as the other fields are.
    const second = await ordergate(['users', 'set-member', 'alice', '--client-type', 'pro', '--custodian', 'in300126']);
    expect(fieldsOf(second.stdout)).toMatchObject({ ucc: 'AL01', client_type: 'PRO', custodian_code: 'IN300126' });
    const cleared = await ordergate(['users', 'set-member', 'alice', '--custodian', 'none']);
    expect(fieldsOf(cleared.stdout)).toMatchObject({ custodian_code: 'none' });
  });

  it("refuses a bad field, another user's UCC and an unknown user, changing nothing", async () => {
    await addUser('alice', 'RETAIL', { ucc: 'AL01' });
    await addUser('bob');
    expectOneLineFailure(await ordergate(['users', 'set-member', 'bob', '--pan', 'ABCXE1234F']), /fourth letter/);
    expectOneLineFailure(await ordergate(['users', 'set-member', 'bob', '--ucc', 'al01']), /ucc AL01 is user alice's/);
    expectOneLineFailure(await ordergate(['users', 'set-member', 'carol', '--ucc', 'C1']), /no user carol/);
  });
});

describe('ordergate users import-clients', () => {
  const file = () =>
    csvFile(
      [
        'user_id,ucc,pan,client_type,custodian_code',
        'alice,AL01,ABCPE1234F,,',
        '"bob",B01,"ABCPE0001F",PRO,',
        'carol,AL01,ABCPE0002F,,',
        'dave,D01,nope,,',
      ].join('\r\n'),
    );

  it('applies each good line, reports each refused one with its reason, and exits 2', async () => {
    const result = await ordergate(['users', 'import-clients', file()]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe(
      [
        'line 2 alice: created',
        'line 3 bob: created',
        "line 4 carol: refused: ucc AL01 is user alice's",
        'line 5 dave: refused: pan "NOPE" must be five letters, four digits and a letter, e.g. ABCPE1234F',
        'created: 2',
        'updated: 0',
        'unchanged: 0',
        'refused: 2',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toContain('users reset-password');
    expect(result.stderr).toContain('ordergate: 2 of 4 lines refused (the others are applied)');
    // bob exists now, with no usable password: reset-password gives one.
    expect(await admin((service) => service.resetPassword('bob', 'a-new-password-1'))).toBe(0);
  });

  it('--json prints the report as one object; a file with every line good exits 0', async () => {
    const json = await ordergate(['users', 'import-clients', '--json', file()]);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ created: 2, updated: 0, unchanged: 0, refused: 2 });
    expect(report.lines[2]).toEqual({
      line: 4,
      user_id: 'carol',
      outcome: 'refused',
      reason: "ucc AL01 is user alice's",
    });
    const good = await ordergate(['users', 'import-clients', csvFile('user_id,ucc,pan\nalice,AL02,ABCPE1234F\n')]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain('line 2 alice: updated');
  });

  it('prints what a refused line holds escaped: a line break or a terminal control cannot forge a line', async () => {
    const result = await ordergate([
      'users',
      'import-clients',
      csvFile('user_id,ucc,pan\n"ev\u202ee",E1,ABCPE1234F\n"a\nline 9 x: created",A9,ABCPE1234F\n'),
    ]);
    expect(result.code, result.stderr).toBe(2);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(
      'line 2 "ev\\u202ee": refused: user_id "ev\\u202ee" must be 1 to 64 letters, digits, dots, dashes or underscores',
    );
    expect(lines[1]).toMatch(/^line 3 "a\\nline 9 x: created": refused: user_id "a\\u000aline 9 x: created" must be/);
    expect(result.stdout).not.toContain('\u202e');
    expect(lines[2]).toBe('created: 0');
  });

  it('refuses a file that is no clients file, changing nothing (exit 1)', async () => {
    expectOneLineFailure(
      await ordergate(['users', 'import-clients', csvFile('user_id,ucc\nalice,A1\n')]),
      /the clients file: the header row lacks the columns pan/,
    );
    expectOneLineFailure(await ordergate(['users', 'import-clients', '/nonexistent.csv']), /no such file/);
  });
});
