/**
 * The README's webhook receiver (examples/webhook-receiver.ts, shown verbatim in the README) against
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
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function deliver(body: string, options: { secret?: string; timestamp?: number } = {}) {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-ordergate-timestamp': String(timestamp),
        'x-ordergate-signature': signWebhook(options.secret ?? SECRET, timestamp, body),
      },
      body,
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

  it('is shown in the README exactly as it is tested here', () => {
    expect(readFileSync('README.md', 'utf8')).toContain(readFileSync('examples/webhook-receiver.ts', 'utf8'));
  });
});
