/**
 * The member data a bid needs (issue 49 row 5, docs/design/member-data.md), through a real server on the
 * run's database: a bid whose client has no UCC or PAN recorded, or an MF/IC/OTHS or 0 %-margin bid whose
 * client has no custodian code, answers 422 e-385 naming the fields, before the OMS (no order is written);
 * a modification and a carry-forward are judged again, a cancellation never; recorded, the next bid passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerImport } from '../support/offers.js';
import { testMemberData } from '../support/member-data.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE = '/transactional/v1/orders/regular';
const MINUTE = 60 * 1000;
const T = Date.parse('2026-12-01T03:45:00Z');
const NSE_IS = {
  exchange: 'NSE_EQ',
  scrip_token: 700001,
  symbol: 'ACME',
  series: 'IS',
  expiry_date: '',
  strike_price: '',
  option_type: '',
};

function expectMissing(res: CallResult, fields: string[]): void {
  expect(res.status, res.text).toBe(422);
  expect(res.body.code, res.text).toBe('e-385');
  expect(res.body.message).toContain(`needs your ${fields.join(', ')} for this bid`);
  expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
}

describe('the member data a bid needs (e-385)', () => {
  let server: TestServer;
  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });
  const orderCount = async (userId: string) =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    server = await startTestServer({ now: T + 10 * MINUTE });
    await server.admin.importOfs([offerImport({}, T)]);
    await server.registerIssue();
  });
  afterAll(() => server.close());

  it('refuses a bid in an issue from a user with no UCC and PAN, writes nothing, and takes it once they are recorded', async () => {
    const bare = await server.createUser('bare', { member: null });
    expectMissing(await server.call('POST', PLACE, { body: validBid(), ...as(bare) }), ['ucc', 'pan']);
    expect(await orderCount('bare')).toBe(0);

    await server.admin.setMemberData('bare', { ucc: 'bare01' });
    expectMissing(await server.call('POST', PLACE, { body: validBid(), ...as(bare) }), ['pan']);
    await server.admin.setMemberData('bare', { pan: 'abcpe1234f' });
    // Recorded by the operator: the next call reads it, no new login needed.
    const placed = await server.call('POST', PLACE, { body: validBid(), ...as(bare) });
    expect(placed.status, placed.text).toBe(200);
    expect(await orderCount('bare')).toBe(1);
  });

  it("refuses an MF's bid in an offer without a custodian code, and a 0 %-margin bid too; an NII needs none", async () => {
    const mf = await server.createUser('mf1', {
      category: 'MF',
      member: { ...testMemberData('mf1'), custodianCode: null },
    });
    const nii = await server.createUser('nii1', {
      category: 'NII',
      member: { ...testMemberData('nii1'), custodianCode: null },
    });
    const body = validBid({ scrip_info: NSE_IS, quantity: '100', price: 101 });
    const refused = await server.call('POST', PLACE, { body, ...as(mf) });
    expectMissing(refused, ['custodian_code']);
    expect(refused.body.message).toContain('a MF bid needs a custodian code');
    expect((await server.call('POST', PLACE, { body, ...as(nii) })).status).toBe(200);

    await server.admin.setMemberData('mf1', { custodianCode: 'CUST01' });
    expect((await server.call('POST', PLACE, { body, ...as(mf) })).status).toBe(200);

    const ic = await server.createUser('ic1', {
      category: 'IC',
      marginType: 'T',
      member: { ...testMemberData('ic1'), custodianCode: null },
    });
    await server.admin.setZeroMarginLimit('ic1', '100000000');
    const zero = await server.call('POST', PLACE, { body, ...as(ic) });
    expectMissing(zero, ['custodian_code']);
    expect(zero.body.message).toContain('a 0 %-margin bid needs a custodian code');
  });

  it("refuses an MF's bid in an issue without a custodian code (by the user's category)", async () => {
    const mf = await server.createUser('mf2', {
      category: 'MF',
      member: { ...testMemberData('mf2'), custodianCode: null },
    });
    expectMissing(await server.call('POST', PLACE, { body: validBid(), ...as(mf) }), ['custodian_code']);
  });

  it('judges a modification again and never a cancellation', async () => {
    const user = await server.createUser('mod1');
    const placed = await server.call('POST', PLACE, { body: validBid(), ...as(user) });
    expect(placed.status, placed.text).toBe(200);
    const orderId = placed.body.data.orderId as string;
    // The client's UCC is taken off the record (as a database from before migration 0024 has none).
    await server.store.db.updateTable('users').set({ ucc: null }).where('user_id', '=', 'mod1').execute();

    const modified = await server.call('PUT', `${PLACE}/NSE_EQ/${orderId}`, {
      body: { order_type: 'RL', quantity: '20', price: 101 },
      ...as(user),
    });
    expectMissing(modified, ['ucc']);
    const cancelled = await server.call('DELETE', `${PLACE}/NSE_EQ/${orderId}`, as(user));
    expect(cancelled.status, cancelled.text).toBe(200);
  });
});
