/** The webhook verifier: the README receiver's rules, and never an exception whatever it is given. */
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../src/webhooks.js';

const SECRET = 'whsec_test_secret';
const NOW = Date.UTC(2026, 0, 1, 12);
const BODY = '{"event_id":41,"type":"order_update","status":"PENDING"}';
const sign = (timestamp: string, body: string, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
const headersAt = (seconds: number, body = BODY) => {
  const timestamp = String(seconds);
  return {
    'x-ordergate-timestamp': timestamp,
    'x-ordergate-signature': sign(timestamp, body),
    'x-ordergate-event-id': '41',
  };
};

describe('verifyWebhook', () => {
  it('accepts a good signature over the raw body, as a string or bytes, with Node or Fetch headers', () => {
    const headers = headersAt(NOW / 1000);
    expect(verifyWebhook(SECRET, headers, BODY, NOW)).toBe(true);
    expect(verifyWebhook(SECRET, headers, Buffer.from(BODY), NOW)).toBe(true);
    expect(verifyWebhook(SECRET, new Headers(headers), BODY, NOW)).toBe(true);
    expect(
      verifyWebhook(
        SECRET,
        {
          'X-Ordergate-Timestamp': headers['x-ordergate-timestamp'],
          'X-Ordergate-Signature': headers['x-ordergate-signature'],
        },
        BODY,
        NOW,
      ),
    ).toBe(true);
  });

  it('refuses a tampered body, another secret, another timestamp', () => {
    const headers = headersAt(NOW / 1000);
    expect(verifyWebhook(SECRET, headers, BODY.replace('PENDING', 'EXECUTED'), NOW)).toBe(false);
    expect(verifyWebhook('whsec_other', headers, BODY, NOW)).toBe(false);
    expect(verifyWebhook(SECRET, { ...headers, 'x-ordergate-timestamp': String(NOW / 1000 + 1) }, BODY, NOW)).toBe(
      false,
    );
  });

  it('refuses a timestamp more than five minutes away, in the past or the future', () => {
    expect(verifyWebhook(SECRET, headersAt(NOW / 1000 - 300), BODY, NOW)).toBe(true);
    expect(verifyWebhook(SECRET, headersAt(NOW / 1000 - 301), BODY, NOW)).toBe(false);
    expect(verifyWebhook(SECRET, headersAt(NOW / 1000 + 301), BODY, NOW)).toBe(false);
  });

  it('refuses malformed signatures and headers without throwing', () => {
    const good = headersAt(NOW / 1000);
    const hex = good['x-ordergate-signature'].slice('sha256='.length);
    for (const signature of [
      '',
      hex,
      `sha256=${hex.slice(2)}`,
      `sha256=${hex}00`,
      `sha256=${hex.toUpperCase()}`,
      `sha1=${hex}`,
      `sha256= ${hex}`,
    ]) {
      expect(verifyWebhook(SECRET, { ...good, 'x-ordergate-signature': signature }, BODY, NOW), signature).toBe(false);
    }
    expect(
      verifyWebhook(SECRET, { ...good, 'x-ordergate-signature': [good['x-ordergate-signature']] }, BODY, NOW),
    ).toBe(false);
    expect(verifyWebhook(SECRET, { 'x-ordergate-signature': good['x-ordergate-signature'] }, BODY, NOW)).toBe(false);
    for (const timestamp of ['', '-1', '1e9', ' 1767268800', '1767268800.5', '9'.repeat(13)]) {
      expect(verifyWebhook(SECRET, { ...good, 'x-ordergate-timestamp': timestamp }, BODY, NOW), timestamp).toBe(false);
    }
    expect(verifyWebhook('', good, BODY, NOW)).toBe(false);
    expect(verifyWebhook(SECRET, good, BODY, Number.NaN)).toBe(false);
  });

  it('never throws, whatever the input (property)', () => {
    const anything = fc.anything();
    fc.assert(
      fc.property(anything, anything, anything, anything, (secret, headers, body, now) => {
        expect(
          typeof verifyWebhook(secret as string, headers as Record<string, string>, body as string, now as number),
        ).toBe('boolean');
      }),
    );
  });
});
