/**
 * Sums of shares past 2^53 are exact on the wire (issue 47 row 3): the probe saw 11000000000000032 for a
 * book of 11,000,000,000,000,031 shares. Through the real server on both databases: the store sums them
 * exactly (store/exact-sum.ts), the domain in bigint, and the answer carries every digit as a JSON integer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserRepository } from '../../src/store/users.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const MAX = '999999999999999';
const TOKEN = 500999;

describe('exact sums of shares', () => {
  let server: TestServer;
  let nora: TestUser;
  let olga: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    // An issue as large as a bid may be, so that eleven maximum bids and one of 42 are all taken.
    await server.registerIssue({ scripToken: TOKEN, symbol: 'HUGE', offerQuantity: Number(MAX) });
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    olga = await server.createUser('olga', { category: 'NON_RETAIL' });
    await new UserRepository(server.store.db, server.store.dialect).setOperator('olga', server.clock.now);
  });
  afterAll(() => server.close());

  const bid = async (quantity: string) => {
    const body = validBid({ scrip_info: { exchange: 'NSE_EQ', scrip_token: TOKEN, symbol: 'HUGE', series: 'OF' }, quantity, price: 101.5 });
    const res = await server.call('POST', '/transactional/v1/orders/regular', { body, token: nora.token, apiKey: nora.apiKey });
    expect(res.status, res.text).toBe(200);
  };

  it("an issue's book: 11 bids of 999,999,999,999,999 and one of 42 are 11,000,000,000,000,031 shares, to the last digit", async () => {
    for (let i = 0; i < 11; i++) await bid(MAX);
    await bid('42');
    const res = await server.call('GET', `/operator/v1/ofs/NSE_EQ/${TOKEN}/book`, { token: olga.token });
    expect(res.status, res.text).toBe(200);
    // The JSON text itself: a JavaScript JSON.parse would round it, which is the client's to avoid.
    expect(res.text).toContain('"non_retail_quantity":11000000000000031');
    expect(res.text).toContain('"non_retail_cumulative":11000000000000031');
    expect(res.text).toMatch(/"non_retail":\{"portion":\d+,"demand":11000000000000031,/);
    expect(res.text).not.toContain('11000000000000032');
  });
});
