/**
 * The caller's order events (GET /transactional/v1/orders/events), read with fetch: EventSource cannot send
 * the Authorization header. A small parser turns the text/event-stream into events; after a drop the
 * stream is opened again with Last-Event-ID, so no event is missed or repeated.
 */
import { ApiError } from './api.js';
import type { ErrorEnvelope, OrderEvent } from './types.js';

const PATH = '/transactional/v1/orders/events';
const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 30_000;

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
}

/** Splits text/event-stream text into frames; feed it chunks as they arrive. */
export class SseParser {
  private buffer = '';
  private frame: SseFrame = {};

  push(chunk: string): SseFrame[] {
    this.buffer += chunk;
    const frames: SseFrame[] = [];
    let end: number;
    while ((end = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        // An id alone is a frame too: a live stream starts with one, to resume from after an early drop.
        if (this.frame.data !== undefined || this.frame.event !== undefined || this.frame.id !== undefined) frames.push(this.frame);
        this.frame = {};
        continue;
      }
      if (line.startsWith(':')) continue; // a comment: the heartbeat
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'data') this.frame.data = this.frame.data === undefined ? value : `${this.frame.data}\n${value}`;
      else if (name === 'id' || name === 'event') this.frame[name] = value;
    }
    return frames;
  }
}

export interface OrderEventHandlers {
  onEvent(event: OrderEvent): void;
  /** The stream is open (first time or again): events from now on arrive. */
  onOpen(): void;
  /** The server refused the session: no retry. */
  onSessionEnd(error: ApiError): void;
}

/** A stream that keeps itself open until stop(). */
export class OrderEventStream {
  private lastEventId: string | null = null;
  private controller: AbortController | null = null;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly token: string,
    private readonly handlers: OrderEventHandlers,
  ) {}

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.controller?.abort();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.controller = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' };
    if (this.lastEventId !== null) headers['last-event-id'] = this.lastEventId;
    let retryAfterMs: number | null = null;
    try {
      const response = await fetch(PATH, { headers, signal: this.controller.signal, cache: 'no-store' });
      if (!response.ok || response.body === null) {
        const envelope = (await response.json().catch(() => ({}))) as Partial<ErrorEnvelope>;
        const error = new ApiError(response.status, envelope.code ?? `http-${response.status}`, envelope.message ?? response.statusText, envelope.errors ?? []);
        if (response.status === 401 || response.status === 403) return this.end(error);
        retryAfterMs = Number(response.headers.get('retry-after') ?? '0') * 1000 || null;
      } else {
        this.retryMs = FIRST_RETRY_MS;
        this.handlers.onOpen();
        if (await this.read(response.body)) return;
      }
    } catch {
      // Dropped (network, server restart) or aborted by stop(): retried below unless stopped.
    }
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => void this.connect(), retryAfterMs ?? this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, LONGEST_RETRY_MS);
  }

  /** Reads until the stream ends; true when the session ended (no retry). */
  private async read(body: ReadableStream<Uint8Array>): Promise<boolean> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      for (const frame of parser.push(decoder.decode(value, { stream: true }))) {
        if (frame.event === 'stream_end') {
          const envelope = JSON.parse(frame.data ?? '{}') as Partial<ErrorEnvelope>;
          // A server shutting down (e-503) is left for another node or a restart; anything else ends the session.
          if (envelope.code === 'e-503') return false;
          this.end(new ApiError(401, envelope.code ?? 'e-204', envelope.message ?? 'The session ended', envelope.errors ?? []));
          return true;
        }
        if (frame.id !== undefined) this.lastEventId = frame.id;
        if (frame.data === undefined) continue;
        this.handlers.onEvent(JSON.parse(frame.data) as OrderEvent);
      }
    }
  }

  private end(error: ApiError): void {
    this.stopped = true;
    this.handlers.onSessionEnd(error);
  }
}
