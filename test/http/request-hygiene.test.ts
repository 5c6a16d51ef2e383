/**
 * Issue 21, rows 6 to 8: one value per header that names the caller or the request (400 e-121); a body
 * in UTF-8 only, its bytes valid (400 e-122) and no other charset named (400 e-123); a prototype key in the
 * JSON an order cart carries in its `orders` string, at any depth (400 e-117). Nothing is stored by a
 * refusal.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const CARTS = '/transactional/v1/ordercart';

/**
 * A request written on a socket as given: the headers in order, duplicates included (flat name, value,
 * name, value ...), and a body of raw bytes. Answers the status and the parsed JSON body.
 */
function send(
  server: TestServer,
  method: string,
  path: string,
  rawHeaders: string[],
  body?: Buffer,
  // Answers are read field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(server.url);
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${hostname}:${port}`, 'connection: close'];
  for (let i = 0; i < rawHeaders.length; i += 2) lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`);
  lines.push(`content-length: ${body?.length ?? 0}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(body ? Buffer.concat([head, body]) : head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const status = Number(text.slice(9, 12));
      const payload = text.slice(end + 4);
      resolve({ status, body: payload === '' ? undefined : JSON.parse(payload) });
    });
  });
}

describe('request hygiene', () => {
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

  const count = async (table: 'orders' | 'order_carts') =>
    Number(
      (
        await server.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');
  const bidHeaders = (user: TestUser) => [
    'authorization',
    `Bearer ${user.token}`,
    'x-api-key',
    user.apiKey,
    'content-type',
    'application/json',
  ];

  it.each([
    { name: 'authorization', extra: () => ['Authorization', `Bearer ${bob.token}`] },
    { name: 'x-api-key', extra: () => ['X-Api-Key', bob.apiKey] },
    { name: 'idempotency-key', extra: () => ['idempotency-key', 'k1', 'Idempotency-Key', 'k2'] },
    { name: 'content-type', extra: () => ['content-type', 'text/plain'] },
  ])('refuses a bid that sends $name twice: 400 e-121 naming it, nothing stored', async ({ name, extra }) => {
    const before = await count('orders');
    const res = await send(server, 'POST', PLACE_ORDER, [...bidHeaders(alice), ...extra()], json(validBid()));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status: 'error',
      code: 'e-121',
      message: `The ${name} header is sent more than once; send it once`,
      errors: [{ field: name }],
    });
    expect(await count('orders')).toBe(before);
  });

  it('still takes each of those headers once', async () => {
    const res = await send(
      server,
      'POST',
      PLACE_ORDER,
      [...bidHeaders(alice), 'idempotency-key', 'once'],
      json(validBid()),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('refuses a body that is not valid UTF-8 (400 e-122) instead of storing U+FFFD in its place', async () => {
    const before = await count('order_carts');
    const body = Buffer.concat([
      Buffer.from('{"ordercartName":"basket '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","orders":"[]","version":"1"}'),
    ]);
    const res = await send(
      server,
      'POST',
      CARTS,
      ['authorization', `Bearer ${alice.token}`, 'content-type', 'application/json'],
      body,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status: 'error',
      code: 'e-122',
      message: 'The body is not valid UTF-8: it holds a byte sequence UTF-8 does not allow',
    });
    const bid = Buffer.concat([
      Buffer.from(JSON.stringify(validBid({ order_identifier: 'x' })).replace('"x"', '"a')),
      Buffer.from([0xc3]),
      Buffer.from('"'),
    ]);
    expect((await send(server, 'POST', PLACE_ORDER, bidHeaders(alice), bid)).body).toMatchObject({ code: 'e-122' });
    expect(await count('order_carts')).toBe(before);
  });

  it.each(['utf-16', 'latin1', 'ISO-8859-1', '"utf-16le"'])(
    'refuses a JSON body said to be in charset %s (400 e-123); UTF-8 by any of its names passes',
    async (charset) => {
      const res = await send(
        server,
        'POST',
        PLACE_ORDER,
        [...bidHeaders(alice).slice(0, 4), 'content-type', `application/json; charset=${charset}`],
        json(validBid()),
      );
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'e-123', errors: [{ field: 'content-type' }] });
      for (const utf8 of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
        const ok = await send(
          server,
          'POST',
          PLACE_ORDER,
          [...bidHeaders(alice).slice(0, 4), 'content-type', `application/json; charset=${utf8}`],
          json(validBid()),
        );
        expect(ok.status, `${utf8}: ${JSON.stringify(ok.body)}`).toBe(200);
      }
    },
  );

  it.each([
    { name: 'in a line', line: EXAMPLE_ORDER_LINE, field: 'orders[0].__proto__' },
    {
      name: 'deep in scripDetail',
      line: {
        ...EXAMPLE_ORDER_LINE,
        scripDetail: { ...EXAMPLE_ORDER_LINE.scripDetail, nested: { constructor: { prototype: {} } } },
      },
      field: 'orders[0].scripDetail.nested.constructor.prototype',
    },
  ])('refuses a prototype key $name of the orders string (400 e-117), as at the top level', async ({ line, field }) => {
    const before = await count('order_carts');
    // JSON.stringify never writes a "__proto__" key of an object literal: that one goes in by hand.
    const orders = JSON.stringify([line]);
    const text = field.endsWith('__proto__') ? orders.replace('[{', '[{"__proto__":{"polluted":true},') : orders;
    const body = {
      ordercartName: 'basket',
      orders: text,
      version: '1',
      createdBy: 'alice',
      modifiedBy: 'alice',
      executedNoTime: 0,
    };
    const res = await server.call('POST', CARTS, { body, token: alice.token });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ code: 'e-117', errors: [{ field }] });
    expect(await count('order_carts')).toBe(before);
  });
});
