/**
 * Wire conventions (product.md): JSON bodies only, the 64 KiB limit, the one error envelope with its
 * Request-Id, exact success bodies, 404/405 through the envelope, and the OpenAPI document and its UI.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { BODY_LIMIT_BYTES } from '../../src/http/plugins/json-body.js';
import { Errors, type ErrorKind } from '../../src/domain/errors.js';
import { createServices } from '../../src/wiring.js';
import {
  startTestServer,
  TEST_PASSWORD,
  validBid,
  type CallOptions,
  type CallResult,
  type TestServer,
  type TestUser,
} from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const SESSION = '/authentication/v1/user/session';

const catalogByCode = new Map<string, ErrorKind>(Object.values(Errors).map((kind) => [kind.code, kind]));

describe('wire conventions', () => {
  let server: TestServer;
  let alice: TestUser;
  /** Every status this file saw, to show that none was a 5xx. */
  const statuses: number[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    alice = await server.createUser('alice');
  });
  afterAll(() => server.close());

  async function call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const res = await server.call(method, path, options);
    statuses.push(res.status);
    return res;
  }

  /** A request sent exactly as given: fetch would add a content type of its own to a body without one. */
  function rawCall(method: string, path: string, headers: Record<string, string>, body: string): Promise<CallResult> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        new URL(path, server.url),
        { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              if (typeof value === 'string') responseHeaders.set(name, value);
            statuses.push(res.statusCode ?? 0);
            resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text, body: JSON.parse(text) });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  const orderEntry = (): CallOptions => ({ token: alice.token, apiKey: alice.apiKey });

  /** The error envelope, exactly: its fields, a catalog code with the matching status, and the request id. */
  function expectEnvelope(res: CallResult, kind: ErrorKind): void {
    expect(res.status, res.text).toBe(kind.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'errors', 'message', 'request_id', 'status']);
    expect(res.body.status).toBe('error');
    expect(res.body.code).toBe(kind.code);
    expect(res.body.message).toEqual(expect.any(String));
    expect(Array.isArray(res.body.errors)).toBe(true);
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
  }

  describe('bodies', () => {
    it('answers malformed JSON with 400 e-101', async () => {
      expectEnvelope(await call('POST', SESSION, { rawBody: '{"user_id": "alice",' }), Errors.MALFORMED_JSON);
      expectEnvelope(
        await call('POST', PLACE_ORDER, { rawBody: "{'quantity': '10'}", ...orderEntry() }),
        Errors.MALFORMED_JSON,
      );
    });

    it('answers a text/plain body with 415 e-108', async () => {
      expectEnvelope(
        await call('POST', PLACE_ORDER, {
          rawBody: JSON.stringify(validBid()),
          contentType: 'text/plain',
          ...orderEntry(),
        }),
        Errors.UNSUPPORTED_MEDIA_TYPE,
      );
    });

    it('answers a body of another JSON-like media type with 415 e-108', async () => {
      const res = await call('POST', SESSION, { rawBody: '{}', contentType: 'application/x-www-form-urlencoded' });
      expectEnvelope(res, Errors.UNSUPPORTED_MEDIA_TYPE);
    });

    it('answers a body sent without any Content-Type with 415 e-108', async () => {
      const body = JSON.stringify({ user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD });
      expectEnvelope(await rawCall('POST', SESSION, {}, body), Errors.UNSUPPORTED_MEDIA_TYPE);
    });

    it('accepts application/json with a charset parameter', async () => {
      const res = await call('POST', PLACE_ORDER, {
        rawBody: JSON.stringify(validBid()),
        contentType: 'application/json; charset=utf-8',
        ...orderEntry(),
      });
      expect(res.status, res.text).toBe(200);
    });

    it('answers a body over 64 KiB with 413 e-107, and does not refuse a body of exactly 64 KiB for its size', async () => {
      const login = JSON.stringify({ user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD });
      const atLimit = login + ' '.repeat(BODY_LIMIT_BYTES - login.length);
      expect(Buffer.byteLength(atLimit)).toBe(64 * 1024);
      expect((await call('POST', SESSION, { rawBody: atLimit })).status).toBe(200);
      expectEnvelope(await call('POST', SESSION, { rawBody: `${atLimit} ` }), Errors.BODY_TOO_LARGE);
      const bigBid = JSON.stringify(validBid({ algo_id: 'x'.repeat(70_000) }));
      expectEnvelope(await call('POST', PLACE_ORDER, { rawBody: bigBid, ...orderEntry() }), Errors.BODY_TOO_LARGE);
    });

    it('answers an empty body sent as application/json with 400 e-102', async () => {
      expectEnvelope(await call('POST', SESSION, { rawBody: '' }), Errors.BODY_REQUIRED);
      expectEnvelope(await call('POST', PLACE_ORDER, { rawBody: '', ...orderEntry() }), Errors.BODY_REQUIRED);
    });

    it.each(['[]', '[{"user_id":"alice"}]', 'null', '"alice"', '42', 'true'])(
      'answers the JSON value %s as a body with 400 and a body-level code',
      async (rawBody) => {
        const res = await call('POST', SESSION, { rawBody });
        expect(res.status, res.text).toBe(400);
        expect(['e-102', 'e-104']).toContain(res.body.code);
        expectEnvelope(res, catalogByCode.get(res.body.code)!);
      },
    );
  });

  describe('routing', () => {
    it('answers an unknown route with 404 e-109', async () => {
      expectEnvelope(await call('GET', '/transactional/v1/nothing-here'), Errors.ROUTE_NOT_FOUND);
      expectEnvelope(
        await call('POST', '/transactional/v2/orders/regular', { body: validBid(), ...orderEntry() }),
        Errors.ROUTE_NOT_FOUND,
      );
    });

    it('answers a wrong method on a known path with 405 e-113 in the envelope and an Allow header', async () => {
      const res = await call('GET', PLACE_ORDER, orderEntry());
      expectEnvelope(res, Errors.METHOD_NOT_ALLOWED);
      expect(res.headers.get('allow')).toContain('POST');
      expectEnvelope(await call('PATCH', SESSION, { body: {} }), Errors.METHOD_NOT_ALLOWED);
    });
  });

  describe('Request-Id', () => {
    it('is on every response, equal to request_id in every error body, and new for every request', async () => {
      const responses = [
        await call('POST', SESSION, { body: { user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD } }),
        await call('PUT', SESSION, { token: alice.token }),
        await call('POST', PLACE_ORDER, { body: validBid(), ...orderEntry() }),
        await call('GET', '/openapi.json'),
        await call('GET', '/docs'),
        await call('POST', PLACE_ORDER, { body: validBid({ quantity: 10 }), ...orderEntry() }),
        await call('POST', PLACE_ORDER, { body: validBid({ price: 101.52 }), ...orderEntry() }),
        await call('POST', PLACE_ORDER, { body: validBid() }),
        await call('POST', PLACE_ORDER, { rawBody: '{', ...orderEntry() }),
        await call('POST', PLACE_ORDER, { rawBody: 'x'.repeat(70_000), ...orderEntry() }),
        await call('POST', PLACE_ORDER, { rawBody: '{}', contentType: 'text/plain', ...orderEntry() }),
        await call('GET', '/nowhere'),
        await call('DELETE', PLACE_ORDER),
        await call('GET', '/transactional/v1/%E0%A4%A'),
      ];
      const ids = responses.map((res) => {
        const id = res.headers.get('request-id');
        expect(id, `${res.status} ${res.text.slice(0, 200)}`).toMatch(/^\S+$/);
        if (res.status >= 400) expect(res.body.request_id).toBe(id);
        return id;
      });
      expect(new Set(ids).size).toBe(responses.length);
    });
  });

  describe('success bodies', () => {
    it('carry exactly status, code, message and data', async () => {
      const token = (
        await call('POST', SESSION, { body: { user_id: 'alice', login_type: 'PASSWORD', password: TEST_PASSWORD } })
      ).body.data.access_token;
      const successes = [
        await call('PUT', SESSION, { token }),
        await call('POST', PLACE_ORDER, { body: validBid(), token, apiKey: alice.apiKey }),
        await call('DELETE', SESSION, { token }),
      ];
      for (const res of successes) {
        expect(res.status, res.text).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
        expect(res.body.status).toBe('success');
        expect(res.body.code).toBe('s-101');
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      }
    });
  });

  describe('OpenAPI document and UI', () => {
    it('serves GET /openapi.json without authentication: an OpenAPI 3 document listing every route and every catalog code', async () => {
      const res = await call('GET', '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(res.body.info.title).toBe('ordergate');

      // Every route a twin of the app registers (the same code, not yet listening) is in the document.
      const routes: { method: string; path: string }[] = [];
      const twin = buildApp(createServices(server.store, { tokenTtlSeconds: 60 }), { logger: false });
      twin.addHook('onRoute', (route) => {
        const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true || route.url.startsWith('/docs');
        if (hidden) return;
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD')
            routes.push({ method: method.toLowerCase(), path: route.url.replace(/:([A-Za-z_]+)/g, '{$1}') });
        }
      });
      await twin.ready();
      await twin.close();
      expect(routes).toEqual(
        expect.arrayContaining([
          { method: 'post', path: PLACE_ORDER },
          { method: 'post', path: SESSION },
          { method: 'put', path: SESSION },
          { method: 'delete', path: SESSION },
        ]),
      );
      for (const { method, path } of routes) expect(res.body.paths[path]?.[method], `${method} ${path}`).toBeDefined();

      const documentText = JSON.stringify(res.body);
      for (const kind of Object.values(Errors)) expect(documentText, kind.code).toContain(kind.code);
    });

    it('serves the documentation UI at /docs as HTML, without authentication', async () => {
      const res = await call('GET', '/docs');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.text.toLowerCase()).toContain('<html');
    });
  });

  it('never answered with a 5xx in this file', () => {
    expect(statuses.length).toBeGreaterThan(30);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
