/**
 * IP addresses as text: the sixteen-bit groups of an IPv6 address, and one written form per address, so
 * that rules comparing or classifying addresses (webhook-addresses.ts, static-ip.ts) read them alike.
 */
import { isIP } from 'node:net';

/** The sixteen-bit groups of an IPv6 address (as `isIP` accepts it, without a zone). */
export function ipv6Groups(address: string): number[] {
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
  const [head = '', tail] = hex.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  if (tail === undefined) return words(head);
  const [before, after] = [words(head), words(tail)];
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/** The IPv4 address of two sixteen-bit groups. */
export const dotted = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/** Whether IPv6 groups are an IPv4-mapped address (`::ffff:a.b.c.d`), as a dual-stack socket reports IPv4 peers. */
export function isIpv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

/** IPv6 groups in RFC 5952's form: lower-case hex without leading zeros, the first longest run of two or more zero groups as `::`. */
function ipv6Text(groups: readonly number[]): string {
  let [start, length] = [-1, 0];
  for (let i = 0; i < groups.length; i++) {
    if (groups[i] !== 0) continue;
    let end = i;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - i > length) [start, length] = [i, end - i];
    i = end;
  }
  const hex = (part: readonly number[]) => part.map((group) => group.toString(16)).join(':');
  if (length < 2) return hex(groups);
  return `${hex(groups.slice(0, start))}::${hex(groups.slice(start + length))}`;
}

/**
 * The address as one text: IPv4 in dotted decimal, an IPv4-mapped IPv6 address as its IPv4, IPv6 in its
 * canonical lower-case compressed form (RFC 5952). Null for anything that is not an IP address, a zoned
 * IPv6 address (`fe80::1%eth0`) among them: the zone names an interface of the machine that wrote it, and
 * no peer's address carries one.
 */
export function canonicalAddress(text: string): string | null {
  const trimmed = text.trim();
  const family = isIP(trimmed);
  if (family === 4) return trimmed;
  if (family !== 6 || trimmed.includes('%')) return null;
  const groups = ipv6Groups(trimmed);
  if (isIpv4Mapped(groups)) return dotted(groups[6]!, groups[7]!);
  return ipv6Text(groups);
}

/** A zoned IPv6 address split into its address and its zone (`fe80::1%eth0`: `fe80::1`, `eth0`); null for any other text. */
export function zonedAddress(text: string): { address: string; zone: string } | null {
  const trimmed = text.trim();
  const at = trimmed.indexOf('%');
  if (at < 0 || isIP(trimmed) !== 6) return null;
  const address = canonicalAddress(trimmed.slice(0, at));
  return address === null ? null : { address, zone: trimmed.slice(at + 1) };
}
