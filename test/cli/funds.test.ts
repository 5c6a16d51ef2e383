/**
 * `ordergate funds deposit|withdraw|show` and the demo user's funds, as an operator runs them: the built bin
 * as a real process over a real SQLite file. Results are read from stdout; the database is then checked
 * through the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { AdminService } from '../../src/services/admin.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createMigratedSqliteFile } from '../support/databases.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { expectOneLineFailure, fieldsOf, runOrdergate } from './run-ordergate.js';

const workDir = mkdtempSync(join(tmpdir(), 'ordergate-funds-cli-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

let dbPath: string;
let env: Record<string, string>;
let dbCounter = 0;
// Each test over a new database with today's schema.
beforeEach(async () => {
  dbPath = join(workDir, `db-${++dbCounter}`, 'ordergate.db');
  env = { DATABASE_URL: `sqlite:${dbPath}` };
  await createMigratedSqliteFile(dbPath);
});

const ordergate = (args: string[], stdin?: string) =>
  runOrdergate(args, { env, ...(stdin === undefined ? {} : { stdin }) });

async function inStore<T>(work: (store: Store, funds: FundsRepository) => Promise<T>): Promise<T> {
  const store = openStore(`sqlite:${dbPath}`);
  try {
    return await work(store, new FundsRepository(store.db, store.dialect));
  } finally {
    await store.close();
  }
}

/** A user, added as `ordergate users add` adds one (the same AdminService, in this process: the command itself is test/cli/cli.test.ts's). */
async function addUser(userId: string): Promise<void> {
  await inStore((store) =>
    new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    ).addUser(userId, 'a password of the test'),
  );
}

/** The `name: value` lines of an account, in their order. */
const accountLines = (stdout: string) => stdout.split('\n').filter((line) => /^[a-z_]+: /.test(line));

describe('ordergate funds', () => {
  it('deposit opens the account and adds to it, printing the account; show prints it with the ledger, newest first', async () => {
    await addUser('alice');
    const first = await ordergate(['funds', 'deposit', 'alice', '250000']);
    expect(first.code, first.stderr).toBe(0);
    expect(accountLines(first.stdout)).toEqual([
      'user_id: alice',
      'funds_checked: yes',
      'cash: 250000.00',
      'blocked: 0.00',
      'available: 250000.00',
      'debited: 0.00',
    ]);
    expect(first.stdout).toBe(`${accountLines(first.stdout).join('\n')}\n`);

    const second = await ordergate(['funds', 'deposit', 'alice', '0.5']);
    expect(second.code, second.stderr).toBe(0);
    expect(fieldsOf(second.stdout)).toMatchObject({ cash: '250000.50', available: '250000.50' });

    const show = await ordergate(['funds', 'show', 'alice']);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 6)).toEqual([
      'user_id: alice',
      'funds_checked: yes',
      'cash: 250000.50',
      'blocked: 0.00',
      'available: 250000.50',
      'debited: 0.00',
    ]);
    expect(lines.slice(6)).toHaveLength(2);
    expect(lines[6]).toMatch(/^\d+ \d{4}-\d{2}-\d{2}T[0-9:.]+Z DEPOSIT 0\.50 order=-$/);
    expect(lines[7]).toMatch(/^\d+ \S+ DEPOSIT 250000\.00 order=-$/);

    await inStore(async (_store, funds) =>
      expect(await funds.find('alice')).toMatchObject({ cashPaise: 25_000_050, blockedPaise: 0, debitedPaise: 0 }),
    );
  });

  it('show for a user without an account: funds_checked no, zeros, no ledger, and a hint', async () => {
    await addUser('bob');
    const show = await ordergate(['funds', 'show', 'bob']);
    expect(show.code, show.stderr).toBe(0);
    expect(accountLines(show.stdout)).toEqual([
      'user_id: bob',
      'funds_checked: no',
      'cash: 0.00',
      'blocked: 0.00',
      'available: 0.00',
      'debited: 0.00',
    ]);
    expect(show.stdout.trimEnd().split('\n')).toHaveLength(6);
    expect(show.stderr).toMatch(/no funds account/);
  });

  it('withdraw takes cash out of what is available', async () => {
    await addUser('carol');
    await ordergate(['funds', 'deposit', 'carol', '1000']);
    const result = await ordergate(['funds', 'withdraw', 'carol', '999.99']);
    expect(result.code, result.stderr).toBe(0);
    expect(fieldsOf(result.stdout)).toMatchObject({ cash: '0.01', available: '0.01' });
    const show = await ordergate(['funds', 'show', 'carol']);
    expect(show.stdout).toMatch(/^\d+ \S+ WITHDRAW 999\.99 order=-$/m);
  });

  it('a withdrawal beyond the available funds exits 1 naming the available amount, and changes nothing', async () => {
    await addUser('dave');
    await ordergate(['funds', 'deposit', 'dave', '1000']);
    // What live bids of dave's would block: available is cash less it.
    await inStore((store) =>
      store.db.updateTable('funds_accounts').set({ blocked_paise: 400_00 }).where('user_id', '=', 'dave').execute(),
    );
    const before = await inStore(async (_store, funds) => ({
      account: await funds.find('dave'),
      ledger: await funds.ledger('dave', 10),
    }));

    expectOneLineFailure(await ordergate(['funds', 'withdraw', 'dave', '600.01']), /Rs 600\.00 available/);
    expectOneLineFailure(
      await ordergate(['funds', 'withdraw', 'dave', '1000']),
      /cannot withdraw Rs 1,000\.00: dave has Rs 600\.00 available/,
    );
    expect(
      await inStore(async (_store, funds) => ({
        account: await funds.find('dave'),
        ledger: await funds.ledger('dave', 10),
      })),
    ).toEqual(before);

    expect((await ordergate(['funds', 'withdraw', 'dave', '600'])).code).toBe(0);
  });

  it('a withdrawal for a user without an account is refused, opening none', async () => {
    await addUser('erin');
    expectOneLineFailure(await ordergate(['funds', 'withdraw', 'erin', '1']), /erin has no funds account/);
    await inStore(async (_store, funds) => expect(await funds.find('erin')).toBeUndefined());
  });

  it('refuses a bad amount with one line, for deposit and withdraw alike, changing nothing', async () => {
    const bad: [string, RegExp][] = [
      ['-5', /amount "-5" is not a number of rupees with at most two decimals/],
      ['abc', /amount "abc" is not a number of rupees/],
      ['1.234', /amount "1\.234" is not a number of rupees with at most two decimals/],
      ['1.', /amount "1\." is not a number/],
      ['.5', /amount "\.5" is not a number/],
      ['1e5', /amount "1e5" is not a number/],
      ['1,000', /amount "1,000" is not a number/],
      ['', /amount "" is not a number/],
      ['0', /the amount must be more than 0/],
      ['0.00', /the amount must be more than 0/],
      ['90000000000000.01', /more than the most an account may hold, Rs 9,00,00,00,00,00,000\.00/],
    ];
    await addUser('frank');
    await ordergate(['funds', 'deposit', 'frank', '10']);
    // Refusals write nothing: they may run at once.
    const runs = bad.flatMap(([amount, reason]) =>
      ['deposit', 'withdraw'].map(async (command) => ({
        amount,
        command,
        reason,
        result: await ordergate(['funds', command, 'frank', amount]),
      })),
    );
    for (const { amount, command, reason, result } of await Promise.all(runs)) {
      expect(result.stderr, `${command} ${JSON.stringify(amount)}`).toMatch(reason);
      expectOneLineFailure(result, reason);
    }
    await inStore(async (_store, funds) => {
      expect(await funds.find('frank')).toMatchObject({ cashPaise: 10_00 });
      expect(await funds.ledger('frank', 10)).toHaveLength(1);
    });
  });

  it('refuses a deposit that would take cash past the most an account may hold', async () => {
    await addUser('grace');
    expect((await ordergate(['funds', 'deposit', 'grace', '90000000000000'])).code).toBe(0);
    expectOneLineFailure(
      await ordergate(['funds', 'deposit', 'grace', '0.01']),
      /would take grace's cash past the most an account may hold/,
    );
  });

  it('refuses an unknown user for every command, creating nothing', async () => {
    expectOneLineFailure(await ordergate(['funds', 'deposit', 'nobody', '100']), /^ordergate: no user nobody\n$/);
    expectOneLineFailure(await ordergate(['funds', 'withdraw', 'nobody', '100']), /^ordergate: no user nobody\n$/);
    expectOneLineFailure(await ordergate(['funds', 'show', 'nobody']), /^ordergate: no user nobody\n$/);
    await inStore(async (store) =>
      expect(await store.db.selectFrom('funds_accounts').selectAll().execute()).toEqual([]),
    );
  });

  it('usage errors are one line: a missing amount, an extra argument', async () => {
    expectOneLineFailure(await ordergate(['funds', 'deposit', 'alice']), /missing required argument 'amount'/);
    expectOneLineFailure(await ordergate(['funds', 'show', 'alice', 'extra']), /too many arguments/);
  });

  it('--help says what each command prints', async () => {
    for (const command of ['deposit', 'withdraw', 'show']) {
      const help = await ordergate(['funds', command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Prints on stdout/);
      expect(help.stdout).toContain('available: <rupees>');
    }
    expect((await ordergate(['funds', 'show', '--help'])).stdout).toContain('DEPOSIT|WITHDRAW|BLOCK|RELEASE|DEBIT');
  });
});

describe('ordergate demo: the demo user has funds', () => {
  it('a new demo user gets an account with Rs 10,00,000 deposited, once; the snippet says so and reads the balance', async () => {
    const first = await ordergate(['demo']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^# {3}funds {9}Rs 10,00,000\.00 cash, Rs 10,00,000\.00 available$/m);
    expect(first.stdout).toContain('/authentication/v1/user/balance');
    expect(first.stderr).toMatch(/opened a funds account for demo with Rs 10,00,000\.00/);

    // A second run keeps the account as it is: what bids blocked or allotments spent stays so.
    await inStore((store) =>
      store.db.updateTable('funds_accounts').set({ blocked_paise: 1_015_00 }).where('user_id', '=', 'demo').execute(),
    );
    const second = await ordergate(['demo', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/opened a funds account/);
    await inStore(async (_store, funds) => {
      expect(await funds.find('demo')).toMatchObject({ cashPaise: 100_000_000, blockedPaise: 1_015_00 });
      expect(await funds.ledger('demo', 10)).toEqual([
        expect.objectContaining({ kind: 'DEPOSIT', amountPaise: 100_000_000, orderId: null }),
      ]);
    });
    const show = await ordergate(['funds', 'show', 'demo']);
    expect(fieldsOf(show.stdout)).toMatchObject({ cash: '1000000.00', blocked: '1015.00', available: '998985.00' });
  });

  it('an existing demo user without an account gets one too', async () => {
    const added = await ordergate(['users', 'add', 'demo', '--password-stdin'], 'ordergate-demo\n');
    expect(added.code, added.stderr).toBe(0);
    await inStore(async (_store, funds) => expect(await funds.find('demo')).toBeUndefined());
    const demo = await ordergate(['demo', '--json']);
    expect(demo.code, demo.stderr).toBe(0);
    await inStore(async (_store, funds) =>
      expect(await funds.find('demo')).toMatchObject({ cashPaise: 100_000_000, blockedPaise: 0, debitedPaise: 0 }),
    );
  });

  it('a "demo" user with another password gets no funds: the demo fails before writing anything', async () => {
    await addUser('demo');
    const demo = await ordergate(['demo', '--json']);
    expect(demo.code).toBe(1);
    await inStore(async (_store, funds) => expect(await funds.find('demo')).toBeUndefined());
  });
});
