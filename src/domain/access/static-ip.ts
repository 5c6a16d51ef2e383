/**
 * SEBI's static IP rule for API access (circular of 4 February 2025, SEBI/HO/MIRSD/MIRSD-PoD/P/CIR/2025/0000013,
 * and the exchanges' implementation standards): an API key is bound to one primary and at most one secondary
 * IP address, registered by the broker; a call that presents the key from any other address is refused;
 * the addresses may be changed at most once a week (the operator may override, and it is recorded).
 * docs/design/sebi-algo.md.
 */
import { isIP } from 'node:net';
import { displayToken, quoted } from '../ofs/display-text.js';
import { canonicalAddress, ipv6Groups, zonedAddress } from './ip-address.js';

/** How often a key's addresses may change without the operator's override. */
export const ADDRESS_CHANGE_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;

/** A primary and at most one secondary address. */
export const MAX_KEY_ADDRESSES = 2;

/**
 * What a canonical address is when no client calls from it (null: a client may): an unspecified address
 * (0.0.0.0/8, `::`; `::ffff:0.0.0.0` is 0.0.0.0), the broadcast address, or a multicast one (224.0.0.0/4,
 * ff00::/8). A connection's source is never one of them; registered, the key would work from nowhere.
 */
function notACallerAddress(canonical: string): string | null {
  if (isIP(canonical) === 4) {
    const first = Number(canonical.split('.')[0]);
    if (first === 0) return 'an unspecified address';
    if (canonical === '255.255.255.255') return 'the broadcast address';
    if (first >= 224 && first <= 239) return 'a multicast address';
    return null;
  }
  if (canonical === '::') return 'an unspecified address';
  if (ipv6Groups(canonical)[0]! >= 0xff00) return 'a multicast address';
  return null;
}

/** What is wrong with one address to register (null: nothing); what the operator gave is quoted escaped. */
function keyAddressProblem(address: string): string | null {
  const zoned = zonedAddress(address);
  if (zoned !== null) {
    return `${quoted(address)}: a zone index (${displayToken(`%${zoned.zone}`)}) is not part of an address the server sees; give ${zoned.address}`;
  }
  const canonical = canonicalAddress(address);
  if (canonical === null) return `${quoted(address)} is not an IP address`;
  const kind = notACallerAddress(canonical);
  return kind === null ? null : `${quoted(address)} is ${kind}, not an address a client calls from`;
}

/** What is wrong with a list of addresses to register for a key (null: nothing), in the operator's words. */
export function keyAddressesProblem(addresses: readonly string[]): string | null {
  if (addresses.length === 0) return 'give the primary address (and at most one secondary)';
  if (addresses.length > MAX_KEY_ADDRESSES)
    return `a key has one primary and at most one secondary address, not ${addresses.length}`;
  for (const address of addresses) {
    const problem = keyAddressProblem(address);
    if (problem !== null) return problem;
  }
  const canonical = addresses.map((address) => canonicalAddress(address)!);
  if (new Set(canonical).size !== canonical.length) return 'the primary and the secondary address are the same';
  return null;
}

/** A key's registered addresses (canonical) and when they were last set; no addresses: none registered. */
export interface KeyAddresses {
  addresses: readonly string[];
  changedAt: number | null;
}

/**
 * Why a call that presents the key from `callerAddress` is refused, or null when it may go on. A key with
 * no registered addresses is refused only when the operator requires them (STATIC_IP_REQUIRED).
 */
export function keyAddressRefusal(key: KeyAddresses, callerAddress: string, required: boolean): string | null {
  if (key.addresses.length === 0) return required ? 'the API key has no registered IP address' : null;
  const caller = canonicalAddress(callerAddress);
  if (caller !== null && key.addresses.includes(caller)) return null;
  // The registered addresses are not named: whoever holds a leaked key learns nothing of where it works.
  return `the API key is not registered for ${caller ?? (callerAddress === '' ? 'an unknown address' : callerAddress)}`;
}

/** Why the key's addresses cannot be changed now (null: they can): once a week, unless the operator overrides. */
export function addressChangeRefusal(key: KeyAddresses, now: number, override: boolean): string | null {
  if (override || key.changedAt === null) return null;
  const allowedAt = key.changedAt + ADDRESS_CHANGE_INTERVAL_MS;
  if (now >= allowedAt) return null;
  return `the addresses were changed at ${new Date(key.changedAt).toISOString()}; the next change is allowed from ${new Date(allowedAt).toISOString()} (or with --override, which is recorded)`;
}
