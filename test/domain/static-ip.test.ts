/** SEBI's static IP rule as plain functions (src/domain/static-ip.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalAddress } from '../../src/domain/ip-address.js';
import { ADDRESS_CHANGE_INTERVAL_MS, addressChangeRefusal, keyAddressesProblem, keyAddressRefusal } from '../../src/domain/static-ip.js';

describe('canonicalAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:DB8::0:1', '2001:db8::1'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    [' 198.51.100.1 ', '198.51.100.1'],
  ])('%s is %s', (text, canonical) => {
    expect(canonicalAddress(text)).toBe(canonical);
  });

  it.each(['', 'localhost', '1.2.3', '256.1.1.1', '203.0.113.0/24', '::ffff:999.1.1.1'])('%s is no address', (text) => {
    expect(canonicalAddress(text)).toBeNull();
  });

  it('writes every IPv4 address one way, however a dual-stack socket reports it', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(canonicalAddress(ip)).toBe(ip);
        expect(canonicalAddress(`::ffff:${ip}`)).toBe(ip);
      }),
    );
  });
});

describe('keyAddressesProblem', () => {
  it('takes a primary and at most one secondary, distinct, real addresses', () => {
    expect(keyAddressesProblem(['203.0.113.7'])).toBeNull();
    expect(keyAddressesProblem(['203.0.113.7', '2001:db8::1'])).toBeNull();
    expect(keyAddressesProblem([])).toMatch(/primary/);
    expect(keyAddressesProblem(['203.0.113.7', '203.0.113.8', '203.0.113.9'])).toMatch(/at most one secondary/);
    expect(keyAddressesProblem(['203.0.113.7', '::ffff:203.0.113.7'])).toMatch(/the same/);
    expect(keyAddressesProblem(['example.com'])).toMatch(/not an IP address/);
  });
});

describe('keyAddressRefusal', () => {
  const bound = { addresses: ['203.0.113.7', '2001:db8::1'], changedAt: 1 };
  it('lets a bound key be used from its primary or secondary address only', () => {
    expect(keyAddressRefusal(bound, '203.0.113.7', false)).toBeNull();
    expect(keyAddressRefusal(bound, '::ffff:203.0.113.7', true)).toBeNull();
    expect(keyAddressRefusal(bound, '2001:0db8::0001', false)).toBeNull();
    expect(keyAddressRefusal(bound, '203.0.113.8', false)).toBe('the API key is not registered for 203.0.113.8');
    expect(keyAddressRefusal(bound, '', false)).toBe('the API key is not registered for an unknown address');
  });

  it('lets a key with no address through unless the operator requires addresses', () => {
    const unbound = { addresses: [], changedAt: null };
    expect(keyAddressRefusal(unbound, '198.51.100.1', false)).toBeNull();
    expect(keyAddressRefusal(unbound, '198.51.100.1', true)).toBe('the API key has no registered IP address');
  });
});

describe('addressChangeRefusal', () => {
  const changedAt = Date.parse('2026-11-20T10:00:00Z');
  it('allows one change a week, from the instant a week after the last, and any change with the override', () => {
    const key = { addresses: ['203.0.113.7'], changedAt };
    expect(addressChangeRefusal(key, changedAt + ADDRESS_CHANGE_INTERVAL_MS - 1, false)).toMatch(/next change is allowed from 2026-11-27T10:00:00.000Z/);
    expect(addressChangeRefusal(key, changedAt + ADDRESS_CHANGE_INTERVAL_MS, false)).toBeNull();
    expect(addressChangeRefusal(key, changedAt + 1, true)).toBeNull();
    expect(addressChangeRefusal({ addresses: [], changedAt: null }, changedAt, false)).toBeNull();
  });
});
