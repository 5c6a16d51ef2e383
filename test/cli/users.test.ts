/**
 * Ending a leaked login (issue 12 findings 8 and 13): `ordergate users revoke-sessions|disable|enable|
 * reset-password`, and `ordergate demo`'s published login kept off databases with real users. The built bin
 * as a real process over a real SQLite file; logins go through the AuthService over the same file.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { AuthService } from '../../src/services/auth.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { UserRepository } from '../../src/store/access/users.js';
import { AdminService } from '../../src/services/admin.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { expectOneLineFailure, fieldsOf, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';

// Each test over a new database with today's schema.
const database = sqliteFilePerTest('ordergate-users-cli-');

const ordergate = (args: string[], stdin?: string) =>
  runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}` }, ...(stdin === undefined ? {} : { stdin }) });

async function inStore<T>(work: (auth: AuthService, store: Store) => Promise<T>): Promise<T> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    return await work(
      new AuthService(new UserRepository(store.db, store.dialect), 60 * 60 * 1000, Date.now, {
        passwordHasher: TEST_PASSWORD_HASHER,
      }),
      store,
    );
  } finally {
    await store.close();
  }
}

/** The access token of a login, or `refused <code>`. */
const login = (userId: string, password: string) =>
  inStore(async (auth) => {
    try {
      return (await auth.login({ user_id: userId, password })).accessToken;
    } catch (error) {
      if (error instanceof ApiError) return `refused ${error.kind.code}`;
      throw error;
    }
  });

/** Whether a token still authenticates, or the code that refuses it. */
const tokenCheck = (token: string) =>
  inStore(async (auth) => {
    try {
      await auth.authenticate(`Bearer ${token}`);
      return 'valid';
    } catch (error) {
      if (error instanceof ApiError) return error.kind.code;
      throw error;
    }
  });

/**
 * A user with a password, added as `ordergate users add` adds one (the same AdminService, in this process:
 * the command itself is test/cli/cli.test.ts's); answers the password.
 */
async function addUser(userId: string): Promise<string> {
  const password = `pw-${userId}-${randomBytes(6).toString('hex')}`;
  await inStore((_auth, store) =>
    new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    ).addUser(userId, password),
  );
  return password;
}

describe('ordergate users revoke-sessions|disable|enable|reset-password', () => {
  it('revoke-sessions ends every session of the user at once and says how many; the user logs in again', async () => {
    const password = await addUser('alice');
    const tokens = [await login('alice', password), await login('alice', password)];
    const bobToken = await login('bob', await addUser('bob'));

    const result = await ordergate(['users', 'revoke-sessions', 'alice']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('user_id: alice\nsessions_revoked: 2\n');
    for (const token of tokens) expect(await tokenCheck(token)).toBe('e-204');
    expect(await tokenCheck(bobToken)).toBe('valid');
    expect(await login('alice', password)).toMatch(/^ogt_/);
  });

  it('disable ends the sessions and refuses every login with e-212 once the password is right (e-208 otherwise); enable lets the user back in', async () => {
    const password = await addUser('carol');
    const token = await login('carol', password);

    const disabled = await ordergate(['users', 'disable', 'carol']);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toBe('user_id: carol\ndisabled: yes\nsessions_revoked: 1\n');
    expect(await tokenCheck(token)).toBe('e-204');
    expect(await login('carol', password)).toBe('refused e-212');
    expect(await login('carol', 'not-the-password')).toBe('refused e-208');

    const enabled = await ordergate(['users', 'enable', 'carol']);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toBe('user_id: carol\ndisabled: no\n');
    expect(await login('carol', password)).toMatch(/^ogt_/);
    expect(await tokenCheck(token)).toBe('e-204');
  });

  it('reset-password --password-stdin sets the password read from stdin, ends every session, and prints no secret', async () => {
    const old = await addUser('dave');
    const token = await login('dave', old);

    // At production's cost (the suite's is PASSWORD_HASH_COST=test-only-insecure): the command takes the setting.
    const result = await runOrdergate(['users', 'reset-password', 'dave', '--password-stdin'], {
      env: { DATABASE_URL: `sqlite:${database.path()}`, PASSWORD_HASH_COST: 'owasp' },
      stdin: 'a brand new secret\n',
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('user_id: dave\nsessions_revoked: 1\n');
    // Read before the logins below, whose service (at the suite's cost) re-hashes it at theirs.
    const hash = await inStore(
      async (_auth, store) => (await new UserRepository(store.db, store.dialect).find('dave'))!.passwordHash,
    );
    expect(hash).toMatch(/^scrypt\$32768\$8\$3\$/);
    expect(await tokenCheck(token)).toBe('e-204');
    expect(await login('dave', old)).toBe('refused e-208');
    expect(await login('dave', 'a brand new secret')).toMatch(/^ogt_/);
  });

  it('reset-password without --password-stdin generates a strong password and prints it once', async () => {
    await addUser('erin');
    const result = await ordergate(['users', 'reset-password', 'erin']);
    expect(result.code, result.stderr).toBe(0);
    const fields = fieldsOf(result.stdout);
    expect(fields).toMatchObject({ user_id: 'erin', sessions_revoked: '0' });
    expect(fields.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await login('erin', fields.password!)).toMatch(/^ogt_/);
  });

  it('refuses an unknown user, a short password and an empty stdin with one line, changing nothing', async () => {
    const password = await addUser('fay');
    for (const command of ['revoke-sessions', 'disable', 'enable', 'reset-password']) {
      expectOneLineFailure(
        await ordergate(['users', command, 'nobody'], 'some long password\n'),
        /^ordergate: no user nobody\n$/,
      );
    }
    expectOneLineFailure(
      await ordergate(['users', 'reset-password', 'fay', '--password-stdin'], 'short\n'),
      /8 to 256 characters/,
    );
    expectOneLineFailure(
      await ordergate(['users', 'reset-password', 'fay', '--password-stdin'], ''),
      /stdin was empty/,
    );
    expect(await login('fay', password)).toMatch(/^ogt_/);
  });

  it('takes no password on the command line', async () => {
    await addUser('gus');
    const result = await ordergate(['users', 'reset-password', 'gus', 'my-password-here']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/too many arguments/);
  });
});

describe("ordergate demo's published login stays off databases with real users", () => {
  it('demo refuses a database that holds another user, writing nothing; --allow-other-users runs it', async () => {
    await addUser('alice');
    const refused = await ordergate(['demo', '--json']);
    expectOneLineFailure(refused, /holds users that `ordergate demo` did not create.*--allow-other-users/);
    expect(await login('demo', 'ordergate-demo')).toBe('refused e-208');
    await inStore(async (_auth, store) =>
      expect(await store.db.selectFrom('ofs_issues').selectAll().execute()).toEqual([]),
    );

    const allowed = await ordergate(['demo', '--json', '--allow-other-users']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(await tokenCheck(JSON.parse(allowed.stdout).access_token)).toBe('valid');
  });

  it('adding a real user after the demo disables the demo user and ends its sessions, saying so; --allow-other-users enables it again', async () => {
    const demo = await ordergate(['demo', '--json']);
    expect(demo.code, demo.stderr).toBe(0);
    const { access_token: token } = JSON.parse(demo.stdout);

    const added = await ordergate(['users', 'add', 'alice']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toMatch(/disabled user demo: its password is published/);
    expect(await tokenCheck(token)).toBe('e-204');
    expect(await login('demo', 'ordergate-demo')).toBe('refused e-212');
    // A second real user changes nothing more.
    expect((await ordergate(['users', 'add', 'bob'])).stderr).not.toMatch(/disabled user demo/);

    expectOneLineFailure(await ordergate(['demo']), /--allow-other-users/);
    const again = await ordergate(['demo', '--json', '--allow-other-users']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/enabled user demo/);
    expect(await login('demo', 'ordergate-demo')).toMatch(/^ogt_/);
  });
});

describe('the demos log in as the server would (issue 47 row 4)', () => {
  /** The instant each session of `userId` expires, read from the database. */
  const expiries = (userId: string) =>
    inStore(async (_auth, store) =>
      (await store.db.selectFrom('sessions').select('expires_at').where('user_id', '=', userId).execute()).map((row) =>
        Number(row.expires_at),
      ),
    );
  /** India's time of day (HH:MM) `minutes` from now. */
  const indiaTimeIn = (minutes: number) =>
    new Date(Date.now() + minutes * 60_000 + 330 * 60_000).toISOString().slice(11, 16);

  it.each([
    ['demo', 'demo'],
    ['demo-offer', 'demo'],
  ])('%s --allow-other-users prints a token cut at SESSION_DAILY_END', async (command, userId) => {
    await addUser('alice');
    const before = Date.now();
    const result = await runOrdergate([command, '--json', '--allow-other-users'], {
      env: { DATABASE_URL: `sqlite:${database.path()}`, SESSION_DAILY_END: indiaTimeIn(90) },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const [expiresAt] = await expiries(userId);
    // The daily end is 89 to 91 minutes away; the token's TTL (a day) would end far later.
    expect(expiresAt).toBeGreaterThan(before + 88 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 91 * 60_000);
  });

  it.each(['demo', 'demo-offer'])(
    '%s --allow-other-users is refused, issuing no token, under LOGIN_SECOND_FACTOR_REQUIRED',
    async (command) => {
      await addUser('alice');
      const result = await runOrdergate([command, '--json', '--allow-other-users'], {
        env: { DATABASE_URL: `sqlite:${database.path()}`, LOGIN_SECOND_FACTOR_REQUIRED: 'true' },
        timeoutMs: 60_000,
      });
      expectOneLineFailure(result, /LOGIN_SECOND_FACTOR_REQUIRED=true.*--exempt/);
      expect(await expiries('demo')).toEqual([]);
    },
  );
});

describe('operators: ordergate users add --operator, users set-operator, and the demo user', () => {
  const isOperator = (userId: string) =>
    inStore(async (_auth, store) => (await new UserRepository(store.db, store.dialect).find(userId))?.operator);

  it('add --operator makes the new user an operator and says so on a line of its own; without it the output is as before', async () => {
    const added = await ordergate(['users', 'add', 'olga', '--operator', '--category', 'NON_RETAIL']);
    expect(added.code, added.stderr).toBe(0);
    expect(fieldsOf(added.stdout)).toMatchObject({ user_id: 'olga', category: 'NII', margin: 'H', operator: 'yes' });
    expect(await isOperator('olga')).toBe(true);

    const plain = await ordergate(['users', 'add', 'tom']);
    expect(
      plain.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(': ')[0]),
    ).toEqual(['user_id', 'category', 'margin', 'password']);
    expect(await isOperator('tom')).toBe(false);
  });

  it('set-operator <user_id> true|false makes a user an operator or not, and prints the outcome', async () => {
    await addUser('tina');
    const made = await ordergate(['users', 'set-operator', 'tina', 'true']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe('user_id: tina\noperator: yes\n');
    expect(await isOperator('tina')).toBe(true);

    const unmade = await ordergate(['users', 'set-operator', 'tina', 'false']);
    expect(unmade.code, unmade.stderr).toBe(0);
    expect(unmade.stdout).toBe('user_id: tina\noperator: no\n');
    expect(await isOperator('tina')).toBe(false);
  });

  it('set-operator refuses an unknown user and a value other than true or false, changing nothing', async () => {
    await addUser('uma');
    expectOneLineFailure(await ordergate(['users', 'set-operator', 'nobody', 'true']), /^ordergate: no user nobody\n$/);
    const bad = await ordergate(['users', 'set-operator', 'uma', 'yes']);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/true, false/);
    expect(await isOperator('uma')).toBe(false);
  });

  it('set-category sets the OFS category and margin type, NON_RETAIL meaning NII; T margin only for institutions', async () => {
    await addUser('ivy');
    const set = await ordergate(['users', 'set-category', 'ivy', 'MF', '--margin', 'T']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('user_id: ivy\ncategory: MF\nmargin: T\n');
    const stored = () => inStore(async (_auth, store) => await new UserRepository(store.db, store.dialect).find('ivy'));
    expect(await stored()).toMatchObject({ category: 'NON_RETAIL', offerCategory: 'MF', marginType: 'T' });

    const individual = await ordergate(['users', 'set-category', 'ivy', 'NON_RETAIL', '--margin', 'T']);
    expectOneLineFailure(
      individual,
      /margin type T \(0 % margin\) is for MF, IC and OTHS users only; a NII user bids with 100 % margin \(H\)/,
    );
    expect(await stored()).toMatchObject({ offerCategory: 'MF', marginType: 'T' });

    const nobody = await ordergate(['users', 'set-category', 'nobody', 'NII']);
    expectOneLineFailure(nobody, /^ordergate: no user nobody\n$/);
  });

  it('the demo user is an operator, and the snippet says where its book is; not with --allow-other-users', async () => {
    const demo = await ordergate(['demo']);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/^# {3}operator {6}yes: GET \/operator\/v1\/ofs\/NSE_EQ\/500112\/book /m);
    expect(await isOperator('demo')).toBe(true);

    await addUser('vera');
    const shared = await ordergate(['demo', '--allow-other-users']);
    expect(shared.code, shared.stderr).toBe(0);
    expect(shared.stdout).toMatch(/^# {3}operator {6}no /m);
    expect(await isOperator('demo')).toBe(false);
  });
});

describe('ordergate users totp-unlock and totp-log (issue 47 row 2)', () => {
  it("unlock clears a locked user's count and lock, and the log prints both events", async () => {
    await addUser('tia');
    await inStore(async (_auth, store) => {
      const users = new UserRepository(store.db, store.dialect);
      await users.setTotpSecret('tia', 'JBSWY3DPEHPK3PXP', Date.now());
      for (let seen = 0; seen < 10; seen++) expect(await users.countTotpCheck('tia', seen, Date.now())).toBe(true);
      expect(
        await users.lockSecondFactor('tia', Date.now(), '10 wrong TOTP codes in a row, the last from 192.0.2.7'),
      ).toBe(true);
    });
    const before = await ordergate(['users', 'totp-log', 'tia']);
    expect(before.code, before.stderr).toBe(0);
    expect(fieldsOf(before.stdout)).toMatchObject({ user_id: 'tia', codes_counted: '10' });
    expect(fieldsOf(before.stdout).locked_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const unlocked = await ordergate(['users', 'totp-unlock', 'tia']);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(fieldsOf(unlocked.stdout)).toEqual({ user_id: 'tia', was_locked: 'yes', codes_cleared: '10' });

    const after = await ordergate(['users', 'totp-log', 'tia']);
    expect(fieldsOf(after.stdout)).toMatchObject({ codes_counted: '0', locked_at: 'no' });
    const lines = after.stdout.trim().split('\n').slice(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\S+ locked by system: 10 wrong TOTP codes in a row, the last from 192\.0\.2\.7$/);
    expect(lines[1]).toMatch(
      /^\S+ unlocked by operator: ordergate users totp-unlock, locked, after 10 codes checked in a row$/,
    );
  });

  it('refuses an unknown user with one line', async () => {
    expectOneLineFailure(await ordergate(['users', 'totp-unlock', 'nobody']), /no user nobody/);
    expectOneLineFailure(await ordergate(['users', 'totp-log', 'nobody']), /no user nobody/);
  });
});

describe('ordergate users zero-margin-limit (issue 47 row 3)', () => {
  it('sets and clears the limit, printing it; set-category --margin T says when none is set', async () => {
    await addUser('mia');
    const category = await ordergate(['users', 'set-category', 'mia', 'MF', '--margin', 'T']);
    expect(category.code, category.stderr).toBe(0);
    expect(category.stderr).toMatch(/no 0 % margin limit is set for mia: its 0 %-margin bids are refused \(e-384\)/);
    const set = await ordergate(['users', 'zero-margin-limit', 'mia', '50000000.50']);
    expect(set.code, set.stderr).toBe(0);
    expect(fieldsOf(set.stdout)).toEqual({ user_id: 'mia', zero_margin_limit: '50000000.50' });
    const stored = () =>
      inStore(
        async (_auth, store) => (await new UserRepository(store.db, store.dialect).find('mia'))?.zeroMarginLimitPaise,
      );
    expect(await stored()).toBe(5_000_000_050n);
    expect((await ordergate(['users', 'set-category', 'mia', 'MF', '--margin', 'T'])).stderr).not.toMatch(
      /no 0 % margin limit/,
    );
    const cleared = await ordergate(['users', 'zero-margin-limit', 'mia', 'none']);
    expect(fieldsOf(cleared.stdout)).toEqual({ user_id: 'mia', zero_margin_limit: 'none' });
    expect(await stored()).toBeNull();
  });

  it('refuses an amount that is not rupees, and an unknown user, with one line', async () => {
    await addUser('max');
    expectOneLineFailure(
      await ordergate(['users', 'zero-margin-limit', 'max', '12.345']),
      /not a number of rupees with at most two decimals/,
    );
    expectOneLineFailure(await ordergate(['users', 'zero-margin-limit', 'nobody', '100']), /no user nobody/);
  });
});
