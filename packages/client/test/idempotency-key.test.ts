/**
 * The Idempotency-Key of order entry where crypto.randomUUID is missing: a browser page on plain http (not a
 * secure context) has crypto.getRandomValues alone, and an order entry must still get its key, not a TypeError.
 */
import { afterEach, expect, it } from 'vitest';
import { OrdergateClient } from '../src/index.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  // The own property below shadowed the prototype's method: removing it gives it back.
  delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
});

async function keysOfTwoBids(): Promise<string[]> {
  const keys: string[] = [];
  const fetch: typeof globalThis.fetch = (_input, init) => {
    keys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
    const answer = { status: 'success', code: 's-101', message: 'Order Entry Sent to OMS', data: { orderId: '1' } };
    return Promise.resolve(Response.json(answer));
  };
  const client = new OrdergateClient({ baseUrl: 'http://127.0.0.1:9', fetch }).withToken('token', 'key');
  const bid = {
    scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: 'RL',
    quantity: '10',
    price: 101.5,
  } as const;
  await client.place(bid);
  await client.place(bid);
  return keys;
}

it('sends a random UUID as the key of each order entry, with crypto.randomUUID', async () => {
  const keys = await keysOfTwoBids();
  expect(keys).toHaveLength(2);
  for (const key of keys) expect(key).toMatch(UUID_V4);
  expect(keys[0]).not.toBe(keys[1]);
});

it('and without it, as a page on plain http, from crypto.getRandomValues', async () => {
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
  expect(globalThis.crypto.randomUUID).toBeUndefined();
  const keys = await keysOfTwoBids();
  expect(keys).toHaveLength(2);
  for (const key of keys) expect(key).toMatch(UUID_V4);
  expect(keys[0]).not.toBe(keys[1]);
});
