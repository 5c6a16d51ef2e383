/**
 * Issue 12, finding 3: event streams and live order sockets are capped per user and per node, share one
 * budget, free their slot as they close, and end with their session. Over real HTTP and Socket.IO: the caps
 * as the server's settings set them (startTestServer's `limits`), and a node like `npm start`'s (the event
 * stream and the socket over one set of services) with short re-check periods and the test clock.
 */
import pino from 'pino';
import { io, type Socket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Limits } from '../../src/config.js';
import { attachMessageSocket } from '../../src/http/routes/message-socket.js';
import { closeHttp } from '../../src/server.js';
import { createServices } from '../../src/wiring.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { EventStream, openEventStream } from '../support/sse.js';

const EVENTS = '/transactional/v1/orders/events';
const SESSION = '/authentication/v1/user/session';
const RECHECK_MS = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function testServer(limits: Partial<Limits>): Promise<TestServer> {
  const server = await startTestServer({ limits });
  cleanups.push(() => server.close());
  return server;
}

/** A node as `npm start` wires it: the event stream and the live order socket over one set of services. */
async function startNode(server: TestServer, limits: Partial<Limits>): Promise<string> {
  const now = () => server.clock.now;
  const services = createServices(server.store, {
    tokenTtlSeconds: DAY_MS / 1000,
    now,
    limits,
    orderEvents: { pollMs: 20, sessionRecheckMs: RECHECK_MS },
  });
  const app = buildApp(services, { logger: false });
  const socket = attachMessageSocket(app.server, {
    auth: services.auth,
    orderEvents: services.orderEvents,
    logger: pino({ level: 'silent' }),
    now,
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await socket.close();
    await closeHttp(app, pino({ level: 'silent' }));
  });
  return url;
}

async function stream(url: string, token: string): Promise<EventStream> {
  const opened = await openEventStream(url, token);
  cleanups.push(() => opened.close());
  return opened;
}

/** A stream the server refuses: its status, headers and error envelope. */
async function refused(url: string, token: string) {
  const response = await fetch(url + EVENTS, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).not.toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  // The envelope is read field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const body: any = await response.json();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

/** Closes the stream and waits until the server has taken its slot back: a new one of the user opens. */
async function closeAndReopen(closing: EventStream | Socket, url: string, token: string): Promise<EventStream> {
  if (closing instanceof EventStream) closing.close();
  else closing.disconnect();
  // The server sees the connection close a moment after the client closes it.
  const deadline = Date.now() + 2_000;
  for (;;) {
    const abort = new AbortController();
    const response = await fetch(url + EVENTS, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    if (response.status === 200 || Date.now() > deadline) {
      expect(response.status).toBe(200);
      const opened = new EventStream(response, abort);
      cleanups.push(() => opened.close());
      return opened;
    }
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A Socket.IO client of the live order socket, as ODIN's SDK connects. */
async function socketOf(url: string) {
  const socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true });
  cleanups.push(() => void socket.disconnect());
  const errors: { code: string; message: string }[] = [];
  socket.on('MSG:ERROR', (error) => errors.push(error));
  let disconnected: string | null = null;
  socket.on('disconnect', (reason) => (disconnected = reason));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    socket,
    errors,
    disconnected: () => disconnected,
    login: (token: string) =>
      socket.timeout(5_000).emitWithAck('loginAPI', { jToken: token }) as Promise<{ status: string; code: string }>,
  };
}

async function until(condition: () => boolean, what: string, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function freshToken(server: TestServer, user: TestUser): Promise<string> {
  const login = await server.call('POST', SESSION, {
    body: { user_id: user.userId, login_type: 'PASSWORD', password: user.password },
  });
  expect(login.status, login.text).toBe(200);
  return login.body.data.access_token;
}

describe('the caps on event streams (MAX_STREAMS_PER_USER, MAX_STREAMS_PER_NODE)', () => {
  it('refuses a user one stream beyond the cap with 429 e-429 and Retry-After, and takes one again once a stream closes', async () => {
    const server = await testServer({ streamsPerUser: 2, streamsPerNode: 100 });
    const alice = await server.createUser('alice');
    const bob = await server.createUser('bob');
    const first = await stream(server.url, alice.token);
    await stream(server.url, alice.token);

    const refusal = await refused(server.url, alice.token);
    expect(refusal.status).toBe(429);
    expect(refusal.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(refusal.body).toMatchObject({ status: 'error', code: 'e-429', errors: [], request_id: expect.any(String) });
    expect(refusal.body.message).toContain('2 order-event streams');
    // Another token of the same user counts as the same user; another user does not.
    expect((await refused(server.url, await freshToken(server, alice))).status).toBe(429);
    await stream(server.url, bob.token);

    const again = await closeAndReopen(first, server.url, alice.token);
    expect(again.response.status).toBe(200);
    expect((await refused(server.url, alice.token)).status).toBe(429);
  });

  it('refuses any user one stream beyond the node cap with 503 e-503 and Retry-After, and takes one again once a stream closes', async () => {
    const server = await testServer({ streamsPerUser: 2, streamsPerNode: 3 });
    const [alice, bob, carol] = [
      await server.createUser('alice'),
      await server.createUser('bob'),
      await server.createUser('carol'),
    ];
    await stream(server.url, alice.token);
    await stream(server.url, alice.token);
    const bobs = await stream(server.url, bob.token);

    const refusal = await refused(server.url, carol.token);
    expect(refusal.status).toBe(503);
    expect(refusal.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(refusal.body).toMatchObject({ status: 'error', code: 'e-503', errors: [] });
    expect(refusal.body.message).toContain('3 order-event streams');

    await closeAndReopen(bobs, server.url, carol.token);
    expect((await refused(server.url, bob.token)).status).toBe(503);
  });

  it('refuses no stream to a client whose earlier attempts were refused (a refusal takes no slot)', async () => {
    const server = await testServer({ streamsPerUser: 1, streamsPerNode: 100 });
    const alice = await server.createUser('alice');
    const only = await stream(server.url, alice.token);
    for (let i = 0; i < 5; i += 1) expect((await refused(server.url, alice.token)).status).toBe(429);
    await closeAndReopen(only, server.url, alice.token);
  });
});

describe('event streams and live order sockets share the budget', () => {
  it("counts a logged-in socket in its user's cap and in the node's; a socket not yet logged in takes no place of theirs, only the pending budget (issue 21 row 1)", async () => {
    const server = await testServer({});
    const [alice, bob, carol, dave] = [
      await server.createUser('alice'),
      await server.createUser('bob'),
      await server.createUser('carol'),
      await server.createUser('dave'),
    ];
    const url = await startNode(server, { streamsPerUser: 2, streamsPerNode: 4, pendingSocketsPerAddress: 1 });

    // Alice: a stream and a logged-in socket are her two.
    await stream(url, alice.token);
    const aliceSocket = await socketOf(url);
    expect((await aliceSocket.login(alice.token)).status).toBe('success');
    expect((await refused(url, alice.token)).status).toBe(429);
    const second = await socketOf(url);
    expect(await second.login(alice.token)).toMatchObject({ status: 'error', code: 'e-429' });
    await until(() => second.disconnected() !== null, 'the refused socket to be disconnected');
    expect(second.errors).toEqual([expect.objectContaining({ code: 'e-429' })]);

    // Her socket gone, a stream of hers opens in its place.
    await closeAndReopen(aliceSocket.socket, url, alice.token);

    // A socket that has not logged in holds no place of the node's four: Alice's two, Bob's and Carol's streams open.
    const anonymous = await socketOf(url);
    await stream(url, bob.token);
    await stream(url, carol.token);
    expect((await refused(url, dave.token)).status).toBe(503);
    // A second one from the same address is beyond its address's pending cap (1): told e-429 and disconnected.
    const beyond = io(url, { transports: ['websocket'], reconnection: false, forceNew: true });
    cleanups.push(() => void beyond.disconnect());
    const beyondErrors: { code: string }[] = [];
    beyond.on('MSG:ERROR', (error) => beyondErrors.push(error));
    await until(
      () => beyondErrors.length > 0 && beyond.disconnected,
      'the socket beyond the address cap to be refused',
    );
    expect(beyondErrors).toEqual([expect.objectContaining({ status: 'error', code: 'e-429' })]);
    // The node is full of logged-in streams: the waiting socket's login is refused with the node's e-503.
    expect(await anonymous.login(dave.token)).toMatchObject({ status: 'error', code: 'e-503' });
  });
});

describe('an event stream ends with its session', () => {
  async function endEvent(opened: EventStream) {
    await opened.until(() => opened.ended, 'the stream to end');
    const last = opened.frames.at(-1)!;
    expect(last.event).toBe('stream_end');
    expect(last.id).toBeUndefined();
    return JSON.parse(last.data!);
  }

  it('after a logout, within the re-check period, saying so in a last stream_end event, and frees its slot', async () => {
    const server = await testServer({});
    const alice = await server.createUser('alice');
    const url = await startNode(server, { streamsPerUser: 1 });
    const token = await freshToken(server, alice);
    const opened = await stream(url, token);
    expect((await server.call('DELETE', SESSION, { token })).status).toBe(200);
    const loggedOutAt = Date.now();

    const end = await endEvent(opened);
    // Within the re-check period (100 ms here) in spirit; the bound is generous for a busy machine, and far
    // below the default period (the stream would otherwise stay open until then).
    expect(Date.now() - loggedOutAt).toBeLessThan(RECHECK_MS + 5_000);
    expect(end).toEqual({
      status: 'error',
      code: 'e-204',
      message: expect.any(String),
      errors: [expect.objectContaining({ field: 'Authorization' })],
      request_id: opened.response.headers.get('request-id'),
    });
    // Its slot is free: the user's one stream opens with another token.
    await closeAndReopen(opened, url, alice.token);
  });

  it('once its token expires (e-203); other streams live on', async () => {
    const server = await testServer({});
    const alice = await server.createUser('alice');
    const url = await startNode(server, {});
    const expiring = await stream(url, await freshToken(server, alice));
    server.clock.now += DAY_MS / 2;
    const later = await freshToken(server, alice);
    const staying = await stream(url, later);
    try {
      server.clock.now += DAY_MS / 2 + 1;
      expect((await endEvent(expiring)).code).toBe('e-203');
      await new Promise((resolve) => setTimeout(resolve, RECHECK_MS * 3));
      expect(staying.ended).toBe(false);
    } finally {
      server.clock.now = Date.now();
    }
  });
});
