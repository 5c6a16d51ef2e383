/**
 * The retail Rs 2,00,000 limit counts per PAN, across accounts and exchanges (issue 49 row 5;
 * docs/design/member-data.md), through the real server on both databases: two users under one PAN share
 * one limit, in an issue (its NSE and BSE listings: the totals of its symbol) and in an offer (its NSE and
 * BSE listings: the offer's bids); a user under another PAN, or without one, counts alone; and bids of two
 * accounts under one PAN sent at once, to one node or to two, never take the PAN past the limit.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import type { OfsExchange } from '../../src/domain/ofs/issue/issue.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import { createPostgresDatabase, testDialect, type TestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const LIMIT_PAISE = 20_000_000;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
/** The offer's T opens at 09:15 India time on 1 December; the tests bid on T+1, after the T allocation. */
const T = Date.parse('2026-12-01T03:45:00Z');
const NOW = T + DAY + 10 * MINUTE;
/** The issue's floor and retail cut-off, and the offer's T-day cut-off: Rs 100.00. */
const CUTOFF_PAISE = 10_000;

interface Scrip {
  exchange: OfsExchange;
  scrip_token: number;
  symbol: string;
  series: string;
}

/** One issue of PANCO, listed on NSE and on BSE. */
const NSE: Scrip = { exchange: 'NSE_EQ', scrip_token: 810001, symbol: 'PANCO', series: 'OF' };
const BSE: Scrip = { exchange: 'BSE_EQ', scrip_token: 810002, symbol: 'PANCO', series: 'OF' };
/** The offer ACME-OFS-1's retail series on its two listings. */
const OFFER_NSE: Scrip = { exchange: 'NSE_EQ', scrip_token: 700001, symbol: 'ACME', series: 'RS' };
const OFFER_BSE: Scrip = { exchange: 'BSE_EQ', scrip_token: 800001, symbol: 'ACME', series: 'A' };

/** A member's data with the PAN given (a person's) and a UCC of the user's own. */
const under = (pan: string, ucc: string) => ({ member: { ucc, pan, clientType: 'CLI' } });

async function registerIssues(server: TestServer): Promise<void> {
  for (const scrip of [NSE, BSE])
    await server.registerIssue({
      exchange: scrip.exchange,
      scripToken: scrip.scrip_token,
      symbol: scrip.symbol,
      floorPricePaise: CUTOFF_PAISE,
      retailCutoffPricePaise: CUTOFF_PAISE,
    });
}

function expectLimitRefusal(res: CallResult, message?: RegExp): void {
  expect(res.status, res.text).toBe(422);
  expect(res.body.code, res.text).toBe(Errors.OFS_RETAIL_LIMIT.code);
  if (message !== undefined) expect(res.body.message).toMatch(message);
}

function expectPlaced(res: CallResult): string {
  expect(res.status, res.text).toBe(200);
  return res.body.data.orderId as string;
}

describe('the retail limit counts per PAN', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ now: NOW });
    await registerIssues(server);
    await server.admin.importOfs([offerImport({}, T)]);
    // The T allocation has run and found a T-day cut-off of Rs 100.00: T+1 takes retail bids.
    await sql`update ofs_offers set t_allocated_at = ${T + 400 * MINUTE}, t_cutoff_price_paise = ${CUTOFF_PAISE}
      where offer_id = 'ACME-OFS-1'`.execute(server.store.db);
  });
  afterAll(() => server.close());

  const place = (user: TestUser, scrip: Scrip, quantity: number, cutOff = false): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, {
      body: validBid({
        scrip_info: { ...scrip, expiry_date: '', strike_price: '', option_type: '' },
        quantity: String(quantity),
        ...(cutOff ? { order_type: 'RL-MKT', price: 0 } : { price: CUTOFF_PAISE / 100 }),
      }),
      token: user.token,
      apiKey: user.apiKey,
    });
  const modify = (user: TestUser, scrip: Scrip, orderId: string, quantity: number): Promise<CallResult> =>
    server.call('PUT', `${PLACE_ORDER}/${scrip.exchange}/${orderId}`, {
      body: { order_type: 'RL', quantity: String(quantity), price: CUTOFF_PAISE / 100 },
      token: user.token,
      apiKey: user.apiKey,
    });

  it("an issue: two accounts under one PAN share Rs 2,00,000 on its NSE and BSE listings; another PAN's account does not", async () => {
    const ana1 = await server.createUser('ana1', under('ANAPK1234A', 'ANA1'));
    const ana2 = await server.createUser('ana2', under('ANAPK1234A', 'ANA2'));
    const bob = await server.createUser('bob', under('BOBPK1234B', 'BOB'));
    const first = expectPlaced(await place(ana1, NSE, 1_000)); // Rs 1,00,000
    const onBse = expectPlaced(await place(ana2, BSE, 500)); // Rs 50,000
    expectPlaced(await place(ana2, NSE, 400)); // Rs 40,000: Rs 1,90,000 under the PAN
    expectLimitRefusal(
      await place(ana2, NSE, 101, true),
      /^The live retail bids under your PAN in PANCO, yours and your other accounts', total Rs 1,90,000\.00; with this bid they would total Rs 2,00,100\.00, over the retail limit of Rs 2,00,000\.00\. At the cut-off price 100\.00 you may bid for at most 100 shares/,
    );
    // Another PAN's account has its own limit: the whole of it is taken.
    expectPlaced(await place(bob, NSE, 2_000));
    // A modification counts the other account's bids too, in place of the bid it replaces (and of no other).
    expectLimitRefusal(
      await modify(ana1, NSE, first, 1_101),
      /yours and your other accounts', total Rs 90,000\.00; with this bid they would total Rs 2,00,100\.00/,
    );
    expect((await modify(ana1, NSE, first, 1_100)).status).toBe(200); // Rs 2,00,000: at the limit is within it
    expectLimitRefusal(await place(ana1, BSE, 1), /under your PAN in PANCO/);
    // The other account's bid ends (cancelled by the OMS): its Rs 50,000 are free again, for either account.
    await server.setOrderStatus(onBse, OrderStatus.CANCELLED);
    expectPlaced(await place(ana1, BSE, 500));
    expectLimitRefusal(await place(ana2, BSE, 1));
  });

  it('a user without a PAN counts alone, as before PANs were kept; and its refusal says "your" bids', async () => {
    const solo1 = await server.createUser('solo1', under('SOLPK1111S', 'SOLO1'));
    const solo2 = await server.createUser('solo2', under('SOLPK2222S', 'SOLO2'));
    const bid1 = expectPlaced(await place(solo1, NSE, 1_500));
    expectPlaced(await place(solo2, BSE, 1_500));
    // Their bids stay; their PANs are no longer recorded (users from before migration 0024, say).
    await sql`update users set pan = null where user_id in ('solo1', 'solo2')`.execute(server.store.db);
    // Rs 1,90,000 alone is within the limit (the bid is then refused for its missing PAN, e-385), where the
    // two users' Rs 3,40,000 together would not be: two users without a PAN do not share one.
    const within = await modify(solo1, NSE, bid1, 1_900);
    expect(within.status, within.text).toBe(422);
    expect(within.body.code, within.text).toBe(Errors.MEMBER_DATA_MISSING.code);
    expectLimitRefusal(
      await modify(solo1, NSE, bid1, 2_001),
      /^Your live retail bids in PANCO total Rs 0\.00; with this bid they would total Rs 2,00,100\.00/,
    );
  });

  it("an offer: two accounts under one PAN share Rs 2,00,000 on the offer's NSE and BSE listings", async () => {
    const cy1 = await server.createUser('cy1', under('CYRPK1234C', 'CY1'));
    const cy2 = await server.createUser('cy2', under('CYRPK1234C', 'CY2'));
    const dee = await server.createUser('dee', under('DEEPK1234D', 'DEE'));
    expectPlaced(await place(cy1, OFFER_NSE, 1_200)); // Rs 1,20,000
    expectLimitRefusal(
      await place(cy2, OFFER_BSE, 801),
      /^The live retail bids under your PAN in the offer of ACME, yours and your other accounts', total Rs 1,20,000\.00; with this bid they would total Rs 2,00,100\.00, over the retail limit of Rs 2,00,000\.00\. At 100\.00 you may bid for at most 800 shares/,
    );
    expectPlaced(await place(cy2, OFFER_BSE, 300, true)); // at the T-day cut-off: Rs 30,000
    expectPlaced(await place(cy2, OFFER_NSE, 500)); // Rs 2,00,000 under the PAN
    expectLimitRefusal(await place(cy1, OFFER_BSE, 1), /under your PAN in the offer of ACME/);
    expectPlaced(await place(dee, OFFER_BSE, 2_000));
  });

  it('bids of two accounts under one PAN sent at once: the PAN never passes the limit', async () => {
    const users = [
      await server.createUser('eve1', under('EVEPK1234E', 'EVE1')),
      await server.createUser('eve2', under('EVEPK1234E', 'EVE2')),
    ];
    // 40 bids of Rs 10,000, alternating the accounts and the exchanges: exactly 20 fit.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => place(users[i % 2]!, i % 4 < 2 ? NSE : BSE, 100, i % 3 === 0)),
    );
    for (const res of answers) if (res.status !== 200) expectLimitRefusal(res);
    expect(answers.filter((res) => res.status === 200)).toHaveLength(20);
    expect(await liveValue(server, ['eve1', 'eve2'])).toBe(LIMIT_PAISE);
  });
});

/** What the users' live bids in PANCO are worth (every bid of these tests is at Rs 100.00 or the cut-off, 100.00). */
async function liveValue(server: TestServer, userIds: string[]): Promise<number> {
  const rows = await server.store.db
    .selectFrom('orders')
    .select(['quantity'])
    .where('user_id', 'in', userIds)
    .where('status', 'in', ['OMSXMITTED', 'EXXMITTED', 'PENDING'])
    .execute();
  return rows.reduce((sum, row) => sum + Number(row.quantity) * CUTOFF_PAISE, 0);
}

/**
 * Two nodes on one PostgreSQL database (the PostgreSQL run of the suite): the bids of two accounts under
 * one PAN, each account's on its own node, run in transactions side by side that share no user: only the
 * PAN's lock keeps their limit.
 */
describe.runIf(testDialect() === 'postgres')('the retail limit per PAN across two nodes', () => {
  let database: TestDatabase;
  let nodes: TestServer[] = [];

  beforeAll(async () => {
    database = await createPostgresDatabase('ordergate_pan_limit');
    const first = await startTestServer({ databaseUrl: database.databaseUrl, now: NOW });
    nodes = [first, await startTestServer({ databaseUrl: database.databaseUrl, now: NOW })];
    await registerIssues(first);
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database.dispose();
  });

  it('60 bids of Rs 10,000 of two accounts under one PAN, each on its own node, sent at once: exactly 20 are accepted', async () => {
    const users = [
      await nodes[0]!.createUser('fay1', under('FAYPK1234F', 'FAY1')),
      await nodes[0]!.createUser('fay2', under('FAYPK1234F', 'FAY2')),
    ];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        nodes[i % 2]!.call('POST', PLACE_ORDER, {
          body: validBid({
            scrip_info: { ...(i % 3 === 0 ? BSE : NSE), expiry_date: '', strike_price: '', option_type: '' },
            quantity: '100',
            price: CUTOFF_PAISE / 100,
          }),
          token: users[i % 2]!.token,
          apiKey: users[i % 2]!.apiKey,
        }),
      ),
    );
    for (const res of answers) if (res.status !== 200) expectLimitRefusal(res);
    expect(answers.filter((res) => res.status === 200)).toHaveLength(20);
    expect(await liveValue(nodes[1]!, ['fay1', 'fay2'])).toBe(LIMIT_PAISE);
  });
});
