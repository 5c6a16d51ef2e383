/** Webhook rules: URL checks, the signature (against a vector made with openssl), and the back-off schedule. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  isDelivered,
  nextAttemptAt,
  retryDelayMs,
  signWebhook,
  verifyWebhook,
  webhookUrlProblem,
} from '../../src/domain/orders/webhooks.js';

describe('webhookUrlProblem', () => {
  const open = { allowHttp: true, allowPrivateAddresses: true };
  const strict = { allowHttp: false, allowPrivateAddresses: false };

  it('accepts absolute http and https URLs when both settings allow them', () => {
    for (const url of ['https://hooks.example.com/ordergate', 'http://127.0.0.1:9000/x?y=1', 'https://[::1]/a'])
      expect(webhookUrlProblem(url, open), url).toBeNull();
  });
  it('refuses anything else, saying why', () => {
    expect(webhookUrlProblem('ftp://example.com/x', open)).toBe('the URL must be http or https, not ftp');
    expect(webhookUrlProblem('javascript:alert(1)', open)).toBe('the URL must be http or https, not javascript');
    expect(webhookUrlProblem('/relative/path', open)).toBe('"/relative/path" is not an absolute URL');
    expect(webhookUrlProblem('https://u:p@example.com/', open)).toBe('the URL must not carry a user name or password');
    expect(webhookUrlProblem('https://u@example.com/', open)).toBe('the URL must not carry a user name or password');
    expect(webhookUrlProblem('https://example.com/#frag', open)).toBe('the URL must not carry a #fragment');
    expect(webhookUrlProblem(`https://example.com/${'a'.repeat(2048)}`, open)).toBe(
      'the URL is longer than 2048 characters',
    );
  });
  it('by default accepts https URLs of names and public addresses', () => {
    for (const url of [
      'https://hooks.example.com/ordergate',
      'https://93.184.215.14/x',
      'https://[2606:4700::1111]/x',
      'https://localhost/x',
    ]) {
      expect(webhookUrlProblem(url, strict), url).toBeNull();
    }
  });
  it('by default refuses plain http, unless WEBHOOK_ALLOW_HTTP', () => {
    expect(webhookUrlProblem('http://hooks.example.com/ordergate', strict)).toBe(
      'the URL must be https (plain http only with WEBHOOK_ALLOW_HTTP=true)',
    );
    expect(webhookUrlProblem('http://hooks.example.com/ordergate', { ...strict, allowHttp: true })).toBeNull();
  });
  it('by default refuses a host that is a non-public address, however it is written, unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES', () => {
    const refused: [url: string, reason: string][] = [
      ['https://127.0.0.1/x', '127.0.0.1 is a loopback address'],
      ['https://127.1:8443/x', '127.0.0.1 is a loopback address'],
      ['https://0x7f000001/x', '127.0.0.1 is a loopback address'],
      ['https://2130706433/x', '127.0.0.1 is a loopback address'],
      ['https://127.0.0.1./x', '127.0.0.1 is a loopback address'],
      ['https://0.0.0.0/x', '0.0.0.0 is an unspecified address'],
      ['https://10.1.2.3/x', '10.1.2.3 is a private address'],
      ['https://172.31.255.255/x', '172.31.255.255 is a private address'],
      ['https://192.168.0.10/x', '192.168.0.10 is a private address'],
      [
        'https://169.254.169.254/latest/meta-data/',
        '169.254.169.254 is a link-local address (the cloud metadata service is one)',
      ],
      ['https://100.100.100.200/x', '100.100.100.200 is a shared (carrier-grade NAT) address'],
      ['https://[::1]/x', '::1 is a loopback address'],
      ['https://[::]/x', ':: is an unspecified address'],
      ['https://[::ffff:127.0.0.1]/x', '::ffff:7f00:1 is 127.0.0.1, a loopback address'],
      [
        'https://[::ffff:169.254.169.254]/x',
        '::ffff:a9fe:a9fe is 169.254.169.254, a link-local address (the cloud metadata service is one)',
      ],
      ['https://[64:ff9b::10.0.0.1]/x', '64:ff9b::a00:1 is 10.0.0.1, a private address'],
      ['https://[fd00::1]/x', 'fd00::1 is a private address'],
      ['https://[fe80::1]/x', 'fe80::1 is a link-local address'],
    ];
    for (const [url, reason] of refused) {
      expect(webhookUrlProblem(url, strict), url).toBe(
        `the URL's host ${reason} (allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)`,
      );
      expect(webhookUrlProblem(url, { ...strict, allowPrivateAddresses: true }), url).toBeNull();
    }
  });
  it('says first what the operator can least change: the scheme, then the address', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9000/x', strict)).toMatch(/must be https/);
    expect(webhookUrlProblem('http://127.0.0.1:9000/x', { ...strict, allowHttp: true })).toMatch(
      /127\.0\.0\.1 is a loopback address/,
    );
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
    expect(verifyWebhook('whsec_test', { ...good, timestamp: '1700000001' }, '{"event_id":1}', 1_700_000_100)).toBe(
      false,
    );
    expect(verifyWebhook('whsec_test', { ...good, signature: OPENSSL }, '{"event_id":1}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('whsec_test', { ...good, signature: undefined }, '{"event_id":1}', 1_700_000_100)).toBe(false);
    // Older than the tolerance (5 minutes by default): a replay.
    expect(verifyWebhook('whsec_test', good, '{"event_id":1}', 1_700_000_301)).toBe(false);
  });
});

describe('retry schedule', () => {
  const policy = { firstDelayMs: 1_000, maxDelayMs: 8_000, retryForMs: 60_000 };
  it('doubles the pause after each failure up to the cap, with at most a fifth added as jitter', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(n, policy, 0))).toEqual([
      1_000, 2_000, 4_000, 8_000, 8_000, 8_000,
    ]);
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
