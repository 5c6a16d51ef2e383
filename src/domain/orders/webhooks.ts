/**
 * Webhook rules without I/O: which URLs may be registered, how a delivery is signed and verified, and
 * when a failed delivery is tried again; and webhooks and their deliveries as the services see them.
 *
 * Signature: `X-Ordergate-Signature: sha256=<hex>` where hex = HMAC-SHA256(secret, `${timestamp}.${rawBody}`),
 * the secret being the string `ordergate webhooks add` printed (as UTF-8) and the timestamp the value of
 * `X-Ordergate-Timestamp` (unix seconds).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { literalAddress, refusedAddressReason, type WebhookAddressPolicy } from './webhook-addresses.js';

export const SIGNATURE_HEADER = 'x-ordergate-signature';
export const TIMESTAMP_HEADER = 'x-ordergate-timestamp';
export const EVENT_ID_HEADER = 'x-ordergate-event-id';
export const DELIVERY_ID_HEADER = 'x-ordergate-delivery-id';

export const MAX_URL_LENGTH = 2048;

/**
 * Why `url` cannot be registered, or null when it can; the dispatcher asks again before each attempt, as
 * the settings may have changed since. The URL is only parsed, never fetched: a host that is a name is
 * judged when it is resolved, at each connection (src/webhooks/address-guard.ts).
 */
export function webhookUrlProblem(url: string, policy: WebhookAddressPolicy): string | null {
  if (url.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not an absolute URL`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `the URL must be http or https, not ${parsed.protocol.replace(/:$/, '')}`;
  if (parsed.protocol === 'http:' && !policy.allowHttp)
    return 'the URL must be https (plain http only with WEBHOOK_ALLOW_HTTP=true)';
  if (parsed.username !== '' || parsed.password !== '') return 'the URL must not carry a user name or password';
  if (parsed.hash !== '') return 'the URL must not carry a #fragment';
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  if (!policy.allowAnyPort && !allowedPort(port, parsed.protocol)) {
    return `the URL's port ${port} is refused: 443, the scheme's default or 1024 to 65535 (any port only with WEBHOOK_ALLOW_ANY_PORT=true)`;
  }
  // The URL parser has already made 0x7f.1, 2130706433 and 127.1 into 127.0.0.1.
  const address = literalAddress(parsed.hostname);
  const refused = address === null || policy.allowPrivateAddresses ? null : refusedAddressReason(address);
  if (refused !== null) return `the URL's host ${refused} (allowed only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)`;
  return null;
}

/** The signature header's value for one delivery. */
/**
 * The ports a webhook may name by default: 443, the default port of its scheme (80 for http://, itself
 * allowed only with WEBHOOK_ALLOW_HTTP), and the unprivileged 1024 to 65535. The well-known services below
 * (SSH, SMTP, DNS, ...) are no receivers, and a webhook must not be a way to knock on them.
 */
function allowedPort(port: number, protocol: string): boolean {
  return port === 443 || (protocol === 'http:' && port === 80) || port >= 1024;
}

export function signWebhook(secret: string, timestamp: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

/**
 * Whether a received delivery is genuine and fresh: the signature matches (compared in constant time)
 * and the timestamp is within `toleranceSeconds` of `nowSeconds` (against replays of old deliveries).
 */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const { timestamp, signature } = headers;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, Number(timestamp), rawBody));
  const received = Buffer.from(signature);
  return expected.length === received.length && timingSafeEqual(expected, received);
}

export interface RetryPolicy {
  /** The pause after the first failed attempt (ms); it doubles after each further failure... */
  firstDelayMs: number;
  /** ...up to this pause (ms). */
  maxDelayMs: number;
  /** How long after the event a delivery is still tried (ms); then it is given up as failed. */
  retryForMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  firstDelayMs: 10_000,
  maxDelayMs: 60 * 60_000,
  retryForMs: 24 * 60 * 60_000,
};

/**
 * The pause before the next attempt after `failedAttempts` (>= 1) failures: exponential, capped, with up
 * to a fifth of it added at random (`random` in [0, 1)) so that many receivers coming back at once are not
 * all hit in the same instant.
 */
export function retryDelayMs(failedAttempts: number, policy: RetryPolicy, random: number): number {
  const exponential = policy.firstDelayMs * 2 ** Math.min(Math.max(failedAttempts - 1, 0), 40);
  const base = Math.min(exponential, policy.maxDelayMs);
  return Math.round(base * (1 + random / 5));
}

/**
 * After a failed attempt at `now`: when to try again, or null when the delivery is given up. The last
 * try is made when the retry time runs out, however long the pause would otherwise be.
 */
export function nextAttemptAt(
  createdAt: number,
  failedAttempts: number,
  now: number,
  policy: RetryPolicy,
  random: number,
): number | null {
  const deadline = createdAt + policy.retryForMs;
  if (now >= deadline) return null;
  return Math.min(now + retryDelayMs(failedAttempts, policy, random), deadline);
}

/** Whether the receiver took the delivery: any 2xx status. Redirects are not followed. */
export function isDelivered(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

/** What became of a delivery: waiting for its (next) attempt, taken by the receiver, or given up. */
export const DeliveryStatus = {
  PENDING: 'PENDING',
  DELIVERED: 'DELIVERED',
  FAILED: 'FAILED',
} as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

/** A URL registered for a user's order events, with the secret its deliveries are signed with. */
export interface Webhook {
  webhookId: string;
  userId: string;
  url: string;
  /** The signing secret, shown once by `ordergate webhooks add`. */
  secret: string;
  createdAt: number;
  /** When `ordergate webhooks remove` stopped it; null while it is active. */
  removedAt: number | null;
}

/** A webhook with how many of its deliveries are in each status. */
export interface WebhookSummary extends Webhook {
  pending: number;
  delivered: number;
  failed: number;
}

/** One delivery of one order event to one webhook, and what became of it so far. */
export interface Delivery {
  id: number;
  webhookId: string;
  /** The order event's history row (operators' id of it; its user knows it by the body's `event_id`). */
  eventId: number;
  status: DeliveryStatus;
  attempts: number;
  /** When it is due (again); meaningful while PENDING. */
  nextAttemptAt: number;
  /** The dispatcher that holds (or last held) it. */
  claimedBy: string | null;
  /** Until when that dispatcher holds it; null when not leased. */
  claimedUntil: number | null;
  /** The JSON body, fixed at the first attempt so that every retry sends the same bytes. */
  payload: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  lastAttemptAt: number | null;
  deliveredAt: number | null;
  failedAt: number | null;
}

/** A delivery as the operator lists it: with its webhook's owner and URL. */
export interface ListedDelivery extends Delivery {
  userId: string;
  url: string;
}

/** A claimed delivery with what sending it takes. */
export interface DueDelivery {
  id: number;
  webhookId: string;
  /** The order event's history row (its user knows it by the body's `event_id`). */
  eventId: number;
  url: string;
  secret: string;
  attempts: number;
  createdAt: number;
  payload: string | null;
}
