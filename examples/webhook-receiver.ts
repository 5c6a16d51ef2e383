// A webhook receiver for ordergate: verifies the signature, drops repeats, and answers 2xx quickly.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/** True when the delivery was signed with `secret` less than five minutes ago. */
export function isGenuine(secret: string, timestamp: string, signature: string, rawBody: string, now = Date.now()): boolean {
  if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > 300) return false;
  const expected = 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  return expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
}

export function startReceiver(secret: string, port: number, onEvent: (event: { event_id: number; status: string }) => void) {
  const seen = new Set<number>(); // keep this in your database to drop repeats across restarts
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8'); // verify the bytes as received, before parsing
      const timestamp = String(req.headers['x-ordergate-timestamp'] ?? '');
      const signature = String(req.headers['x-ordergate-signature'] ?? '');
      if (!isGenuine(secret, timestamp, signature, rawBody)) return void res.writeHead(401).end();
      const event = JSON.parse(rawBody) as { event_id: number; status: string };
      if (!seen.has(event.event_id)) {
        seen.add(event.event_id);
        onEvent(event);
      }
      res.writeHead(204).end(); // any 2xx: delivered; anything else is retried
    });
  }).listen(port);
}
