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

/**
 * The address as one text: IPv4 in dotted decimal, an IPv4-mapped IPv6 address as its IPv4, IPv6 in its
 * canonical lower-case compressed form (RFC 5952). Null for anything that is not an IP address.
 */
export function canonicalAddress(text: string): string | null {
  const trimmed = text.trim();
  const family = isIP(trimmed);
  if (family === 4) return trimmed;
  if (family !== 6) return null;
  const groups = ipv6Groups(trimmed);
  if (isIpv4Mapped(groups)) return dotted(groups[6]!, groups[7]!);
  // The URL parser writes an IPv6 host in its canonical form.
  return new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
}
