/**
 * The retail limit under concurrent requests (issue 3: "two bids that each fit but together do not can
 * never both be accepted"): many bids of one retail user, sent at once over HTTP, each of which fits alone.
 * The accepted ones never total more than Rs 2,00,000, every bid is answered, and a bid is refused only
 * if it really did not fit.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { createPostgresDatabase, testDialect, type TestDatabase } from '../support/databases.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const LIMIT_PAISE = 20_000_000;

const NSE = { exchange: 'NSE_EQ', scrip_token: 800001, symbol: 'CONC', series: 'OF' };
const BSE = { exchange: 'BSE_EQ', scrip_token: 800002, symbol: 'CONC', series: 'OF' };
/** Retail cut-off Rs 100.00 on both exchanges. */
const CUTOFF_PAISE = 10_000;

interface SentBid {
  body: Record<string, unknown>;
  valuePaise: number;
}

function bid(onBse: boolean, quantity: number, pricePaise: number | null): SentBid {
  const scrip_info = { ...(onBse ? BSE : NSE) };
  const body =
    pricePaise === null
      ? validBid({ scrip_info, quantity: String(quantity), order_type: 'RL-MKT', price: 0 })
      : validBid({ scrip_info, quantity: String(quantity), price: pricePaise / 100 });
  return { body, valuePaise: quantity * (pricePaise ?? CUTOFF_PAISE) };
}

describe('the retail limit under concurrent bids of one user', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue({
      scripToken: NSE.scrip_token,
      symbol: 'CONC',
      floorPricePaise: CUTOFF_PAISE,
      retailCutoffPricePaise: CUTOFF_PAISE,
    });
    await server.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: BSE.scrip_token,
      symbol: 'CONC',
      floorPricePaise: CUTOFF_PAISE,
      retailCutoffPricePaise: CUTOFF_PAISE,
    });
  });
  afterAll(() => server.close());

  const place = (user: TestUser, body: unknown): Promise<CallResult> =>
    server.call('POST', PLACE_ORDER, { body, token: user.token, apiKey: user.apiKey });

  async function liveValue(userId: string): Promise<number> {
    const rows = await server.store.db
      .selectFrom('orders')
      .select(['order_type', 'quantity', 'price_paise'])
      .where('user_id', '=', userId)
      .where('status', 'in', ['OMSXMITTED', 'EXXMITTED', 'PENDING'])
      .execute();
    return rows.reduce(
      (sum, row) => sum + Number(row.quantity) * (row.order_type === 'RL-MKT' ? CUTOFF_PAISE : Number(row.price_paise)),
      0,
    );
  }

  /** Sends all bids at once and checks the promise; answers the accepted total. */
  async function sendAtOnce(user: TestUser, bids: SentBid[]): Promise<{ accepted: SentBid[]; refused: SentBid[] }> {
    const answers = await Promise.all(bids.map((b) => place(user, b.body)));
    const accepted: SentBid[] = [];
    const refused: SentBid[] = [];
    answers.forEach((res, i) => {
      if (res.status === 200) accepted.push(bids[i]!);
      else {
        expect(res.status, res.text).toBe(422);
        expect(res.body.code, res.text).toBe(Errors.OFS_RETAIL_LIMIT.code);
        refused.push(bids[i]!);
      }
    });
    expect(accepted.length + refused.length).toBe(bids.length);
    const acceptedTotal = accepted.reduce((sum, b) => sum + b.valuePaise, 0);
    expect(acceptedTotal).toBeLessThanOrEqual(LIMIT_PAISE);
    // What is stored is exactly what was acknowledged.
    expect(await liveValue(user.userId)).toBe(acceptedTotal);
    // A refusal is never spurious: the total only grows, so a bid refused then still does not fit now.
    for (const b of refused) expect(acceptedTotal + b.valuePaise).toBeGreaterThan(LIMIT_PAISE);
    return { accepted, refused };
  }

  it('60 bids of Rs 10,000 each, on NSE and BSE, at a price and at cut-off: exactly 20 are accepted, 40 refused', async () => {
    const user = await server.createUser('conc1');
    const bids = Array.from({ length: 60 }, (_, i) => bid(i % 2 === 1, 100, i % 3 === 0 ? null : CUTOFF_PAISE));
    const { accepted, refused } = await sendAtOnce(user, bids);
    expect(accepted).toHaveLength(20);
    expect(refused).toHaveLength(40);
  });

  it('two bids that each fit but together do not: exactly one is accepted', async () => {
    const user = await server.createUser('conc2');
    const { accepted } = await sendAtOnce(user, [bid(false, 1500, CUTOFF_PAISE), bid(true, 1500, null)]);
    expect(accepted).toHaveLength(1);
  });

  it('property: any burst of bids that each fit alone never takes the user past the limit', async () => {
    const sentBid = fc
      .record({
        onBse: fc.boolean(),
        cutOff: fc.boolean(),
        quantity: fc.integer({ min: 1, max: 2000 }),
        ticksAboveCutoff: fc.integer({ min: 0, max: 2000 }),
      })
      .map(({ onBse, cutOff, quantity, ticksAboveCutoff }) =>
        bid(onBse, quantity, cutOff ? null : CUTOFF_PAISE + 5 * ticksAboveCutoff),
      )
      .filter((b) => b.valuePaise <= LIMIT_PAISE);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(sentBid, { minLength: 2, maxLength: 40 }), async (bids) => {
        const user = await server.createUser(`burst${run++}`);
        await sendAtOnce(user, bids);
      }),
      { numRuns: 15 },
    );
  });
});

/**
 * Several nodes on one PostgreSQL database (product.md "Several nodes"), in the PostgreSQL run of the
 * suite (vitest project "postgres"): two servers, each with its own connection pool and group
 * committer, take bids at once. Their transactions would run side by side: only order entry's lock keeps
 * the limit, and it must not deadlock the nodes' group-commit transactions, each of which writes the bids
 * of several users.
 */
describe.runIf(testDialect() === 'postgres')('the retail limit across two nodes on one PostgreSQL database', () => {
  let database: TestDatabase;
  let nodes: TestServer[] = [];

  beforeAll(async () => {
    database = await createPostgresDatabase('ordergate_pretrade');
    const now = Date.now();
    const first = await startTestServer({ databaseUrl: database.databaseUrl, now });
    nodes = [first, await startTestServer({ databaseUrl: database.databaseUrl, now })];
    await first.registerIssue({
      scripToken: NSE.scrip_token,
      symbol: 'CONC',
      floorPricePaise: CUTOFF_PAISE,
      retailCutoffPricePaise: CUTOFF_PAISE,
    });
    await first.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: BSE.scrip_token,
      symbol: 'CONC',
      floorPricePaise: CUTOFF_PAISE,
      retailCutoffPricePaise: CUTOFF_PAISE,
    });
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database.dispose();
  });

  it('60 bids of Rs 10,000 each, sent at once to two nodes: exactly 20 are accepted, and they total Rs 2,00,000', async () => {
    const user = await nodes[0]!.createUser('multinode');
    const bids = Array.from({ length: 60 }, (_, i) => bid(i % 2 === 1, 100, i % 3 === 0 ? null : CUTOFF_PAISE));
    const answers = await Promise.all(
      bids.map((b, i) =>
        nodes[i % 2]!.call('POST', PLACE_ORDER, { body: b.body, token: user.token, apiKey: user.apiKey }),
      ),
    );
    for (const res of answers) {
      if (res.status !== 200) expect(res.body.code, res.text).toBe(Errors.OFS_RETAIL_LIMIT.code);
    }
    const accepted = answers.filter((res) => res.status === 200);
    expect(accepted).toHaveLength(20);
    const stored = await nodes[1]!.store.db
      .selectFrom('orders')
      .select(['quantity'])
      .where('user_id', '=', 'multinode')
      .execute();
    expect(stored.reduce((sum, row) => sum + Number(row.quantity) * CUTOFF_PAISE, 0)).toBe(LIMIT_PAISE);
  });

  it("many users bidding at once on both nodes are all served: the nodes' order-entry transactions never deadlock", async () => {
    const users: TestUser[] = [];
    for (let i = 0; i < 12; i++) users.push(await nodes[0]!.createUser(`crowd${i}`));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, round) =>
        users.map((user, i) =>
          nodes[(round + i) % 2]!.call('POST', PLACE_ORDER, {
            body: bid(round % 2 === 0, 1, CUTOFF_PAISE).body,
            token: user.token,
            apiKey: user.apiKey,
          }),
        ),
      ).flat(),
    );
    for (const res of answers) expect(res.status, res.text).toBe(200);
    expect(answers).toHaveLength(240);
  });
});
