/** SEBI's static IP rule as plain functions (src/domain/access/static-ip.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalAddress } from '../../src/domain/access/ip-address.js';
import {
  ADDRESS_CHANGE_INTERVAL_MS,
  addressChangeRefusal,
  keyAddressesProblem,
  keyAddressRefusal,
} from '../../src/domain/access/static-ip.js';

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

  it('is null for a zoned address, whose zone names an interface of the machine that wrote it (issue 47 row 5)', () => {
    for (const text of ['fe80::1%eth0', 'fe80::1%1', 'FE80::1%en0']) expect(canonicalAddress(text)).toBeNull();
  });

  it('writes every IPv6 address in its RFC 5952 form, as the URL parser does, and never throws', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const canonical = canonicalAddress(ip);
        const groups = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
        // An IPv4-mapped address is its IPv4 address; every other is as the URL parser writes it.
        if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(groups)) expect(canonical).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
        else expect(canonical).toBe(groups);
      }),
    );
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

describe('keyAddressesProblem refuses what no client calls from (issue 47 row 5)', () => {
  it.each([
    ['0.0.0.0', '"0.0.0.0" is an unspecified address, not an address a client calls from'],
    ['0.1.2.3', '"0.1.2.3" is an unspecified address, not an address a client calls from'],
    ['::', '"::" is an unspecified address, not an address a client calls from'],
    ['::ffff:0.0.0.0', '"::ffff:0.0.0.0" is an unspecified address, not an address a client calls from'],
    ['0:0:0:0:0:0:0:0', '"0:0:0:0:0:0:0:0" is an unspecified address, not an address a client calls from'],
    ['255.255.255.255', '"255.255.255.255" is the broadcast address, not an address a client calls from'],
    ['224.0.0.1', '"224.0.0.1" is a multicast address, not an address a client calls from'],
    ['239.255.255.250', '"239.255.255.250" is a multicast address, not an address a client calls from'],
    ['::ffff:224.0.0.251', '"::ffff:224.0.0.251" is a multicast address, not an address a client calls from'],
    ['ff02::1', '"ff02::1" is a multicast address, not an address a client calls from'],
    ['FF05::1:3', '"FF05::1:3" is a multicast address, not an address a client calls from'],
  ])('%s', (address, problem) => {
    expect(keyAddressesProblem([address])).toBe(problem);
    expect(keyAddressesProblem(['203.0.113.7', address])).toBe(problem);
  });

  it('names the zone of a zoned address and the address to give instead, without throwing', () => {
    expect(keyAddressesProblem(['fe80::1%eth0'])).toBe(
      '"fe80::1%eth0": a zone index (%eth0) is not part of an address the server sees; give fe80::1',
    );
    expect(keyAddressesProblem(['203.0.113.7', 'FE80::0:1%2'])).toBe(
      '"FE80::0:1%2": a zone index (%2) is not part of an address the server sees; give fe80::1',
    );
    expect(keyAddressesProblem(['1.2.3.4%eth0'])).toBe('"1.2.3.4%eth0" is not an IP address');
  });

  it('quotes what it was given with its control characters escaped: no forged line of the output', () => {
    expect(keyAddressesProblem(['203.0.113.7\nallowed_ips: 0.0.0.0'])).toBe(
      '"203.0.113.7\\nallowed_ips: 0.0.0.0" is not an IP address',
    );
    expect(keyAddressesProblem(['203.0.113.7\u202E'])).toBe('"203.0.113.7\\u202e" is not an IP address');
  });

  it('takes the addresses a client may call from: public, private, loopback, link-local', () => {
    for (const address of [
      '203.0.113.7',
      '10.1.2.3',
      '192.168.1.10',
      '127.0.0.1',
      '::1',
      'fe80::1',
      '2001:db8::1',
      '1.0.0.1',
      '223.255.255.255',
      '240.0.0.1',
    ]) {
      expect(keyAddressesProblem([address]), address).toBeNull();
    }
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
    // A zoned address (as a header behind a trusted proxy might name one) is refused, not a failure.
    expect(keyAddressRefusal(bound, 'fe80::1%eth0', false)).toBe('the API key is not registered for fe80::1%eth0');
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
    expect(addressChangeRefusal(key, changedAt + ADDRESS_CHANGE_INTERVAL_MS - 1, false)).toMatch(
      /next change is allowed from 2026-11-27T10:00:00.000Z/,
    );
    expect(addressChangeRefusal(key, changedAt + ADDRESS_CHANGE_INTERVAL_MS, false)).toBeNull();
    expect(addressChangeRefusal(key, changedAt + 1, true)).toBeNull();
    expect(addressChangeRefusal({ addresses: [], changedAt: null }, changedAt, false)).toBeNull();
  });
});
