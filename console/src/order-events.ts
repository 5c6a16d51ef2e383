/**
 * The caller's order events (GET /transactional/v1/orders/events), read with fetch: EventSource cannot send
 * the Authorization header. The client package's event-stream parser (packages/client/src/sse.ts, the HTML
 * standard's, the project's one) turns the text/event-stream into events; after a drop the stream is opened
 * again with Last-Event-ID, so no event is missed or repeated. The server sends a
 * heartbeat comment every 15 s: a stream silent for 45 s (a half-open connection after a laptop's sleep or a
 * NAT's drop, which no error reports) is aborted and opened again the same way.
 */
import { SseParser } from '../../packages/client/src/sse.js';
import { ApiError } from './api.js';
import type { ErrorEnvelope, OrderEvent } from './types.js';

const PATH = '/transactional/v1/orders/events';
/** The events of the stream the console reads: an order's change, and the end of the session's stream. */
const ORDER_UPDATE = 'order_update';
const STREAM_END = 'stream_end';
const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 30_000;
/** Three heartbeats missed, as the client package's SILENCE_LIMIT_MS. */
export const SILENCE_LIMIT_MS = 45_000;

/** Where the stream stands, for the page to show. */
export type StreamState =
  /** Opening: the first time (`again` false) or after a drop. */
  | { state: 'connecting'; again: boolean }
  | { state: 'live' }
  /** Dropped, refused (503) or silent: opened again at `retryAt` (epoch ms). */
  | { state: 'offline'; retryAt: number };

export interface OrderEventHandlers {
  onEvent(event: OrderEvent): void;
  /** The stream is open (first time or again): events from now on arrive. */
  onOpen(): void;
  /** The server refused the session: no retry. */
  onSessionEnd(error: ApiError): void;
  /** Each change of state; none after stop() or the session's end. */
  onState?(state: StreamState): void;
}

export interface OrderEventOptions {
  /** How long the stream may be silent before it is taken as dropped (SILENCE_LIMIT_MS). */
  silenceLimitMs?: number;
}

/** A stream that keeps itself open until stop(). */
export class OrderEventStream {
  private lastEventId: string | null = null;
  private controller: AbortController | null = null;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly silenceLimitMs: number;
  /** Whether a connection was opened before: the next is a reconnection. */
  private opened = false;
  /** The browser says it is back online: a stream waiting to retry retries now. */
  private readonly onOnline = () => {
    if (this.stopped || this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    void this.connect();
  };

  constructor(
    private readonly token: string,
    private readonly handlers: OrderEventHandlers,
    options: OrderEventOptions = {},
  ) {
    this.silenceLimitMs = options.silenceLimitMs ?? SILENCE_LIMIT_MS;
  }

  start(): void {
    globalThis.addEventListener?.('online', this.onOnline);
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    globalThis.removeEventListener?.('online', this.onOnline);
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    this.controller?.abort();
  }

  private state(state: StreamState): void {
    if (!this.stopped) this.handlers.onState?.(state);
  }

  /** Something arrived (or a request starts): the silence limit counts from now. */
  private heard(controller: AbortController): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => controller.abort(), this.silenceLimitMs);
  }

  private async connect(): Promise<void> {
    this.retryTimer = undefined;
    if (this.stopped) return;
    const controller = new AbortController();
    this.controller = controller;
    this.state({ state: 'connecting', again: this.opened });
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' };
    if (this.lastEventId !== null) headers['last-event-id'] = this.lastEventId;
    let retryAfterMs: number | null = null;
    try {
      // A request that hangs before its answer's headers is cut by the silence limit too.
      this.heard(controller);
      const response = await fetch(PATH, { headers, signal: controller.signal, cache: 'no-store' });
      if (!response.ok || response.body === null) {
        const envelope = (await response.json().catch(() => ({}))) as Partial<ErrorEnvelope>;
        const error = new ApiError(
          response.status,
          envelope.code ?? `http-${response.status}`,
          envelope.message ?? response.statusText,
          envelope.errors ?? [],
        );
        if (response.status === 401 || response.status === 403) return this.end(error);
        retryAfterMs = Number(response.headers.get('retry-after') ?? '0') * 1000 || null;
      } else {
        this.retryMs = FIRST_RETRY_MS;
        this.opened = true;
        this.state({ state: 'live' });
        this.handlers.onOpen();
        if (await this.read(response.body, controller)) return;
      }
    } catch {
      // Dropped (network, server restart), silent for too long, or aborted by stop(): retried below unless stopped.
    } finally {
      clearTimeout(this.silenceTimer);
      controller.abort();
    }
    if (this.stopped) return;
    const delay = retryAfterMs ?? this.retryMs;
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryMs = Math.min(this.retryMs * 2, LONGEST_RETRY_MS);
    this.state({ state: 'offline', retryAt: Date.now() + delay });
  }

  /** Reads until the stream ends; true when the session ended (no retry). */
  private async read(body: ReadableStream<Uint8Array>, controller: AbortController): Promise<boolean> {
    // The parser keeps the stream's last event id: an id alone moves it too (a live stream starts with one,
    // to resume from after an early drop).
    const parser = new SseParser(this.lastEventId ?? '');
    const decoder = new TextDecoder();
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      this.heard(controller);
      const messages = parser.feed(decoder.decode(value, { stream: true }));
      for (const message of messages) {
        if (message.event === STREAM_END) {
          const envelope = JSON.parse(message.data) as Partial<ErrorEnvelope>;
          // A server shutting down (e-503) is left for another node or a restart; anything else ends the session.
          if (envelope.code === 'e-503') return false;
          this.end(
            new ApiError(401, envelope.code ?? 'e-204', envelope.message ?? 'The session ended', envelope.errors ?? []),
          );
          return true;
        }
        if (message.lastEventId !== '') this.lastEventId = message.lastEventId;
        // Other events (an offer's indicative price, for everybody and without an id) are not the orders'.
        if (message.event === ORDER_UPDATE) this.handlers.onEvent(JSON.parse(message.data) as OrderEvent);
      }
      if (parser.lastEventId !== '') this.lastEventId = parser.lastEventId;
    }
  }

  private end(error: ApiError): void {
    this.stop();
    this.handlers.onSessionEnd(error);
  }
}
