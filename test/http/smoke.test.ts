import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

describe('place an OFS bid (happy path)', () => {
  let server: TestServer;
  let user: TestUser;
  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    user = await server.createUser('alice');
  });
  afterAll(() => server.close());

  it('answers exactly the seed success body and stores the order as OMSXMITTED with an outbox entry', async () => {
    const res = await server.call('POST', '/transactional/v1/orders/regular', { body: validBid(), token: user.token, apiKey: user.apiKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(res.body).toEqual({ status: 'success', code: 's-101', message: 'Order Entry Sent to OMS', data: { orderId: expect.any(String) } });
    const order = await server.store.db.selectFrom('orders').selectAll().where('order_id', '=', res.body.data.orderId).executeTakeFirstOrThrow();
    expect(order).toMatchObject({ user_id: 'alice', status: 'OMSXMITTED', quantity: 10, price_paise: 10150, order_identifier: 'mybid1' });
    const outbox = await server.store.db.selectFrom('outbox').selectAll().where('order_id', '=', res.body.data.orderId).execute();
    expect(outbox).toHaveLength(1);
  });
});
