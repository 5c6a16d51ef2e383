/**
 * A webhook receiver inside the test: a real HTTP server that records every POST (headers and raw body)
 * and answers as the test says: a status, a dropped connection, or no answer at all.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ReceiverAnswer = number | 'drop' | 'hang';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered. */
  answer: ReceiverAnswer;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Decides the answer to each request, in arrival order (default 200). */
  answer: (request: { index: number; body: string }) => ReceiverAnswer;
  /** Waits (at most `ms`) until `count` requests have arrived. */
  waitFor(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const sockets = new Set<Socket>();
  const hanging: (() => void)[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: () => 200,
    async waitFor(count, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.received.length} of ${count} deliveries`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      for (const release of hanging) release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = receiver.answer({ index: receiver.received.length, body });
      receiver.received.push({ path: request.url ?? '', headers: request.headers, body, answer });
      if (answer === 'drop') request.socket.destroy();
      else if (answer === 'hang') hanging.push(() => response.destroy());
      else response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'no');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/orders`;
  return receiver;
}
