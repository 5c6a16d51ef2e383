/**
 * The event-stream parser of the HTML standard (9.2.6 "Interpreting an event stream"), for text already
 * decoded as UTF-8 (TextDecoder drops the leading byte-order mark): lines end in CRLF, LF or CR; a blank line
 * dispatches the event; `:` starts a comment; `data` lines are joined with LF; `id` sets the last event id
 * (kept across events, ignored when it holds NULL); `retry` sets the reconnection time.
 */

export interface SseMessage {
  /** The event type: `event:`, or `message` when none was given. */
  event: string;
  data: string;
  /** The last event id when the event was dispatched (the stream's, not only this event's). */
  lastEventId: string;
}

export class SseParser {
  /** The reconnection time the stream asked for (`retry:`), in milliseconds. */
  reconnectionTimeMs: number | undefined;
  /**
   * The stream's last event id, as of the last blank line: what a reconnection sends as Last-Event-ID. A
   * message with an id and no data sets it without dispatching an event, as in the standard.
   */
  lastEventId: string;
  private pending = '';
  private data: string[] = [];
  private eventType = '';
  private lastEventIdBuffer: string;

  constructor(lastEventId = '') {
    this.lastEventIdBuffer = lastEventId;
    this.lastEventId = lastEventId;
  }

  /** Takes the next piece of the stream; answers the events it completes. */
  feed(text: string): SseMessage[] {
    this.pending += text;
    const messages: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const end = this.lineEnd(start);
      if (end === undefined) break;
      const message = this.line(this.pending.slice(start, end.at));
      if (message) messages.push(message);
      start = end.at + end.length;
    }
    this.pending = this.pending.slice(start);
    return messages;
  }

  /** Where the next line from `start` ends; a CR at the very end waits for what follows (it may be CRLF). */
  private lineEnd(start: number): { at: number; length: number } | undefined {
    for (let i = start; i < this.pending.length; i++) {
      const char = this.pending[i];
      if (char === '\n') return { at: i, length: 1 };
      if (char === '\r') {
        if (i + 1 === this.pending.length) return undefined;
        return { at: i, length: this.pending[i + 1] === '\n' ? 2 : 1 };
      }
    }
    return undefined;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventIdBuffer = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.reconnectionTimeMs = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const data = this.data;
    const event = this.eventType;
    this.data = [];
    this.eventType = '';
    this.lastEventId = this.lastEventIdBuffer;
    if (data.length === 0) return undefined;
    return { event: event === '' ? 'message' : event, data: data.join('\n'), lastEventId: this.lastEventIdBuffer };
  }
}
