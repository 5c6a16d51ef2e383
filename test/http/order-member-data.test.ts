/**
 * Each order keeps its client's member data as order entry read it at placement (issue 49 row 5;
 * docs/design/member-data.md), through the real server on both databases: the UCC, client type, custodian
 * code and PAN are written with the bid and read back by the repository (by its plain read and by the
 * OMS's locked read), stay the same when the operator changes the user's record and the bid is modified
 * after, and are not shown on the order book, whose wire shape is the contract's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderRepository } from '../../src/store/orders/orders.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';

describe('the member data kept on each order', () => {
  let server: TestServer;
  let repository: OrderRepository;
  let mina: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    repository = new OrderRepository(server.store.db, server.store.dialect);
    mina = await server.createUser('mina', {
      member: { ucc: 'MINA1', pan: 'MINPK1234M', clientType: 'CLI', custodianCode: 'CUST01' },
    });
  });
  afterAll(() => server.close());

  const place = async (): Promise<string> => {
    const res = await server.call('POST', PLACE_ORDER, {
      body: validBid({ quantity: '10', price: 101.5 }),
      token: mina.token,
      apiKey: mina.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  };
  const lockedRead = (orderId: string) =>
    server.store.writeTransaction(async (tx) => (await repository.lockOrders(tx, [orderId])).get(orderId));

  it("writes the client's UCC, client type, custodian and PAN with the bid, and reads them back", async () => {
    const orderId = await place();
    const kept = { ucc: 'MINA1', clientType: 'CLI', custodianCode: 'CUST01', pan: 'MINPK1234M' };
    expect(await repository.find(orderId)).toMatchObject(kept);
    // The OMS's read of the orders it changes (one JSON array per row on SQLite) reads them too.
    expect(await lockedRead(orderId)).toMatchObject(kept);
  });

  it("keeps them for the bid's whole life: the user's record changes, the bid is modified, the order's stay", async () => {
    const orderId = await place();
    await server.admin.setMemberData('mina', { ucc: 'MINA2', clientType: 'PRO', custodianCode: null });
    const modified = await server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, {
      body: { order_type: 'RL', quantity: '20', price: 101.5 },
      token: mina.token,
      apiKey: mina.apiKey,
    });
    expect(modified.status, modified.text).toBe(200);
    expect(await repository.find(orderId)).toMatchObject({
      quantity: 20,
      ucc: 'MINA1',
      clientType: 'CLI',
      custodianCode: 'CUST01',
      pan: 'MINPK1234M',
    });
    // A new bid takes the record as it is now.
    expect(await repository.find(await place())).toMatchObject({
      ucc: 'MINA2',
      clientType: 'PRO',
      custodianCode: null,
      pan: 'MINPK1234M',
    });
  });

  it('does not show them on the order book or in the order history', async () => {
    const orderId = await place();
    for (const path of [`/transactional/v1/orders?order_id=${orderId}`, `/transactional/v1/orders/${orderId}`]) {
      const read = await server.call('GET', path, { token: mina.token });
      expect(read.status, read.text).toBe(200);
      expect(read.text).toContain(orderId);
      for (const text of ['MINA1', 'MINA2', 'MINPK1234M', 'CUST01', '"ucc"', '"pan"', 'custodian'])
        expect(read.text).not.toContain(text);
    }
  });
});
