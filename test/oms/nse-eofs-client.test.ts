/**
 * The e-OFS client against a stub of NSE's API on loopback (a real HTTP server): the wire of a bid as
 * mapping.ts writes it, the session (login, a 401 answered by one new login, the token refreshed ahead of
 * its expiry), and the outcome of each way a call can end. The one that matters most: an answer lost after
 * the request may have reached the exchange (a 5xx, a timeout, a batch answer that leaves a bid out, an
 * answer for another reference) is `unknown`, never a refusal; one the exchange did not take (refused
 * connection, 429, a second 401) is `not-sent`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NseEofsClient } from '../../src/oms/links/nse-eofs/client.js';
import { orderIdOfReference, referenceOf, type MemberBid } from '../../src/oms/links/nse-eofs/mapping.js';

interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}

type Handler = (request: Received, response: ServerResponse) => void;

const SECRET = 'correct-horse-battery-staple';
const credentials = { memberCode: 'M1234', loginId: 'api-user', password: SECRET };

let server: Server;
let baseUrl: string;
let received: Received[];
let handler: Handler;
let tokens: number;

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/** The stub: logins answer a new token each; every other call goes to the test's handler. */
beforeEach(async () => {
  received = [];
  tokens = 0;
  handler = (_request, response) => json(response, 500, { code: 500, messages: ['no handler'] });
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const entry = {
        method: request.method!,
        url: request.url!,
        authorization: request.headers.authorization,
        body: text === '' ? null : JSON.parse(text),
      };
      received.push(entry);
      if (request.url === '/api/auth/token') {
        tokens += 1;
        json(response, 200, { code: 200, data: { token: `token-${tokens}`, expiresIn: 600 } });
        return;
      }
      handler(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const ORDER_ID = '01933b4e-8a2c-7d11-9f00-0123456789ab';
const bid = (overrides: Partial<MemberBid> = {}): MemberBid => ({
  orderId: ORDER_ID,
  exchangeOrderId: null,
  symbol: 'ACME',
  series: 'IS',
  ucc: 'UCC0001',
  clientType: 'CLI',
  custodian: null,
  zeroMargin: false,
  investorCategory: 'NII',
  cutoff: false,
  quantity: 100,
  pricePaise: 10_125,
  ...overrides,
});

const accepting: Handler = (request, response) => {
  const body = request.body as { apiEchoBack: string };
  json(response, 200, { code: 200, data: { orderId: 'NSE-0001', apiEchoBack: body.apiEchoBack } });
};

const client = (options: Partial<ConstructorParameters<typeof NseEofsClient>[0]> = {}) =>
  new NseEofsClient({ baseUrl, credentials, ...options });

describe('the e-OFS client', () => {
  it('logs in, sends a new bid as the mapping writes it with the token, and takes the exchange order number', async () => {
    handler = accepting;
    const outcome = await client().submit(bid(), 'E');
    expect(outcome).toEqual({ kind: 'accepted', exchangeOrderId: 'NSE-0001' });
    expect(received.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/auth/token'],
      ['POST', '/api/order'],
    ]);
    expect(received[0]!.body).toEqual({ memberCode: 'M1234', loginId: 'api-user', password: SECRET });
    expect(received[1]!.authorization).toBe('Bearer token-1');
    expect(received[1]!.body).toEqual({
      symbol: 'ACME',
      series: 'IS',
      clientType: 'CLI',
      clientId: 'UCC0001',
      marginType: 1,
      isMarketOrder: false,
      quantity: 100,
      price: 101.25,
      operationType: 'E',
      orderId: '',
      apiEchoBack: '01933b4e8a2c7d119f000123456789ab',
      investorCategory: 'NII',
    });
  });

  it('writes a 0 %-margin bid with its custodian, a cut-off bid with a blank price, and each operation with its method', async () => {
    handler = accepting;
    const c = client();
    await c.submit(bid({ zeroMargin: true, custodian: 'CUST01', exchangeOrderId: 'NSE-9' }), 'M');
    await c.submit(bid({ series: 'RS', cutoff: true, exchangeOrderId: 'NSE-9' }), 'CF');
    await c.submit(bid({ exchangeOrderId: 'NSE-9' }), 'C');
    const orders = received.filter((r) => r.url === '/api/order');
    expect(orders.map((r) => r.method)).toEqual(['PUT', 'PUT', 'DELETE']);
    expect(orders[0]!.body).toMatchObject({
      marginType: 0,
      participantId: 'CUST01',
      operationType: 'M',
      orderId: 'NSE-9',
    });
    expect(orders[1]!.body).toMatchObject({ isMarketOrder: true, price: '', operationType: 'CF', series: 'RS' });
    expect(orders[1]!.body).not.toHaveProperty('participantId');
    expect(orders[2]!.body).toMatchObject({ operationType: 'C' });
  });

  it('answers a refusal with the exchange words, fields included', async () => {
    handler = (_r, response) =>
      json(response, 422, { code: 422, messages: [{ field: 'price', msg: 'below the floor price' }, 'series closed'] });
    expect(await client().submit(bid(), 'E')).toEqual({
      kind: 'rejected',
      reason: 'price: below the floor price; series closed',
    });
  });

  it('logs in once more after a 401 and sends again (the exchange did not take it); a second 401 is not-sent', async () => {
    let first = true;
    handler = (request, response) => {
      if (first) {
        first = false;
        json(response, 401, { code: 401, messages: ['session expired'] });
        return;
      }
      accepting(request, response);
    };
    expect(await client().submit(bid(), 'E')).toEqual({ kind: 'accepted', exchangeOrderId: 'NSE-0001' });
    expect(tokens).toBe(2);
    expect(received.filter((r) => r.url === '/api/order').map((r) => r.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);

    handler = (_r, response) => json(response, 401, { code: 401, messages: ['no'] });
    expect(await client().submit(bid(), 'E')).toMatchObject({
      kind: 'not-sent',
      why: 'the exchange refused the session twice (401)',
    });
  });

  it('a 429 is not-sent with its Retry-After; a 5xx is unknown (the exchange may hold the bid)', async () => {
    handler = (_r, response) => json(response, 429, { code: 429, messages: ['slow down'] }, { 'retry-after': '2' });
    expect(await client().submit(bid(), 'E')).toEqual({
      kind: 'not-sent',
      why: 'the exchange limits the rate (429)',
      retryAfterMs: 2000,
    });
    handler = (_r, response) => json(response, 503, { code: 503, messages: ['busy'] });
    expect(await client().submit(bid(), 'E')).toEqual({ kind: 'unknown', why: 'the exchange answered 503' });
  });

  it('an answer that never comes, or is cut off, is unknown; a refused connection is not-sent', async () => {
    handler = () => undefined; // never answers
    expect(await client({ timeoutMs: 150 }).submit(bid(), 'E')).toEqual({
      kind: 'unknown',
      why: 'no answer within the timeout',
    });

    handler = (_r, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      // The connection ends in the middle of the body.
      response.write('{"code": 200, "da', () => response.socket?.destroy());
    };
    expect((await client().submit(bid(), 'E')).kind).toBe('unknown');

    const closed = client({ baseUrl: 'http://127.0.0.1:1/api' });
    expect(await closed.submit(bid(), 'E')).toMatchObject({ kind: 'not-sent' });
  });

  it('an answer it cannot read, or that may follow the bid being taken, is unknown, never a refusal', async () => {
    const answers: [number, unknown][] = [
      [200, null], // an empty body
      [200, { code: 200, data: { orderId: 7, apiEchoBack: referenceOf(ORDER_ID) } }], // no order number
      [201, { code: 201 }],
      [408, { code: 408, messages: ['timed out'] }],
      [409, { code: 409, messages: ['a request is under way'] }],
      [425, { code: 425 }],
    ];
    for (const [status, body] of answers) {
      handler = (_r, response) => {
        if (body === null) {
          response.writeHead(status);
          response.end();
        } else json(response, status, body);
      };
      expect((await client().submit(bid(), 'E')).kind, `${status} ${JSON.stringify(body)}`).toBe('unknown');
    }
    // A refusal says so, with a 4xx and its words, or an item with its code.
    handler = (_r, response) => json(response, 400, { code: 400 });
    expect(await client().submit(bid(), 'E')).toEqual({
      kind: 'rejected',
      reason: 'the exchange refused the bid (400)',
    });
  });

  it('logs in once for calls that need a session at the same time', async () => {
    handler = accepting;
    const c = client();
    const outcomes = await Promise.all([c.submit(bid(), 'E'), c.submit(bid(), 'E'), c.submit(bid(), 'E')]);
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(tokens).toBe(1);
  });

  it('reads a Retry-After given as a date', async () => {
    const now = Date.parse('2026-12-06T10:00:00Z');
    handler = (_r, response) =>
      json(response, 429, { code: 429 }, { 'retry-after': new Date(now + 30_000).toUTCString() });
    expect(await client({ now: () => now }).submit(bid(), 'E')).toMatchObject({
      kind: 'not-sent',
      retryAfterMs: 30_000,
    });
  });

  it('an answer that echoes another reference is unknown: it is not this bid’s', async () => {
    handler = (_r, response) =>
      json(response, 200, { code: 200, data: { orderId: 'NSE-7', apiEchoBack: 'ffffffffffffffffffffffffffffffff' } });
    expect(await client().submit(bid(), 'E')).toMatchObject({ kind: 'unknown' });
  });

  it('answers a batch bid by bid, by reference: accepted, rejected, and one the answer leaves out unknown', async () => {
    const ids = [
      '01933b4e-8a2c-7d11-9f00-000000000001',
      '01933b4e-8a2c-7d11-9f00-000000000002',
      '01933b4e-8a2c-7d11-9f00-000000000003',
    ];
    handler = (request, response) => {
      const sent = request.body as { apiEchoBack: string }[];
      // Out of order, the third left out.
      json(response, 200, {
        code: 200,
        data: [
          { apiEchoBack: sent[1]!.apiEchoBack, code: 422, messages: ['quantity above the issue size'] },
          { orderId: 'NSE-1', apiEchoBack: sent[0]!.apiEchoBack },
        ],
      });
    };
    const outcomes = await client().submitBatch(
      ids.map((orderId) => bid({ orderId })),
      'E',
    );
    expect(outcomes).toEqual([
      { kind: 'accepted', exchangeOrderId: 'NSE-1' },
      { kind: 'rejected', reason: 'quantity above the issue size' },
      { kind: 'unknown', why: 'the batch answer left this bid out' },
    ]);
    expect(received.filter((r) => r.url === '/api/order/batch')).toHaveLength(1);
  });

  it('takes an item naming its order with code 200 (and remarks) as accepted, and one with an error code as refused', async () => {
    const ids = ['01933b4e-8a2c-7d11-9f00-000000000001', '01933b4e-8a2c-7d11-9f00-000000000002'];
    handler = (request, response) => {
      const sent = request.body as { apiEchoBack: string }[];
      json(response, 200, {
        code: 200,
        data: [
          { orderId: 'NSE-1', apiEchoBack: sent[0]!.apiEchoBack, code: 200, messages: ['bid received'] },
          { orderId: 'NSE-2', apiEchoBack: sent[1]!.apiEchoBack, code: 422, messages: ['price below the floor'] },
        ],
      });
    };
    expect(
      await client().submitBatch(
        ids.map((orderId) => bid({ orderId })),
        'E',
      ),
    ).toEqual([
      { kind: 'accepted', exchangeOrderId: 'NSE-1' },
      { kind: 'rejected', reason: 'price below the floor' },
    ]);
  });

  it('a 403, 404 or 413 on the way is not-sent (the exchange did not judge the bid), for a minute', async () => {
    for (const status of [403, 404, 413]) {
      handler = (_request, response) => json(response, status, { code: status, messages: ['no such path'] });
      expect(await client().submit(bid(), 'E')).toMatchObject({ kind: 'not-sent', retryAfterMs: 60_000 });
      expect(
        await client().submitBatch([bid(), bid({ orderId: '01933b4e-8a2c-7d11-9f00-000000000009' })], 'E'),
      ).toEqual([expect.objectContaining({ kind: 'not-sent' }), expect.objectContaining({ kind: 'not-sent' })]);
    }
  });

  it('refreshes the token ahead of its expiry, on its own clock, and logs in again when the refresh fails', async () => {
    const clock = { now: 1_000_000 };
    handler = (request, response) => {
      if (request.url === '/api/auth/refreshToken') {
        json(response, 200, { code: 200, data: { token: 'token-refreshed', expiresIn: 600 } });
        return;
      }
      accepting(request, response);
    };
    const c = client({ now: () => clock.now });
    await c.submit(bid(), 'E');
    clock.now += 541_000; // 59 s before the 600 s token expires
    await c.submit(bid(), 'E');
    expect(received.map((r) => r.url)).toEqual([
      '/api/auth/token',
      '/api/order',
      '/api/auth/refreshToken',
      '/api/order',
    ]);
    expect(received.at(-1)!.authorization).toBe('Bearer token-refreshed');

    handler = (request, response) => {
      if (request.url === '/api/auth/refreshToken') json(response, 401, { code: 401, messages: ['expired'] });
      else accepting(request, response);
    };
    clock.now += 541_000;
    await c.submit(bid(), 'E');
    expect(received.slice(-3).map((r) => r.url)).toEqual(['/api/auth/refreshToken', '/api/auth/token', '/api/order']);
  });

  it('never puts the password in an error, and says what the exchange answered a refused login', async () => {
    server.removeAllListeners('request');
    server.on('request', (_request: IncomingMessage, response: ServerResponse) =>
      json(response, 403, { code: 403, messages: ['invalid credentials for api-user'] }),
    );
    const error = await client()
      .login()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('e-OFS login refused: HTTP 403, invalid credentials for api-user');
    expect((error as Error).message).not.toContain(SECRET);
    const outcome = await client().submit(bid(), 'E');
    // Not tried again for a minute: a wrong password retried every second would lock the API user.
    expect(outcome).toMatchObject({ kind: 'not-sent', retryAfterMs: 60_000 });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it('tries no login for a minute after a refused one, whoever asks: a bid, the book, the stream', async () => {
    let logins = 0;
    server.removeAllListeners('request');
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (request.url === '/api/auth/token') logins += 1;
      json(response, 403, { code: 403, messages: ['invalid credentials'] });
    });
    const clock = { now: 1_000_000 };
    const c = client({ now: () => clock.now });
    expect(await c.submit(bid(), 'E')).toMatchObject({ kind: 'not-sent', retryAfterMs: 60_000 });
    clock.now += 20_000;
    expect(await c.submit(bid(), 'E')).toMatchObject({ kind: 'not-sent', retryAfterMs: 40_000 });
    expect(await c.queryBook([referenceOf(ORDER_ID)])).toMatchObject({ kind: 'not-sent', retryAfterMs: 40_000 });
    await expect(c.stream(0, AbortSignal.timeout(1_000)).next()).rejects.toThrow(/^e-OFS login refused/);
    expect(logins).toBe(1);
    clock.now += 40_001;
    await c.submit(bid(), 'E');
    expect(logins).toBe(2);
  });

  it('reads the stream line by line, and tells of a line it cannot read rather than pass it on', async () => {
    const good = {
      type: 'ORDER',
      seq: 2,
      event: 'ALLOTTED',
      orderId: 'NSE-1',
      apiEchoBack: referenceOf(ORDER_ID),
      allottedQuantity: 10,
      allottedPrice: 101.5,
      day: null,
      text: 'Allotted 10',
    };
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.end(
        [
          JSON.stringify({ ...good, seq: 1, day: 'yesterday' }),
          'not json',
          JSON.stringify(good),
          JSON.stringify({ type: 'HEARTBEAT', seq: 2 }),
          '',
        ].join('\n'),
      );
    };
    const unreadable: string[] = [];
    const c = client({ onUnreadableLine: (line) => unreadable.push(line) });
    const messages = [];
    for await (const message of c.stream(0, AbortSignal.timeout(2_000))) messages.push(message);
    expect(messages).toEqual([good, { type: 'HEARTBEAT', seq: 2 }]);
    expect(unreadable).toHaveLength(2);
    expect(unreadable[1]).toBe('not json');
  });

  it('turns a reference back into the order id it came from, and refuses one it did not make', () => {
    expect(orderIdOfReference(referenceOf(ORDER_ID))).toBe(ORDER_ID);
    expect(orderIdOfReference('not-ours')).toBeNull();
  });
});
