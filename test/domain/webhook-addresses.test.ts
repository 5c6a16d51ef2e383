/** Which addresses a webhook may reach: every non-public range is refused, in every form that reaches it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalAddress, refusedAddressReason } from '../../src/domain/orders/webhook-addresses.js';

describe('refusedAddressReason', () => {
  it('refuses the non-public IPv4 ranges, naming the kind', () => {
    const refused: [address: string, kind: string][] = [
      ['0.0.0.0', 'an unspecified address'],
      ['0.1.2.3', 'an unspecified address'],
      ['127.0.0.1', 'a loopback address'],
      ['127.255.255.254', 'a loopback address'],
      ['10.0.0.1', 'a private address'],
      ['172.16.0.1', 'a private address'],
      ['172.31.255.255', 'a private address'],
      ['192.168.1.1', 'a private address'],
      ['169.254.169.254', 'a link-local address (the cloud metadata service is one)'],
      ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
      ['100.127.255.255', 'a shared (carrier-grade NAT) address'],
      ['224.0.0.1', 'a multicast address'],
      ['239.255.255.250', 'a multicast address'],
      ['255.255.255.255', 'the broadcast address'],
      ['240.0.0.1', 'a reserved address'],
      ['192.0.0.8', 'a reserved address'],
      ['192.0.2.1', 'a reserved address'],
      ['198.18.0.1', 'a reserved address'],
      ['198.51.100.1', 'a reserved address'],
      ['203.0.113.1', 'a reserved address'],
    ];
    for (const [address, kind] of refused) expect(refusedAddressReason(address), address).toBe(`${address} is ${kind}`);
  });

  it('refuses the non-public IPv6 ranges, naming the kind', () => {
    const refused: [address: string, kind: string][] = [
      ['::', 'an unspecified address'],
      ['::1', 'a loopback address'],
      ['fc00::1', 'a private address'],
      ['fdff:ffff::1', 'a private address'],
      ['64:ff9b:1::a00:1', 'a private address'],
      ['fe80::1', 'a link-local address'],
      ['fe80::1%eth0', 'a link-local address'],
      ['febf::1', 'a link-local address'],
      ['ff02::1', 'a multicast address'],
      ['2001:db8::1', 'a reserved address'],
      ['2001::1', 'a reserved address'],
      ['3fff::1', 'a reserved address'],
      ['fec0::1', 'a reserved address'],
      ['100::1', 'a reserved address'],
      ['::127.0.0.1', 'a reserved address'],
      ['4000::1', 'a reserved address'],
    ];
    for (const [address, kind] of refused) expect(refusedAddressReason(address), address).toBe(`${address} is ${kind}`);
  });

  it('judges an IPv6 address that carries an IPv4 one by the IPv4 address', () => {
    expect(refusedAddressReason('::ffff:127.0.0.1')).toBe('::ffff:127.0.0.1 is 127.0.0.1, a loopback address');
    expect(refusedAddressReason('::ffff:7f00:1')).toBe('::ffff:7f00:1 is 127.0.0.1, a loopback address');
    expect(refusedAddressReason('0:0:0:0:0:ffff:a9fe:a9fe')).toBe(
      '0:0:0:0:0:ffff:a9fe:a9fe is 169.254.169.254, a link-local address (the cloud metadata service is one)',
    );
    expect(refusedAddressReason('64:ff9b::192.168.0.1')).toBe('64:ff9b::192.168.0.1 is 192.168.0.1, a private address');
    expect(refusedAddressReason('2002:7f00:1::1')).toBe('2002:7f00:1::1 is 127.0.0.1, a loopback address');
    expect(refusedAddressReason('::ffff:93.184.215.14')).toBeNull();
    expect(refusedAddressReason('64:ff9b::5db8:d70e')).toBeNull();
  });

  it('lets public unicast addresses through, and refuses what is not an address', () => {
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.215.14',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '169.253.255.255',
      '223.255.255.255',
      '2606:4700::1111',
      '2a00:1450:4001::200e',
    ]) {
      expect(refusedAddressReason(address), address).toBeNull();
    }
    expect(refusedAddressReason('localhost')).toBe('localhost is not an IP address');
  });

  const octet = fc.integer({ min: 0, max: 255 });
  const ipv4 = fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.'));
  const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
  const forms = (address: string) => {
    const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
    return [
      `::ffff:${address}`,
      `::ffff:${hex(a, b)}:${hex(c, d)}`,
      `64:ff9b::${address}`,
      `2002:${hex(a, b)}:${hex(c, d)}::1`,
    ];
  };

  it('judges every IPv4 address alike in each IPv6 form that reaches it (mapped, NAT64, 6to4)', () => {
    fc.assert(
      fc.property(ipv4, (address) => {
        const refused = refusedAddressReason(address) !== null;
        for (const form of forms(address)) expect(refusedAddressReason(form) !== null, form).toBe(refused);
      }),
    );
  });

  it('refuses every address of the loopback, private, link-local and shared ranges', () => {
    const inRange = (first: number, second: fc.Arbitrary<number>) =>
      fc.tuple(second, octet, octet).map(([b, c, d]) => `${first}.${b}.${c}.${d}`);
    const refused = fc.oneof(
      inRange(127, octet),
      inRange(10, octet),
      inRange(172, fc.integer({ min: 16, max: 31 })),
      inRange(192, fc.constant(168)),
      inRange(169, fc.constant(254)),
      inRange(100, fc.integer({ min: 64, max: 127 })),
      inRange(0, octet),
    );
    fc.assert(
      fc.property(refused, (address) => {
        expect(refusedAddressReason(address), address).not.toBeNull();
      }),
    );
  });
});

describe('literalAddress', () => {
  it('reads the address of a URL host, or null for a name', () => {
    expect(literalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('hooks.example.com')).toBeNull();
    expect(literalAddress('localhost')).toBeNull();
  });
});
