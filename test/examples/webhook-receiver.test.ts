/**
 * The documented webhook receiver (examples/webhook-receiver.ts, shown verbatim in docs/events.md) against
 * deliveries signed the way the dispatcher signs them: genuine ones are taken once, others refused.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/domain/orders/webhooks.js';
import { isGenuine, startReceiver } from '../../examples/webhook-receiver.js';

/**
 * A chunked body sent to a receiver that refuses it ends here (64 MiB), so that a client still sending after
 * the answer cannot fill the machine's memory (a CI run's test worker was killed so, at 23 GB); a receiver
 * that read it all would see it all sent.
 */
const BODY_END = 64 * 1024 * 1024;

/**
 * The status line a receiver answers to this request head, sent on a plain socket; with `chunked`, followed
 * by 64 KiB chunks until the answer comes (or BODY_END). A receiver that refuses a body without reading it
 * closes the connection while the client still writes, and the client's writes then fail (EPIPE,
 * ECONNRESET): through fetch, this test failed now and then with `fetch failed` caused by EPIPE (a
 * clean-clone CI run, 2026-12-02). Here the answer read is what counts, and the bytes sent are counted.
 */
function answerTo(port: number, head: string, chunked: boolean): Promise<{ statusLine: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    let answered = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ statusLine: answer.split('\r\n')[0]!, sent });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in 5 s (${sent} bytes of body sent)`));
    }, 5_000);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      answer += text;
      if (!answered && answer.includes('\r\n')) {
        answered = true;
        finish();
      }
    });
    // A write after the receiver closed fails; what it answered before is read all the same.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!answered) finish();
    });
    socket.write(head);
    if (!chunked) return;
    const chunk = Buffer.alloc(65_536);
    const pump = () => {
      while (!answered && !socket.destroyed && sent < BODY_END) {
        sent += chunk.length;
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        if (!socket.write('\r\n')) return void socket.once('drain', pump);
      }
      if (!answered && !socket.destroyed) socket.write('0\r\n\r\n');
    };
    pump();
  });
}

const SECRET = 'whsec_example';

describe('examples/webhook-receiver.ts', () => {
  const events: { event_id: number; status: string }[] = [];
  const server = startReceiver(SECRET, 0, (event) => events.push(event));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()));

  async function deliver(body: string, options: { secret?: string; timestamp?: number; signature?: string } = {}) {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-ordergate-timestamp': String(timestamp),
        'x-ordergate-signature': options.signature ?? signWebhook(options.secret ?? SECRET, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(5_000),
    });
    return response.status;
  }

  it('takes a genuine delivery once and drops its repeat', async () => {
    const body = '{"event_id":7,"type":"order_update","status":"PENDING"}';
    expect(await deliver(body)).toBe(204);
    expect(await deliver(body)).toBe(204);
    expect(events).toEqual([{ event_id: 7, type: 'order_update', status: 'PENDING' }]);
  });

  it('refuses a wrong secret and a stale timestamp', async () => {
    expect(await deliver('{"event_id":8}', { secret: 'whsec_other' })).toBe(401);
    expect(await deliver('{"event_id":9}', { timestamp: Math.floor(Date.now() / 1000) - 301 })).toBe(401);
    expect(events.map((e) => e.event_id)).toEqual([7]);
    expect(isGenuine(SECRET, 'abc', 'sha256=00', '{}')).toBe(false);
  });

  it('refuses a signature of any characters or length with 401, and keeps serving', async () => {
    // 'é' is one character but two bytes: as long as a genuine signature in characters, not in bytes.
    for (const signature of [
      'sha256=' + 'é'.repeat(64),
      'é'.repeat(71),
      'sha256=' + 'ff'.repeat(32),
      'sha256=' + '0'.repeat(640),
      '',
    ]) {
      expect(await deliver('{"event_id":10}', { signature }), signature).toBe(401);
    }
    expect(isGenuine(SECRET, String(Math.floor(Date.now() / 1000)), '\u{1F600}'.repeat(35) + 'x', '{}')).toBe(false);
    expect(await deliver('{"event_id":11,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11]);
  });

  it('refuses a body over 1 MiB with 413 without reading it, and keeps serving', async () => {
    const { port } = server.address() as AddressInfo;
    const head = (framing: string) =>
      `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`;
    // Announced as longer than 1 MiB: refused on its head, none of the body sent.
    expect((await answerTo(port, head(`content-length: ${1024 * 1024 + 1}`), false)).statusLine).toBe(
      'HTTP/1.1 413 Payload Too Large',
    );
    // Chunked, with no length announced: refused once more than 1 MiB has arrived, while the client still sends.
    const long = await answerTo(port, head('transfer-encoding: chunked'), true);
    expect(long.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(long.sent).toBeGreaterThan(1024 * 1024);
    expect(long.sent).toBeLessThan(BODY_END);
    expect(await deliver('{"event_id":12,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11, 12]);
  });

  it('refuses a genuine delivery whose body is not a JSON object with 400, and keeps serving', async () => {
    expect(await deliver('{"event_id":')).toBe(400);
    for (const body of ['null', '1', '"x"']) expect(await deliver(body), body).toBe(400);
    expect(await deliver('{"event_id":13,"status":"PENDING"}')).toBe(204);
    expect(events.map((e) => e.event_id)).toEqual([7, 11, 12, 13]);
  });

  it('is shown in docs/events.md exactly as it is tested here', () => {
    expect(readFileSync('docs/events.md', 'utf8')).toContain(readFileSync('examples/webhook-receiver.ts', 'utf8'));
  });
});
