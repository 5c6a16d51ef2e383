/**
 * Sums of shares past 2^53 are exact on the wire (issue 47 row 3): the probe saw 11000000000000032 for a
 * book of 11,000,000,000,000,031 shares. Through the real server on both databases: the store sums them
 * exactly (store/sql/exact-sum.ts), the domain in bigint, and the answer carries every digit as a JSON integer.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exactJson } from '../../src/http/exact-json.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker } from '../../src/wiring.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const MAX = '999999999999999';
const TOKEN = 500999;
/** Day T of the offer opens at 09:15 India time. */
const T = Date.parse('2026-12-01T03:45:00Z');

describe('exact sums of shares', () => {
  let server: TestServer;
  let nora: TestUser;
  let olga: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ now: T + 10 * 60 * 1000 });
    // An issue as large as a bid may be, so that eleven maximum bids and one of 42 are all taken.
    await server.registerIssue({ scripToken: TOKEN, symbol: 'HUGE', offerQuantity: Number(MAX) });
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });
    olga = await server.createUser('olga', { category: 'NON_RETAIL' });
    await new UserRepository(server.store.db, server.store.dialect).setOperator('olga', server.clock.now);
  });
  afterAll(() => server.close());

  const bid = async (quantity: string) => {
    const body = validBid({
      scrip_info: { exchange: 'NSE_EQ', scrip_token: TOKEN, symbol: 'HUGE', series: 'OF' },
      quantity,
      price: 101.5,
    });
    const res = await server.call('POST', '/transactional/v1/orders/regular', {
      body,
      token: nora.token,
      apiKey: nora.apiKey,
    });
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

  it("an offer's indicative figures and book: the exchange publishes 11,000,000,000,000,031 shares, and the read calls say so", async () => {
    await server.admin.importOfs([
      offerImport(
        {
          offer_id: 'HUGE-OFS',
          symbol: 'HUGEO',
          listings: [
            { exchange: 'NSE_EQ', scrip_token: 700999, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } },
          ],
          base_quantity: Number(MAX),
          green_shoe_quantity: 0,
          employee_quantity: 0,
        },
        T,
      ),
    ]);
    const onOffer = async (quantity: string) => {
      const body = validBid({
        scrip_info: { exchange: 'NSE_EQ', scrip_token: 700999, symbol: 'HUGEO', series: 'IS' },
        quantity,
        price: 101,
      });
      const res = await server.call('POST', '/transactional/v1/orders/regular', {
        body,
        token: nora.token,
        apiKey: nora.apiKey,
      });
      expect(res.status, res.text).toBe(200);
    };
    for (let i = 0; i < 11; i++) await onOffer(MAX);
    await onOffer('42');
    const oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    await oms.runOnce();
    await oms.runOnce();
    const read = await server.call('GET', '/transactional/v1/ofs/offers/HUGE-OFS', { token: nora.token });
    expect(read.status, read.text).toBe(200);
    expect(read.text).toMatch(
      /"indicative":\{"at":"[^"]+","price":101,"quantity":11000000000000031,"margin_100":\{"price":101,"quantity":11000000000000031\}/,
    );
    expect(read.text).toMatch(/"indicative_history":\[\{"at":"[^"]+","price":101,"quantity":11000000000000031\}\]/);
    const book = await server.call('GET', '/operator/v1/ofs/offers/HUGE-OFS/book', { token: olga.token });
    expect(book.status, book.text).toBe(200);
    expect(book.text).toContain(
      '"non_retail_demand":[{"price":101,"quantity":11000000000000031,"cumulative":11000000000000031,"bids":12}]',
    );
    expect(book.text).toMatch(/"category":"NII","bids":12,"open_quantity":11000000000000031,/);
  });

  it('the event stream writes a bigint with every digit too', () => {
    expect(
      exactJson({ quantity: 11_000_000_000_000_031n, margin_0: { quantity: 0n }, price: 101, note: 'bigint:1' }),
    ).toBe('{"quantity":11000000000000031,"margin_0":{"quantity":0},"price":101,"note":"bigint:1"}');
  });
});
