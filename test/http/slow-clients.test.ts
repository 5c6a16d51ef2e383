/**
 * Slow clients are timed out (REQUEST_TIMEOUT_MS): a client that trickles its request's body or headers
 * is cut off about the timeout after it started, with Node's 408 or a bare close, never a 5xx of ours,
 * while normal calls, an order-event stream and the live order socket outlive the timeout. A real server
 * (`startServer`) with a 500 ms timeout; the slow clients write raw TCP.
 */
import { connect } from 'node:net';
import pino from 'pino';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { ConfigError, DEFAULT_REQUEST_TIMEOUT_MS, loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { AdminService } from '../../src/services/admin.js';
import { openStore } from '../../src/store/sql/database.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { testMemberData } from '../support/member-data.js';

const TIMEOUT_MS = 500;
const SESSION = '/authentication/v1/user/session';
const PASSWORD = 'correct-horse-42';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface SlowClientOutcome {
  /** What the server sent before it closed the connection. */
  received: string;
  /** From the first byte sent to the close. */
  closedAfterMs: number;
}

/** Sends `head` a byte at a time (when `trickleHead`), then trickles `body` a byte every 100 ms, until the server closes. */
function slowClient(url: string, head: string, body: string, trickleHead = false): Promise<SlowClientOutcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const started = Date.now();
    let received = '';
    const bytes = [...(trickleHead ? head : ''), ...body];
    const trickle = setInterval(() => {
      const next = bytes.shift();
      if (next !== undefined && socket.writable) socket.write(next);
    }, 100);
    // Gives up well after the timeout, so that a server that never cuts the client fails the test.
    const giveUp = setTimeout(() => socket.destroy(), 20 * TIMEOUT_MS);
    socket.on('connect', () => {
      if (!trickleHead) socket.write(head);
    });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      clearTimeout(giveUp);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    socket.on('timeout', reject);
  });
}

function expectCutOff(outcome: SlowClientOutcome): void {
  // 408 in our envelope with its stable code (or, if the client's socket is gone, nothing), never a 5xx.
  if (outcome.received !== '') {
    expect(outcome.received.startsWith('HTTP/1.1 408 '), outcome.received).toBe(true);
    const [head, body] = outcome.received.split('\r\n\r\n');
    expect(head).toMatch(/\r\nrequest-id: \S+/i);
    expect(JSON.parse(body!)).toMatchObject({ status: 'error', code: Errors.REQUEST_TIMEOUT.code, errors: [] });
  }
  expect(outcome.received).not.toMatch(/HTTP\/1\.1 5\d\d/);
  expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  // Soon after the timeout (generous for a busy machine), well before the client would give up.
  expect(outcome.closedAfterMs).toBeLessThan(6 * TIMEOUT_MS);
}

describe('REQUEST_TIMEOUT_MS: slow clients are cut off', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    const store = openStore(database.databaseUrl);
    server = await startServer(
      loadConfig({
        DATABASE_URL: database.databaseUrl,
        HOST: '127.0.0.1',
        PORT: '0',
        OMS_EMBEDDED: 'false',
        REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
      }),
      pino({ level: 'silent' }),
    );
    await new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    ).addUser('alice', PASSWORD, { member: testMemberData('alice') });
    await store.close();
    const login = await fetch(server.url + SESSION, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'alice', login_type: 'PASSWORD', password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  });
  afterAll(async () => {
    await server?.stop();
    await database?.dispose();
  });

  const body = JSON.stringify({ user_id: 'alice', login_type: 'PASSWORD', password: PASSWORD });
  const head = (length: number) =>
    `POST ${SESSION} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it('closes the connection of a client that sends the headers of a POST, then trickles its body', async () => {
    expectCutOff(await slowClient(server.url, head(body.length), body));
  });

  it('closes the connection of a client that trickles its headers', async () => {
    expectCutOff(await slowClient(server.url, head(body.length) + body, '', true));
  });

  it('still answers a client that sends its request at once, and again on the same connection after an idle pause', async () => {
    const whole = head(body.length) + body;
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    const answers = () =>
      received
        .split('HTTP/1.1 ')
        .slice(1)
        .map((answer) => answer.slice(0, 3));
    try {
      socket.write(whole);
      for (let i = 0; i < 100 && answers().length < 1; i++) await sleep(20);
      // Idle longer than the timeout between two requests: the timeout counts from a request's first byte.
      await sleep(2 * TIMEOUT_MS);
      socket.write(whole);
      for (let i = 0; i < 100 && answers().length < 2; i++) await sleep(20);
      expect(answers()).toEqual(['200', '200']);
    } finally {
      socket.destroy();
    }
  });

  it('leaves an order-event stream and the live order socket open longer than the timeout', async () => {
    const stream = await openEventStream(server.url, token);
    const socket = io(server.url, { transports: ['websocket'], reconnection: false, forceNew: true });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
      const answer = await socket.timeout(5_000).emitWithAck('loginAPI', { jToken: token });
      expect(JSON.stringify(answer)).not.toMatch(/error/i);
      await sleep(4 * TIMEOUT_MS);
      expect(stream.ended).toBe(false);
      expect(socket.connected).toBe(true);
    } finally {
      stream.close();
      socket.disconnect();
    }
  });
});

describe('REQUEST_TIMEOUT_MS', () => {
  it('defaults to 30 s', () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(loadConfig({}).requestTimeoutMs).toBe(30_000);
  });

  it('reads a whole number of milliseconds', () => {
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).requestTimeoutMs).toBe(5000);
  });

  it.each([
    ['soon', 'REQUEST_TIMEOUT_MS must be a whole number, got "soon"'],
    ['0', 'REQUEST_TIMEOUT_MS must be between 100 and 600000, got 0'],
    ['600001', 'REQUEST_TIMEOUT_MS must be between 100 and 600000, got 600001'],
  ])('refuses REQUEST_TIMEOUT_MS=%s', (value, message) => {
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: value })).toThrow(new ConfigError(message));
  });
});
