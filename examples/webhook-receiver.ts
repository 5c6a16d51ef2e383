// A webhook receiver for ordergate: verifies the signature, drops repeats, and answers 2xx quickly.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/** Deliveries are small JSON events: a larger body is refused rather than held in memory. */
const MAX_BODY_BYTES = 1024 * 1024;

/** True when the delivery was signed with `secret` less than five minutes ago. */
export function isGenuine(
  secret: string,
  timestamp: string,
  signature: string,
  rawBody: string,
  now = Date.now(),
): boolean {
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > 300) return false;
  // Only the 32 bytes of a well-formed signature reach timingSafeEqual, which throws on buffers of unequal length.
  const hex = /^sha256=([0-9a-f]{64})$/.exec(signature)?.[1];
  if (hex === undefined) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

export function startReceiver(
  secret: string,
  port: number,
  onEvent: (event: { event_id: number; status: string }) => void,
) {
  const seen = new Set<number>(); // keep this in your database to drop repeats across restarts
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const refuse = (status: number) => void res.writeHead(status, { connection: 'close' }).end();
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return refuse(413);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.removeAllListeners('data').removeAllListeners('end').pause(); // read no more of it
      refuse(413);
    });
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8'); // verify the bytes as received, before parsing
      const timestamp = String(req.headers['x-ordergate-timestamp'] ?? '');
      const signature = String(req.headers['x-ordergate-signature'] ?? '');
      if (!isGenuine(secret, timestamp, signature, rawBody)) return refuse(401);
      let event: { event_id: number; status: string };
      try {
        event = JSON.parse(rawBody) as { event_id: number; status: string };
      } catch {
        return refuse(400);
      }
      if (typeof event !== 'object' || event === null) return refuse(400); // e.g. a signed `null`
      if (!seen.has(event.event_id)) {
        seen.add(event.event_id);
        onEvent(event);
      }
      res.writeHead(204).end(); // any 2xx: delivered; anything else is retried
    });
  }).listen(port);
}
