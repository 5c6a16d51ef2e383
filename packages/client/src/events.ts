/**
 * Your order events as an async iterator over GET /transactional/v1/orders/events (server-sent events).
 * The stream is held open across drops: after a connection error, an end without `stream_end`, a silence
 * longer than three heartbeats, or the `stream_end` of a server shutting down (e-503), it reconnects after a
 * short back-off with `Last-Event-ID` set to the last event received, so the server sends the missed events
 * first: none is lost or repeated. A `stream_end` that ends the session (a revoked, expired or unknown token,
 * a disabled user) ends the iterator with that OrdergateError, as does a refusal to open the stream other
 * than a 503.
 */
import type { ErrorCode } from './generated/error-catalog.js';
import { isErrorEnvelope, OrdergateError, OrdergateTransportError, statusOfCode } from './errors.js';
import { SseParser } from './sse.js';
import {
  backoffMs,
  errorOf,
  headersFor,
  linkedSignal,
  retryAfterSeconds,
  sleep,
  urlOf,
  type Credentials,
  type TransportOptions,
} from './transport.js';
import type { OrderEvent } from './types.js';

export const ORDER_EVENTS_PATH = '/transactional/v1/orders/events';
const ORDER_UPDATE = 'order_update';
const STREAM_END = 'stream_end';

/** The server sends a heartbeat every 15 s: a stream silent for three of them is taken as dropped. */
const SILENCE_LIMIT_MS = 45_000;
const FIRST_RECONNECT_MS = 250;
const MAX_RECONNECT_MS = 5_000;

export interface OrderEventsOptions {
  /** Start after this event (the `event_id` of the last one you handled); without it the stream is live only. */
  lastEventId?: number | string;
  /** Aborting it ends the iterator (quietly: the loop over it just finishes). */
  signal?: AbortSignal;
}

/**
 * The order events of one `events()` call: an async iterator that connects at once (`opened` says when the
 * stream is live), so that a bid placed after `await stream.opened` cannot be missed. Leaving a `for await`
 * loop, `close()` or the caller's signal ends it and its connection.
 */
export class OrderEventStream implements AsyncIterableIterator<OrderEvent, void, undefined> {
  /** Settles when the first connection is open (the stream is live from then on), or rejects with why not. */
  readonly opened: Promise<void>;
  private readonly closing = new AbortController();
  private readonly events: AsyncGenerator<OrderEvent, void, undefined>;
  private first: Promise<IteratorResult<OrderEvent, void>> | undefined;
  private readonly release: () => void;

  constructor(options: TransportOptions, credentials: Credentials, { lastEventId, signal }: OrderEventsOptions = {}) {
    let open!: () => void;
    let fail!: (error: unknown) => void;
    this.opened = new Promise<void>((resolve, reject) => {
      open = resolve;
      fail = reject;
    });
    const linked = linkedSignal(signal);
    this.closing.signal.addEventListener('abort', () => linked.abort(this.closing.signal.reason), { once: true });
    this.events = orderEvents(options, credentials, lastEventId, linked.signal, open);
    this.first = this.events.next();
    this.first.then(open, fail);
    this.release = linked.dispose;
    // Whoever awaits them sees their failures; nobody need await them.
    this.opened.catch(() => undefined);
    this.first.catch(() => undefined);
  }

  next(): Promise<IteratorResult<OrderEvent, void>> {
    const first = this.first;
    this.first = undefined;
    return first ?? this.events.next();
  }

  /** Ends the stream and its connection. */
  async return(): Promise<IteratorResult<OrderEvent, void>> {
    this.closing.abort(new Error('the order-event stream is closed'));
    await this.first?.catch(() => undefined);
    this.first = undefined;
    this.release();
    return this.events.return(undefined);
  }

  close(): Promise<IteratorResult<OrderEvent, void>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

async function* orderEvents(
  options: TransportOptions,
  credentials: Credentials,
  lastEventId: number | string | undefined,
  signal: AbortSignal,
  onOpen: () => void,
): AsyncGenerator<OrderEvent, void, undefined> {
  let resumeAfter = lastEventId === undefined ? undefined : String(lastEventId);
  let failures = 0;
  let firstReconnectMs = FIRST_RECONNECT_MS;
  const url = urlOf(options.baseUrl, ORDER_EVENTS_PATH);

  while (!signal.aborted) {
    // One connection: aborted by the caller's signal, by a silence, or when the iterator is left.
    const connection = linkedSignal(signal);
    let silence: ReturnType<typeof setTimeout> | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(
        () => connection.abort(new Error(`no heartbeat for ${SILENCE_LIMIT_MS} ms`)),
        SILENCE_LIMIT_MS,
      );
    };
    let retryAfterMs: number | undefined;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...headersFor(credentials, 'token') };
      if (resumeAfter !== undefined) headers['last-event-id'] = resumeAfter;
      heard();
      const response = await options.fetch(url, { headers, signal: connection.signal });
      if (response.status !== 200) {
        const error = errorOf(response.status, response.headers, await response.text());
        // 503: the node sheds streams or is shutting down; a later try (or another node) may take it.
        if (response.status !== 503) throw error;
        retryAfterMs = (retryAfterSeconds(response.headers) ?? 1) * 1000;
      } else {
        onOpen();
        if (!response.body)
          throw new OrdergateTransportError('the event stream answered without a body', response.status);
        const parser = new SseParser(resumeAfter);
        const decoder = new TextDecoder();
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          heard();
          failures = 0;
          for (const message of parser.feed(decoder.decode(value, { stream: true }))) {
            if (message.event === ORDER_UPDATE) {
              const event = JSON.parse(message.data) as OrderEvent;
              resumeAfter = message.lastEventId;
              yield event;
            } else if (message.event === STREAM_END) {
              const envelope: unknown = JSON.parse(message.data);
              if (!isErrorEnvelope(envelope))
                throw new OrdergateTransportError(`a stream_end event without the error envelope: ${message.data}`);
              const error = new OrdergateError(statusOfCode(envelope.code as ErrorCode), envelope);
              // e-503: the server is shutting down; any other code ends the session, and so the iterator.
              if (!error.is('UNAVAILABLE')) throw error;
            }
          }
          if (parser.reconnectionTimeMs !== undefined) firstReconnectMs = parser.reconnectionTimeMs;
          // Also an id sent alone: a live stream starts with one, so a drop before its first event resumes.
          if (parser.lastEventId !== '') resumeAfter = parser.lastEventId;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof OrdergateError || error instanceof OrdergateTransportError || error instanceof SyntaxError)
        throw error;
      // A network error or a silent stream: reconnect.
    } finally {
      clearTimeout(silence);
      connection.abort(new Error('the order-event stream is closed'));
      connection.dispose();
    }
    failures++;
    try {
      await sleep(retryAfterMs ?? backoffMs(failures, firstReconnectMs, MAX_RECONNECT_MS), signal);
    } catch {
      return;
    }
  }
}
