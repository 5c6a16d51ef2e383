/**
 * The documented webhook receiver (examples/webhook-receiver.ts, shown verbatim in docs/events.md) against
 * deliveries signed the way the dispatcher signs them: genuine ones are taken once, others refused.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/domain/webhooks.js';
import { isGenuine, startReceiver } from '../../examples/webhook-receiver.js';

const SECRET = 'whsec_example';

describe('examples/webhook-receiver.ts', () => {
  const events: { event_id: number; status: string }[] = [];
  const server = startReceiver(SECRET, 0, (event) => events.push(event));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()));

  async function deliver(body: string, options: { secret?: string; timestamp?: number; signature?: string } = {}) {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-ordergate-timestamp': String(timestamp),
        'x-ordergate-signature': options.signature ?? signWebhook(options.secret ?? SECRET, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(5_000),
    });
    return response.status;
  }

  it('takes a genuine delivery once and drops its repeat', async () => {
    const body = '{"event_id":7,"type":"order_update","status":"PENDING"}';
    expect(await deliver(body)).toBe(204);
    expect(await deliver(body)).toBe(204);
    expect(events).toEqual([{ event_id: 7, type: 'order_update', status: 'PENDING' }]);
  });

  it('refuses a wrong secret and a stale timestamp', async () => {
    expect(await deliver('{"event_id":8}', { secret: 'whsec_other' })).toBe(401);
    expect(await deliver('{"event_id":9}', { timestamp: Math.floor(Date.now() / 1000) - 301 })).toBe(401);
    expect(events.map((e) => e.event_id)).toEqual([7]);
    expect(isGenuine(SECRET, 'abc', 'sha256=00', '{}')).toBe(false);
  });

  it('refuses a signature of any characters or length with 401, and keeps serving', async () => {
    // 'é' is one character but two bytes: as long as a genuine signature in characters, not in bytes.
    for (const signature of ['sha256=' + 'é'.repeat(64), 'é'.repeat(71), 'sha256=' + 'ff'.repeat(32), 'sha256=' + '0'.repeat(640), '']) {
      expect(await deliver('{"event_id":10}', { signature }), signature).toBe(401);
    }
    expect(isGenuine(SECRET, String(Math.floor(Date.now() / 1000)), '\u{1F600}'.repeat(35) + 'x', '{}')).toBe(false);
    expect(await deliver('{"event_id":11,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11]);
  });

  it('refuses a body over 1 MiB with 413 without reading it, and keeps serving', async () => {
    const { port } = server.address() as AddressInfo;
    const oversized = async (request: RequestInit) =>
      (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', signal: AbortSignal.timeout(5_000), ...request })).status;
    expect(await oversized({ body: 'x'.repeat(1024 * 1024 + 1) })).toBe(413);
    // Chunked, with no length announced: refused once more than 1 MiB has arrived. The body ends at 64 MiB, so
    // that a client still sending after the answer cannot fill the machine's memory (a CI run's test worker was
    // killed so, at 23 GB); a receiver that read it all would see it all sent.
    const BODY_END = 64 * 1024 * 1024;
    let sent = 0;
    const long = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= BODY_END) return controller.close();
        sent += 65_536;
        controller.enqueue(new Uint8Array(65_536));
      },
    });
    expect(await oversized({ body: long, duplex: 'half' } as RequestInit)).toBe(413);
    expect(sent).toBeLessThan(BODY_END);
    expect(await deliver('{"event_id":12,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11, 12]);
  });

  it('refuses a genuine delivery whose body is not a JSON object with 400, and keeps serving', async () => {
    expect(await deliver('{"event_id":')).toBe(400);
    for (const body of ['null', '1', '"x"']) expect(await deliver(body), body).toBe(400);
    expect(await deliver('{"event_id":13,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11, 12, 13]);
  });

  it('is shown in docs/events.md exactly as it is tested here', () => {
    expect(readFileSync('docs/events.md', 'utf8')).toContain(readFileSync('examples/webhook-receiver.ts', 'utf8'));
  });
});
