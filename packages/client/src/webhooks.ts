/**
 * @ordergate/client/webhooks, the package's Node-only entry (it needs `node:crypto`; the main entry stays
 * browser-safe without it).
 *
 * Verifies a webhook delivery the way the documented receiver (docs/events.md) does: `X-Ordergate-Signature` must be `sha256=`
 * and the hex HMAC-SHA256, keyed with the whole `whsec_...` secret, of `X-Ordergate-Timestamp`, a `.` and the
 * raw body exactly as received; the timestamp (unix seconds) must be within five minutes of now. The
 * comparison takes constant time, and malformed input of any kind answers false rather than throwing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a delivery's timestamp may be from now. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export const WEBHOOK_HEADERS = {
  eventId: 'x-ordergate-event-id',
  timestamp: 'x-ordergate-timestamp',
  signature: 'x-ordergate-signature',
  deliveryId: 'x-ordergate-delivery-id',
} as const;

/** A Fetch `Headers` object, or Node's `request.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    // A repeated header is not a delivery ordergate sends.
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/**
 * True when the delivery was signed with `secret` less than five minutes before `now` (milliseconds since
 * the epoch). Pass the body as received, before any JSON parsing: a string or its bytes.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  now: number = Date.now(),
): boolean {
  try {
    if (typeof secret !== 'string' || secret === '' || headers === null || typeof headers !== 'object') return false;
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
    const timestamp = header(headers, WEBHOOK_HEADERS.timestamp);
    const signature = header(headers, WEBHOOK_HEADERS.signature);
    if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
    if (!Number.isFinite(now) || Math.abs(now / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return false;
    // Only the 32 bytes of a well-formed signature reach timingSafeEqual, which throws on unequal lengths.
    const hex = /^sha256=([0-9a-f]{64})$/.exec(signature)?.[1];
    if (hex === undefined) return false;
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
    return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
  } catch {
    return false;
  }
}
