/**
 * JSON bodies with a prototype key: a "__proto__" key or a "constructor" object holding "prototype", at any
 * depth, is refused (400 e-117, not e-101: the JSON is valid) before anything reads the body, and the answer names the key and where it
 * is, rather than calling valid JSON invalid. Nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';

/** A valid bid's JSON text with `member` (raw JSON text, e.g. `"__proto__":{}`) added to the object at `path`. */
function bidWith(member: string, path: string[] = []): string {
  const bid = validBid();
  const marker = 'prototype-key-goes-here';
  let target: Record<string, unknown> = bid;
  for (const name of path) target = target[name] as Record<string, unknown>;
  target[marker] = 0;
  return JSON.stringify(bid).replace(`"${marker}":0`, member);
}

describe('JSON bodies with a prototype key', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
  });
  afterAll(() => server.close());

  const countOrders = async () =>
    Number(
      (
        await server.store.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const place = (rawBody: string) =>
    server.call('POST', PLACE_ORDER, { rawBody, token: alice.token, apiKey: alice.apiKey });

  it.each([
    { name: 'a "__proto__" key', body: bidWith('"__proto__":{"x":1}'), field: '__proto__' },
    {
      name: 'a "__proto__" key in a nested object',
      body: bidWith('"__proto__":{}', ['scrip_info']),
      field: 'scrip_info.__proto__',
    },
    {
      name: 'a "constructor" object holding "prototype"',
      body: bidWith('"constructor":{"prototype":{}}'),
      field: 'constructor.prototype',
    },
    {
      name: 'only a "constructor" object holding "prototype"',
      body: '{"constructor":{"prototype":{}}}',
      field: 'constructor.prototype',
    },
  ])('refuses a body with $name: 400 e-117 naming the key, no order stored', async ({ body, field }) => {
    const before = await countOrders();
    const res = await place(body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe(Errors.PROTOTYPE_KEY.code);
    expect(res.body.message).toBe(`The body holds the key "${field}", which is refused (prototype pollution)`);
    expect(res.body.errors).toEqual([{ field, message: `${field} is refused (prototype pollution)` }]);
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(await countOrders()).toBe(before);
  });

  it('still answers text that is not JSON as not valid JSON', async () => {
    const res = await place('{"__proto__": ');
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe(Errors.MALFORMED_JSON.code);
    expect(res.body.message).toBe('The body is not valid JSON');
    expect(res.body.errors).toEqual([]);
  });

  it('accepts "__proto__" as a string value: only keys are refused', async () => {
    const res = await place(JSON.stringify(validBid({ order_identifier: '__proto__' })));
    expect(res.status, res.text).toBe(200);
  });

  describe('bodies nested too deep', () => {
    // 20,000 levels fit in the 64 KB body limit and would overflow the stack of any recursive walk of the
    // body (the prototype-key report, the audit trail's redaction).
    const deep = (levels: number, inner: string) => `{"orders":${'['.repeat(levels)}${inner}${']'.repeat(levels)}}`;

    it.each([
      { name: '20,000 nested arrays', body: deep(20_000, '1') },
      { name: '20,000 nested arrays around a "__proto__" key', body: deep(20_000, '{"__proto__":1}') },
      { name: 'a bid one level too deep', body: JSON.stringify(validBid({ algo_id: JSON.parse(deep(31, '1')) })) },
    ])('refuses $name: 400 e-118, nothing stored, and the server keeps answering', async ({ body }) => {
      const before = await countOrders();
      const res = await place(body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(Errors.BODY_TOO_DEEP.code);
      expect(res.body.message).toBe('The body nests objects and arrays more than 32 levels deep');
      expect(await countOrders()).toBe(before);
      expect((await place(JSON.stringify(validBid()))).status).toBe(200);
    });

    it('takes 32 levels; brackets inside strings and side by side do not count', async () => {
      // 32 levels reach the schema, which refuses algo_id as not a string; the depth check lets it through.
      const atLimit = await place(JSON.stringify(validBid({ algo_id: JSON.parse(deep(30, '1')) })));
      expect(atLimit.status, atLimit.text).toBe(400);
      expect(atLimit.body.code).toBe(Errors.WRONG_TYPE.code);
      // Brackets and escaped quotes inside strings are text, not nesting: 40 of them, in a valid bid.
      const inStrings = await place(
        JSON.stringify(validBid({ algo_id: `${'{['.repeat(20)}"\\`, strategy_id: '\\"[[[' })),
      );
      expect(inStrings.status, inStrings.text).toBe(200);
      // Many brackets side by side are not nesting: 40 empty arrays in one, two levels below the bid.
      const wide = await place(
        JSON.stringify(validBid({ algo_id: JSON.parse(`[${Array(40).fill('[]').join(',')}]`) })),
      );
      expect(wide.status, wide.text).toBe(400);
      expect(wide.body.code).toBe(Errors.WRONG_TYPE.code);
    });
  });
});
