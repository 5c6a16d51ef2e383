/**
 * GET /transactional/v1/orders/events: the caller's order events as server-sent events. The token, the
 * Last-Event-ID header and the stream caps (MAX_STREAMS_PER_USER, MAX_STREAMS_PER_NODE) are checked before
 * the stream starts (their errors are ordinary envelopes); then the reply is taken over and written as
 * text/event-stream until the client leaves, the server stops or the session ends (its token is checked
 * again every period and at its expiry). An end the server chooses is said in a last `stream_end` event.
 * The stream's session (src/services/stream-session.ts) holds its slot, its subscription and the token's
 * checks; this file frames what it hands over as text/event-stream.
 */
import type { ServerResponse } from 'node:http';
import { Errors, type ErrorKind, type FieldError } from '../../domain/errors.js';
import { ORDER_UPDATE_EVENT, OrderEvent, OrderEventsHeaders } from '../../schemas/events.js';
import type { OrderEventsService } from '../../services/order-events.js';
import type { StreamSessions, StreamTransport } from '../../services/stream-session.js';
import type { IndicativeFeed, IndicativePoint } from '../../services/indicative-feed.js';
import type { IndicativeFigures } from '../../domain/ofs/offer/offer.js';
import type { App } from '../app-type.js';
import { exactJson } from '../exact-json.js';
import { callerOf } from '../plugins/authentication.js';
import { errorResponses, TOKEN_ERRORS } from '../responses.js';

const ORDER_EVENTS = '/transactional/v1/orders/events';

/**
 * A client that lets this much pile up unread is cut off; it resumes with Last-Event-ID. (A replay waits for
 * the client between its batches, so only live events can pile up.)
 */
const MAX_UNREAD_BYTES = 1024 * 1024;

/** The last event of a stream the server ends: why, as the error envelope. It has no id (Last-Event-ID stays). */
export const STREAM_END_EVENT = 'stream_end';

function frame(event: OrderEvent): string {
  return `id: ${event.event_id}\nevent: ${ORDER_UPDATE_EVENT}\ndata: ${JSON.stringify(event)}\n\n`;
}

function endFrame(kind: ErrorKind, message: string, errors: FieldError[], requestId: string): string {
  return `event: ${STREAM_END_EVENT}\ndata: ${JSON.stringify({ status: 'error', code: kind.code, message, errors, request_id: requestId })}\n\n`;
}

/** An offer's indicative price, as the exchange published it through T: public figures, sent to every stream. */
export const INDICATIVE_PRICE_EVENT = 'indicative_price';

function indicativeFrame(point: IndicativePoint): string {
  const figures = (f: IndicativeFigures) => ({
    price: f.pricePaise === null ? null : f.pricePaise / 100,
    quantity: f.quantity,
  });
  const data = {
    offer_id: point.offerId,
    at: new Date(point.at).toISOString(),
    ...figures(point.all),
    margin_100: figures(point.margin100),
    margin_0: figures(point.margin0),
  };
  // No id: a client's Last-Event-ID stays the last order event's. The quantities are exact bigints.
  return `event: ${INDICATIVE_PRICE_EVENT}\ndata: ${exactJson(data)}\n\n`;
}

export function registerOrderEventRoutes(
  app: App,
  events: OrderEventsService,
  sessions: StreamSessions,
  indicative: IndicativeFeed,
): void {
  const recheckSeconds = sessions.recheckMs / 1000;
  app.get(
    ORDER_EVENTS,
    {
      config: { auth: 'token' },
      schema: {
        tags: ['orders'],
        summary: 'Your order events, as a server-sent-events stream',
        description: [
          'Every change of one of your orders is one event: `id: <event id>`, `event: order_update`, and one `data:` line of JSON (the schema below). Comments (`: heartbeat`) keep the connection alive every 15 seconds.',
          'Without `Last-Event-ID` the stream is live only, and it starts with an `id:` line alone (no event: an EventSource dispatches nothing for it) naming the event it starts after, so that a client dropped before its first event resumes from there; with `Last-Event-ID`, every later event of yours is sent first, then the live ones, without gap or repeat.',
          "Event ids are your own count of order events (your first is 1, each next one is one more, with no gaps; they say nothing of other users' events), in the order the changes were committed, on every node. A live stream of a user with no events yet opens with `id: 0`. A `Last-Event-ID` after your last event (an id kept from before ids were per user) answers 400 `e-124`: reconnect without it once.",
          `While an offer's T day is open, each change of its indicative price (what the exchange publishes: the volume-weighted average price of the valid non-retail bids and their quantity, all and by margin type) is an event \`event: ${INDICATIVE_PRICE_EVENT}\` without an id (it is the same for everybody and is not replayed; the latest is in GET /transactional/v1/ofs/offers), whose \`data:\` is \`{"offer_id", "at", "price", "quantity", "margin_100": {"price", "quantity"}, "margin_0": {...}}\`.`,
          'One user holds at most MAX_STREAMS_PER_USER streams and live order sockets together on a node (10 by default; one more: 429 `e-429`), a node at most MAX_STREAMS_PER_NODE (2,000; one more: 503 `e-503`), both with `Retry-After`.',
          `The token is checked again every ${recheckSeconds} seconds and at its expiry: once it is revoked (logout), expired or its user disabled, the stream ends with a last event \`event: ${STREAM_END_EVENT}\` whose \`data:\` is the error envelope that a call with the token would get (e-202, e-203, e-204, ...). A server shutting down ends it the same way, with \`e-503\`: reconnect with \`Last-Event-ID\`.`,
        ].join(' '),
        security: [{ bearerAuth: [] }],
        headers: OrderEventsHeaders,
        response: {
          200: {
            description: `The event stream (text/event-stream); each \`order_update\` event's \`data:\` line is one OrderEvent, the last \`${STREAM_END_EVENT}\` event's (if any) an ErrorEnvelope.`,
            content: { 'text/event-stream': { schema: OrderEvent } },
          },
          ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_HEADER, Errors.EVENT_ID_AHEAD, Errors.RATE_LIMITED),
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
      /** Says why in a last event, then ends the stream. */
      const endWith = (kind: ErrorKind, message: string, errors: FieldError[] = []) => {
        if (gone()) return;
        stream.end(endFrame(kind, message, errors, request.id));
      };
      const transport: StreamTransport = {
        send(event) {
          if (!gone()) stream.write(frame(event));
        },
        startsAfter(eventId) {
          // An id alone, no event: it sets the client's Last-Event-ID (EventSource does so for an id-only
          // message) without dispatching anything.
          if (!gone()) stream.write(`id: ${eventId}\n\n`);
        },
        unread: () => stream.writableLength,
        maxUnread: MAX_UNREAD_BYTES,
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
        close(end) {
          if (end.why === 'session-ended') endWith(end.refusal.kind, end.refusal.message, end.refusal.errors);
          else if (end.why === 'shutdown')
            endWith(Errors.UNAVAILABLE, 'The server is shutting down; reconnect with Last-Event-ID shortly');
          // The client resumes with Last-Event-ID; it would not read a last event either.
          else if (!gone()) stream.end();
        },
      };
      // Taken before anything is awaited, so that simultaneous requests cannot all pass the cap; a refusal
      // is the 429 (the user's cap) or the 503 (the node's) in the envelope, with Retry-After. A refused
      // subscription (e-124, the database) gives the slot back.
      const session = sessions.open(caller.userId, transport, request.log);
      await session.subscribe(caller, request.headers.authorization ?? '', lastEventId);

      reply.hijack();
      // The headers set so far (Request-Id, helmet's) are Fastify's to write, which it no longer does.
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined) stream.setHeader(name, value);
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
      const stopIndicative = indicative.subscribe((point) => {
        if (gone()) return;
        stream.write(indicativeFrame(point));
        session.checkUnread();
      });
      // Every way a stream ends (the client leaves, the server closes, the session ends, an error) closes it.
      const finish = () => {
        stopIndicative();
        clearInterval(heartbeat);
        session.end();
      };
      stream.once('close', finish);
      // The client may have left while the subscription was being set up: then no 'close' is coming.
      if (request.raw.socket.destroyed) finish();
      session.start().catch((error: unknown) => {
        request.log.error({ err: error }, 'order-event replay failed; the client resumes with Last-Event-ID');
        endWith(Errors.UNAVAILABLE, 'The missed events could not be read; reconnect with Last-Event-ID shortly');
      });
      return reply;
    },
  );
}
