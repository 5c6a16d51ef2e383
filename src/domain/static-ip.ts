/**
 * SEBI's static IP rule for API access (circular of 4 February 2025, SEBI/HO/MIRSD/MIRSD-PoD/P/CIR/2025/0000013,
 * and the exchanges' implementation standards): an API key is bound to one primary and at most one secondary
 * IP address, registered by the broker; a call that presents the key from any other address is refused;
 * the addresses may be changed at most once a week (the operator may override, and it is recorded).
 * docs/design/sebi-algo.md.
 */
import { canonicalAddress } from './ip-address.js';

/** How often a key's addresses may change without the operator's override. */
export const ADDRESS_CHANGE_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;

/** A primary and at most one secondary address. */
export const MAX_KEY_ADDRESSES = 2;

/** What is wrong with a list of addresses to register for a key (null: nothing), in the operator's words. */
export function keyAddressesProblem(addresses: readonly string[]): string | null {
  if (addresses.length === 0) return 'give the primary address (and at most one secondary)';
  if (addresses.length > MAX_KEY_ADDRESSES) return `a key has one primary and at most one secondary address, not ${addresses.length}`;
  for (const address of addresses) if (canonicalAddress(address) === null) return `"${address}" is not an IP address`;
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
