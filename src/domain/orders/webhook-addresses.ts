/**
 * Which network addresses a webhook may reach (security review, issue 12, finding 9). A signed POST to a
 * loopback, private, link-local (the cloud metadata service at 169.254.169.254) or otherwise non-public
 * address would let whoever registers a URL reach into the network ordergate runs in; unless the operator
 * allows private addresses (WEBHOOK_ALLOW_PRIVATE_ADDRESSES), only public unicast addresses are reached.
 *
 * An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4
 * `2002:aabb:ccdd::`) is judged by the IPv4 address it carries: those forms reach it.
 */
import { BlockList, isIP } from 'node:net';
import { dotted, ipv6Groups, isIpv4Mapped } from '../access/ip-address.js';

/** What the operator allows webhook URLs (docs/configuration.md). */
export interface WebhookAddressPolicy {
  /** WEBHOOK_ALLOW_HTTP: plain http:// URLs (else https:// only). */
  allowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES: loopback, private, link-local and other non-public addresses. */
  allowPrivateAddresses: boolean;
  /** WEBHOOK_ALLOW_ANY_PORT: any port (else 443, the scheme's default, and 1024 to 65535: no SSH, SMTP, ... below). */
  allowAnyPort?: boolean;
}

/** The defaults: https:// only, public addresses only. */
export const STRICT_WEBHOOK_ADDRESSES: WebhookAddressPolicy = { allowHttp: false, allowPrivateAddresses: false };

type Family = 'ipv4' | 'ipv6';

/** A named group of ranges; the name completes "127.0.0.1 is ...". */
interface RefusedRanges {
  kind: string;
  ranges: BlockList;
}

function ranges(kind: string, family: Family, subnets: [network: string, prefix: number][]): RefusedRanges {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return { kind, ranges: list };
}

// IANA's IPv4 and IPv6 special-purpose address registries, the parts no webhook receiver lives in.
const REFUSED_IPV4: RefusedRanges[] = [
  ranges('an unspecified address', 'ipv4', [['0.0.0.0', 8]]),
  ranges('a loopback address', 'ipv4', [['127.0.0.0', 8]]),
  ranges('a private address', 'ipv4', [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
  ]),
  ranges('a link-local address (the cloud metadata service is one)', 'ipv4', [['169.254.0.0', 16]]),
  ranges('a shared (carrier-grade NAT) address', 'ipv4', [['100.64.0.0', 10]]),
  ranges('a multicast address', 'ipv4', [['224.0.0.0', 4]]),
  ranges('the broadcast address', 'ipv4', [['255.255.255.255', 32]]),
  ranges('a reserved address', 'ipv4', [
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['240.0.0.0', 4],
  ]),
];

const REFUSED_IPV6: RefusedRanges[] = [
  ranges('an unspecified address', 'ipv6', [['::', 128]]),
  ranges('a loopback address', 'ipv6', [['::1', 128]]),
  ranges('a private address', 'ipv6', [
    ['fc00::', 7],
    // Local-use NAT64 (RFC 8215): translated to addresses of the operator's own choosing.
    ['64:ff9b:1::', 48],
  ]),
  ranges('a link-local address', 'ipv6', [['fe80::', 10]]),
  ranges('a multicast address', 'ipv6', [['ff00::', 8]]),
  ranges('a reserved address', 'ipv6', [
    ['2001::', 23],
    ['2001:db8::', 32],
    ['3fff::', 20],
  ]),
];

/** Global unicast: every public IPv6 address is in it; what lies outside and is not named above is reserved. */
const GLOBAL_UNICAST_IPV6 = ranges('', 'ipv6', [['2000::', 3]]).ranges;

/** The IPv4 address an IPv6 one carries and reaches (IPv4-mapped, NAT64 well-known prefix, 6to4), if any. */
function embeddedIpv4(groups: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (isIpv4Mapped(groups)) return dotted(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dotted(g6, g7);
  if (g0 === 0x2002) return dotted(g1, g2);
  return null;
}

function kindOf(address: string, family: Family, lists: RefusedRanges[]): string | null {
  return lists.find((list) => list.ranges.check(address, family))?.kind ?? null;
}

/**
 * Why a webhook may not reach `address` (an IPv4 or IPv6 address, as a resolver returns it), e.g.
 * "127.0.0.1 is a loopback address"; null for a public unicast address. Not an address at all: refused.
 */
export function refusedAddressReason(address: string): string | null {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) {
    const kind = kindOf(bare, 'ipv4', REFUSED_IPV4);
    return kind === null ? null : `${address} is ${kind}`;
  }
  if (family !== 6) return `${address} is not an IP address`;
  const groups = ipv6Groups(bare);
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== null) {
    const kind = kindOf(ipv4, 'ipv4', REFUSED_IPV4);
    return kind === null ? null : `${address} is ${ipv4}, ${kind}`;
  }
  const kind =
    kindOf(bare, 'ipv6', REFUSED_IPV6) ?? (GLOBAL_UNICAST_IPV6.check(bare, 'ipv6') ? null : 'a reserved address');
  return kind === null ? null : `${address} is ${kind}`;
}

/** The address a URL's host names literally (`127.0.0.1`, `[::1]`), or null for a name. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}
