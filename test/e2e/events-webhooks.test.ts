/**
 * Live order updates end to end, with real processes: the server as `npm start` runs it (embedded OMS and
 * webhook dispatcher), `ordergate demo` and `ordergate webhooks add`, a webhook receiver inside the test
 * that verifies every signature, and an event-stream client that drops its connection and resumes with
 * Last-Event-ID. What both saw must be the order histories exactly: no event lost, none repeated.
 *
 * The receiver listens on 127.0.0.1 over plain http: the CLI and the server are given the settings that
 * allow it (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES); without them it is refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/domain/orders/webhooks.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { expectOneLineFailure, fieldsOf, runOrdergate } from '../cli/run-ordergate.js';
import { call, children, eventually, startServer, stopServer, type ServerProcess } from '../support/server-process.js';
import { validBid } from '../support/server.js';
import { openEventStream, type EventStream } from '../support/sse.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

interface Demo {
  user_id: string;
  api_key: string;
  access_token: string;
  ofs_issues: { exchange: string; scrip_token: number; symbol: string; series: string }[];
}

interface HistoryEvent {
  event_id: number;
  order_id: string;
  status: string;
  reason: string;
}

describe('order events on the stream and by webhook, end to end', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-events-e2e-'));
  const strictEnv = {
    DATABASE_URL: `sqlite:${join(dir, 'ordergate.db')}`,
    OMS_POLL_MS: '50',
    WEBHOOK_ALLOW_HTTP: 'false',
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'false',
  };
  const env = { ...strictEnv, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' };
  let server: ServerProcess;
  let receiver: WebhookReceiver;
  let store: Store;
  let demo: Demo;
  let secret: string;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const created = await runOrdergate(['demo', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    demo = JSON.parse(created.stdout);
    const added = await runOrdergate(['webhooks', 'add', demo.user_id, receiver.url], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(fieldsOf(added.stdout)).toMatchObject({
      user_id: demo.user_id,
      url: receiver.url,
      webhook_id: expect.stringMatching(/^wh_/),
    });
    secret = added.stdout.trimEnd().split('\n').at(-1)!;
    expect(secret).toMatch(/^whsec_/);
    // Registration fetches nothing.
    expect(receiver.received).toEqual([]);
    server = await startServer(env);
    store = openStore(env.DATABASE_URL);
  }, 60_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await store?.close();
    if (server) await stopServer(server);
    for (const child of children) child.kill('SIGKILL');
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = () => ({ token: demo.access_token, apiKey: demo.api_key });

  async function history(): Promise<HistoryEvent[]> {
    const rows = await store.db
      .selectFrom('order_history')
      .innerJoin('orders', 'orders.order_id', 'order_history.order_id')
      .select(['order_history.id', 'order_history.order_id', 'order_history.status', 'order_history.reason'])
      .where('orders.user_id', '=', demo.user_id)
      .orderBy('order_history.id')
      .execute();
    return rows.map((row) => ({
      event_id: Number(row.id),
      order_id: row.order_id,
      status: row.status,
      reason: row.reason,
    }));
  }

  async function bid(): Promise<string> {
    const issue = demo.ofs_issues[0]!;
    const body = validBid({
      scrip_info: {
        exchange: issue.exchange,
        scrip_token: issue.scrip_token,
        symbol: issue.symbol,
        series: issue.series,
      },
      quantity: '10',
    });
    const placed = await call(server.url, 'POST', '/transactional/v1/orders/regular', { body, ...auth() });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    return placed.body.data.orderId;
  }

  async function statusOf(orderId: string): Promise<string | undefined> {
    const book = await call(server.url, 'GET', `/transactional/v1/orders?order_id=${orderId}`, {
      token: demo.access_token,
    });
    return book.body?.data?.[0]?.status;
  }

  /** Waits until the orders are in these statuses (the OMS works on its own). */
  async function settle(expected: Record<string, string>): Promise<void> {
    let seen: Record<string, string | undefined> = {};
    const done = async () => {
      seen = Object.fromEntries(await Promise.all(Object.keys(expected).map(async (id) => [id, await statusOf(id)])));
      return Object.entries(expected).every(([id, status]) => seen[id] === status);
    };
    const deadline = Date.now() + 15_000;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`orders did not settle: ${JSON.stringify(seen)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const asHistory = (event: { data: HistoryEvent }) => ({
    event_id: event.data.event_id,
    order_id: event.data.order_id,
    status: event.data.status,
    reason: event.data.reason,
  });

  it('streams the events of a bid and an executed cart, drops the stream, and resumes with Last-Event-ID without gap or repeat', async () => {
    const first = await openEventStream(server.url, demo.access_token);
    streams.push(first);
    const before = (await history()).at(-1)?.event_id ?? 0;

    const bidA = await bid();
    const cart = await call(server.url, 'POST', '/transactional/v1/ordercart', {
      body: {
        ordercartName: 'e2e OFS basket',
        orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
        version: '1',
        createdBy: demo.user_id,
        modifiedBy: demo.user_id,
        executedNoTime: 0,
      },
      token: demo.access_token,
    });
    expect(cart.status, JSON.stringify(cart.body)).toBe(200);
    const executed = await call(
      server.url,
      'POST',
      `/transactional/v1/ordercart/${cart.body.data.ordercartId}/execute`,
      auth(),
    );
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body).toMatchObject({ status: 'success', code: 's-101' });
    const bidB = executed.body.data[0].orderId as string;
    await settle({ [bidA]: 'PENDING', [bidB]: 'PENDING' });
    await first.until(
      () => first.events.filter((e) => e.data.status === 'PENDING').length === 2,
      'both bids PENDING on the stream',
    );

    // The client goes away; meanwhile a bid is cancelled and another placed.
    first.close();
    const lastSeen = first.events.at(-1)!.id;
    const cancelled = await call(server.url, 'DELETE', `/transactional/v1/orders/regular/NSE_EQ/${bidA}`, auth());
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const bidC = await bid();
    await settle({ [bidA]: 'CANCELLED', [bidB]: 'PENDING', [bidC]: 'PENDING' });

    const second = await openEventStream(server.url, demo.access_token, String(lastSeen));
    streams.push(second);
    const expected = (await history()).filter((e) => e.event_id > before);
    await second.until(
      () => second.events.length >= expected.filter((e) => e.event_id > lastSeen).length,
      'the missed events',
    );
    // A live event on the resumed stream too.
    const bidD = await bid();
    await settle({ [bidD]: 'PENDING' });
    const all = (await history()).filter((e) => e.event_id > before);
    await second.until(() => second.events.at(-1)?.id === all.at(-1)!.event_id, 'the live events');

    const seen = [...first.events, ...second.events];
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.event_id));
    expect(seen.map(asHistory)).toEqual(all);
    expect(new Set(all.map((e) => e.order_id))).toEqual(new Set([bidA, bidB, bidC, bidD]));
    // The cancelled bid: placed, sent, open at the exchange, cancellation asked for (still PENDING), cancelled.
    expect(all.filter((e) => e.order_id === bidA).map((e) => e.status)).toEqual([
      'OMSXMITTED',
      'EXXMITTED',
      'PENDING',
      'PENDING',
      'CANCELLED',
    ]);
  }, 60_000);

  it('POSTs every event to the webhook, each signed with the secret `webhooks add` printed', async () => {
    const all = await history();
    expect(
      await eventually(
        () => new Set(receiver.received.map((r) => r.headers['x-ordergate-event-id'])).size >= all.length,
        15_000,
      ),
    ).toBe(true);

    const byEvent = new Map<number, HistoryEvent>();
    for (const delivery of receiver.received) {
      const timestamp = delivery.headers['x-ordergate-timestamp'] as string;
      const signature = delivery.headers['x-ordergate-signature'] as string;
      expect(verifyWebhook(secret, { timestamp, signature }, delivery.body, Math.floor(Date.now() / 1000))).toBe(true);
      const event = JSON.parse(delivery.body);
      expect(String(event.event_id)).toBe(delivery.headers['x-ordergate-event-id']);
      // At least once: a repeat carries the same event, which the receiver drops by its id.
      byEvent.set(event.event_id, asHistory({ data: event }));
    }
    expect([...byEvent.values()].sort((a, b) => a.event_id - b.event_id)).toEqual(all);

    const listed = await runOrdergate(['webhooks', 'deliveries', '--user', demo.user_id, '--json', '--limit', '1000'], {
      env,
    });
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.event_id).sort((a: number, b: number) => a - b)).toEqual(all.map((e) => e.event_id));
    expect(rows.every((row) => row.status === 'DELIVERED' && row.attempts === 1 && row.last_status_code === 200)).toBe(
      true,
    );
  }, 30_000);

  it('`webhooks add` refuses, without the settings, plain http and loopback addresses, with a one-line reason', async () => {
    expectOneLineFailure(
      await runOrdergate(['webhooks', 'add', demo.user_id, receiver.url], { env: strictEnv }),
      /^ordergate: the URL must be https \(plain http only with WEBHOOK_ALLOW_HTTP=true\)$/m,
    );
    expectOneLineFailure(
      await runOrdergate(['webhooks', 'add', demo.user_id, receiver.url], {
        env: { ...strictEnv, WEBHOOK_ALLOW_HTTP: 'true' },
      }),
      /^ordergate: the URL's host 127\.0\.0\.1 is a loopback address \(allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true\)$/m,
    );
    const listed = await runOrdergate(['webhooks', 'list', '--user', demo.user_id], { env: strictEnv });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(1);
  }, 30_000);
});
