/**
 * The audit trail (docs/design/audit.md): every order-entry request of an authenticated caller leaves
 * exactly one record with who, from where, the request id of its answer, the outcome and what it asked,
 * whatever the outcome; a caller that is not established leaves none; a huge path or body is stored cut,
 * with the length and SHA-256 of the whole; every order change a request made names it and its actor; the
 * database refuses to change or delete either, but for the records an archive removes; no secret is ever
 * stored.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { AuditArchiveService, AuditRecorder, AuditTrailService } from '../../src/services/audit.js';
import type { NewAuditRequest } from '../../src/domain/access/audit.js';
import { AuditRepository } from '../../src/store/access/audit.js';
import { startTestServer, validBid, type CallResult, type TestServer, type TestUser } from '../support/server.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';

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
    expect(cancelRecord).toMatchObject({
      user_id: 'alice',
      method: 'DELETE',
      route: ORDER_ROUTE,
      status_code: 200,
      code: cancelled.body.code,
      order_id: orderId,
      body: null,
    });

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
    expect(
      await new AuditTrailService(new AuditRepository(server.store)).entries({
        orderId,
        since: server.clock.now,
        limit: 100,
      }),
    ).toEqual([]);
  });

  it("records an authenticated caller's refused requests: 400 (schema and malformed JSON), 404 and 422, each with its code", async () => {
    const invalid = await place(validBid({ quantity: 'ten' }));
    const malformed = await server.call('POST', PLACE_ORDER, { rawBody: '{"quantity":', ...as(alice) });
    const belowFloor = await place(validBid({ price: 99 }));
    const notHers = await server.call(
      'DELETE',
      `${PLACE_ORDER}/NSE_EQ/0190aaaa-0000-7000-8000-000000000000`,
      as(alice),
    );

    const expected: [CallResult, number, string | null][] = [
      [invalid, 400, 'alice'],
      [malformed, 400, 'alice'],
      [belowFloor, 422, 'alice'],
      [notHers, 404, 'alice'],
    ];
    for (const [res, status, userId] of expected) {
      expect(res.status, res.text).toBe(status);
      const record = await recordOf(res);
      expect(record).toMatchObject({
        status_code: status,
        code: res.body.code,
        user_id: userId,
        client_address: '127.0.0.1',
      });
      expect(record.code).toMatch(/^e-\d{3}$/);
    }
    expect(JSON.parse((await recordOf(invalid)).body!)).toMatchObject({ quantity: 'ten' });
    expect(JSON.parse((await recordOf(belowFloor)).body!)).toMatchObject({ price: 99 });
    // Not JSON: no body to keep.
    expect((await recordOf(malformed)).body).toBeNull();
    expect((await recordOf(notHers)).order_id).toBe('0190aaaa-0000-7000-8000-000000000000');
  });

  it('records a cart execution with its cart, and each order it placed names the execution request', async () => {
    const cart = await server.call('POST', CARTS, {
      body: {
        ordercartName: 'Basket',
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: 'bob',
        modifiedBy: 'bob',
        executedNoTime: 0,
      },
      token: bob.token,
    });
    expect(cart.status, cart.text).toBe(200);
    const cartId = cart.body.data.ordercartId as string;
    const executed = await server.call('POST', `${CARTS}/${cartId}/execute`, as(bob));
    expect(executed.status, executed.text).toBe(200);

    const record = await recordOf(executed);
    expect(record).toMatchObject({
      user_id: 'bob',
      method: 'POST',
      route: `${CARTS}/:ordercartId/execute`,
      status_code: 200,
      code: 's-101',
      ordercart_id: cartId,
    });
    const placedId = executed.body.data[0].orderId as string;
    expect((await historyOf(placedId))[0]).toMatchObject({ actor: 'bob', request_id: record.request_id });
  });

  it('leaves no record of order-entry calls whose caller is not established (401, 403), however long their URL', async () => {
    const before = await server.store.db
      .selectFrom('audit_requests')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const junk = `?${'x'.repeat(15 * 1024)}`;
    const refused = [
      // The finding: a loop of these filled a table nobody may prune.
      await server.call('POST', `${PLACE_ORDER}${junk}`, { body: validBid(), token: null, apiKey: null }),
      await place(validBid(), { token: null, apiKey: alice.apiKey }),
      await place(validBid(), { token: alice.token, apiKey: 'not-a-key' }),
      // Authentication failed: the caller is not established, whoever the token names.
      await place(validBid(), { token: alice.token, apiKey: bob.apiKey }),
      await server.call('POST', `${CARTS}/a%00b/execute${junk}`, { token: null, apiKey: null }),
    ];
    expect(refused.map((res) => res.status)).toEqual([401, 401, 401, 403, 401]);
    // An authenticated request after them: once its record is there, theirs would be too.
    await recordOf(await place(validBid({ quantity: 'x' })));
    for (const res of refused) expect(await recordsOf(res.headers.get('request-id')!)).toEqual([]);
    const after = await server.store.db
      .selectFrom('audit_requests')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n) + 1);
  });

  it("stores an authenticated caller's huge path and body cut, saying so, with the length and SHA-256 of the whole", async () => {
    const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
    // Under Node's 16 KiB header limit. The body has multi-byte characters across the cut: it never splits one.
    const path = `${PLACE_ORDER}?note=${'x'.repeat(12 * 1024)}`;
    const long = await server.call('POST', path, { body: validBid({ quantity: '7' }), ...as(alice) });
    const rawBody = JSON.stringify({ ...validBid(), remarks: '€'.repeat(10_000) });
    const bulky = await server.call('POST', PLACE_ORDER, { rawBody, ...as(alice) });
    expect(bulky.status, bulky.text).toBe(400);

    const pathRecord = await recordOf(long);
    expect(pathRecord).toMatchObject({
      user_id: 'alice',
      status_code: long.status,
      path_bytes: Buffer.byteLength(path),
      path_sha256: sha256(path),
    });
    expect(pathRecord.path).toHaveLength(1024);
    expect(path.startsWith(pathRecord.path)).toBe(true);
    expect(JSON.parse(pathRecord.body!)).toEqual(validBid({ quantity: '7' }));
    expect(pathRecord).toMatchObject({ body_bytes: null, body_sha256: null });

    const bodyRecord = await recordOf(bulky);
    expect(bodyRecord).toMatchObject({
      path: PLACE_ORDER,
      path_bytes: null,
      path_sha256: null,
      body_bytes: Buffer.byteLength(rawBody),
      body_sha256: sha256(rawBody),
    });
    expect(Buffer.byteLength(bodyRecord.body!)).toBeLessThanOrEqual(8192);
    expect(Buffer.byteLength(bodyRecord.body!)).toBeGreaterThan(8188);
    expect(rawBody.startsWith(bodyRecord.body!)).toBe(true);

    // The operator's view says so too.
    const [entry] = await new AuditTrailService(new AuditRepository(server.store)).entries({
      requestId: bodyRecord.request_id,
      limit: 1,
    });
    expect(entry).toMatchObject({
      kind: 'request',
      bodyCut: { bytes: Buffer.byteLength(rawBody), sha256: sha256(rawBody) },
      pathCut: null,
    });
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
      body: {
        user_id: 'alice',
        login_type: 'PASSWORD',
        password: alice.password,
        second_auth_type: '',
        second_auth: '',
        api_key: alice.apiKey,
        source: 'WEBAPI',
      },
    });
    expect(login.status, login.text).toBe(200);
    const token = login.body.data.access_token as string;
    const placed = await place(validBid(), { token, apiKey: alice.apiKey });
    expect(placed.status, placed.text).toBe(200);
    // A client that puts its credentials into an order body by mistake (400: unknown fields).
    const leaky = await place(
      { ...validBid(), password: alice.password, api_key: alice.apiKey, nested: { access_token: token } },
      { token, apiKey: alice.apiKey },
    );
    expect(leaky.status).toBe(400);
    const leakyRecord = await recordOf(leaky);
    expect(JSON.parse(leakyRecord.body!)).toMatchObject({
      password: '[redacted]',
      api_key: '[redacted]',
      nested: { access_token: '[redacted]' },
    });
    await recordOf(placed);

    const everything = JSON.stringify([
      await server.store.db.selectFrom('audit_requests').selectAll().execute(),
      await server.store.db.selectFrom('order_history').selectAll().execute(),
    ]);
    for (const secret of [alice.password, alice.apiKey, token, alice.token, bob.apiKey, bob.token])
      expect(everything).not.toContain(secret);
  });

  it('the database refuses to change or delete a request record or an order change', async () => {
    const res = await place(validBid());
    const record = await recordOf(res);
    const orderId = res.body.data.orderId as string;
    const db = server.store.db;

    await expect(
      db.updateTable('audit_requests').set({ status_code: 500 }).where('id', '=', record.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(db.updateTable('audit_requests').set({ user_id: 'mallory' }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_requests').where('id', '=', record.id).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_requests').execute()).rejects.toThrow(/append-only/);
    await expect(
      db.updateTable('order_history').set({ actor: 'mallory' }).where('order_id', '=', orderId).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('order_history').where('order_id', '=', orderId).execute()).rejects.toThrow(
      /append-only/,
    );
    if (server.store.dialect === 'postgres') {
      await expect(sql`truncate audit_requests`.execute(db)).rejects.toThrow(/append-only/);
      await expect(sql`truncate order_history cascade`.execute(db)).rejects.toThrow(/append-only/);
    }

    expect(await recordsOf(record.request_id)).toEqual([record]);
    expect(await historyOf(orderId)).toEqual([
      expect.objectContaining({ status: 'OMSXMITTED', actor: 'alice', request_id: record.request_id }),
    ]);
  });
  it('a path parameter that decodes to NUL neither breaks the trail nor holds up later records', async () => {
    const odd = await server.call('POST', `${CARTS}/a%00b/execute`, as(alice));
    expect(odd.status).toBe(400);
    expect(odd.body.code, odd.text).toBe('e-125');
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
    bodyCut: null,
    pathCut: null,
  });
  const stored = async (prefix: string) =>
    (
      await server.store.db
        .selectFrom('audit_requests')
        .select('request_id')
        .where('request_id', 'like', `${prefix}%`)
        .orderBy('id')
        .execute()
    ).map((row) => row.request_id);

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
        if (failures-- > 0)
          throw new DatabaseUnavailableError(
            Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
          );
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
        if (records.some((r) => r.requestId === 'refused-2'))
          throw new Error('value too long for type character varying');
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

describe('the archive: the one way request records leave the database', () => {
  const T0 = Date.parse('2026-11-23T05:00:00Z');
  let server: TestServer;
  let alice: TestUser;
  let dir: string;
  let kept: CallResult;
  let archivedCalls: CallResult[];

  beforeAll(async () => {
    server = await startTestServer({ now: T0 });
    alice = await server.createUser('alice');
    dir = mkdtempSync(join(tmpdir(), 'ordergate-archive-'));
    const refusedBid = () =>
      server.call('POST', PLACE_ORDER, { body: validBid({ quantity: 'x' }), token: alice.token, apiKey: alice.apiKey });
    archivedCalls = [await refusedBid()];
    server.clock.now = T0 + 1000;
    archivedCalls.push(await refusedBid());
    server.clock.now = T0 + 2000;
    kept = await refusedBid();
    await server.app.close();
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const requestIds = async () =>
    (await server.store.db.selectFrom('audit_requests').select('request_id').orderBy('id').execute()).map(
      (row) => row.request_id,
    );
  const archiver = () => new AuditArchiveService(new AuditRepository(server.store), () => T0 + 60_000);
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('moves the records that arrived before the instant to a file, removes exactly those, and the file verifies', async () => {
    const ids = (calls: CallResult[]) => calls.map((res) => res.headers.get('request-id')!);
    expect(await requestIds()).toEqual(ids([...archivedCalls, kept]));
    const file = join(dir, 'first.jsonl');

    const archive = await archiver().archive(T0 + 2000, file);
    expect(archive).toMatchObject({ rows: 2, before: T0 + 2000, archivedAt: T0 + 60_000, file });
    expect(await requestIds()).toEqual(ids([kept]));

    const bytes = readFileSync(file);
    expect(archive!.sha256).toBe(sha256(bytes));
    expect(readFileSync(`${file}.sha256`, 'utf8')).toBe(`${archive!.sha256}  first.jsonl\n`);
    const lines = bytes
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toEqual({
      format: 'ordergate-audit-archive/1',
      table: 'audit_requests',
      before: '2026-11-23T05:00:02.000Z',
    });
    expect(lines.slice(1, 3).map((line) => [line.request_id, line.at, line.user_id, line.status_code])).toEqual(
      ids(archivedCalls).map((id, index) => [id, T0 + index * 1000, 'alice', 400]),
    );
    expect(JSON.parse(lines[1].body)).toEqual(validBid({ quantity: 'x' }));
    expect(lines[3]).toEqual({
      end: 'ordergate-audit-archive/1',
      rows: 2,
      first_id: archive!.firstId,
      last_id: archive!.lastId,
    });

    expect(await archiver().verify(file)).toEqual(archive);
    // Changed, cut short or unknown to this database: not an archive.
    const changed = join(dir, 'changed.jsonl');
    writeFileSync(changed, bytes.toString('utf8').replace('"alice"', '"mallory"'));
    await expect(archiver().verify(changed)).rejects.toThrow(/not an archive this database made/);
    const cut = join(dir, 'cut.jsonl');
    writeFileSync(cut, bytes.toString('utf8').split('\n').slice(0, 3).join('\n') + '\n');
    await expect(archiver().verify(cut)).rejects.toThrow(/cut short/);

    // Nothing left before that instant: no file, nothing removed; an existing file is never overwritten.
    expect(await archiver().archive(T0 + 2000, join(dir, 'empty.jsonl'))).toBeNull();
    await expect(archiver().archive(T0 + 3000, file)).rejects.toThrow(/exists/);
    expect(await requestIds()).toEqual(ids([kept]));
  });

  it('still refuses every other UPDATE and DELETE: of records not archived, of a record that arrives late, of the archives', async () => {
    const db = server.store.db;
    await expect(db.deleteFrom('audit_requests').execute()).rejects.toThrow(/append-only/);
    await expect(
      db
        .deleteFrom('audit_requests')
        .where('at', '<', T0 + 2000)
        .execute(),
    ).resolves.toBeDefined();
    // A record that arrived before the archived instant but was written after the archive (a retried batch).
    const late = {
      at: T0 + 500,
      request_id: 'late-1',
      user_id: 'alice',
      client_address: '127.0.0.1',
      method: 'POST',
      route: PLACE_ORDER,
      path: PLACE_ORDER,
      status_code: 400,
    };
    await db.insertInto('audit_requests').values(late).execute();
    await expect(db.deleteFrom('audit_requests').where('request_id', '=', 'late-1').execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(
      db.updateTable('audit_requests').set({ user_id: 'mallory' }).where('request_id', '=', 'late-1').execute(),
    ).rejects.toThrow(/append-only/);
    await expect(db.updateTable('audit_archives').set({ last_id: 1_000_000 }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_archives').execute()).rejects.toThrow(/append-only/);
    if (server.store.dialect === 'postgres') {
      await expect(sql`truncate audit_requests`.execute(db)).rejects.toThrow(/append-only/);
      await expect(sql`truncate audit_archives`.execute(db)).rejects.toThrow(/append-only/);
    }
    expect(await requestIds()).toEqual([kept.headers.get('request-id'), 'late-1']);

    // The late record goes with the next archive, and only through it.
    const next = await archiver().archive(T0 + 1000, join(dir, 'second.jsonl'));
    expect(next).toMatchObject({ rows: 1 });
    expect(await requestIds()).toEqual([kept.headers.get('request-id')]);
  });

  it('removes nothing when the records before the instant are not exactly those in the file', async () => {
    const repository = new AuditRepository(server.store);
    const [row] = await server.store.db.selectFrom('audit_requests').select('id').execute();
    await expect(
      repository.removeArchived({
        archivedAt: T0,
        before: T0 + 10_000,
        ids: [Number(row!.id) - 1, Number(row!.id)],
        sha256: 'f'.repeat(64),
        file: 'x',
      }),
    ).rejects.toThrow(/nothing was removed/);
    expect(await requestIds()).toEqual([kept.headers.get('request-id')]);
    expect(await repository.archiveWithDigest('f'.repeat(64))).toBeUndefined();
  });
});

describe('the audit trail under the per-user rate limit', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { ordersPerSecond: 2 } });
    await server.registerIssue();
    alice = await server.createUser('alice');
  });
  afterAll(() => server.close());

  it('records the calls the limit lets through and none of those it refuses (429 e-429), so a user cannot grow the trail faster than the limit', async () => {
    const junk = `?${'x'.repeat(1000)}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        server.call('POST', `/transactional/v1/orders/regular${junk}`, {
          body: validBid(),
          token: alice.token,
          apiKey: alice.apiKey,
        }),
      ),
    );
    const refused = answers.filter((res) => res.status === 429);
    const through = answers.filter((res) => res.status !== 429);
    // 2 a second: of 20 sent at once, the first 2 (a few more if sending them took over a second) pass.
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(refused.every((res) => res.body.code === 'e-429')).toBe(true);
    const ids = (list: typeof answers) => list.map((res) => res.headers.get('request-id')!);
    // Records are written shortly after the answers: wait for those of the calls let through.
    await expect
      .poll(
        async () =>
          (
            await server.store.db
              .selectFrom('audit_requests')
              .select('request_id')
              .where('request_id', 'in', ids(through))
              .execute()
          ).length,
        {
          timeout: 10_000,
        },
      )
      .toBe(through.length);
    expect(
      await server.store.db
        .selectFrom('audit_requests')
        .select('request_id')
        .where('request_id', 'in', ids(refused))
        .execute(),
    ).toEqual([]);
    expect(
      Number(
        (
          await server.store.db
            .selectFrom('audit_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(through.length);
  });
});
