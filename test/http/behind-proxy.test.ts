/**
 * Behind a real reverse proxy (issue 23): which address is the caller's is TRUST_PROXY's to say. A proxy
 * here is an HTTP hop of its own that appends the address of whoever connected to it to X-Forwarded-For,
 * as nginx's $proxy_add_x_forwarded_for and HAProxy's `option forwardfor` do; clients connect from
 * addresses of their own on the loopback network (127.0.0.2, 127.0.0.3). With the proxy trusted, an API
 * key bound to 127.0.0.2 works through it from there and from nowhere else, and an address a client
 * writes into X-Forwarded-For itself does not make it someone else.
 */
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_PASSWORD, validBid, type TestServer, type TestUser } from '../support/server.js';

const PLACE = '/transactional/v1/orders/regular';
const LOGIN = '/authentication/v1/user/session';

/** The proxy: forwards every request to `target`, adding its client's address to X-Forwarded-For. */
function startProxy(target: URL): Promise<Server> {
  const proxy = createServer((incoming, outgoing) => {
    const forwardedFor = [incoming.headers['x-forwarded-for'], incoming.socket.remoteAddress]
      .filter(Boolean)
      .join(', ');
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, 'x-forwarded-for': forwardedFor },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(upstream);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

/** One JSON call from a client at `from` (its socket bound there) to `base`. */
function callFrom(
  from: string,
  base: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: { code?: string; message?: string } }> {
  const url = new URL(path, base);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname,
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (answer) => {
        let received = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (received += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: JSON.parse(received) }));
      },
    );
    sent.on('error', reject);
    sent.end(text);
  });
}

describe('an API key bound to an address, behind a trusted reverse proxy (TRUST_PROXY=127.0.0.1)', () => {
  let server: TestServer;
  let proxy: Server;
  let proxyUrl: string;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ trustProxy: '127.0.0.1' });
    await server.registerIssue();
    alice = await server.createUser('alice');
    const [key] = await server.admin.listApiKeys('alice');
    await server.admin.setApiKeyAddresses(key!.keyId, ['127.0.0.2'], false);
    proxy = await startProxy(new URL(server.url));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    await server.close();
  });

  const bid = (from: string, base: string, headers: Record<string, string> = {}) =>
    callFrom(from, base, 'POST', PLACE, validBid(), {
      authorization: `Bearer ${alice.token}`,
      'x-api-key': alice.apiKey,
      ...headers,
    });

  it('takes the address the proxy saw: the registered one works through it, another is refused and named', async () => {
    expect((await bid('127.0.0.2', proxyUrl)).status).toBe(200);
    const other = await bid('127.0.0.3', proxyUrl);
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('e-215');
    expect(other.body.message).toMatch(/not registered for 127\.0\.0\.3$/);
  });

  it('does not believe an address a client writes into X-Forwarded-For, through the proxy or around it', async () => {
    // Through the proxy: "127.0.0.2, 127.0.0.3"; the proxy vouches only for the last one.
    expect((await bid('127.0.0.3', proxyUrl, { 'x-forwarded-for': '127.0.0.2' })).body.code).toBe('e-215');
    // Around it: a peer that is no trusted proxy is the caller, whatever its header says.
    expect((await bid('127.0.0.3', server.url, { 'x-forwarded-for': '127.0.0.2' })).body.code).toBe('e-215');
    expect((await bid('127.0.0.2', server.url)).status).toBe(200);
  });

  it('holds a login that sends the key to the same rule', async () => {
    const login = {
      user_id: 'alice',
      login_type: 'PASSWORD',
      password: TEST_PASSWORD,
      second_auth_type: '',
      second_auth: '',
      api_key: alice.apiKey,
      source: 'WEBAPI',
    };
    expect((await callFrom('127.0.0.2', proxyUrl, 'POST', LOGIN, login, {})).status).toBe(200);
    const refused = await callFrom('127.0.0.3', proxyUrl, 'POST', LOGIN, login, {});
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('e-215');
  });
});
