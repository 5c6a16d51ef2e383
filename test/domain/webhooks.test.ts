/** Webhook rules: URL checks, the signature (against a vector made with openssl), and the back-off schedule. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, isDelivered, nextAttemptAt, retryDelayMs, signWebhook, verifyWebhook, webhookUrlProblem } from '../../src/domain/webhooks.js';

describe('webhookUrlProblem', () => {
  it('accepts absolute http and https URLs', () => {
    for (const url of ['https://hooks.example.com/ordergate', 'http://127.0.0.1:9000/x?y=1', 'https://[::1]/a']) expect(webhookUrlProblem(url), url).toBeNull();
  });
  it('refuses anything else, saying why', () => {
    expect(webhookUrlProblem('ftp://example.com/x')).toBe('the URL must be http or https, not ftp');
    expect(webhookUrlProblem('javascript:alert(1)')).toBe('the URL must be http or https, not javascript');
    expect(webhookUrlProblem('/relative/path')).toBe('"/relative/path" is not an absolute URL');
    expect(webhookUrlProblem('https://u:p@example.com/')).toBe('the URL must not carry a user name or password');
    expect(webhookUrlProblem('https://example.com/#frag')).toBe('the URL must not carry a #fragment');
    expect(webhookUrlProblem(`https://example.com/${'a'.repeat(2048)}`)).toBe('the URL is longer than 2048 characters');
  });
});

describe('signWebhook / verifyWebhook', () => {
  // printf '%s' '1700000000.{"event_id":1}' | openssl dgst -sha256 -hmac 'whsec_test'
  const OPENSSL = '115402565fc7b710e75917d6a369828046e151bd5816426329c59ba9f11ea916';

  it('is HMAC-SHA256 over "<timestamp>.<raw body>", hex, prefixed sha256=', () => {
    expect(signWebhook('whsec_test', 1_700_000_000, '{"event_id":1}')).toBe(`sha256=${OPENSSL}`);
  });
  it('verifies a genuine, fresh delivery and nothing else', () => {
    const good = { timestamp: '1700000000', signature: `sha256=${OPENSSL}` };
    expect(verifyWebhook('whsec_test', good, '{"event_id":1}', 1_700_000_100)).toBe(true);
    expect(verifyWebhook('whsec_test', good, '{"event_id":2}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('whsec_other', good, '{"event_id":1}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('whsec_test', { ...good, timestamp: '1700000001' }, '{"event_id":1}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('whsec_test', { ...good, signature: OPENSSL }, '{"event_id":1}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('whsec_test', { ...good, signature: undefined }, '{"event_id":1}', 1_700_000_100)).toBe(false);
    // Older than the tolerance (5 minutes by default): a replay.
    expect(verifyWebhook('whsec_test', good, '{"event_id":1}', 1_700_000_301)).toBe(false);
  });
});

describe('retry schedule', () => {
  const policy = { firstDelayMs: 1_000, maxDelayMs: 8_000, retryForMs: 60_000 };
  it('doubles the pause after each failure up to the cap, with at most a fifth added as jitter', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(n, policy, 0))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(retryDelayMs(1, policy, 0.999_999)).toBe(1_200);
    expect(retryDelayMs(1_000, DEFAULT_RETRY_POLICY, 0)).toBe(DEFAULT_RETRY_POLICY.maxDelayMs);
  });
  it('tries a last time when the retry time runs out, then gives up', () => {
    expect(nextAttemptAt(0, 1, 0, policy, 0)).toBe(1_000);
    expect(nextAttemptAt(0, 10, 55_000, policy, 0)).toBe(60_000);
    expect(nextAttemptAt(0, 11, 60_000, policy, 0)).toBeNull();
  });
  it('counts only 2xx answers as delivered', () => {
    expect([200, 202, 204, 299].every(isDelivered)).toBe(true);
    expect([100, 301, 302, 400, 410, 500].some(isDelivered)).toBe(false);
  });
});
