/**
 * GET /transactional/v1/orders/events: the caller's order events as server-sent events. The token and the
 * Last-Event-ID header are checked before the stream starts (their errors are ordinary envelopes); then
 * the reply is taken over and written as text/event-stream until the client leaves or the server stops.
 */
import type { ServerResponse } from 'node:http';
import { Errors } from '../domain/errors.js';
import { ORDER_UPDATE_EVENT, OrderEvent, OrderEventsHeaders } from '../schemas/events.js';
import type { OrderEventConsumer, OrderEventsService } from '../services/order-events.js';
import type { App } from './app-type.js';
import { callerOf } from './authentication.js';
import { errorResponses, TOKEN_ERRORS } from './responses.js';

const ORDER_EVENTS = '/transactional/v1/orders/events';

/**
 * A client that lets this much pile up unread is cut off; it resumes with Last-Event-ID. (A replay waits for
 * the client between its batches, so only live events can pile up.)
 */
const MAX_UNREAD_BYTES = 1024 * 1024;

function frame(event: OrderEvent): string {
  return `id: ${event.event_id}\nevent: ${ORDER_UPDATE_EVENT}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function registerOrderEventRoutes(app: App, events: OrderEventsService): void {
  app.get(
    ORDER_EVENTS,
    {
      config: { auth: 'token' },
      schema: {
        tags: ['orders'],
        summary: 'Your order events, as a server-sent-events stream',
        description: [
          'Every change of one of your orders is one event: `id: <event id>`, `event: order_update`, and one `data:` line of JSON (the schema below). Comments (`: heartbeat`) keep the connection alive every 15 seconds.',
          'Without `Last-Event-ID` the stream is live only; with it, every later event of yours is sent first, then the live ones, without gap or repeat.',
          'Event ids increase in the order the changes were committed, on every node.',
        ].join(' '),
        security: [{ bearerAuth: [] }],
        headers: OrderEventsHeaders,
        response: {
          200: {
            description: 'The event stream (text/event-stream); each `data:` line is one OrderEvent.',
            content: { 'text/event-stream': { schema: OrderEvent } },
          },
          ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_HEADER),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const header = request.headers['last-event-id'];
      // The schema has checked that it is a string of digits.
      const lastEventId = typeof header === 'string' ? Number(header) : undefined;
      const stream: ServerResponse = reply.raw;
      const gone = () => stream.writableEnded || stream.destroyed || request.raw.socket.destroyed;
      const consumer: OrderEventConsumer = {
        send(event) {
          if (gone()) return;
          stream.write(frame(event));
          if (stream.writableLength > MAX_UNREAD_BYTES) stream.end();
        },
        drained() {
          if (gone() || !stream.writableNeedDrain) return Promise.resolve();
          return new Promise<void>((resolve) => {
            const done = () => {
              stream.off('drain', done);
              stream.off('close', done);
              resolve();
            };
            stream.once('drain', done);
            stream.once('close', done);
          });
        },
        close() {
          if (!gone()) stream.end();
        },
      };
      const subscription = await events.subscribe(caller.userId, lastEventId, consumer);

      reply.hijack();
      // The headers set so far (Request-Id, helmet's) are Fastify's to write, which it no longer does.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) stream.setHeader(name, value);
      stream.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        // The connection ends with the stream: a kept-alive socket would hold up the server's close.
        connection: 'close',
      });
      stream.flushHeaders();
      const heartbeat = setInterval(() => {
        if (!gone()) stream.write(': heartbeat\n\n');
      }, events.heartbeatMs);
      const finish = () => {
        clearInterval(heartbeat);
        subscription.close();
      };
      stream.once('close', finish);
      // The client may have left while the subscription was being set up: then no 'close' is coming.
      if (request.raw.socket.destroyed) finish();
      subscription.start().catch((error: unknown) => {
        request.log.error({ err: error }, 'order-event replay failed; the client resumes with Last-Event-ID');
        consumer.close();
      });
      return reply;
    },
  );
}
