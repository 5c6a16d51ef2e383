/**
 * `ordergate algos register|list|history|disable|enable` (issue 23, SEBI's algo rules): the built bin as a
 * real process over a real SQLite file. The orders the kill switch cancels are placed in process, through
 * order entry over the same file.
 */
import { expect, it } from 'vitest';
import { AdminService } from '../../src/services/admin.js';
import { openStore } from '../../src/store/sql/database.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createServices } from '../../src/wiring.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { openIssue, validBid } from '../support/server.js';
import { expectOneLineFailure, fieldsOf, runOrdergate, sqliteFilePerTest } from './run-ordergate.js';
import { testMember, testMemberData } from '../support/member-data.js';

const database = sqliteFilePerTest('ordergate-algos-cli-');

const ordergate = (args: string[], env: Record<string, string> = {}) =>
  runOrdergate(args, { env: { DATABASE_URL: `sqlite:${database.path()}`, ...env } });

/** Runs `work` with the services over the file, in process. */
async function inProcess<T>(
  work: (
    services: ReturnType<typeof createServices> & { admin: AdminService; issues: OfsIssueRepository },
  ) => Promise<T>,
): Promise<T> {
  const store = openStore(`sqlite:${database.path()}`);
  try {
    const admin = new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    );
    return await work({
      ...createServices(store, { tokenTtlSeconds: 60 }),
      admin,
      issues: new OfsIssueRepository(store.db),
    });
  } finally {
    await store.close();
  }
}

it('registers an algo, stops it (cancelling its live orders, recorded with the operator), and starts it again', async () => {
  await inProcess(async ({ admin, issues }) => {
    await admin.addUser('alice', 'a-test-password-42', { category: 'NON_RETAIL', member: testMemberData('alice') });
    await issues.upsert([openIssue(Date.now())], Date.now());
  });

  const registered = await ordergate([
    'algos',
    'register',
    'A100',
    '--exchange',
    'NSE_EQ',
    '--approval',
    'NSE/ALGO/2026/17',
    '--user',
    'alice',
    '--name',
    'Momentum',
    '--actor',
    'ops',
  ]);
  expect(registered.code, registered.stderr).toBe(0);
  expect(fieldsOf(registered.stdout)).toEqual({
    algo_id: 'A100',
    exchange: 'NSE_EQ',
    approval: 'NSE/ALGO/2026/17',
    name: 'Momentum',
    users: 'alice',
    status: 'enabled',
    added: 'alice',
  });

  const placed = await inProcess(({ orderEntry }) => {
    const caller = {
      userId: 'alice',
      category: 'NON_RETAIL' as const,
      member: testMember('alice', 'NII'),
      tokenHash: '',
      expiresAt: Date.now() + 60_000,
    };
    return Promise.all([1, 2].map(() => orderEntry.placeOfsBid(caller, validBid({ algo_id: 'A100' }) as never, null)));
  });

  const stopped = await ordergate(['algos', 'disable', 'A100', '--reason', 'NSE instruction 42', '--actor', 'ops']);
  expect(stopped.code, stopped.stderr).toBe(0);
  const result = fieldsOf(stopped.stdout);
  expect(result).toMatchObject({ algo_id: 'A100', status: 'disabled', not_cancelled: '-' });
  expect(result.cancelled!.split(',').sort()).toEqual([...placed].sort());

  const list = await ordergate(['algos', 'list']);
  expect(list.stdout).toBe('A100 exchange=NSE_EQ users=alice status=disabled approval=NSE/ALGO/2026/17\n');

  const started = await ordergate(['algos', 'enable', 'A100', '--reason', 'NSE lifted it', '--actor', 'ops']);
  expect(fieldsOf(started.stdout)).toMatchObject({ algo_id: 'A100', status: 'enabled' });

  const history = await ordergate(['algos', 'history', 'A100']);
  expect(history.code, history.stderr).toBe(0);
  const changes = history.stdout.split('\n').filter((line) => /^\d{4}-/.test(line));
  expect(changes.map((line) => line.replace(/^\S+ /, ''))).toEqual([
    'register by ops: exchange NSE_EQ, approval NSE/ALGO/2026/17, name Momentum, users alice',
    'disable by ops: stopped: new orders and modifications with it are refused [reason: NSE instruction 42]',
    `cancel-orders by ops: cancelled 2: ${result.cancelled}; not cancelled 0 [reason: NSE instruction 42]`,
    'enable by ops: started again: its orders are taken [reason: NSE lifted it]',
  ]);
});

it('says in one line why it refuses: an unknown user, an unknown algo, a generic ID', async () => {
  expectOneLineFailure(
    await ordergate(['algos', 'register', 'A1', '--exchange', 'NSE_EQ', '--approval', 'r', '--user', 'nobody']),
    /no user nobody/,
  );
  expectOneLineFailure(await ordergate(['algos', 'disable', 'A1', '--reason', 'x']), /no algo A1/);
  expectOneLineFailure(
    await ordergate(['algos', 'register', 'GEN', '--exchange', 'NSE_EQ', '--approval', 'r', '--user', 'nobody'], {
      ALGO_GENERIC_ID: 'GEN',
    }),
    /GEN is a generic algo ID/,
  );
});
