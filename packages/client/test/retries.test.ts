/**
 * Retries and errors, against a local HTTP server scripted answer by answer: a call is retried after a
 * network error and after a 503 (waiting its Retry-After, within the total wait), never after another
 * answer, and an order-entry call only under its one Idempotency-Key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OrdergateClient, OrdergateError, OrdergateTransportError, type PlaceBid } from '../src/index.js';
import { drop, envelope, json, stubServer, type StubServer } from './support/stub-server.js';

const BALANCE = JSON.stringify({ status: 'success', code: 's-101', message: 'ok', data: { cash: '1.00', blocked: '0.00', available: '1.00', debited: '0.00' } });
const PLACED = JSON.stringify({ status: 'success', code: 's-101', message: 'Order Entry Sent to OMS', data: { orderId: 'o-1' } });
const BID: PlaceBid = { scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' }, transaction_type: 'BUY', product_type: 'OFS', order_type: 'RL', quantity: '10', price: 101.5 };

let stub: StubServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const clientOf = (server: StubServer, options: Partial<ConstructorParameters<typeof OrdergateClient>[0]> = {}) =>
  new OrdergateClient({ baseUrl: server.url, ...options }).withToken('token-1', 'key-1');

describe('retries', () => {
  it('waits Retry-After after a 503 and tries again', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '1' }), json(200, BALANCE)]);
    const started = Date.now();
    const balance = await clientOf(stub).balance();
    expect(balance.data.cash).toBe('1.00');
    expect(stub.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries a bid after a 503 and after a dropped connection with the same Idempotency-Key, and sends the token and the key', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '0' }), drop, json(200, PLACED)]);
    const placed = await clientOf(stub).place(BID);
    expect(placed.data.orderId).toBe('o-1');
    expect(stub.requests).toHaveLength(3);
    const keys = stub.requests.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(stub.requests[2]).toMatchObject({ method: 'POST', url: '/transactional/v1/orders/regular', headers: { authorization: 'Bearer token-1', 'x-api-key': 'key-1' } });
    expect(JSON.parse(stub.requests[2]!.body)).toEqual(BID);
  });

  it('retries a read after a refused connection, up to the attempts, then fails with a transport error', async () => {
    const closed = await stubServer([json(200, BALANCE)]);
    const url = closed.url;
    await closed.close();
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const error = await new OrdergateClient({ baseUrl: url, fetch: counting, retry: { attempts: 3, maxDelayMs: 5_000 } }).balance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect((error as Error).message).toMatch(/no answer after 3 attempt/);
    expect(calls).toBe(3);
  });

  it('never retries another status: a 500, a 429, a 409 are final', async () => {
    for (const [status, code] of [
      [500, 'e-501'],
      [429, 'e-429'],
      [409, 'e-116'],
    ] as const) {
      stub = await stubServer([json(status, envelope(code), { 'retry-after': '0' }), json(200, PLACED)]);
      const error = await clientOf(stub).place(BID).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OrdergateError);
      expect(error).toMatchObject({ status, code });
      expect(stub.requests).toHaveLength(1);
      await stub.close();
    }
    stub = undefined;
  });

  it('does not wait for a Retry-After beyond the total wait allowed: the 503 is the answer', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '30' }), json(200, BALANCE)]);
    const started = Date.now();
    const error = await clientOf(stub, { retry: { attempts: 4, maxDelayMs: 2_000 } }).balance().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'e-503', retryAfterSeconds: 30 });
    expect(stub.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('without Idempotency-Keys, a bid is sent once whatever happens: no retry after a 503 or a drop', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '0' }), json(200, PLACED)]);
    const client = clientOf(stub, { idempotencyKeys: false });
    expect(await client.place(BID).catch((e: unknown) => e)).toMatchObject({ status: 503, code: 'e-503' });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.headers['idempotency-key']).toBeUndefined();
    await stub.close();
    stub = await stubServer([drop, json(200, PLACED)]);
    expect(await clientOf(stub, { idempotencyKeys: false }).place(BID).catch((e: unknown) => e)).toBeInstanceOf(OrdergateTransportError);
    expect(stub.requests).toHaveLength(1);
    // A key given by the caller makes the call safe to retry again.
    await stub.close();
    stub = await stubServer([drop, json(200, PLACED)]);
    expect((await clientOf(stub, { idempotencyKeys: false }).place(BID, { idempotencyKey: 'mine' })).data.orderId).toBe('o-1');
    expect(stub.requests.map((request) => request.headers['idempotency-key'])).toEqual(['mine', 'mine']);
  });

  it('an aborted call stops at once, without retrying', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '5' }), json(200, BALANCE)]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('given up')), 200);
    const error = await clientOf(stub).balance({ signal: abort.signal }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('given up');
    expect(stub.requests).toHaveLength(1);
  });
});

describe('errors', () => {
  it('an error envelope is an OrdergateError with the status, code, message, field errors, request id and Retry-After', async () => {
    stub = await stubServer([json(429, envelope('e-429', 'Too many requests', 'req-42'), { 'retry-after': '3' })]);
    const error = (await clientOf(stub).place(BID).catch((e: unknown) => e)) as OrdergateError;
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({ name: 'OrdergateError', status: 429, code: 'e-429', message: 'Too many requests', requestId: 'req-42', retryAfterSeconds: 3, errors: [{ field: 'x', message: 'bad x' }] });
    expect(error.is('RATE_LIMITED')).toBe(true);
  });

  it('an answer that is not the API (a proxy page, a code outside the catalog) is a transport error with its status', async () => {
    stub = await stubServer([(_request, response) => void response.writeHead(502, { 'content-type': 'text/html', 'request-id': 'req-9' }).end('<html>Bad gateway</html>')]);
    const error = await clientOf(stub).balance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect(error).toMatchObject({ status: 502, requestId: 'req-9' });
    await stub.close();
    stub = await stubServer([json(400, envelope('e-999'))]);
    expect(await clientOf(stub).balance().catch((e: unknown) => e)).toBeInstanceOf(OrdergateTransportError);
  });
});
