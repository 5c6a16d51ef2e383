/**
 * The connection side of the webhook address rules (src/domain/orders/webhook-addresses.ts). A name checked when
 * the webhook was registered may resolve elsewhere at delivery, and again between a check and a connect
 * (DNS rebinding); so the check sits inside the connection: the HTTP agent resolves the name through this
 * lookup, which checks every address it got and hands exactly those to the socket. What was checked is what
 * is connected to. Literal addresses never reach a lookup: webhookUrlProblem judges them before each attempt.
 */
import { lookup as systemLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { refusedAddressReason, type WebhookAddressPolicy } from '../domain/orders/webhook-addresses.js';

/** Resolves a name to all its addresses, as `dns.lookup` with `all: true` does (tests give their own). */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** A connection refused because the name resolved to an address the policy refuses. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  readonly code = 'E_WEBHOOK_ADDRESS_REFUSED';
}

/**
 * A `lookup` for sockets that resolves with `resolve` and fails with a RefusedAddressError when any of the
 * addresses is refused: a name that answers with one public and one private address is refused whole,
 * since the socket may try either.
 */
export function guardedLookup(policy: WebhookAddressPolicy, resolve: Resolver = systemLookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '');
      const refused = policy.allowPrivateAddresses
        ? undefined
        : addresses.map((a) => refusedAddressReason(a.address)).find((reason) => reason !== null);
      if (refused !== undefined) {
        return callback(
          new RefusedAddressError(
            `refused: ${hostname} resolves to a non-public address: ${refused} (allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)`,
          ),
          '',
        );
      }
      const [first] = addresses;
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      // Sockets that try several addresses (autoSelectFamily) ask for all of them; others for one.
      if (options.all === true) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Why a name may not be registered as a webhook's host now (null: it may): it resolves, at this moment, to
 * an address the policy refuses. A name that does not resolve yet is not refused (it is checked again at
 * every connection, by guardedLookup).
 */
export function refusedResolution(
  hostname: string,
  policy: WebhookAddressPolicy,
  resolve: Resolver = systemLookup,
): Promise<string | null> {
  if (policy.allowPrivateAddresses) return Promise.resolve(null);
  return new Promise((done) => {
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error !== null) return done(null);
      const refused = addresses.map((a) => refusedAddressReason(a.address)).find((reason) => reason !== null);
      done(
        refused === undefined
          ? null
          : `the URL's host ${hostname} resolves to a non-public address: ${refused} (allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)`,
      );
    });
  });
}

/** The HTTP agent webhook deliveries are sent through: every connection it opens passes the guard. */
export function guardedAgent(policy: WebhookAddressPolicy, resolve?: Resolver): Agent {
  return new Agent({ connect: { lookup: guardedLookup(policy, resolve) } });
}
