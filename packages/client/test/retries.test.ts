/**
 * Retries and errors, against a local HTTP server scripted answer by answer: a call is retried after a
 * network error and after a 503 (waiting its Retry-After, within the total wait), never after another
 * answer, and an order-entry call only under its one Idempotency-Key, which its errors carry. A login is
 * retried after a network error only when its request never left; a logout or a cart delete whose retry
 * finds it done already resolves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  OrdergateClient,
  OrdergateError,
  OrdergateTransportError,
  type CartLine,
  type PlaceBid,
} from '../src/index.js';
import { certainlyUnsent } from '../src/transport.js';
import { drop, envelope, json, stubServer, type Handler, type StubServer } from './support/stub-server.js';

const BALANCE = JSON.stringify({
  status: 'success',
  code: 's-101',
  message: 'ok',
  data: { cash: '1.00', blocked: '0.00', available: '1.00', debited: '0.00' },
});
const PLACED = JSON.stringify({
  status: 'success',
  code: 's-101',
  message: 'Order Entry Sent to OMS',
  data: { orderId: 'o-1' },
});
const LOGGED_IN = JSON.stringify({
  status: 'success',
  code: 's-101',
  message: 'ok',
  data: { access_token: 'token-2' },
});
const LOGGED_OUT = JSON.stringify({
  status: 'success',
  code: 's-101',
  message: 'Logged out successfully',
  data: [{ message: 'success' }],
});
const BID: PlaceBid = {
  scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
  transaction_type: 'BUY',
  product_type: 'OFS',
  order_type: 'RL',
  quantity: '10',
  price: 101.5,
};

let stub: StubServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const clientOf = (server: StubServer, options: Partial<ConstructorParameters<typeof OrdergateClient>[0]> = {}) =>
  new OrdergateClient({ baseUrl: server.url, ...options }).withToken('token-1', 'key-1');

const LOGIN = { userId: 'u-1', password: 'secret', apiKey: 'key-1', totp: '123456' };

/** Reads the request and never answers: the client's timeout ends the attempt. */
const hang: Handler = () => undefined;

/** A base URL where nothing listens: a fetch to it fails with a real ECONNREFUSED. */
async function refusedUrl(): Promise<string> {
  const closed = await stubServer([json(200, BALANCE)]);
  await closed.close();
  return closed.url;
}

/** A fetch whose first `times` calls go to a port where nothing listens (refused), and the others to `server`. */
async function refusing(server: StubServer, times: number): Promise<typeof fetch> {
  const refused = await refusedUrl();
  let calls = 0;
  return (input, init) =>
    fetch(
      calls++ < times ? (input instanceof Request ? input.url : String(input)).replace(server.url, refused) : input,
      init,
    );
}

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
    expect(stub.requests[2]).toMatchObject({
      method: 'POST',
      url: '/transactional/v1/orders/regular',
      headers: { authorization: 'Bearer token-1', 'x-api-key': 'key-1' },
    });
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
    const error = await new OrdergateClient({
      baseUrl: url,
      fetch: counting,
      retry: { attempts: 3, maxDelayMs: 5_000 },
    })
      .balance()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect((error as Error).message).toMatch(/no answer after 3 attempt/);
    expect(calls).toBe(3);
  });

  it('never retries another status: a 500, a 429, a 409 other than e-116 are final', async () => {
    for (const [status, code] of [
      [500, 'e-501'],
      [429, 'e-429'],
      [409, 'e-372'],
    ] as const) {
      stub = await stubServer([json(status, envelope(code), { 'retry-after': '0' }), json(200, PLACED)]);
      const error = await clientOf(stub)
        .place(BID)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OrdergateError);
      expect(error).toMatchObject({ status, code });
      expect(stub.requests).toHaveLength(1);
      await stub.close();
    }
    stub = undefined;
  });

  it('retries a 409 e-116 under its key after Retry-After (an earlier attempt still held the key), and answers what the key then holds', async () => {
    stub = await stubServer([json(409, envelope('e-116'), { 'retry-after': '0' }), json(200, PLACED)]);
    const placed = await clientOf(stub).place(BID, { idempotencyKey: 'k-1' });
    expect(placed.data.orderId).toBe('o-1');
    expect(stub.requests.map((request) => request.headers['idempotency-key'])).toEqual(['k-1', 'k-1']);
  });

  it('does not wait for a Retry-After beyond the total wait allowed: the 503 is the answer', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '30' }), json(200, BALANCE)]);
    const started = Date.now();
    const error = await clientOf(stub, { retry: { attempts: 4, maxDelayMs: 5_000 } })
      .balance()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'e-503', retryAfterSeconds: 30 });
    expect(stub.requests).toHaveLength(1);
    // At once: not after waiting the 5 s allowed (the bound is generous for a busy machine).
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('without Idempotency-Keys, a bid is sent once whatever happens: no retry after a 503 or a drop', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '0' }), json(200, PLACED)]);
    const client = clientOf(stub, { idempotencyKeys: false });
    expect(await client.place(BID).catch((e: unknown) => e)).toMatchObject({ status: 503, code: 'e-503' });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.headers['idempotency-key']).toBeUndefined();
    await stub.close();
    stub = await stubServer([drop, json(200, PLACED)]);
    expect(
      await clientOf(stub, { idempotencyKeys: false })
        .place(BID)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OrdergateTransportError);
    expect(stub.requests).toHaveLength(1);
    // A key given by the caller makes the call safe to retry again.
    await stub.close();
    stub = await stubServer([drop, json(200, PLACED)]);
    expect((await clientOf(stub, { idempotencyKeys: false }).place(BID, { idempotencyKey: 'mine' })).data.orderId).toBe(
      'o-1',
    );
    expect(stub.requests.map((request) => request.headers['idempotency-key'])).toEqual(['mine', 'mine']);
  });

  it('an aborted call stops at once, without retrying', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '5' }), json(200, BALANCE)]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('given up')), 200);
    const error = await clientOf(stub)
      .balance({ signal: abort.signal })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('given up');
    expect(stub.requests).toHaveLength(1);
  });
});

describe('errors', () => {
  it('an error envelope is an OrdergateError with the status, code, message, field errors, request id and Retry-After', async () => {
    stub = await stubServer([json(429, envelope('e-429', 'Too many requests', 'req-42'), { 'retry-after': '3' })]);
    const error = (await clientOf(stub)
      .place(BID)
      .catch((e: unknown) => e)) as OrdergateError;
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({
      name: 'OrdergateError',
      status: 429,
      code: 'e-429',
      message: 'Too many requests',
      requestId: 'req-42',
      retryAfterSeconds: 3,
      errors: [{ field: 'x', message: 'bad x' }],
    });
    expect(error.is('RATE_LIMITED')).toBe(true);
  });

  it('an answer that is not the API (a proxy page, a code outside the catalog) is a transport error with its status', async () => {
    stub = await stubServer([
      (_request, response) =>
        void response
          .writeHead(502, { 'content-type': 'text/html', 'request-id': 'req-9' })
          .end('<html>Bad gateway</html>'),
    ]);
    const error = await clientOf(stub)
      .balance()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect(error).toMatchObject({ status: 502, requestId: 'req-9' });
    await stub.close();
    stub = await stubServer([json(400, envelope('e-999'))]);
    expect(
      await clientOf(stub)
        .balance()
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OrdergateTransportError);
  });
});

describe('login: retried after a network error only when its request never left', () => {
  it('a login whose answer is lost after the server read it is not retried (its TOTP code may be spent): a transport error', async () => {
    stub = await stubServer([drop, json(200, LOGGED_IN)]);
    const client = new OrdergateClient({ baseUrl: stub.url });
    const error = await client.login(LOGIN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect((error as Error).message).toMatch(/no answer after 1 attempt\(s\), not retried/);
    expect(stub.requests).toHaveLength(1);
    expect(client.accessToken).toBeUndefined();
  });

  it('a login that times out is not retried either', async () => {
    stub = await stubServer([hang, json(200, LOGGED_IN)]);
    const error = await new OrdergateClient({ baseUrl: stub.url, timeoutMs: 300 })
      .login(LOGIN)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect(stub.requests).toHaveLength(1);
  });

  it('a login whose connection was refused is retried, and so is one answered 503', async () => {
    stub = await stubServer([json(200, LOGGED_IN)]);
    const client = new OrdergateClient({ baseUrl: stub.url, fetch: await refusing(stub, 1) });
    expect((await client.login(LOGIN)).data.access_token).toBe('token-2');
    expect(client.accessToken).toBe('token-2');
    expect(stub.requests).toHaveLength(1);
    expect(JSON.parse(stub.requests[0]!.body)).toMatchObject({ user_id: 'u-1', second_auth: '123456' });
    await stub.close();
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '0' }), json(200, LOGGED_IN)]);
    expect((await new OrdergateClient({ baseUrl: stub.url }).login(LOGIN)).data.access_token).toBe('token-2');
    expect(stub.requests).toHaveLength(2);
  });

  it('a refused connection, then a lost answer: no third attempt', async () => {
    stub = await stubServer([drop, json(200, LOGGED_IN)]);
    const error = await new OrdergateClient({ baseUrl: stub.url, fetch: await refusing(stub, 1) })
      .login(LOGIN)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect((error as Error).message).toMatch(/no answer after 2 attempt\(s\), not retried/);
    expect(stub.requests).toHaveLength(1);
  });

  it('tells a connection never made (refused, also among every address of a host) from one that may have carried the request', async () => {
    const refused = await fetch(await refusedUrl()).catch((e: unknown) => e);
    expect(certainlyUnsent(refused)).toBe(true);
    const code = (value: string) => Object.assign(new Error(value), { code: value });
    expect(
      certainlyUnsent(
        new TypeError('fetch failed', { cause: new AggregateError([code('ECONNREFUSED'), code('ECONNREFUSED')]) }),
      ),
    ).toBe(true);
    expect(
      certainlyUnsent(
        new TypeError('fetch failed', { cause: new AggregateError([code('ECONNREFUSED'), code('ECONNRESET')]) }),
      ),
    ).toBe(false);
    for (const lost of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])
      expect(certainlyUnsent(new TypeError('fetch failed', { cause: code(lost) }))).toBe(false);
    expect(certainlyUnsent(new Error('no answer within 300 ms'))).toBe(false);
  });
});

describe('logout and deleteCart: a retry that finds the call done already resolves', () => {
  it('a logout whose answer is lost and whose retry gets 401 e-204 (revoked) resolves, and forgets the token', async () => {
    stub = await stubServer([drop, json(401, envelope('e-204'))]);
    const client = clientOf(stub);
    expect(await client.logout()).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Logged out successfully',
      data: [{ message: 'success' }],
    });
    expect(stub.requests).toHaveLength(2);
    expect(stub.requests.map((request) => request.method)).toEqual(['DELETE', 'DELETE']);
    expect(client.accessToken).toBeUndefined();
  });

  it('a logout answered 401 e-204 at once, or after refused connections only, still throws it', async () => {
    stub = await stubServer([json(401, envelope('e-204')), json(200, LOGGED_OUT)]);
    expect(
      await clientOf(stub)
        .logout()
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 401, code: 'e-204' });
    expect(stub.requests).toHaveLength(1);
    await stub.close();
    stub = await stubServer([json(401, envelope('e-204'))]);
    const error = await clientOf(stub, { fetch: await refusing(stub, 1) })
      .logout()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({ status: 401, code: 'e-204' });
  });

  it('a cart delete whose answer is lost (dropped, or timed out) and whose retry gets 404 e-405 resolves', async () => {
    for (const lost of [drop, hang]) {
      stub = await stubServer([lost, json(404, envelope('e-405'))]);
      const deleted = await clientOf(stub, { timeoutMs: 300 }).deleteCart('cart-1');
      expect(deleted).toEqual({
        status: 'success',
        code: 's-101',
        message: 'Ordercart deleted successfully',
        data: [{ message: 'success' }],
      });
      expect(stub.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
        'DELETE /transactional/v1/ordercart/cart-1',
        'DELETE /transactional/v1/ordercart/cart-1',
      ]);
      await stub.close();
    }
    stub = undefined;
  });

  it('a cart delete answered 404 e-405 at once still throws it; another error after a lost answer too', async () => {
    stub = await stubServer([json(404, envelope('e-405'))]);
    expect(
      await clientOf(stub)
        .deleteCart('cart-1')
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 404, code: 'e-405' });
    expect(stub.requests).toHaveLength(1);
    await stub.close();
    stub = await stubServer([drop, json(401, envelope('e-204'))]);
    expect(
      await clientOf(stub)
        .deleteCart('cart-1')
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 401, code: 'e-204' });
  });
});

describe('the Idempotency-Key of a failed order-entry call is on its error', () => {
  it('a bid whose every answer is lost: the transport error carries the key it sent, and a second place with it sends it again', async () => {
    stub = await stubServer([drop, drop, json(200, PLACED)]);
    const client = clientOf(stub, { retry: { attempts: 2, maxDelayMs: 5_000 } });
    const error = (await client.place(BID).catch((e: unknown) => e)) as OrdergateTransportError;
    expect(error).toBeInstanceOf(OrdergateTransportError);
    expect(stub.requests).toHaveLength(2);
    const sent = stub.requests[0]!.headers['idempotency-key'];
    expect(sent).toMatch(/^[0-9a-f-]{36}$/);
    expect(stub.requests[1]!.headers['idempotency-key']).toBe(sent);
    expect(error.idempotencyKey).toBe(sent);
    expect((await client.place(BID, { idempotencyKey: error.idempotencyKey })).data.orderId).toBe('o-1');
    expect(stub.requests).toHaveLength(3);
    expect(stub.requests[2]!.headers['idempotency-key']).toBe(sent);
    expect(JSON.parse(stub.requests[2]!.body)).toEqual(BID);
  });

  it("every order-entry call puts its key on an OrdergateError (409 e-116 to the last attempt: the first call still runs), a caller's key too", async () => {
    stub = await stubServer([json(409, envelope('e-116'), { 'retry-after': '1' })]);
    const client = clientOf(stub, { retry: { attempts: 1 } });
    const line = { TransactionType: 'BUY', Quantity: 1 } as unknown as CartLine;
    const cart = {
      ordercartName: 'c',
      orders: [line],
      version: '1',
      createdBy: 'u',
      modifiedBy: 'u',
      executedNoTime: 0,
    } as const;
    const calls: [string, () => Promise<unknown>][] = [
      ['place', () => client.place(BID)],
      ['modify', () => client.modify('NSE_EQ', 'o-1', { quantity: '5' } as never)],
      ['cancel', () => client.cancel('NSE_EQ', 'o-1')],
      ['createCart', () => client.createCart(cart)],
      ['updateCart', () => client.updateCart({ ...cart, ordercartId: 'cart-1' })],
      ['executeCart', () => client.executeCart('cart-1')],
    ];
    for (const [name, call] of calls) {
      const error = (await call().catch((e: unknown) => e)) as OrdergateError;
      expect(error, name).toBeInstanceOf(OrdergateError);
      expect(error, name).toMatchObject({ status: 409, code: 'e-116', retryAfterSeconds: 1 });
      expect(error.idempotencyKey, name).toBe(stub.requests.at(-1)!.headers['idempotency-key']);
      expect(error.idempotencyKey, name).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(new Set(stub.requests.map((request) => request.headers['idempotency-key'])).size).toBe(calls.length);
    expect(await client.place(BID, { idempotencyKey: 'mine' }).catch((e: unknown) => e)).toMatchObject({
      code: 'e-116',
      idempotencyKey: 'mine',
    });
  });

  it('a call without a key has none on its error: a read, or a bid without Idempotency-Keys', async () => {
    stub = await stubServer([json(409, envelope('e-116'))]);
    const read = (await clientOf(stub)
      .balance()
      .catch((e: unknown) => e)) as OrdergateError;
    expect(read).toBeInstanceOf(OrdergateError);
    expect(read.idempotencyKey).toBeUndefined();
    const bid = (await clientOf(stub, { idempotencyKeys: false })
      .place(BID)
      .catch((e: unknown) => e)) as OrdergateError;
    expect(bid).toBeInstanceOf(OrdergateError);
    expect(bid.idempotencyKey).toBeUndefined();
    expect(stub.requests[1]!.headers['idempotency-key']).toBeUndefined();
  });
});
