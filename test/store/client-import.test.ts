/**
 * `ordergate users import-clients`' work (AdminService.importClients over UserRepository.importClients) on
 * the run's database (SQLite, or PostgreSQL in the postgres project): each record applied or refused on its
 * own, users created with no usable password, UCCs one client's, thousands of records in batches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, DatabaseUnavailableError } from '../../src/domain/errors.js';
import { AdminService } from '../../src/services/admin.js';
import { AuthService } from '../../src/services/auth.js';
import { UserRepository } from '../../src/store/access/users.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';

let database: TestDatabase;
let store: Store;
let admin: AdminService;
let users: UserRepository;

beforeAll(async () => {
  database = await createMigratedTestDatabase();
  store = openStore(database.databaseUrl);
  await migrateToLatest(store);
  users = new UserRepository(store.db, store.dialect);
  admin = new AdminService(users, new OfsOfferRepository(store.db), Date.now, TEST_PASSWORD_HASHER);
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

const pan = (i: number) => `ABCPE${String(i % 10_000).padStart(4, '0')}F`;

describe('importing clients', () => {
  it('creates and updates users, refuses each bad line with its reason, and applies the others', async () => {
    await admin.addUser('holder', 'a password of the test', { member: { ucc: 'TAKEN1', pan: pan(1) } });
    await admin.addUser('existing', 'a password of the test', { member: { ucc: 'OLD1', pan: pan(2) } });
    const { lines } = await admin.importClients(
      [
        'user_id,ucc,pan,client_type,custodian_code',
        `existing,NEW1,${pan(2)},PRO,`,
        `newbie,nb1,${pan(3)},,`,
        `thief,TAKEN1,${pan(4)},,`,
        `twin,NB1,${pan(5)},,`,
        `fund,FUND1,ABCTF0001F,CLI,IN300126`,
        `holder,TAKEN1,${pan(1)},CLI,`,
        `bad,B1,NOTAPAN,,`,
      ].join('\n'),
    );
    expect(lines).toEqual([
      { line: 2, userId: 'existing', outcome: 'updated' },
      { line: 3, userId: 'newbie', outcome: 'created' },
      { line: 4, userId: 'thief', outcome: 'refused', reason: "ucc TAKEN1 is user holder's" },
      { line: 5, userId: 'twin', outcome: 'refused', reason: "ucc NB1 is user newbie's" },
      { line: 6, userId: 'fund', outcome: 'created' },
      { line: 7, userId: 'holder', outcome: 'unchanged' },
      { line: 8, userId: 'bad', outcome: 'refused', reason: expect.stringMatching(/pan "NOTAPAN"/) },
    ]);
    expect((await users.find('existing'))!.member).toEqual({
      ucc: 'NEW1',
      pan: pan(2),
      clientType: 'PRO',
      custodianCode: null,
    });
    expect((await users.find('fund'))!.member.custodianCode).toBe('IN300126');
    expect(await users.find('thief')).toBeUndefined();
    expect(await users.find('bad')).toBeUndefined();
  });

  it('a file without the optional columns keeps the client type and custodian code recorded', async () => {
    await admin.addUser('institution', 'a password of the test', {
      category: 'MF',
      member: { ucc: 'INST1', pan: pan(40), clientType: 'PRO', custodianCode: 'IN300126' },
    });
    const { lines } = await admin.importClients(`user_id,ucc,pan\ninstitution,INST2,${pan(40)}\n`);
    expect(lines).toEqual([{ line: 2, userId: 'institution', outcome: 'updated' }]);
    expect((await users.find('institution'))!.member).toEqual({
      ucc: 'INST2',
      pan: pan(40),
      clientType: 'PRO',
      custodianCode: 'IN300126',
    });
  });

  it('stops at a database that cannot be used, saying which lines were not applied, rather than refuse them one by one', async () => {
    let calls = 0;
    const failing = new (class extends UserRepository {
      override importClients(): ReturnType<UserRepository['importClients']> {
        calls += 1;
        return Promise.reject(new DatabaseUnavailableError(new Error('connection lost')));
      }
    })(store.db, store.dialect);
    const stopped = new AdminService(failing, new OfsOfferRepository(store.db), Date.now, TEST_PASSWORD_HASHER);
    await expect(stopped.importClients(`user_id,ucc,pan\ngone1,G1,${pan(41)}\ngone2,G2,${pan(42)}\n`)).rejects.toThrow(
      'the database cannot be used now: connection lost: the lines from line 2 on were not applied (those before it were); the import is idempotent: run it again',
    );
    // The batch was tried once: not again line by line.
    expect(calls).toBe(1);
  });

  it('a created user has no usable password until reset-password', async () => {
    await admin.importClients(`user_id,ucc,pan\nnopass,NOPASS1,${pan(6)}`);
    const auth = new AuthService(users, 3_600_000, Date.now, { passwordHasher: TEST_PASSWORD_HASHER });
    for (const password of ['', '!none', 'anything at all']) {
      const refused = await auth.login({ user_id: 'nopass', password }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).kind.code).toBe('e-208');
    }
    await admin.resetPassword('nopass', 'a new password 42');
    expect((await auth.login({ user_id: 'nopass', password: 'a new password 42' })).accessToken).toMatch(/./);
  });

  it('two users may swap UCCs in one file', async () => {
    await admin.importClients(`user_id,ucc,pan\nswap1,SWAPA,${pan(7)}\nswap2,SWAPB,${pan(8)}`);
    const { lines } = await admin.importClients(`user_id,ucc,pan\nswap1,SWAPB,${pan(7)}\nswap2,SWAPA,${pan(8)}`);
    expect(lines.map((line) => line.outcome)).toEqual(['updated', 'updated']);
    expect((await users.find('swap1'))!.member.ucc).toBe('SWAPB');
    expect((await users.find('swap2'))!.member.ucc).toBe('SWAPA');
  });

  it('imports 3,000 clients in batches, fast, and again changes nothing', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `bulk${i},BULK${i},${pan(i)},CLI,`);
    const text = ['user_id,ucc,pan,client_type,custodian_code', ...rows].join('\n');
    const started = performance.now();
    const { lines } = await admin.importClients(text);
    const elapsed = performance.now() - started;
    expect(lines.filter((line) => line.outcome === 'created')).toHaveLength(3000);
    expect(elapsed).toBeLessThan(15_000);
    const again = await admin.importClients(text);
    expect(again.lines.every((line) => line.outcome === 'unchanged')).toBe(true);
    expect((await users.find('bulk2999'))!.member.ucc).toBe('BULK2999');
  });
});
