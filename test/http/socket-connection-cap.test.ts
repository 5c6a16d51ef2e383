/**
 * The budget of the live order socket's raw Engine.IO connections that have not logged in
 * (MAX_PENDING_SOCKETS_PER_NODE, MAX_PENDING_SOCKETS_PER_ADDRESS; issue 21 row 1): every connection Engine.IO
 * accepts, websocket or long-polling, counts from its acceptance whether or not it ever sends Socket.IO's
 * CONNECT, one beyond the budget is refused, and every slot is given back once as its connection closes; a
 * connection that connects no socket is closed within the login deadline; a login moves it into the node's
 * streams (MAX_STREAMS_PER_NODE), whose places connections that never log in cannot take
 * (docs/design/message-socket.md, "Caps"). Clients here speak Engine.IO over `ws` directly, as a flood would.
 */
import pino from 'pino';
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Limits } from '../../src/config.js';
import {
  attachMessageSocket,
  MAX_CONNECTIONS_BEING_REFUSED,
  type MessageSocketOptions,
} from '../../src/http/routes/message-socket.js';
import type { StreamQuota } from '../../src/services/stream-quota.js';
import { closeHttp } from '../../src/server.js';
import { createServices } from '../../src/wiring.js';
import { startTestServer, type TestServer } from '../support/server.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Node {
  url: string;
  server: TestServer;
  streams: StreamQuota;
}

/** A node as `npm start` wires it (the event stream and the live order socket over one set of services). */
async function startNode(limits: Partial<Limits>, socketOptions: Partial<MessageSocketOptions>): Promise<Node> {
  const server = await startTestServer();
  cleanups.push(() => server.close());
  const services = createServices(server.store, { tokenTtlSeconds: 24 * 60 * 60, limits, orderEvents: { pollMs: 20 } });
  const app = buildApp(services, { logger: false });
  const socket = attachMessageSocket(app.server, {
    auth: services.auth,
    orderEvents: services.orderEvents,
    logger: pino({ level: 'silent' }),
    ...socketOptions,
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await socket.close();
    await services.orderEvents.close();
    await closeHttp(app, pino({ level: 'silent' }));
  });
  return { url, server, streams: services.orderEvents.streams };
}

/** An Engine.IO websocket opened by hand: accepted (its open packet came) or refused at its handshake. */
class RawConnection {
  readonly ws: WebSocket;
  readonly messages: string[] = [];
  /** The HTTP status of a refused handshake. */
  refusedWith: number | null = null;
  openedAt = 0;
  closedAt: number | null = null;
  readonly settled: Promise<void>;

  constructor(url: string, localAddress?: string) {
    this.ws = new WebSocket(
      `${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`,
      localAddress === undefined ? {} : { localAddress },
    );
    cleanups.push(() => this.ws.terminate());
    this.settled = new Promise<void>((resolve) => {
      this.ws.on('message', (data) => {
        // ws hands each message as one Buffer (its default binaryType, nodebuffer).
        const text = (data as Buffer).toString();
        if (this.messages.length === 0 && text.startsWith('0{')) {
          this.openedAt = Date.now();
          resolve();
        }
        this.messages.push(text);
      });
      this.ws.on('unexpected-response', (_request, response) => {
        this.refusedWith = response.statusCode ?? 0;
        response.resume();
        resolve();
      });
      this.ws.on('error', () => resolve());
      this.ws.on('close', () => {
        this.closedAt ??= Date.now();
        resolve();
      });
    });
  }

  get accepted(): boolean {
    return this.openedAt > 0;
  }

  get closed(): boolean {
    return this.closedAt !== null;
  }

  /** Sends one Engine.IO message packet: "40" is Socket.IO's CONNECT to "/", "41" its DISCONNECT. */
  send(packet: string): void {
    this.ws.send(packet);
  }
}

async function connectRaw(url: string, localAddress?: string): Promise<RawConnection> {
  const connection = new RawConnection(url, localAddress);
  await connection.settled;
  return connection;
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('raw Engine.IO connections and the pending budget (MAX_PENDING_SOCKETS_PER_NODE, MAX_PENDING_SOCKETS_PER_ADDRESS)', () => {
  it('counts each connection from its acceptance, lets only a few in beyond the budget to be told e-503, refuses the rest at the handshake, and gives every slot back', async () => {
    // Far enough apart that a busy machine's late timers cannot make one look like the other.
    const loginTimeoutMs = 6_000;
    const refusalGraceMs = 2_000;
    const node = await startNode(
      { pendingSocketsPerNode: 2, pendingSocketsPerAddress: 100 },
      { loginTimeoutMs, refusalGraceMs },
    );
    const open = () => node.streams.usage().pending;

    // The cap's two: connections that never send CONNECT count all the same.
    const held = [await connectRaw(node.url), await connectRaw(node.url)];
    expect(held.map((c) => c.accepted)).toEqual([true, true]);
    expect(open()).toBe(2);

    // Beyond the cap, a few are let in holding nothing, only to be refused (below).
    const beyond = await Promise.all(Array.from({ length: MAX_CONNECTIONS_BEING_REFUSED }, () => connectRaw(node.url)));
    expect(beyond.every((c) => c.accepted)).toBe(true);
    expect(open()).toBe(2);

    // While they are open, the rest are refused at their handshake, websocket (Engine.IO answers 400) or
    // long-polling (403).
    const refused = await Promise.all(Array.from({ length: 4 }, () => connectRaw(node.url)));
    expect(refused.map((c) => c.refusedWith)).toEqual([400, 400, 400, 400]);
    expect(refused.every((c) => !c.accepted)).toBe(true);
    const polling = await fetch(`${node.url}/socket.io/?EIO=4&transport=polling`);
    expect(polling.status).toBe(403);
    expect(await polling.json()).toMatchObject({
      message: expect.stringMatching(/^e-503: This node holds 2 live order socket connections that have not logged in/),
    });
    expect(open()).toBe(2);

    // One let in that connects its socket is told e-503 and disconnected at once.
    const told = beyond[0]!;
    told.send('40');
    await until(() => told.closed, 'the refused socket to be disconnected');
    expect(told.messages.find((m) => m.startsWith('42'))).toMatch(/^42\["MSG:ERROR",\{"status":"error","code":"e-503"/);
    expect(told.closedAt! - told.openedAt).toBeLessThan(refusalGraceMs);

    // Each refusal is counted once, whether at the handshake or on the socket.
    expect(node.streams.usage().refusedPendingForNode).toBe(MAX_CONNECTIONS_BEING_REFUSED + 5);
    // None of them took a place of the node's logged-in streams.
    expect(node.streams.usage().open).toBe(0);

    // Those let in that connect no socket are closed after the refusal grace; the held ones at the login
    // deadline; every slot is back.
    await until(
      () => beyond.every((c) => c.closed),
      'the connections beyond the cap to be closed',
      refusalGraceMs + 3_000,
    );
    // At the grace, not at the login deadline.
    for (const c of beyond) expect(c.closedAt! - c.openedAt).toBeLessThan(refusalGraceMs + 2_000);
    expect(open()).toBe(2);
    await until(() => held.every((c) => c.closed), 'the held connections to be closed', loginTimeoutMs + 3_000);
    for (const c of held) expect(c.closedAt! - c.openedAt).toBeLessThan(loginTimeoutMs + 2_000);
    await until(() => open() === 0, 'the slots to be given back');

    // The node has room again.
    const again = await connectRaw(node.url);
    expect(again.accepted).toBe(true);
    expect(open()).toBe(1);
    again.ws.close();
    await until(() => open() === 0, 'the slot of a connection the client closed to be given back');
  });

  it('closes a connection that sends no CONNECT within the login deadline, and counts the deadline from the connection', async () => {
    const loginTimeoutMs = 2_000;
    const connectAfterMs = 1_500;
    const node = await startNode({ pendingSocketsPerNode: 10 }, { loginTimeoutMs });

    const silent = new RawConnection(node.url);
    const late = new RawConnection(node.url);
    await Promise.all([silent.settled, late.settled]);
    expect(node.streams.usage().pending).toBe(2);
    // CONNECT three quarters through the deadline: the socket has what is left of it to log in, not a new one.
    await new Promise((resolve) => setTimeout(resolve, connectAfterMs));
    late.send('40');

    await until(
      () => silent.closed && late.closed,
      'both connections to be closed',
      loginTimeoutMs + connectAfterMs + 3_000,
    );
    for (const c of [silent, late]) {
      expect(c.closedAt! - c.openedAt).toBeGreaterThanOrEqual(loginTimeoutMs - 100);
      // Counted from the CONNECT, the late one's would be the deadline and 1.5 s more.
      expect(c.closedAt! - c.openedAt).toBeLessThan(loginTimeoutMs + connectAfterMs - 500);
    }
    expect(late.messages.find((m) => m.startsWith('42'))).toMatch(/^42\["MSG:ERROR",\{"status":"error","code":"e-201"/);
    await until(() => node.streams.usage().pending === 0, 'the slots to be given back');
  });

  it('counts a long-polling connection too, and gives its slot back at the deadline, whether or not its client polls', async () => {
    const loginTimeoutMs = 500;
    const node = await startNode({ pendingSocketsPerNode: 10 }, { loginTimeoutMs });
    const base = `${node.url}/socket.io/?EIO=4&transport=polling`;
    const handshake = async () => {
      const answer = await fetch(base);
      expect(answer.status).toBe(200);
      return (JSON.parse((await answer.text()).slice(1)) as { sid: string }).sid;
    };
    const polling = await handshake();
    // This one never polls: Engine.IO's orderly close would wait 30 s for its next poll.
    await handshake();
    const startedAt = Date.now();
    expect(node.streams.usage().pending).toBe(2);
    // The long poll is answered with Engine.IO's close packet at the deadline.
    const poll = await fetch(`${base}&sid=${encodeURIComponent(polling)}`);
    expect(await poll.text()).toMatch(/(^|\x1e)1$/);
    await until(() => node.streams.usage().pending === 0, 'the slots to be given back');
    // At the deadline (generous for a busy machine), not at Engine.IO's 30 s.
    expect(Date.now() - startedAt).toBeLessThan(loginTimeoutMs + 5_000);
  });

  it("moves a socket from the pending budget into the node's streams at its login, and closes the connection of a socket the client disconnects alone", async () => {
    const node = await startNode({ streamsPerNode: 10 }, {});
    const alice = await node.server.createUser('alice');

    const client = io(node.url, { transports: ['websocket'], reconnection: false, forceNew: true });
    cleanups.push(() => void client.disconnect());
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('connect_error', reject);
    });
    expect(node.streams.usage()).toMatchObject({ open: 0, pending: 1 });
    expect(await client.timeout(5_000).emitWithAck('loginAPI', { jToken: alice.token })).toMatchObject({
      status: 'success',
    });
    expect(node.streams.usage()).toMatchObject({ open: 1, pending: 0 });
    client.disconnect();
    await until(() => node.streams.usage().open === 0, "the client's slot to be given back");

    // Socket.IO's DISCONNECT alone leaves the Engine.IO connection to the client: the server closes it.
    const raw = await connectRaw(node.url);
    raw.send('40');
    await until(() => raw.messages.some((m) => m.startsWith('40')), 'the socket to connect');
    expect(node.streams.usage()).toMatchObject({ open: 0, pending: 1 });
    raw.send('41');
    await until(() => raw.closed, 'the connection to be closed');
    await until(() => node.streams.usage().pending === 0, 'the slot to be given back');
  });

  it("never lets connections that do not log in take a trader's place: 60 from one address hold its 10, a logged-in user's streams still open, and another address still connects (issue 21 row 1)", async () => {
    // The probe's figures: a node cap of 40, 60 connections from one address that never log in, reconnecting.
    const node = await startNode(
      { streamsPerNode: 40, pendingSocketsPerAddress: 10, pendingSocketsPerNode: 200 },
      { loginTimeoutMs: 10_000 },
    );
    const alice = await node.server.createUser('alice');
    const flood = await Promise.all(Array.from({ length: 60 }, () => connectRaw(node.url)));
    const held = flood.filter((c) => c.accepted && !c.refusedWith);
    expect(node.streams.usage()).toMatchObject({ open: 0, pending: 10 });
    expect(node.streams.usage().refusedPendingForAddress).toBeGreaterThanOrEqual(50 - MAX_CONNECTIONS_BEING_REFUSED);
    expect(held.length).toBeGreaterThanOrEqual(10);

    // The trader's stream and socket: each try succeeds, every time.
    for (let attempt = 0; attempt < 7; attempt += 1) {
      const response = await fetch(`${node.url}/transactional/v1/orders/events`, {
        headers: { authorization: `Bearer ${alice.token}` },
      });
      expect(response.status, `attempt ${attempt}`).toBe(200);
      await response.body?.cancel();
    }
    // One more from the flood's address holds nothing; one from another address has a share of its own.
    await connectRaw(node.url);
    expect(node.streams.usage().pending).toBe(10);
    const elsewhere = await connectRaw(node.url, '127.0.0.2');
    expect(elsewhere.accepted).toBe(true);
    expect(node.streams.usage()).toMatchObject({ open: 0, pending: 11 });
  });
});
