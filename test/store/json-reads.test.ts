/**
 * Two per-bid reads that SQLite answers as one JSON array per row (`json_array`, parsed by the store): the
 * credentials of a request (src/store/access/users.ts, CREDENTIALS) and the retail totals order entry judges
 * against (src/store/orders/orders.ts, EXPOSURES). They must answer what the columns hold, set or null, on both
 * dialects (PostgreSQL reads the columns): the largest exact whole number, text JSON must escape, and nulls.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OrderRepository } from '../../src/store/orders/orders.js';
import { UserRepository } from '../../src/store/access/users.js';
import { OmsBench } from '../oms/fixture.js';
import { testMemberData } from '../support/member-data.js';

const LARGEST = 9_007_199_254_740_991;
let bench: OmsBench;
let users: UserRepository;

beforeAll(async () => {
  bench = await OmsBench.open();
  users = new UserRepository(bench.store.db, bench.store.dialect);
});
afterAll(async () => {
  await bench.close();
});

it("reads a session with its key's owner and addresses, a revoked or disabled one's instant, and no key", async () => {
  await users.createSession({ tokenHash: 'token-a', userId: 'retail1', now: 1, expiresAt: LARGEST });
  await users.addApiKey({
    keyId: 'key-a',
    userId: 'retail1',
    keyHash: 'key-hash-a',
    now: 1,
    addresses: ['10.0.0.1', '2001:db8::1'],
  });
  await users.createSession({ tokenHash: 'token-b', userId: 'inst1', now: 1, expiresAt: 5 });
  await sql`update sessions set revoked_at = ${LARGEST - 1} where token_hash = 'token-b'`.execute(bench.store.db);
  await users.createSession({ tokenHash: 'token-c', userId: 'inst2', now: 1, expiresAt: 7 });
  await users.setDisabled('inst2', 42);

  // Looked up together (one query, as requests arriving together are), a key that exists beside one that does not.
  const [a, b, c, none] = await Promise.all([
    users.findSessionAndKeyOwner('token-a', 'key-hash-a'),
    users.findSessionAndKeyOwner('token-b', 'no-such-key'),
    users.findSession('token-c'),
    users.findSessionAndKeyOwner('no-such-token', 'key-hash-a'),
  ]);
  expect(a).toEqual({
    userId: 'retail1',
    category: 'RETAIL',
    // The user's member data comes with the session (the OMS bench gives each user testMemberData's).
    member: { ...testMemberData('retail1'), category: 'RETAIL' },
    expiresAt: LARGEST,
    revokedAt: null,
    apiKeyOwner: 'retail1',
    apiKeyAddresses: ['10.0.0.1', '2001:db8::1'],
  });
  expect(b).toMatchObject({
    userId: 'inst1',
    category: 'NON_RETAIL',
    member: { ...testMemberData('inst1'), category: 'NII' },
    expiresAt: 5,
    revokedAt: LARGEST - 1,
    apiKeyOwner: null,
    apiKeyAddresses: [],
  });
  expect(c).toMatchObject({ userId: 'inst2', revokedAt: 42 });
  expect(none).toBeUndefined();
});

it("reads each retail total with its issue's prices, a cut-off price set or null", async () => {
  const quoted = 'a "quoted" \\ symbol ₹';
  await bench.registerIssue({ exchange: 'BSE_EQ', scripToken: 500_113, symbol: quoted, retailCutoffPricePaise: null });
  await sql`insert into retail_exposure (user_id, symbol, exchange, scrip_token, price_value_paise, cutoff_quantity)
    values ('retail2', 'SBIN', 'NSE_EQ', 500112, ${LARGEST}, 3), ('retail2', ${quoted}, 'BSE_EQ', 500113, 0, 0)`.execute(
    bench.store.db,
  );
  const issue = await sql<{ retail_cutoff_price_paise: number | null; floor_price_paise: number }>`
    select retail_cutoff_price_paise, floor_price_paise from ofs_issues where exchange = 'NSE_EQ' and scrip_token = 500112`.execute(
    bench.store.db,
  );
  const repository = new OrderRepository(bench.store.db, bench.store.dialect);
  const totals = await bench.store.writeTransaction((tx) => repository.exposures(tx, ['retail2', 'retail2', 'nobody']));
  const sorted = [...totals].sort((x, y) => x.exchange.localeCompare(y.exchange));
  expect(sorted).toEqual([
    {
      userId: 'retail2',
      pan: testMemberData('retail2').pan,
      symbol: quoted,
      exchange: 'BSE_EQ',
      scripToken: 500_113,
      priceValuePaise: 0,
      cutoffQuantity: 0,
      retailCutoffPricePaise: null,
      floorPricePaise: expect.any(Number),
    },
    {
      userId: 'retail2',
      pan: testMemberData('retail2').pan,
      symbol: 'SBIN',
      exchange: 'NSE_EQ',
      scripToken: 500_112,
      priceValuePaise: LARGEST,
      cutoffQuantity: 3,
      retailCutoffPricePaise:
        issue.rows[0]!.retail_cutoff_price_paise === null ? null : Number(issue.rows[0]!.retail_cutoff_price_paise),
      floorPricePaise: Number(issue.rows[0]!.floor_price_paise),
    },
  ]);
});
