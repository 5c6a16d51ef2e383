/**
 * The audit trail (docs/design/audit.md): every order-entry request leaves exactly one record with who,
 * from where, the request id of its answer, the outcome and what it asked, whatever the outcome; every
 * order change it made names it and its actor; the database refuses to change or delete either; no
 * secret is ever stored.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { AuditRecorder, AuditTrailService } from '../../src/services/audit.js';
import type { NewAuditRequest } from '../../src/domain/audit.js';
import { AuditRepository } from '../../src/store/audit.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const ORDER_ROUTE = `${PLACE_ORDER}/:exchange/:order_id`;
const CARTS = '/transactional/v1/ordercart';

describe('the audit trail of order entry', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
  });
  afterAll(() => server.close());

  const as = (user: TestUser) => ({ token: user.token, apiKey: user.apiKey });
  const place = (body: unknown, auth: { token?: string | null; apiKey?: string | null } = as(alice)) =>
    server.call('POST', PLACE_ORDER, { body, ...auth });

  const recordsOf = (requestId: string) =>
    server.store.db.selectFrom('audit_requests').selectAll().where('request_id', '=', requestId).execute();

  /** The one record of the answered request; records are written shortly after the answer. */
  async function recordOf(res: CallResult) {
    const requestId = res.headers.get('request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(async () => (await recordsOf(requestId!)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const records = await recordsOf(requestId!);
    expect(records).toHaveLength(1);
    return records[0]!;
  }

  const historyOf = (orderId: string) =>
    server.store.db.selectFrom('order_history').selectAll().where('order_id', '=', orderId).orderBy('id').execute();

  it('records an accepted bid: who, from where, the request id of the answer, the outcome, the order and the body', async () => {
    const bid = validBid({ quantity: '12' });
    const res = await place(bid);
    expect(res.status, res.text).toBe(200);
    const orderId = res.body.data.orderId as string;

    const record = await recordOf(res);
    expect(record).toMatchObject({
      request_id: res.headers.get('request-id'),
      user_id: 'alice',
      client_address: '127.0.0.1',
      method: 'POST',
      route: PLACE_ORDER,
      path: PLACE_ORDER,
      status_code: 200,
      code: res.body.code,
      order_id: orderId,
      ordercart_id: null,
    });
    expect(record.code).toBe('s-101');
    expect(JSON.parse(record.body!)).toEqual(bid);
    expect(Number(record.at)).toBe(server.clock.now);

    // The order's first change names its actor and the request, in the order's own transaction.
    const history = await historyOf(orderId);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ status: 'OMSXMITTED', actor: 'alice', request_id: record.request_id });
  });

  it('records a modification and a cancellation with the order they named, and links the changes they made', async () => {
    const placed = await place(validBid());
    const orderId = placed.body.data.orderId as string;
    const modifyBody = { order_type: 'RL', quantity: '20', price: 101.5, disclosed_quantity: 0 };
    server.clock.now += 1000;
    const modified = await server.call('PUT', `${PLACE_ORDER}/NSE_EQ/${orderId}`, { body: modifyBody, ...as(alice) });
    expect(modified.status, modified.text).toBe(200);
    server.clock.now += 1000;
    const cancelled = await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/${orderId}`, as(alice));
    expect(cancelled.status, cancelled.text).toBe(200);

    const modifyRecord = await recordOf(modified);
    expect(modifyRecord).toMatchObject({
      user_id: 'alice',
      method: 'PUT',
      route: ORDER_ROUTE,
      path: `${PLACE_ORDER}/NSE_EQ/${orderId}`,
      status_code: 200,
      code: modified.body.code,
      order_id: orderId,
    });
    expect(JSON.parse(modifyRecord.body!)).toEqual(modifyBody);
    const cancelRecord = await recordOf(cancelled);
    expect(cancelRecord).toMatchObject({ user_id: 'alice', method: 'DELETE', route: ORDER_ROUTE, status_code: 200, code: cancelled.body.code, order_id: orderId, body: null });

    const history = await historyOf(orderId);
    expect(history.map((row) => [row.actor, row.request_id])).toEqual([
      ['alice', placed.headers.get('request-id')],
      ['alice', modifyRecord.request_id],
      ['alice', cancelRecord.request_id],
    ]);

    // The operator's view (ordergate audit --order) of this order, in this dialect.
    const trail = await new AuditTrailService(new AuditRepository(server.store)).entries({ orderId, limit: 100 });
    expect(trail.map((entry) => [entry.kind, entry.requestId])).toEqual([
      ['request', placed.headers.get('request-id')],
      ['order_change', placed.headers.get('request-id')],
      ['request', modifyRecord.request_id],
      ['order_change', modifyRecord.request_id],
      ['request', cancelRecord.request_id],
      ['order_change', cancelRecord.request_id],
    ]);
    server.clock.now += 1000;
    expect(await new AuditTrailService(new AuditRepository(server.store)).entries({ orderId, since: server.clock.now, limit: 100 })).toEqual([]);
  });

  it('records refused requests: 400 (schema and malformed JSON), 401 and 403 (no user established), 404 and 422, each with its code', async () => {
    const invalid = await place(validBid({ quantity: 'ten' }));
    const malformed = await server.call('POST', PLACE_ORDER, { rawBody: '{"quantity":', ...as(alice) });
    const noToken = await place(validBid(), { token: null, apiKey: alice.apiKey });
    const unknownKey = await place(validBid(), { token: alice.token, apiKey: 'not-a-key' });
    const bobsKey = await place(validBid(), { token: alice.token, apiKey: bob.apiKey });
    const belowFloor = await place(validBid({ price: 99 }));
    const notHers = await server.call('DELETE', `${PLACE_ORDER}/NSE_EQ/0190aaaa-0000-7000-8000-000000000000`, as(alice));

    const expected: [CallResult, number, string | null][] = [
      [invalid, 400, 'alice'],
      [malformed, 400, 'alice'],
      [noToken, 401, null],
      [unknownKey, 401, null],
      // Authentication failed: the caller is not established, whoever the token names.
      [bobsKey, 403, null],
      [belowFloor, 422, 'alice'],
      [notHers, 404, 'alice'],
    ];
    for (const [res, status, userId] of expected) {
      expect(res.status, res.text).toBe(status);
      const record = await recordOf(res);
      expect(record).toMatchObject({ status_code: status, code: res.body.code, user_id: userId, client_address: '127.0.0.1' });
      expect(record.code).toMatch(/^e-\d{3}$/);
    }
    expect(JSON.parse((await recordOf(invalid)).body!)).toMatchObject({ quantity: 'ten' });
    expect(JSON.parse((await recordOf(belowFloor)).body!)).toMatchObject({ price: 99 });
    // Refused before the body was read, or not JSON: no body to keep.
    expect((await recordOf(noToken)).body).toBeNull();
    expect((await recordOf(malformed)).body).toBeNull();
    expect((await recordOf(notHers)).order_id).toBe('0190aaaa-0000-7000-8000-000000000000');
  });

  it('records a cart execution with its cart, and each order it placed names the execution request', async () => {
    const cart = await server.call('POST', CARTS, {
      body: { ordercartName: 'Basket', orders: JSON.stringify([EXAMPLE_ORDER_LINE]), version: '1', createdBy: 'bob', modifiedBy: 'bob', executedNoTime: 0 },
      token: bob.token,
    });
    expect(cart.status, cart.text).toBe(200);
    const cartId = cart.body.data.ordercartId as string;
    const executed = await server.call('POST', `${CARTS}/${cartId}/execute`, as(bob));
    expect(executed.status, executed.text).toBe(200);

    const record = await recordOf(executed);
    expect(record).toMatchObject({ user_id: 'bob', method: 'POST', route: `${CARTS}/:ordercartId/execute`, status_code: 200, code: 's-101', ordercart_id: cartId });
    const placedId = executed.body.data[0].orderId as string;
    expect((await historyOf(placedId))[0]).toMatchObject({ actor: 'bob', request_id: record.request_id });
  });

  it('leaves no record of requests that enter no order (login, reads, cart storage)', async () => {
    const reads = [
      await server.call('GET', '/transactional/v1/orders', { token: alice.token }),
      await server.call('GET', CARTS, { token: alice.token }),
      await server.call('POST', CARTS, { body: {}, token: alice.token }),
    ];
    // An order-entry request after them: once its record is there, theirs would be too.
    await recordOf(await place(validBid({ quantity: 'x' })));
    for (const res of reads) expect(await recordsOf(res.headers.get('request-id')!)).toEqual([]);
  });

  it('never stores a password, access token or API key, and redacts secret-named fields of a body', async () => {
    const login = await server.call('POST', '/authentication/v1/user/session', {
      body: { user_id: 'alice', login_type: 'PASSWORD', password: alice.password, second_auth_type: '', second_auth: '', api_key: alice.apiKey, source: 'WEBAPI' },
    });
    expect(login.status, login.text).toBe(200);
    const token = login.body.data.access_token as string;
    const placed = await place(validBid(), { token, apiKey: alice.apiKey });
    expect(placed.status, placed.text).toBe(200);
    // A client that puts its credentials into an order body by mistake (400: unknown fields).
    const leaky = await place({ ...validBid(), password: alice.password, api_key: alice.apiKey, nested: { access_token: token } }, { token, apiKey: alice.apiKey });
    expect(leaky.status).toBe(400);
    const leakyRecord = await recordOf(leaky);
    expect(JSON.parse(leakyRecord.body!)).toMatchObject({ password: '[redacted]', api_key: '[redacted]', nested: { access_token: '[redacted]' } });
    await recordOf(placed);

    const everything = JSON.stringify([
      await server.store.db.selectFrom('audit_requests').selectAll().execute(),
      await server.store.db.selectFrom('order_history').selectAll().execute(),
    ]);
    for (const secret of [alice.password, alice.apiKey, token, alice.token, bob.apiKey, bob.token]) expect(everything).not.toContain(secret);
  });

  it('the database refuses to change or delete a request record or an order change', async () => {
    const res = await place(validBid());
    const record = await recordOf(res);
    const orderId = res.body.data.orderId as string;
    const db = server.store.db;

    await expect(db.updateTable('audit_requests').set({ status_code: 500 }).where('id', '=', record.id).execute()).rejects.toThrow(/append-only/);
    await expect(db.updateTable('audit_requests').set({ user_id: 'mallory' }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_requests').where('id', '=', record.id).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_requests').execute()).rejects.toThrow(/append-only/);
    await expect(db.updateTable('order_history').set({ actor: 'mallory' }).where('order_id', '=', orderId).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('order_history').where('order_id', '=', orderId).execute()).rejects.toThrow(/append-only/);
    if (server.store.dialect === 'postgres') {
      await expect(sql`truncate audit_requests`.execute(db)).rejects.toThrow(/append-only/);
      await expect(sql`truncate order_history cascade`.execute(db)).rejects.toThrow(/append-only/);
    }

    expect(await recordsOf(record.request_id)).toEqual([record]);
    expect(await historyOf(orderId)).toEqual([expect.objectContaining({ status: 'OMSXMITTED', actor: 'alice', request_id: record.request_id })]);
  });
  it('a path parameter that decodes to NUL neither breaks the trail nor holds up later records', async () => {
    const odd = await server.call('POST', `${CARTS}/a%00b/execute`, { token: null, apiKey: null });
    expect(odd.status).toBe(401);
    const oddRecord = await recordOf(odd);
    expect(oddRecord.ordercart_id).toBe('a\uFFFDb');
    const res = await place(validBid({ quantity: '3' }));
    expect(res.status, res.text).toBe(200);
    expect((await recordOf(res)).status_code).toBe(200);
  });
});

describe('the audit recorder', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const entry = (requestId: string): NewAuditRequest => ({
    at: 1,
    requestId,
    userId: 'alice',
    clientAddress: '127.0.0.1',
    method: 'POST',
    route: PLACE_ORDER,
    path: PLACE_ORDER,
    statusCode: 200,
    code: 's-101',
    orderId: null,
    ordercartId: null,
    body: null,
  });
  const stored = async (prefix: string) =>
    (await server.store.db.selectFrom('audit_requests').select('request_id').where('request_id', 'like', `${prefix}%`).orderBy('id').execute()).map(
      (row) => row.request_id,
    );

  it('writes what is still queued when it is closed', async () => {
    const recorder = new AuditRecorder(new AuditRepository(server.store), () => 1, { flushDelayMs: 60_000 });
    recorder.record(entry('close-1'));
    recorder.record(entry('close-2'));
    expect(await stored('close-')).toEqual([]);
    await recorder.close();
    expect(await stored('close-')).toEqual(['close-1', 'close-2']);
  });

  it('keeps the records of a failed write and writes them once the database takes them, in order', async () => {
    const repository = new AuditRepository(server.store);
    let failures = 1;
    const flaky = {
      appendRequests: async (records: readonly NewAuditRequest[]) => {
        if (failures-- > 0) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        await repository.appendRequests(records);
      },
    } as unknown as AuditRepository;
    const logged: string[] = [];
    const recorder = new AuditRecorder(flaky, () => 1, { flushDelayMs: 5, retryMs: 50 });
    recorder.reportFailuresTo({ error: (_details, message) => void logged.push(message) });
    recorder.record(entry('retry-1'));
    await expect.poll(() => logged.length, { timeout: 10_000 }).toBeGreaterThan(0);
    recorder.record(entry('retry-2'));
    await expect.poll(() => stored('retry-'), { timeout: 10_000 }).toEqual(['retry-1', 'retry-2']);
    await recorder.close();
    expect(logged).toEqual(['audit records could not be written; retrying']);
  });

  it('drops only the record the database refuses, and keeps writing the others', async () => {
    const repository = new AuditRepository(server.store);
    const picky = {
      appendRequests: async (records: NewAuditRequest[]) => {
        if (records.some((r) => r.requestId === 'refused-2')) throw new Error('value too long for type character varying');
        await repository.appendRequests(records);
      },
    } as unknown as AuditRepository;
    const logged: string[] = [];
    const recorder = new AuditRecorder(picky, () => 1, { flushDelayMs: 5, retryMs: 50 });
    recorder.reportFailuresTo({ error: (_details, message) => void logged.push(message) });
    for (const id of ['refused-1', 'refused-2', 'refused-3']) recorder.record(entry(id));
    await recorder.close();
    expect(await stored('refused-')).toEqual(['refused-1', 'refused-3']);
    expect(logged).toEqual(['audit record refused by the database; dropped']);
  });
});
