/**
 * `ordergate apikeys create --allow-ip`, `set-ips` and `ips` (issue 23, SEBI's static IP rule): the built
 * bin as a real process over a real SQLite file; the key is then tried through the AuthService over the
 * same file, from the addresses a call would come from.
 */
import { expect, it } from 'vitest';
import { AdminService } from '../../src/services/admin.js';
import { AuthService } from '../../src/services/auth.js';
import { openStore } from '../../src/store/sql/database.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { expectOneLineFailure, fieldsOf, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';

const database = sqliteFilePerTest('ordergate-apikeys-cli-');

const ordergate = (args: string[]) => runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}` } });

/** A user, added in process: only the commands under test run as processes (each costs a second). */
async function addUser(userId: string): Promise<void> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    await new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    ).addUser(userId, 'a-test-password-42');
  } finally {
    await store.close();
  }
}

/** Whether the key may be used by the user from `from`, as a login's back-off check reads it. */
async function usableFrom(userId: string, apiKey: string, from: string): Promise<boolean> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    return await new AuthService(new UserRepository(store.db, store.dialect), 60_000, Date.now, {
      passwordHasher: TEST_PASSWORD_HASHER,
    }).holdsApiKey(userId, apiKey, from);
  } finally {
    await store.close();
  }
}

it('binds a key to a primary and a secondary address at creation, changes them once a week unless overridden, and keeps every change', async () => {
  await addUser('alice');
  const created = await ordergate([
    'apikeys',
    'create',
    'alice',
    '--allow-ip',
    '203.0.113.7',
    '--allow-ip',
    '2001:DB8::1',
  ]);
  expect(created.code, created.stderr).toBe(0);
  const lines = created.stdout.trimEnd().split('\n');
  const apiKey = lines.at(-1)!;
  const { key_id, allowed_ips } = fieldsOf(lines.slice(0, -1).join('\n'));
  expect(allowed_ips).toBe('203.0.113.7,2001:db8::1');
  expect(await usableFrom('alice', apiKey, '203.0.113.7')).toBe(true);
  expect(await usableFrom('alice', apiKey, '::ffff:203.0.113.7')).toBe(true);
  expect(await usableFrom('alice', apiKey, '198.51.100.9')).toBe(false);

  expectOneLineFailure(
    await ordergate(['apikeys', 'set-ips', key_id!, '--allow-ip', '198.51.100.9']),
    /cannot change now: .*next change is allowed from/,
  );
  expect(await usableFrom('alice', apiKey, '198.51.100.9')).toBe(false);
  const overridden = await ordergate(['apikeys', 'set-ips', key_id!, '--allow-ip', '198.51.100.9', '--override']);
  expect(overridden.code, overridden.stderr).toBe(0);
  expect(overridden.stdout).toBe(`key_id: ${key_id}\nallowed_ips: 198.51.100.9\n`);
  expect(await usableFrom('alice', apiKey, '198.51.100.9')).toBe(true);
  expect(await usableFrom('alice', apiKey, '203.0.113.7')).toBe(false);

  const history = await ordergate(['apikeys', 'ips', key_id!]);
  expect(history.code, history.stderr).toBe(0);
  expect(history.stdout).toMatch(
    /^allowed_ips: 198\.51\.100\.9\n\S+Z - -> 203\.0\.113\.7,2001:db8::1 override=false\n\S+Z 203\.0\.113\.7,2001:db8::1 -> 198\.51\.100\.9 override=true\n$/,
  );
});

it('refuses addresses that are not a primary and at most one secondary IP address, changing nothing', async () => {
  await addUser('bob');
  // The lists an operator may register are the domain's (test/domain/static-ip.test.ts); here, that the
  // command says why in one line and creates no key.
  expectOneLineFailure(
    await ordergate([
      'apikeys',
      'create',
      'bob',
      '--allow-ip',
      '203.0.113.1',
      '--allow-ip',
      '203.0.113.2',
      '--allow-ip',
      'example.com',
    ]),
    /at most one secondary/,
  );
  const store = openStore(`sqlite:${database.path()}`);
  try {
    expect(await new UserRepository(store.db, store.dialect).listApiKeys('bob')).toEqual([]);
  } finally {
    await store.close();
  }
  expectOneLineFailure(
    await ordergate(['apikeys', 'set-ips', 'no-such-key', '--allow-ip', '203.0.113.1']),
    /no active API key no-such-key/,
  );
});

it('refuses an address no client calls from, and a zoned one, in one line saying why, storing no key (issue 47 row 5)', async () => {
  await addUser('carol');
  const listed = async () => {
    const store = openStore(`sqlite:${database.path()}`);
    try {
      return await new UserRepository(store.db, store.dialect).listApiKeys('carol');
    } finally {
      await store.close();
    }
  };
  expectOneLineFailure(
    await ordergate(['apikeys', 'create', 'carol', '--allow-ip', '0.0.0.0']),
    /^ordergate: "0\.0\.0\.0" is an unspecified address, not an address a client calls from\n$/,
  );
  expectOneLineFailure(
    await ordergate(['apikeys', 'create', 'carol', '--allow-ip', '203.0.113.7', '--allow-ip', '::']),
    /^ordergate: "::" is an unspecified address, not an address a client calls from\n$/,
  );
  expectOneLineFailure(
    await ordergate(['apikeys', 'create', 'carol', '--allow-ip', 'fe80::1%eth0']),
    /^ordergate: "fe80::1%eth0": a zone index \(%eth0\) is not part of an address the server sees; give fe80::1\n$/,
  );
  expect(await listed()).toEqual([]);

  // set-ips goes through the same rule: the key keeps its address.
  const created = await ordergate(['apikeys', 'create', 'carol', '--allow-ip', '203.0.113.7']);
  expect(created.code, created.stderr).toBe(0);
  const { key_id } = fieldsOf(created.stdout);
  expectOneLineFailure(
    await ordergate(['apikeys', 'set-ips', key_id!, '--allow-ip', '255.255.255.255', '--override']),
    /^ordergate: "255\.255\.255\.255" is the broadcast address, not an address a client calls from\n$/,
  );
  expectOneLineFailure(
    await ordergate(['apikeys', 'set-ips', key_id!, '--allow-ip', 'ff02::1', '--override']),
    /^ordergate: "ff02::1" is a multicast address, not an address a client calls from\n$/,
  );
  const ips = await ordergate(['apikeys', 'ips', key_id!]);
  expect(ips.stdout).toMatch(/^allowed_ips: 203\.0\.113\.7\n\S+Z - -> 203\.0\.113\.7 override=false\n$/);
});
