/**
 * Webhook deliveries against a real receiver over HTTP: each event of the user's orders is POSTed once,
 * signed, in order; failures are retried with back-off and the delivery arrives once the receiver
 * recovers; a delivery is given up after the retry time and shown to the operator; a dispatcher that dies
 * mid-delivery leaves it to another (at least once). Time is the test's clock, moved by hand.
 *
 * The receivers listen on 127.0.0.1 over plain http, which webhooks may reach only when the operator allows
 * it (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES): the tests allow it, except those of the refusals.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook, type RetryPolicy } from '../../src/domain/orders/webhooks.js';
import { STRICT_WEBHOOK_ADDRESSES, type WebhookAddressPolicy } from '../../src/domain/orders/webhook-addresses.js';
import type { Resolver } from '../../src/webhooks/address-guard.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { WebhookAdminService, type NewWebhook } from '../../src/services/webhooks.js';
import { EventHorizon, OrderEventRepository } from '../../src/store/orders/events.js';
import { UserRepository } from '../../src/store/access/users.js';
import type { ListedDelivery } from '../../src/domain/orders/webhooks.js';
import { WebhookRepository } from '../../src/store/orders/webhooks.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createOmsWorker } from '../../src/wiring.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const RETRY: RetryPolicy = { firstDelayMs: 1_000, maxDelayMs: 8_000, retryForMs: 60_000 };
/** What the local receivers need: plain http to a loopback address. */
const LOCAL_RECEIVERS: WebhookAddressPolicy = { allowHttp: true, allowPrivateAddresses: true };
/** Plain http allowed (the receivers speak it), non-public addresses not. */
const HTTP_PUBLIC_ONLY: WebhookAddressPolicy = { allowHttp: true, allowPrivateAddresses: false };

describe('webhook deliveries', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let admin: WebhookAdminService;
  let repository: WebhookRepository;
  let receiver: WebhookReceiver;
  let alice: TestUser;
  let bob: TestUser;
  let webhook: NewWebhook;
  const dispatchers: WebhookDispatcher[] = [];

  function dispatcher(
    options: {
      timeoutMs?: number;
      leaseMs?: number;
      id?: string;
      addresses?: WebhookAddressPolicy | 'default';
      resolve?: Resolver;
    } = {},
  ): WebhookDispatcher {
    const created = new WebhookDispatcher({
      webhooks: repository,
      events: new OrderEventRepository(server.store.db),
      horizon: new EventHorizon(server.store.db, server.store.dialect),
      logger: pino({ level: 'silent' }),
      now: () => server.clock.now,
      retry: RETRY,
      random: () => 0,
      timeoutMs: options.timeoutMs ?? 5_000,
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
      ...(options.id !== undefined && { dispatcherId: options.id }),
      ...(options.addresses !== 'default' && { addresses: options.addresses ?? LOCAL_RECEIVERS }),
      ...(options.resolve !== undefined && { resolve: options.resolve }),
    });
    dispatchers.push(created);
    return created;
  }

  beforeAll(async () => {
    server = await startTestServer();
    await server.registerIssue();
    oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    repository = new WebhookRepository(server.store.db);
    admin = new WebhookAdminService(
      repository,
      new UserRepository(server.store.db, server.store.dialect),
      LOCAL_RECEIVERS,
      () => server.clock.now,
    );
  });
  afterAll(async () => {
    await server.close();
  });

  let userCount = 0;
  beforeEach(async () => {
    userCount += 1;
    alice = await server.createUser(`alice${userCount}`);
    bob = await server.createUser(`bob${userCount}`);
    receiver = await startWebhookReceiver();
    webhook = await admin.add(alice.userId, receiver.url);
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
    await receiver.close();
    // Each test's deliveries stay its own.
    await repository.remove(webhook.webhookId, server.clock.now);
  });

  async function bid(user: TestUser): Promise<string> {
    const res = await server.call('POST', '/transactional/v1/orders/regular', {
      body: validBid({ quantity: '10' }),
      token: user.token,
      apiKey: user.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.orderId as string;
  }

  /** The user's order events (their event id, the history row's id, status and reason), oldest first. */
  async function history(user: TestUser) {
    const rows = await server.store.db
      .selectFrom('order_history')
      .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
      .select([
        'order_history.id',
        'order_history.user_event_id',
        'order_history.order_id',
        'order_history.status',
        'order_history.reason',
      ])
      .where('orders.user_id', '=', user.userId)
      .orderBy('order_history.id')
      .execute();
    return rows.map((row) => ({
      event_id: Number(row.user_event_id),
      history_id: Number(row.id),
      order_id: row.order_id,
      status: row.status,
      reason: row.reason,
    }));
  }

  async function deliveries(): Promise<ListedDelivery[]> {
    return (await repository.deliveries({ webhookId: webhook.webhookId, limit: 1000 })).reverse();
  }

  const receivedIds = () => receiver.received.map((r) => Number(r.headers['x-ordergate-event-id']));

  it("POSTs every event of the user's orders once, signed, in event order, and nothing of other users", async () => {
    await bid(alice);
    await bid(bob);
    await bid(alice);
    await oms.runOnce();
    const expected = await history(alice);
    expect(expected.length).toBe(6);

    expect(await dispatcher().runOnce()).toBe(6);
    expect(receivedIds()).toEqual(expected.map((e) => e.event_id));
    const nowSeconds = Math.floor(server.clock.now / 1000);
    for (const [i, delivery] of receiver.received.entries()) {
      expect(delivery.path).toBe('/hooks/orders');
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['x-ordergate-timestamp']).toBe(String(nowSeconds));
      expect(delivery.headers['x-ordergate-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
      const headers = {
        timestamp: delivery.headers['x-ordergate-timestamp'] as string,
        signature: delivery.headers['x-ordergate-signature'] as string,
      };
      expect(verifyWebhook(webhook.secret, headers, delivery.body, nowSeconds)).toBe(true);
      // The signature covers the body and the timestamp: any change fails it.
      expect(verifyWebhook(webhook.secret, headers, delivery.body.replace('"status"', '"Status"'), nowSeconds)).toBe(
        false,
      );
      expect(
        verifyWebhook(webhook.secret, { ...headers, timestamp: String(nowSeconds + 1) }, delivery.body, nowSeconds),
      ).toBe(false);
      expect(verifyWebhook(`${webhook.secret}x`, headers, delivery.body, nowSeconds)).toBe(false);
      const event = JSON.parse(delivery.body);
      const { history_id: _historyId, ...fields } = expected[i]!;
      expect(event).toMatchObject({ ...fields, type: 'order_update', at: new Date(server.clock.now).toISOString() });
      expect(Object.keys(event).sort()).toEqual(['at', 'event_id', 'order', 'order_id', 'reason', 'status', 'type']);
      expect(event.order.order_id).toBe(expected[i]!.order_id);
    }
    const rows = await deliveries();
    expect(rows.map((d) => [Number(d.eventId), d.status, Number(d.attempts), Number(d.lastStatusCode)])).toEqual(
      expected.map((e) => [e.history_id, 'DELIVERED', 1, 200]),
    );
    // Nothing is sent twice.
    expect(await dispatcher().runOnce()).toBe(0);
    expect(receiver.received.length).toBe(6);
  });

  it('retries a failing receiver with exponential back-off; the delivery arrives once it recovers, and later events wait in order', async () => {
    const answers = [500, 503, 'drop', 200] as const;
    receiver.answer = ({ index }) => answers[index] ?? 200;
    await bid(alice);
    const [first] = await history(alice);
    const worker = dispatcher();

    await worker.runOnce();
    expect(receivedIds()).toEqual([first!.event_id]);
    // More events of the same order while the first is failing: they wait behind it.
    await oms.runOnce();
    const events = await history(alice);
    expect(events.length).toBe(3);

    // Back-off: 1 s, 2 s, 4 s after the first, second and third failures (jitter fixed at 0 here).
    for (const [pause, attemptsSoFar] of [
      [1_000, 2],
      [2_000, 3],
      [4_000, 4],
    ] as const) {
      server.clock.now += pause - 1;
      expect(await worker.runOnce()).toBe(0);
      server.clock.now += 1;
      await worker.runOnce();
      expect(receivedIds().filter((id) => id === first!.event_id).length).toBe(attemptsSoFar);
    }
    // The recovered receiver got the first event four times, the same bytes each time, then the rest once each.
    expect(receivedIds()).toEqual([
      first!.event_id,
      first!.event_id,
      first!.event_id,
      first!.event_id,
      events[1]!.event_id,
      events[2]!.event_id,
    ]);
    expect(new Set(receiver.received.slice(0, 4).map((r) => r.body)).size).toBe(1);
    expect(new Set(receiver.received.slice(0, 4).map((r) => r.headers['x-ordergate-delivery-id'])).size).toBe(1);
    const rows = await deliveries();
    expect(rows.map((d) => [d.status, Number(d.attempts)])).toEqual([
      ['DELIVERED', 4],
      ['DELIVERED', 1],
      ['DELIVERED', 1],
    ]);
    expect(rows[0]!.lastStatusCode).toBe(200);
  });

  it('gives a delivery up when the retry time runs out, shows it to the operator, and sends it again on `retry`', async () => {
    receiver.answer = () => 500;
    await bid(alice);
    const [event] = await history(alice);
    const worker = dispatcher();
    const start = server.clock.now;
    const attemptTimes: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      attemptTimes.push(server.clock.now - start);
      await worker.runOnce();
      const [row] = await deliveries();
      if (row!.status !== 'PENDING') break;
      server.clock.now = Number(row!.nextAttemptAt);
    }
    // Pauses of 1, 2, 4, 8, 8... s, and a last try when the 60 s run out.
    expect(attemptTimes).toEqual([0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000, 39_000, 47_000, 55_000, 60_000]);
    const [given] = await deliveries();
    expect(given).toMatchObject({ status: 'FAILED', lastError: 'HTTP 500' });
    expect(Number(given!.lastStatusCode)).toBe(500);
    expect(Number(given!.failedAt)).toBe(start + RETRY.retryForMs);
    expect(Number(given!.attempts)).toBe(11);
    expect(receivedIds()).toEqual(Array(11).fill(event!.event_id));
    expect(await repository.deliveries({ userId: alice.userId, status: 'FAILED', limit: 10 })).toHaveLength(1);

    // Later events go on without it once it is given up.
    receiver.answer = () => 200;
    await oms.runOnce();
    await worker.runOnce();
    expect((await deliveries()).map((d) => d.status)).toEqual(['FAILED', 'DELIVERED', 'DELIVERED']);

    await admin.retry(Number(given!.id));
    await expect(admin.retry(Number(given!.id))).rejects.toThrow(/not a failed delivery/);
    await worker.runOnce();
    expect(receivedIds().at(-1)).toBe(event!.event_id);
    expect((await deliveries())[0]).toMatchObject({ status: 'DELIVERED' });
  });

  it('sends again a delivery whose dispatcher died before marking it, once its lease has run out (at least once)', async () => {
    await bid(alice);
    const [event] = await history(alice);
    // A dispatcher claims it and dies: nothing else is done with the claim.
    const now = server.clock.now;
    const claimed = await repository.claim(
      (await repository.due(now, 10, Number.MAX_SAFE_INTEGER)).map((d) => d.id),
      'dead-dispatcher',
      now,
      now + 60_000,
    );
    expect(claimed.map((d) => d.eventId)).toEqual([event!.history_id]);

    const worker = dispatcher();
    expect(await worker.runOnce()).toBe(0);
    server.clock.now += 60_001;
    expect(await worker.runOnce()).toBe(1);
    expect(receivedIds()).toEqual([event!.event_id]);
    expect((await deliveries())[0]).toMatchObject({ status: 'DELIVERED', claimedBy: worker.dispatcherId });
  });

  it('a claim that committed while its answer was lost (the connection cut): the next pass sends it at once, not after the lease', async () => {
    await bid(alice);
    const [event] = await history(alice);
    const claim = WebhookRepository.prototype.claim;
    const lost = vi.spyOn(WebhookRepository.prototype, 'claim').mockImplementationOnce(async function (
      this: WebhookRepository,
      ...args
    ) {
      await claim.apply(this, args);
      throw new Error('Connection terminated unexpectedly');
    });
    try {
      const worker = dispatcher();
      await expect(worker.runOnce()).rejects.toThrow('Connection terminated unexpectedly');
      expect((await deliveries())[0]).toMatchObject({ status: 'PENDING', claimedBy: worker.dispatcherId });
      // The same moment: the lease has not run out.
      expect(await worker.runOnce()).toBe(1);
      expect(receivedIds()).toEqual([event!.event_id]);
      expect((await deliveries())[0]).toMatchObject({ status: 'DELIVERED', claimedBy: worker.dispatcherId });
    } finally {
      lost.mockRestore();
    }
  });

  it('holds later deliveries of a webhook while another dispatcher is sending an earlier one', async () => {
    await bid(alice);
    await oms.runOnce();
    const events = await history(alice);
    const now = server.clock.now;
    const [first] = await repository.due(now, 1, Number.MAX_SAFE_INTEGER);
    await repository.claim([first!.id], 'other-dispatcher', now, now + 60_000);
    expect(await dispatcher().runOnce()).toBe(0);
    server.clock.now += 60_001;
    expect(await dispatcher().runOnce()).toBe(3);
    expect(receivedIds()).toEqual(events.map((e) => e.event_id));
  });

  it('never sends a delivery of a removed webhook, even one queued as it was removed', async () => {
    await bid(alice);
    await admin.remove(webhook.webhookId);
    // A transaction that read the webhook as active commits its delivery after the removal.
    const [event] = await history(alice);
    await server.store.db
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: webhook.webhookId,
        event_id: event!.history_id + 1_000_000,
        status: 'PENDING',
        attempts: 0,
        next_attempt_at: server.clock.now,
        created_at: server.clock.now,
      })
      .execute();
    expect(await dispatcher().runOnce()).toBe(0);
    expect(receiver.received).toEqual([]);
  });

  it('counts a receiver that does not answer in time as a failed attempt', async () => {
    receiver.answer = () => 'hang';
    await bid(alice);
    await dispatcher({ timeoutMs: 300 }).runOnce();
    const [row] = await deliveries();
    expect(row).toMatchObject({ status: 'PENDING', lastError: 'no answer within 300 ms', lastStatusCode: null });
    expect(Number(row!.attempts)).toBe(1);
    expect(Number(row!.nextAttemptAt)).toBe(server.clock.now + RETRY.firstDelayMs);
  });

  it('takes the 2xx of an endpoint that streams its answer without end at once, reading none of it', async () => {
    // Answers 200, then 64 KiB chunks as fast as the connection takes them, until the sender hangs up:
    // without end for a reader, a few socket buffers' worth for a sender that reads none of it.
    let streamed = 0;
    let hungUp = false;
    const endless = createServer((request, response) => {
      request.resume().on('end', () => {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pour = () => {
          while (!hungUp) {
            streamed += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', pour);
          }
        };
        response.on('close', () => (hungUp = true));
        pour();
      });
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      await admin.remove(webhook.webhookId);
      webhook = await admin.add(
        alice.userId,
        `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks/orders`,
      );
      await bid(alice);
      const started = performance.now();
      expect(await dispatcher({ timeoutMs: 20_000 }).runOnce()).toBe(1);
      // Well within the timeout: the attempt does not wait for the stream to end (or to be timed out).
      expect(performance.now() - started).toBeLessThan(5_000);
      await vi.waitFor(() => expect(hungUp).toBe(true), { timeout: 5_000 });
      // What the socket buffers held: a sender that read the body would have taken it at loopback speed.
      expect(streamed).toBeLessThan(8 * 1024 * 1024);
      const rows = await deliveries();
      expect(rows.map((d) => [d.status, Number(d.attempts), Number(d.lastStatusCode)])).toEqual([
        ['DELIVERED', 1, 200],
      ]);
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });

  it('queues nothing for a removed webhook and gives up its pending deliveries', async () => {
    receiver.answer = () => 500;
    await bid(alice);
    await dispatcher().runOnce();
    await admin.remove(webhook.webhookId);
    await expect(admin.remove(webhook.webhookId)).rejects.toThrow(/removed already/);
    await bid(alice);
    const rows = await deliveries();
    expect(rows.map((d) => [d.status, d.lastError])).toEqual([['FAILED', 'webhook removed']]);
    server.clock.now += 10_000;
    expect(await dispatcher().runOnce()).toBe(0);
    expect(receiver.received.length).toBe(1);
  });

  it('two dispatchers on one database never send the same delivery twice', async () => {
    for (let i = 0; i < 8; i += 1) await bid(alice);
    await oms.runOnce();
    const expected = (await history(alice)).map((e) => e.event_id);
    const [one, two] = [dispatcher({ id: 'one' }), dispatcher({ id: 'two' })];
    // Side by side until everything is sent (each pass takes at most 10 deliveries of one webhook).
    for (let i = 0; i < 10 && receiver.received.length < expected.length; i += 1)
      await Promise.all([one.runOnce(), two.runOnce()]);
    expect([...receivedIds()].sort((a, b) => a - b)).toEqual(expected);
    expect((await deliveries()).every((d) => d.status === 'DELIVERED' && Number(d.attempts) === 1)).toBe(true);
  });

  it('registers only http(s) URLs of known users', async () => {
    for (const url of [
      'ftp://example.com/hook',
      'not a url',
      'file:///etc/passwd',
      'https://user:pw@example.com/hook',
      'https://example.com/h#x',
    ]) {
      await expect(admin.add(alice.userId, url), url).rejects.toThrow();
    }
    await expect(admin.add('nobody', 'https://example.com/hook')).rejects.toThrow(/no user nobody/);
    const added = await admin.add(alice.userId, 'https://example.com/hook?team=ops');
    expect(added.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // Registration fetches nothing.
    expect(receiver.received).toEqual([]);
  });

  describe('addresses a webhook may reach (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES)', () => {
    const ALLOW_PRIVATE = '(allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)';
    const strictAdmin = () =>
      new WebhookAdminService(
        repository,
        new UserRepository(server.store.db, server.store.dialect),
        STRICT_WEBHOOK_ADDRESSES,
        () => server.clock.now,
      );
    /** The receiver's URL with another host (it listens on 127.0.0.1). */
    const receiverAt = (host: string) => receiver.url.replace('127.0.0.1', host);
    /** Resolves names the test owns; anything else is not found. */
    const resolveOwn =
      (names: Record<string, string[]>): Resolver =>
      (hostname, _options, callback) => {
        const addresses = names[hostname];
        if (addresses === undefined)
          return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
        callback(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
      };

    /** Moves the webhook of this test to `url` (registered under the allowance of the local receivers). */
    async function moveWebhookTo(url: string): Promise<void> {
      await admin.remove(webhook.webhookId);
      webhook = await admin.add(alice.userId, url);
    }

    it('refuses to register, by default, plain http, credentials and hosts that are non-public addresses, saying why', async () => {
      const refused: [url: string, reason: string][] = [
        ['http://hooks.example.com/ordergate', 'the URL must be https (plain http only with WEBHOOK_ALLOW_HTTP=true)'],
        ['https://ops:secret@hooks.example.com/ordergate', 'the URL must not carry a user name or password'],
        ['https://127.0.0.1/hooks', `the URL's host 127.0.0.1 is a loopback address ${ALLOW_PRIVATE}`],
        ['https://10.0.12.7/hooks', `the URL's host 10.0.12.7 is a private address ${ALLOW_PRIVATE}`],
        [
          'https://169.254.169.254/latest/meta-data/',
          `the URL's host 169.254.169.254 is a link-local address (the cloud metadata service is one) ${ALLOW_PRIVATE}`,
        ],
        ['https://[::1]/hooks', `the URL's host ::1 is a loopback address ${ALLOW_PRIVATE}`],
        [
          'https://[::ffff:127.0.0.1]/hooks',
          `the URL's host ::ffff:7f00:1 is 127.0.0.1, a loopback address ${ALLOW_PRIVATE}`,
        ],
      ];
      const strict = strictAdmin();
      for (const [url, reason] of refused)
        await expect(strict.add(alice.userId, url), url).rejects.toMatchObject({ name: 'AdminError', message: reason });
      expect((await repository.list(alice.userId)).map((w) => w.url)).toEqual([receiver.url]);
      // The same URLs with the settings that allow them (credentials are never allowed).
      for (const [url] of refused.filter(([, reason]) => !reason.includes('password')))
        await admin.remove((await admin.add(alice.userId, url)).webhookId);
      await expect(admin.add(alice.userId, 'https://ops:secret@hooks.example.com/ordergate')).rejects.toThrow(
        /user name or password/,
      );
      expect(receiver.received).toEqual([]);
    });

    it('refuses to register a name that resolves to a refused address now, and ports outside 443, the default and 1024-65535 (issue 21 row 10)', async () => {
      const names = {
        'rebind.ordergate.test': ['93.184.216.34', '127.0.0.1'],
        'nip.ordergate.test': ['127.0.0.1'],
        'public.ordergate.test': ['93.184.216.34'],
      };
      const strict = new WebhookAdminService(
        repository,
        new UserRepository(server.store.db, server.store.dialect),
        STRICT_WEBHOOK_ADDRESSES,
        () => server.clock.now,
        resolveOwn(names),
      );
      await expect(strict.add(alice.userId, 'https://nip.ordergate.test/x')).rejects.toMatchObject({
        name: 'AdminError',
        message: `the URL's host nip.ordergate.test resolves to a non-public address: 127.0.0.1 is a loopback address ${ALLOW_PRIVATE}`,
      });
      // One refused address among the answers refuses the name, as at delivery.
      await expect(strict.add(alice.userId, 'https://rebind.ordergate.test/x')).rejects.toThrow(
        /resolves to a non-public address: 127\.0\.0\.1/,
      );
      const ports: [string, boolean][] = [
        ['https://public.ordergate.test:22/x', false],
        ['https://public.ordergate.test:25/x', false],
        ['https://public.ordergate.test:1023/x', false],
        ['https://public.ordergate.test/x', true],
        ['https://public.ordergate.test:443/x', true],
        ['https://public.ordergate.test:1024/x', true],
        ['https://public.ordergate.test:8443/x', true],
        // A name that does not resolve yet is taken: every delivery checks it again.
        ['https://later.ordergate.test/x', true],
      ];
      for (const [url, ok] of ports) {
        if (ok) await strict.remove((await strict.add(alice.userId, url)).webhookId);
        else
          await expect(strict.add(alice.userId, url), url).rejects.toThrow(
            /^the URL's port \d+ is refused: 443, the scheme's default or 1024 to 65535 \(any port only with WEBHOOK_ALLOW_ANY_PORT=true\)$/,
          );
      }
      const anyPort = new WebhookAdminService(
        repository,
        new UserRepository(server.store.db, server.store.dialect),
        { ...STRICT_WEBHOOK_ADDRESSES, allowAnyPort: true },
        () => server.clock.now,
        resolveOwn(names),
      );
      await anyPort.remove((await anyPort.add(alice.userId, 'https://public.ordergate.test:22/x')).webhookId);
      expect(receiver.received).toEqual([]);
    });

    it('refuses a delivery to a name that resolves to a loopback address, records why, and gives it up without retrying', async () => {
      await moveWebhookTo(receiverAt('localhost'));
      await bid(alice);
      const worker = dispatcher({ addresses: HTTP_PUBLIC_ONLY });
      expect(await worker.runOnce()).toBe(1);
      const [row] = await deliveries();
      expect(row).toMatchObject({ status: 'FAILED', lastStatusCode: null });
      expect(row!.lastError).toMatch(
        /^refused: localhost resolves to a non-public address: (127\.0\.0\.1|::1) is a loopback address \(allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true\)$/,
      );
      expect(Number(row!.attempts)).toBe(1);
      server.clock.now += RETRY.retryForMs;
      expect(await worker.runOnce()).toBe(0);
      expect(receiver.received).toEqual([]);
    });

    it('delivers to the same name when WEBHOOK_ALLOW_PRIVATE_ADDRESSES allows it', async () => {
      await moveWebhookTo(receiverAt('localhost'));
      await bid(alice);
      expect(await dispatcher({ addresses: LOCAL_RECEIVERS }).runOnce()).toBe(1);
      expect((await deliveries()).map((d) => [d.status, Number(d.lastStatusCode)])).toEqual([['DELIVERED', 200]]);
      expect(receiver.received).toHaveLength(1);
    });

    it('connects to the address the checked lookup gave, and refuses a name with any refused address among its answers', async () => {
      // `hooks.ordergate.test` exists only for the dispatcher's resolver: a delivery that arrives went where the check looked.
      await moveWebhookTo(receiverAt('hooks.ordergate.test'));
      await bid(alice);
      await oms.runOnce();
      const events = await history(alice);
      const [first, second] = await deliveries();
      const own = resolveOwn({ 'hooks.ordergate.test': ['127.0.0.1'] });
      expect(await dispatcher({ addresses: HTTP_PUBLIC_ONLY, resolve: own, id: 'strict' }).runOnce()).toBe(
        events.length,
      );
      expect(
        (await repository.deliveries({ webhookId: webhook.webhookId, limit: 10 })).every((d) => d.status === 'FAILED'),
      ).toBe(true);
      expect(receiver.received).toEqual([]);

      // A rebinding name: a public address and a private one in the same answer. Refused before any connection.
      const rebinding = resolveOwn({ 'hooks.ordergate.test': ['93.184.215.14', '10.0.0.5'] });
      for (const id of [first!.id, second!.id]) await admin.retry(Number(id));
      await dispatcher({ addresses: HTTP_PUBLIC_ONLY, resolve: rebinding, id: 'rebinding' }).runOnce();
      const [again] = await repository.deliveries({
        webhookId: webhook.webhookId,
        eventId: Number(first!.eventId),
        limit: 1,
      });
      expect(again).toMatchObject({ status: 'FAILED' });
      expect(again!.lastError).toMatch(
        /^refused: hooks\.ordergate\.test resolves to a non-public address: 10\.0\.0\.5 is a private address/,
      );

      // Allowed: the retried deliveries arrive, through the test's resolver.
      for (const d of await repository.deliveries({ webhookId: webhook.webhookId, status: 'FAILED', limit: 10 }))
        await admin.retry(Number(d.id));
      await dispatcher({ addresses: LOCAL_RECEIVERS, resolve: own, id: 'allowed' }).runOnce();
      expect(receiver.received.map((r) => r.headers.host)).toEqual(
        events.map(() => `hooks.ordergate.test:${new URL(receiver.url).port}`),
      );
      expect((await deliveries()).map((d) => d.status)).toEqual(events.map(() => 'DELIVERED'));
    });

    it('refuses at delivery a URL the settings no longer allow (registered while they did), whatever the resolver says', async () => {
      await bid(alice);
      await dispatcher({ addresses: HTTP_PUBLIC_ONLY }).runOnce();
      const [row] = await deliveries();
      expect(row).toMatchObject({
        status: 'FAILED',
        lastError: `refused: the URL's host 127.0.0.1 is a loopback address ${ALLOW_PRIVATE}`,
      });
      await admin.retry(Number(row!.id));
      // By default (no allowance given) a dispatcher reaches neither plain http nor private addresses.
      await dispatcher({ addresses: 'default' }).runOnce();
      const [again] = await deliveries();
      expect(again).toMatchObject({
        status: 'FAILED',
        lastError: 'refused: the URL must be https (plain http only with WEBHOOK_ALLOW_HTTP=true)',
      });
      expect(Number(again!.attempts)).toBe(2);
      expect(receiver.received).toEqual([]);
    });
  });
});
