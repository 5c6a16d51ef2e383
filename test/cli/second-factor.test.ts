/**
 * `ordergate users totp` and `ordergate users second-factor --exempt|--require` (issue 23, SEBI's two-factor
 * rule for API logins): the built bin as a real process over a real SQLite file; logins then go through an
 * AuthService that requires a second factor (LOGIN_SECOND_FACTOR_REQUIRED) over the same file.
 */
import { describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/credentials.js';
import { ApiError } from '../../src/domain/errors.js';
import { AdminService } from '../../src/services/admin.js';
import { AuthService } from '../../src/services/auth.js';
import { openStore } from '../../src/store/sql/database.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { expectOneLineFailure, fieldsOf, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';

const PASSWORD = 'a-test-password-42';

const database = sqliteFilePerTest('ordergate-second-factor-cli-');

const ordergate = (args: string[], env: Record<string, string> = {}) =>
  runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}`, ...env } });

/** A user, added in process (only the commands under test run as processes); answers its TOTP secret. */
async function addUser(userId: string, totp = false): Promise<string | null> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    const admin = new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    );
    return (await admin.addUser(userId, PASSWORD, { totp })).totpSecret;
  } finally {
    await store.close();
  }
}

/** A login with LOGIN_SECOND_FACTOR_REQUIRED on: `ok`, or `refused <code>`. */
async function login(userId: string, code?: string): Promise<string> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    const auth = new AuthService(new UserRepository(store.db, store.dialect), 60 * 60 * 1000, Date.now, {
      passwordHasher: TEST_PASSWORD_HASHER,
      secondFactorRequired: true,
    });
    const result = await auth.login({ user_id: userId, password: PASSWORD, second_auth: code ?? '' });
    return result.accessToken.startsWith('ogt_') ? 'ok' : 'no token';
  } catch (error) {
    if (error instanceof ApiError) return `refused ${error.kind.code}`;
    throw error;
  } finally {
    await store.close();
  }
}

/** The base32 secret of an `otpauth://` URI, after checking its form. */
function secretOf(uri: string | undefined, userId: string): string {
  expect(uri).toMatch(/^otpauth:\/\/totp\//);
  const url = new URL(uri!);
  expect(decodeURIComponent(url.pathname)).toContain(userId);
  const secret = url.searchParams.get('secret');
  expect(secret).toMatch(/^[A-Z2-7]+=*$/);
  return secret!;
}

describe('ordergate users totp', () => {
  it('enrols an existing user with a new secret, printing its URI; logins then need a code of it', async () => {
    await addUser('alice');
    expect(await login('alice')).toBe('refused e-216');

    const enrolled = await ordergate(['users', 'totp', 'alice']);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const fields = fieldsOf(enrolled.stdout);
    expect(Object.keys(fields)).toEqual(['user_id', 'totp_uri']);
    expect(fields.user_id).toBe('alice');
    const secret = secretOf(fields.totp_uri, 'alice');
    expect(enrolled.stderr).toMatch(/enrolled user alice in TOTP/);

    expect(await login('alice')).toBe('refused e-209');
    expect(await login('alice', totpCode(secret, 'alice'))).toBe('ok');
  });

  it('run again, replaces the secret: the old one is refused at once, the new one works', async () => {
    const first = (await addUser('bob', true))!;
    expect(await login('bob', totpCode(first, 'bob'))).toBe('ok');

    const again = await ordergate(['users', 'totp', 'bob']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/replaced the TOTP secret of user bob/);
    const second = secretOf(fieldsOf(again.stdout).totp_uri, 'bob');
    expect(second).not.toBe(first);

    const oldCode = totpCode(first, 'bob');
    const newCode = totpCode(second, 'bob');
    if (oldCode !== newCode) expect(await login('bob', oldCode)).toBe('refused e-210');
    expect(await login('bob', newCode)).toBe('ok');
  });

  it('refuses an unknown user with one line, and says in --help what it prints and that a second run replaces the secret', async () => {
    expectOneLineFailure(await ordergate(['users', 'totp', 'nobody']), /^ordergate: no user nobody\n$/);
    const help = await ordergate(['users', 'totp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Prints on stdout/);
    expect(help.stdout).toContain('totp_uri: otpauth://totp/');
    expect(help.stdout).toMatch(/replaces the secret/);
  });
});

describe('ordergate users second-factor --exempt|--require', () => {
  it('--exempt lets a user not enrolled log in with the password; --require ends it, and says so when the server requires a second factor', async () => {
    await addUser('carol');
    expect(await login('carol')).toBe('refused e-216');

    const exempted = await ordergate(['users', 'second-factor', 'carol', '--exempt']);
    expect(exempted.code, exempted.stderr).toBe(0);
    expect(exempted.stdout).toBe('user_id: carol\nsecond_factor: exempt\n');
    expect(await login('carol')).toBe('ok');

    const required = await ordergate(['users', 'second-factor', 'carol', '--require'], {
      LOGIN_SECOND_FACTOR_REQUIRED: 'true',
    });
    expect(required.code, required.stderr).toBe(0);
    expect(required.stdout).toBe('user_id: carol\nsecond_factor: required\n');
    expect(required.stderr).toMatch(
      /not enrolled in TOTP: its logins are refused \(e-216\) until `ordergate users totp carol`/,
    );
    expect(await login('carol')).toBe('refused e-216');
  });

  it('prints enrolled for a user enrolled in TOTP, who still logs in with a code', async () => {
    const secret = (await addUser('dave', true))!;
    const exempted = await ordergate(['users', 'second-factor', 'dave', '--exempt']);
    expect(exempted.code, exempted.stderr).toBe(0);
    expect(exempted.stdout).toBe('user_id: dave\nsecond_factor: enrolled\n');
    expect(exempted.stderr).toMatch(/enrolled in TOTP: it still logs in with a code/);
    expect(await login('dave')).toBe('refused e-209');
    expect(await login('dave', totpCode(secret, 'dave'))).toBe('ok');
  });

  it('refuses an unknown user, no option and both options, changing nothing', async () => {
    await addUser('erin');
    expectOneLineFailure(
      await ordergate(['users', 'second-factor', 'nobody', '--exempt']),
      /^ordergate: no user nobody\n$/,
    );
    expectOneLineFailure(await ordergate(['users', 'second-factor', 'erin']), /give --exempt or --require/);
    const both = await ordergate(['users', 'second-factor', 'erin', '--exempt', '--require']);
    expect(both.code).not.toBe(0);
    expect(both.stdout).toBe('');
    expect(both.stderr).toMatch(/cannot be used with/);
    expect(await login('erin')).toBe('refused e-216');
  });
});
