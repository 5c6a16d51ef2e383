/**
 * The `ordergate` command as operators and scripts use it: the built bin run as a real process over a real
 * SQLite file. Results are read from stdout; the database is then checked through the store.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex, totpCode } from '../../src/auth/credentials.js';
import { ApiError } from '../../src/domain/errors.js';
import { parseOfsImport, parseOfsIssues } from '../../src/schemas/ofs-import.js';
import { AuthService } from '../../src/services/auth.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { CLI, expectOneLineFailure, fieldsOf, runOrdergate } from './run-ordergate.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { offerImport, SBIN_ISSUE_IMPORT } from '../support/offers.js';

const workDir = mkdtempSync(join(tmpdir(), 'ordergate-cli-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

let dbPath: string;
let env: Record<string, string>;
let dbCounter = 0;
beforeEach(() => {
  dbPath = join(workDir, `db-${++dbCounter}`, 'ordergate.db');
  env = { DATABASE_URL: `sqlite:${dbPath}` };
});

const ordergate = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runOrdergate(args, {
    env: { ...env, ...options.env },
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });

async function inStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(`sqlite:${dbPath}`);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const authService = (store: Store) =>
  new AuthService(new UserRepository(store.db, store.dialect), 60 * 60 * 1000, Date.now, {
    passwordHasher: TEST_PASSWORD_HASHER,
  });

/** Answers the access token, or the ApiError code of the refusal. */
async function tryLogin(userId: string, password: string, secondAuth?: string): Promise<string> {
  return inStore(async (store) => {
    try {
      return (await authService(store).login({ user_id: userId, password, second_auth: secondAuth ?? null }))
        .accessToken;
    } catch (error) {
      if (error instanceof ApiError) return `refused ${error.kind.code}`;
      throw error;
    }
  });
}

function issueFile(name: string, issues: unknown): string {
  const file = join(workDir, `${name}-${dbCounter}.json`);
  writeFileSync(file, typeof issues === 'string' ? issues : JSON.stringify(issues));
  return file;
}

const sbin = SBIN_ISSUE_IMPORT;

describe('the bin', () => {
  it('is an executable node script', () => {
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
    expect(manifest.bin).toEqual({ ordergate: 'dist/cli/index.js' });
  });
});

describe('ordergate users add', () => {
  it('creates a RETAIL user with a generated strong password, printed as name: value lines, that logs in', async () => {
    const result = await ordergate(['users', 'add', 'alice']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(': ')[0])).toEqual(['user_id', 'category', 'margin', 'password']);
    const fields = fieldsOf(result.stdout);
    expect(fields).toMatchObject({ user_id: 'alice', category: 'RETAIL' });
    expect(fields.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await tryLogin('alice', fields.password!)).toMatch(/^ogt_/);
    // The password appears nowhere but in the result.
    expect(result.stderr).not.toContain(fields.password);
  });

  it('refuses an existing user id with exit 1 and changes nothing', async () => {
    const first = fieldsOf((await ordergate(['users', 'add', 'alice'])).stdout);
    const before = await inStore((store) => store.db.selectFrom('users').selectAll().execute());

    const again = await ordergate(['users', 'add', 'alice', '--category', 'NON_RETAIL', '--totp']);

    expectOneLineFailure(again, /^ordergate: user alice already exists\n$/);
    expect(await inStore((store) => store.db.selectFrom('users').selectAll().execute())).toEqual(before);
    expect(await tryLogin('alice', first.password!)).toMatch(/^ogt_/);
  });

  it('--password-stdin takes the password from stdin without its trailing newline and does not print it', async () => {
    const result = await ordergate(['users', 'add', 'bob', '--password-stdin', '--category', 'NON_RETAIL'], {
      stdin: 'my secret pass\n',
    });
    expect(result.code, result.stderr).toBe(0);
    // NON_RETAIL is the old name of NII (migration 0013); the issue model still sees NON_RETAIL.
    expect(result.stdout).toBe('user_id: bob\ncategory: NII\nmargin: H\n');
    expect(await tryLogin('bob', 'my secret pass')).toMatch(/^ogt_/);
    expect(await tryLogin('bob', 'my secret pass\n')).toMatch(/^refused/);
    const row = await inStore((store) => new UserRepository(store.db, store.dialect).find('bob'));
    expect(row?.category).toBe('NON_RETAIL');
    expect(row?.offerCategory).toBe('NII');
  });

  it('--password-stdin refuses a password that is too short, creating nothing', async () => {
    const result = await ordergate(['users', 'add', 'bob', '--password-stdin'], { stdin: 'short\n' });
    expectOneLineFailure(result, /8 to 256 characters/);
    expect(await inStore((store) => new UserRepository(store.db, store.dialect).find('bob'))).toBeUndefined();
  });

  it('--totp prints an otpauth URI whose secret yields the codes the login asks for', async () => {
    const result = await ordergate(['users', 'add', 'carol', '--totp']);
    expect(result.code, result.stderr).toBe(0);
    const fields = fieldsOf(result.stdout);
    const uri = new URL(fields.totp_uri!);
    expect(uri.protocol).toBe('otpauth:');
    const secret = uri.searchParams.get('secret')!;
    expect(await tryLogin('carol', fields.password!)).toMatch(/^refused/);
    expect(await tryLogin('carol', fields.password!, totpCode(secret, 'carol'))).toMatch(/^ogt_/);
  });

  it('rejects an unknown category with a one-line usage error and creates nothing', async () => {
    const result = await ordergate(['users', 'add', 'dave', '--category', 'WHALE']);
    expectOneLineFailure(result, /--category.*WHALE.*RETAIL, NII, MF, IC, OTHS, NON_RETAIL/);
    // A usage error stops before the database is even opened.
    expect(existsSync(dbPath)).toBe(false);
  });
});

describe('ordergate apikeys', () => {
  it('create prints the key alone on the last line; the key is active for the user until revoked by its key_id', async () => {
    await ordergate(['users', 'add', 'alice']);
    const created = await ordergate(['apikeys', 'create', 'alice']);
    expect(created.code, created.stderr).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const apiKey = lines.at(-1)!;
    expect(apiKey).toMatch(/^ogk_[A-Za-z0-9_-]{43}$/);
    const { user_id, key_id } = fieldsOf(lines.slice(0, -1).join('\n'));
    expect(user_id).toBe('alice');
    expect(created.stderr).not.toContain(apiKey);
    const owner = () => inStore((store) => new UserRepository(store.db, store.dialect).apiKeyOwner(sha256Hex(apiKey)));
    expect(await owner()).toBe('alice');

    const revoked = await ordergate(['apikeys', 'revoke', key_id!]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked: ${key_id}\n`);
    expect(await owner()).toBeUndefined();

    expectOneLineFailure(await ordergate(['apikeys', 'revoke', key_id!]), /no active API key/);

    const listed = await ordergate(['apikeys', 'list', 'alice']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${key_id} created=\\S+Z revoked=\\S+Z\n$`));
    expect(listed.stdout).not.toContain(apiKey);
  });

  it('list for an unknown user exits 1', async () => {
    expectOneLineFailure(await ordergate(['apikeys', 'list', 'nobody']), /^ordergate: no user nobody\n$/);
  });

  it('create for an unknown user exits 1 and stores no key', async () => {
    const result = await ordergate(['apikeys', 'create', 'nobody']);
    expectOneLineFailure(result, /^ordergate: no user nobody\n$/);
    expect(await inStore((store) => store.db.selectFrom('api_keys').selectAll().execute())).toEqual([]);
  });
});

describe('ordergate ofs import', () => {
  it('registers the issues of a file, one summary line each, then updates them on a second import', async () => {
    const first = await ordergate(['ofs', 'import', issueFile('issues', [sbin, { ...sbin, exchange: 'BSE_EQ' }])]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(
      [
        'registered: NSE_EQ 500112 SBIN OF floor=100.00 tick=0.05 retail_cutoff=none offer_quantity=1000000 allocation=PROPORTIONATE non_retail=2026-11-23T03:45:00Z/2026-11-23T10:00:00Z retail=2026-11-24T03:45:00Z/2026-11-24T10:00:00Z settlement=T+1',
        'registered: BSE_EQ 500112 SBIN OF floor=100.00 tick=0.05 retail_cutoff=none offer_quantity=1000000 allocation=PROPORTIONATE non_retail=2026-11-23T03:45:00Z/2026-11-23T10:00:00Z retail=2026-11-24T03:45:00Z/2026-11-24T10:00:00Z settlement=T+1',
        '',
      ].join('\n'),
    );

    const second = await ordergate(['ofs', 'import', issueFile('cutoff', [{ ...sbin, retail_cutoff_price: 101.05 }])]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^updated: NSE_EQ 500112 SBIN OF .*retail_cutoff=101\.05 .*\n$/);

    const stored = await inStore((store) => new OfsIssueRepository(store.db).list());
    expect(stored.map((i) => [i.exchange, i.scripToken, i.retailCutoffPricePaise])).toEqual([
      ['BSE_EQ', 500112, null],
      ['NSE_EQ', 500112, 10105],
    ]);
  });

  it.each([
    ['not JSON', '[{"exchange":', /not valid JSON/],
    ['an object instead of an array', JSON.stringify(sbin), /must be an array/],
    [
      'a bad second issue',
      [
        { ...sbin, retail_cutoff_price: 200 },
        { ...sbin, scrip_token: 7, tick_size: 0.001 },
      ],
      /\[1\]\.tick_size/,
    ],
    ['an unknown field', [{ ...sbin, lot: 1 }], /lot/],
    [
      'windows in the wrong order',
      [{ ...sbin, retail_closes_at: '2026-11-24T03:00:00Z' }],
      /retail_closes_at must be after retail_opens_at/,
    ],
    ['a retail reserve that is not a whole percent', [{ ...sbin, retail_reserve_pct: 12.5 }], /retail_reserve_pct/],
  ])('a file with %s exits 1 with the reason and writes nothing', async (_name, content, reason) => {
    expect((await ordergate(['ofs', 'import', issueFile('good', [sbin])])).code).toBe(0);
    const before = await inStore((store) => store.db.selectFrom('ofs_issues').selectAll().execute());

    const file = issueFile('bad', content);
    const result = await ordergate(['ofs', 'import', file]);

    expectOneLineFailure(result, reason);
    expect(result.stderr.startsWith(`ordergate: ${file}: `)).toBe(true);
    expect(await inStore((store) => store.db.selectFrom('ofs_issues').selectAll().execute())).toEqual(before);
  });

  it('registers an offer with its portions in shares, then takes the green shoe and the eligible employees', async () => {
    // The commands run on the real clock: T closed, T+1 not yet open (T opened 12 hours ago, on the minute),
    // when employees are still taken and an under-subscribed T day waits for the operator's answer. Fixed
    // dates here made the test fail once the real clock passed their T+1 opening.
    const hour = 60 * 60 * 1000;
    const tOpensAt = Math.floor(Date.now() / 60_000) * 60_000 - 12 * hour;
    const instant = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
    const session = (opensAt: number) => `${instant(opensAt)}/${instant(opensAt + 6.25 * hour)}`;
    // A drill (settlement 60 s): the real clock's T may fall on a weekend. The seller decides by 6 hours from now.
    const decisionBy = tOpensAt + 18 * hour;
    const offer = offerImport(
      { settlement_delay_seconds: 60, green_shoe_decision_by: new Date(decisionBy).toISOString() },
      tOpensAt,
    );
    const imported = await ordergate(['ofs', 'import', issueFile('offer', [offer, sbin])]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe(
      [
        'registered: offer ACME-OFS-1 ACME listings=BSE_EQ:800001(A/A/-),NSE_EQ:700001(RS/IS/ES) floor=100.00 tick=0.05 base=1000000 ' +
          `green_shoe=1000000(exercised=0,default,decision_by=${instant(decisionBy)}) total=1000000 retail_reserved=125000 non_retail=875000 ` +
          'mf_ic_reserved=250000 employee=20000 single_bidder_cap=250000 portions=computed retail_discount=Rs2.50off retail_price=UNIFORM ' +
          `employee_discount=5%off allocation=PRICE_PRIORITY t_day=${session(tOpensAt)} t1_day=${session(tOpensAt + 24 * hour)} settlement=60s`,
        'registered: NSE_EQ 500112 SBIN OF floor=100.00 tick=0.05 retail_cutoff=none offer_quantity=1000000 allocation=PROPORTIONATE non_retail=2026-11-23T03:45:00Z/2026-11-23T10:00:00Z retail=2026-11-24T03:45:00Z/2026-11-24T10:00:00Z settlement=T+1',
        '',
      ].join('\n'),
    );

    // In part, with the portions the notice prints for it; then in whole; never more than the option.
    const part = await ordergate([
      'ofs',
      'green-shoe',
      'ACME-OFS-1',
      '400000',
      '--retail-reserved',
      '175001',
      '--non-retail',
      '1224999',
      '--mf-ic-reserved',
      '350000',
      '--employee',
      '20000',
    ]);
    expect(part.code, part.stderr).toBe(0);
    expect(part.stdout).toMatch(
      /^updated: offer ACME-OFS-1 ACME .* green_shoe=1000000\(exercised=400000,decided\) total=1400000 retail_reserved=175001 non_retail=1224999 mf_ic_reserved=350000 employee=20000 single_bidder_cap=350000 portions=notice /,
    );
    const shoe = await ordergate(['ofs', 'green-shoe', 'ACME-OFS-1', 'true']);
    expect(shoe.code, shoe.stderr).toBe(0);
    expect(shoe.stdout).toMatch(
      /^updated: offer ACME-OFS-1 ACME .* green_shoe=1000000\(exercised=1000000,decided\) total=2000000 retail_reserved=250000 non_retail=1750000 mf_ic_reserved=500000 .* portions=computed /,
    );
    expectOneLineFailure(
      await ordergate(['ofs', 'green-shoe', 'ACME-OFS-1', '1000001']),
      /^ordergate: offer ACME-OFS-1: the green shoe is 1000000 shares; 1000001 cannot be exercised\n$/,
    );
    expectOneLineFailure(
      await ordergate(['ofs', 'green-shoe', 'ACME-OFS-1', '10', '--retail-reserved', '1']),
      /^ordergate: --retail-reserved and --non-retail go together: every notice prints both \(--mf-ic-reserved and --employee when it prints them\)\n$/,
    );
    expectOneLineFailure(
      await ordergate(['ofs', 'green-shoe', 'ACME-OFS-1', '0', '--retail-reserved', '1', '--non-retail', '999999']),
      /^ordergate: offer ACME-OFS-1: portions: retail_reserved 1 is less than 10 % of the total 1000000\n$/,
    );

    await inStore((store) =>
      new UserRepository(store.db, store.dialect).create({
        userId: 'emma',
        passwordHash: 'x',
        category: 'RETAIL',
        totpSecret: null,
        now: 0,
      }),
    );
    const added = await ordergate(['ofs', 'employees', 'add', 'ACME-OFS-1', 'emma']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('offer_id: ACME-OFS-1\nemployees: emma\n');
    expectOneLineFailure(await ordergate(['ofs', 'employees', 'add', 'NOPE', 'emma']), /^ordergate: no offer NOPE\n$/);

    // The operator's answers to an under-subscribed T day: go on, or cancel; each once.
    const proceed = await ordergate(['ofs', 'proceed', 'ACME-OFS-1']);
    expect(proceed.code, proceed.stderr).toBe(0);
    expect(proceed.stdout).toBe('proceeding: ACME-OFS-1: the T allocation runs at the next pass of the OMS\n');
    const cancelled = await ordergate(['ofs', 'cancel', 'ACME-OFS-1']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe('cancelled: ACME-OFS-1: its live bids are cancelled at the next pass of the OMS\n');
    expectOneLineFailure(
      await ordergate(['ofs', 'cancel', 'ACME-OFS-1']),
      /^ordergate: offer ACME-OFS-1: it was cancelled already, or its T\+1 allocation has run\n$/,
    );
    expectOneLineFailure(await ordergate(['ofs', 'proceed', 'NOPE']), /^ordergate: no offer NOPE\n$/);
    expect(
      await inStore((store) =>
        store.db.selectFrom('ofs_offers').select(['t_proceed_at', 'cancelled_at']).executeTakeFirstOrThrow(),
      ),
    ).toMatchObject({
      t_proceed_at: expect.anything(),
      cancelled_at: expect.anything(),
    });

    // A listing cannot also be an issue: the whole file is refused.
    const clash = await ordergate(['ofs', 'import', issueFile('clash', [{ ...sbin, scrip_token: 700001 }])]);
    expectOneLineFailure(clash, /NSE_EQ 700001 is already a listing of offer ACME-OFS-1/);
  });

  it('a missing file exits 1 naming it', async () => {
    const file = join(workDir, 'no-such-file.json');
    expectOneLineFailure(await ordergate(['ofs', 'import', file]), new RegExp(`^ordergate: ${file}: no such file\\n$`));
  });
});

describe('ordergate serve', () => {
  it('refuses to start beyond loopback without PUBLIC_URL, in one line, before opening anything (issue 21 row 11)', async () => {
    const result = await ordergate(['serve'], { env: { HOST: '0.0.0.0', PORT: '0' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ordergate: cannot start: PUBLIC_URL is required with HOST=0\.0\.0\.0: /);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('ordergate demo', () => {
  async function demoJson() {
    const result = await ordergate(['demo', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]!);
  }

  it('--json prints one object whose password, API key and access token work, with an issue open for retail bids now', async () => {
    const demo = await demoJson();
    expect(Object.keys(demo).sort()).toEqual(['access_token', 'api_key', 'ofs_issues', 'password', 'user_id']);

    await inStore(async (store) => {
      const auth = authService(store);
      const caller = await auth.authenticateWithApiKey(`Bearer ${demo.access_token}`, demo.api_key);
      expect(caller).toMatchObject({ userId: demo.user_id, category: 'RETAIL' });
      await expect(
        auth.login({ user_id: demo.user_id, password: demo.password, api_key: demo.api_key }),
      ).resolves.toMatchObject({ userId: demo.user_id });
    });

    // ofs_issues is in the import-file shape and is what the registry now holds.
    const [issue] = parseOfsIssues(demo.ofs_issues);
    expect(issue!.retailCutoffPricePaise).not.toBeNull();
    const now = Date.now();
    expect(issue!.retailOpensAt).toBeLessThanOrEqual(now);
    expect(issue!.retailClosesAt).toBeGreaterThan(now + 60 * 60 * 1000);
    const stored = await inStore((store) => new OfsIssueRepository(store.db).find(issue!.exchange, issue!.scripToken));
    expect(stored).toEqual(issue);
  });

  it('--close-in closes both windows that many seconds from now; a bad value is a usage error', async () => {
    const before = Date.now();
    const result = await ordergate(['demo', '--json', '--close-in', '90']);
    expect(result.code, result.stderr).toBe(0);
    const [issue] = parseOfsIssues(JSON.parse(result.stdout).ofs_issues);
    for (const closesAt of [issue!.retailClosesAt, issue!.nonRetailClosesAt]) {
      expect(closesAt).toBeGreaterThanOrEqual(before + 89_000);
      expect(closesAt).toBeLessThanOrEqual(Date.now() + 91_000);
    }
    expect(issue!.retailOpensAt).toBeLessThanOrEqual(before);
    expectOneLineFailure(
      await ordergate(['demo', '--close-in', '5']),
      /--close-in takes a whole number of seconds from 10 to 86400/,
    );
  });

  it('runs again on the same database: same user and password, a new API key, the old one still active', async () => {
    const first = await demoJson();
    const second = await demoJson();
    expect(second.user_id).toBe(first.user_id);
    expect(second.password).toBe(first.password);
    expect(second.api_key).not.toBe(first.api_key);
    await inStore(async (store) => {
      const users = new UserRepository(store.db, store.dialect);
      expect(await users.count()).toBe(1);
      expect(await users.apiKeyOwner(sha256Hex(first.api_key))).toBe(first.user_id);
      expect(await users.apiKeyOwner(sha256Hex(second.api_key))).toBe(first.user_id);
    });
  });

  it('without --json prints a valid shell snippet with the credentials and curl commands for HOST and PORT', async () => {
    const result = await ordergate(['demo'], { env: { HOST: '0.0.0.0', PORT: '18123' } });
    expect(result.code, result.stderr).toBe(0);
    const snippet = result.stdout;
    expect(snippet).toContain("BASE='http://127.0.0.1:18123'");
    const token = /^TOKEN='(ogt_[^']+)'$/m.exec(snippet)?.[1];
    const apiKey = /^API_KEY='(ogk_[^']+)'$/m.exec(snippet)?.[1];
    expect(token).toBeDefined();
    expect(apiKey).toBeDefined();
    await inStore(async (store) => {
      const auth = authService(store);
      await expect(auth.authenticateWithApiKey(`Bearer ${token}`, apiKey)).resolves.toMatchObject({ userId: 'demo' });
    });
    for (const call of [
      '-X POST "$BASE/transactional/v1/orders/regular"',
      '-X POST "$BASE/transactional/v1/ordercart"',
      '-X PUT "$BASE/transactional/v1/ordercart"',
    ]) {
      expect(snippet).toContain(call);
    }
    const syntax = spawnSync('sh', ['-n'], { input: snippet, encoding: 'utf8' });
    expect(syntax.status, syntax.stderr).toBe(0);
  });

  it('fails with one line, writing nothing, when a user "demo" exists with another password', async () => {
    expect((await ordergate(['users', 'add', 'demo'])).code).toBe(0);
    const result = await ordergate(['demo', '--json']);
    expectOneLineFailure(result, /demo password/);
    await inStore(async (store) => {
      expect(await store.db.selectFrom('api_keys').selectAll().execute()).toEqual([]);
      expect(await store.db.selectFrom('ofs_issues').selectAll().execute()).toEqual([]);
    });
  });
});

describe('ordergate demo-offer', () => {
  interface DemoOfferUser {
    user_id: string;
    password: string;
    api_key: string;
    access_token: string;
    category: string;
  }
  async function demoOfferJson(
    args: string[] = [],
  ): Promise<{ users: DemoOfferUser[]; offer: Record<string, unknown> & { offer_id: string } }> {
    const result = await ordergate(['demo-offer', '--json', ...args]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]!);
  }
  const offerOf = (offerId: string) => inStore((store) => new OfsOfferRepository(store.db).find(offerId));

  it('--json prints the three demo users, whose credentials work, and the offer it registered on NSE and BSE', async () => {
    const before = Date.now();
    const demo = await demoOfferJson();
    const after = Date.now();
    expect(Object.keys(demo).sort()).toEqual(['offer', 'users']);
    expect(demo.users.map((u) => [u.user_id, u.category])).toEqual([
      ['demo', 'RETAIL'],
      ['demo-nii', 'NII'],
      ['demo-mf', 'MF'],
    ]);
    await inStore(async (store) => {
      const auth = authService(store);
      const users = new UserRepository(store.db, store.dialect);
      for (const user of demo.users) {
        expect(Object.keys(user).sort()).toEqual(['access_token', 'api_key', 'category', 'password', 'user_id']);
        expect(user.password).toBe('ordergate-demo');
        await expect(auth.authenticateWithApiKey(`Bearer ${user.access_token}`, user.api_key)).resolves.toMatchObject({
          userId: user.user_id,
        });
        await expect(
          auth.login({ user_id: user.user_id, password: user.password, api_key: user.api_key }),
        ).resolves.toMatchObject({ userId: user.user_id });
        expect(await users.find(user.user_id)).toMatchObject({
          offerCategory: user.category,
          marginType: 'H',
          operator: user.user_id === 'demo',
        });
        const account = await store.db
          .selectFrom('funds_accounts')
          .select('cash_paise')
          .where('user_id', '=', user.user_id)
          .executeTakeFirstOrThrow();
        expect(Number(account.cash_paise)).toBe(100_000_000);
      }
    });

    // The offer is in the import-file shape and is what the registry now holds; demo is an eligible employee.
    const [offer] = parseOfsImport([demo.offer]).offers;
    expect(offer).toMatchObject({
      offerId: 'DEMO-OFS',
      symbol: 'DEMOCO',
      baseQuantity: 10_000,
      greenShoeQuantity: 2_000,
      greenShoeExercised: 0,
      employeeQuantity: 500,
      allocation: 'PRICE_PRIORITY',
      settlementDelayMs: 60_000,
    });
    const stored = await offerOf('DEMO-OFS');
    expect(stored?.offer).toEqual(offer);
    // The demo offer has no order value upper limit on any series.
    const NONE = { RETAIL: null, NON_RETAIL: null, EMPLOYEE: null };
    expect(stored!.offer.listings).toEqual([
      {
        exchange: 'BSE_EQ',
        scripToken: 800101,
        series: { RETAIL: 'A', NON_RETAIL: 'A', EMPLOYEE: null },
        valueLimitsPaise: NONE,
      },
      {
        exchange: 'NSE_EQ',
        scripToken: 700101,
        series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
        valueLimitsPaise: NONE,
      },
    ]);
    expect(await inStore((store) => new OfsOfferRepository(store.db).employees('DEMO-OFS'))).toEqual(['demo']);
    // T opens at the minute and closes 120 s from now; T+1 opens 30 s later, for 120 s.
    const { tDay, t1Day } = stored!.offer;
    // The command's own "now" lies between before and after, which may be either side of a minute's start.
    expect(tDay.opensAt % 60_000).toBe(0);
    expect(tDay.opensAt).toBeGreaterThanOrEqual(Math.floor(before / 60_000) * 60_000);
    expect(tDay.opensAt).toBeLessThanOrEqual(Math.floor(after / 60_000) * 60_000);
    expect(tDay.closesAt).toBeGreaterThanOrEqual(before + 120_000);
    expect(tDay.closesAt).toBeLessThanOrEqual(after + 121_000);
    // Closes 120 s after the command's now (rounded up to a second), which is less than a minute after opensAt.
    expect(tDay.closesAt - tDay.opensAt).toBeGreaterThanOrEqual(120_000);
    expect(tDay.closesAt - tDay.opensAt).toBeLessThan(181_000);
    expect(t1Day.opensAt).toBe(tDay.closesAt + 30_000);
    expect(t1Day.closesAt).toBe(t1Day.opensAt + 120_000);
  });

  it('--day-seconds sets the length of both days; a value outside 30 to 86400 is a usage error', async () => {
    const before = Date.now();
    const { offer } = await demoOfferJson(['--day-seconds', '45']);
    const [parsed] = parseOfsImport([offer]).offers;
    expect(parsed!.tDay.closesAt).toBeGreaterThanOrEqual(before + 45_000);
    expect(parsed!.tDay.closesAt).toBeLessThanOrEqual(Date.now() + 46_000);
    expect(parsed!.t1Day.closesAt - parsed!.t1Day.opensAt).toBe(45_000);
    for (const bad of ['29', '86401', '1.5', 'soon']) {
      expectOneLineFailure(
        await ordergate(['demo-offer', '--day-seconds', bad]),
        /--day-seconds takes a whole number of seconds from 30 to 86400/,
      );
    }
  });

  it('re-registers DEMO-OFS until its T allocation has run, then registers DEMO-OFS-2 on listings of its own', async () => {
    const first = await demoOfferJson();
    const second = await demoOfferJson();
    expect(second.offer.offer_id).toBe('DEMO-OFS');
    expect(second.users.map((u) => u.api_key)).not.toEqual(first.users.map((u) => u.api_key));
    expect(await inStore((store) => new UserRepository(store.db, store.dialect).count())).toBe(3);
    // As the OMS does at T close.
    await inStore((store) =>
      store.db
        .updateTable('ofs_offers')
        .set({ t_allocated_at: Date.now(), t_cutoff_price_paise: 10_050 })
        .where('offer_id', '=', 'DEMO-OFS')
        .execute(),
    );
    const allocated = await offerOf('DEMO-OFS');

    const third = await ordergate(['demo-offer', '--json']);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/registered: offer DEMO-OFS-2 /);
    expect(JSON.parse(third.stdout).offer.offer_id).toBe('DEMO-OFS-2');
    const next = await offerOf('DEMO-OFS-2');
    expect(next!.offer.listings.map((l) => [l.exchange, l.scripToken])).toEqual([
      ['BSE_EQ', 800102],
      ['NSE_EQ', 700102],
    ]);
    expect(await inStore((store) => new OfsOfferRepository(store.db).employees('DEMO-OFS-2'))).toEqual(['demo']);
    expect(await offerOf('DEMO-OFS')).toEqual(allocated);
  });

  it("without --json prints a valid shell snippet with every user's credentials and the timed steps, the timeline on stderr", async () => {
    const result = await ordergate(['demo-offer'], { env: { HOST: '0.0.0.0', PORT: '18124' } });
    expect(result.code, result.stderr).toBe(0);
    const snippet = result.stdout;
    expect(snippet).toContain("BASE='http://127.0.0.1:18124'");
    await inStore(async (store) => {
      const auth = authService(store);
      for (const [userId, name] of [
        ['demo', 'DEMO'],
        ['demo-nii', 'DEMO_NII'],
        ['demo-mf', 'DEMO_MF'],
      ] as const) {
        const token = new RegExp(`^TOKEN_${name}='(ogt_[^']+)'$`, 'm').exec(snippet)?.[1];
        const apiKey = new RegExp(`^API_KEY_${name}='(ogk_[^']+)'$`, 'm').exec(snippet)?.[1];
        await expect(auth.authenticateWithApiKey(`Bearer ${token}`, apiKey)).resolves.toMatchObject({ userId });
      }
    });
    for (const call of [
      '-X POST "$BASE/transactional/v1/orders/regular"',
      '-X GET "$BASE/transactional/v1/ofs/offers/DEMO-OFS"',
      '-X POST "$BASE/transactional/v1/orders/regular/NSE_EQ/$NII_ORDER_ID/carry_forward"',
      '-X PUT "$BASE/transactional/v1/orders/regular/NSE_EQ/$NII_ORDER_ID"',
      '-X GET "$BASE/operator/v1/ofs/offers/DEMO-OFS/book"',
      '-X GET "$BASE/transactional/v1/portfolio/holdings"',
    ]) {
      expect(snippet).toContain(call);
    }
    // The steps in order, each at its instant.
    const steps = [...snippet.matchAll(/^# ---- at (\S+): (.*)$/gm)].map((m) => [Date.parse(m[1]!), m[2]]);
    expect(steps.map(([, what]) => what)).toEqual([
      expect.stringMatching(/^T is open until/),
      'T has closed and the T allocation has run',
      expect.stringMatching(/^T\+1 is open until/),
      'T+1 has closed and the T+1 allocation has run',
      'the allotments have settled',
    ]);
    expect(steps.map(([at]) => at)).toEqual([...steps.map(([at]) => at)].sort());
    expect(result.stderr).toMatch(/^T {3}opens \S+, closes \S+: non-retail bids/m);
    expect(result.stderr).toMatch(/^T\+1 opens \S+, closes \S+: retail, employee \(demo\) and carried-forward bids/m);
    const syntax = spawnSync('sh', ['-n'], { input: snippet, encoding: 'utf8' });
    expect(syntax.status, syntax.stderr).toBe(0);
  });

  it('shares the demo database with `ordergate demo`; a real user makes both refuse it, and disables every demo user', async () => {
    expect((await ordergate(['demo-offer', '--json'])).code).toBe(0);
    const demo = await ordergate(['demo', '--json']);
    expect(demo.code, demo.stderr).toBe(0);
    const added = await ordergate(['users', 'add', 'alice']);
    expect(added.code, added.stderr).toBe(0);
    for (const userId of ['demo', 'demo-nii', 'demo-mf'])
      expect(await tryLogin(userId, 'ordergate-demo')).toBe('refused e-212');
    expectOneLineFailure(
      await ordergate(['demo-offer']),
      /holds users that the demos did not create.*--allow-other-users/,
    );
    expectOneLineFailure(await ordergate(['demo']), /--allow-other-users/);
    // --allow-other-users enables them again, and demo is no operator there.
    const again = await ordergate(['demo-offer', '--json', '--allow-other-users']);
    expect(again.code, again.stderr).toBe(0);
    for (const userId of ['demo', 'demo-nii', 'demo-mf'])
      expect(await tryLogin(userId, 'ordergate-demo')).toMatch(/^ogt_/);
    expect((await inStore((store) => new UserRepository(store.db, store.dialect).find('demo')))?.operator).toBe(false);
  });

  it('fails with one line, writing no key and no offer, when a user "demo-nii" exists with another password', async () => {
    expect((await ordergate(['users', 'add', 'demo-nii', '--category', 'NII'])).code).toBe(0);
    expectOneLineFailure(await ordergate(['demo-offer', '--json']), /demo-nii cannot log in with the demo password/);
    await inStore(async (store) => {
      expect(await store.db.selectFrom('api_keys').selectAll().execute()).toEqual([]);
      expect(await store.db.selectFrom('ofs_offers').selectAll().execute()).toEqual([]);
    });
  });
});

describe('usage errors and settings', () => {
  it.each([
    [['frobnicate'], /^ordergate: unknown command 'frobnicate'/],
    [['users', 'add'], /^ordergate: missing required argument 'user_id'/],
    [['apikeys', 'create', 'a', 'b'], /^ordergate: too many arguments/],
    [['demo', '--jsn'], /^ordergate: unknown option '--jsn'/],
  ])('ordergate %j exits 1 with one line', async (args, reason) => {
    expectOneLineFailure(await ordergate(args), reason);
  });

  it('without a command prints the commands and fails', async () => {
    const result = await ordergate([]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    for (const command of ['demo', 'users', 'apikeys', 'ofs', 'serve']) expect(result.stderr).toContain(`  ${command}`);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(/^ordergate: missing command/);
  });

  it('a bad DATABASE_URL fails with one line naming it', async () => {
    expectOneLineFailure(
      await ordergate(['users', 'add', 'alice'], { env: { DATABASE_URL: 'mysql://db/x' } }),
      /^ordergate: DATABASE_URL must start with/,
    );
  });

  // With REDIS_URL too: the Redis client the app opened must not keep the failed command alive.
  it.each<Record<string, string>>([{}, { REDIS_URL: process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379' }])(
    'serve on a port already in use exits 1 with one line (%o)',
    async (extra) => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      try {
        const port = String((blocker.address() as AddressInfo).port);
        const result = await ordergate(['serve'], {
          env: { HOST: '127.0.0.1', PORT: port, LOG_LEVEL: 'silent', ...extra },
        });
        expectOneLineFailure(result, /^ordergate: cannot start: .*EADDRINUSE/);
      } finally {
        blocker.close();
      }
    },
  );

  it('--help goes to stdout and exits 0', async () => {
    const result = await ordergate(['apikeys', 'create', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('alone on the last line');
  });
});
