/** A client of the order-event stream (server-sent events), read frame by frame as it arrives. */
import { expect } from 'vitest';

const WAIT_MS = 5_000;

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** An open event stream, read frame by frame as it arrives. */
export class EventStream {
  readonly frames: SseFrame[] = [];
  ended = false;
  private pending = '';
  private readonly changed = new Set<() => void>();

  constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    void this.read();
  }

  get events() {
    return this.frames
      .filter((frame) => frame.data !== undefined)
      .map((frame) => ({ id: Number(frame.id), event: frame.event, data: JSON.parse(frame.data!) }));
  }

  /** Waits (at most WAIT_MS) until the condition holds. */
  async until(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 50));
        this.changed.add(done);
        function done() {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async read(): Promise<void> {
    const reader = this.response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.pending += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.pending.indexOf('\n\n')) >= 0) {
          this.frames.push(parseFrame(this.pending.slice(0, end)));
          this.pending = this.pending.slice(end + 2);
        }
        this.notify();
      }
    } catch {
      // Aborted by the test.
    }
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    for (const wake of this.changed) wake();
    this.changed.clear();
  }
}

export function parseFrame(text: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const field = line.slice(0, colon) as 'id' | 'event' | 'data';
      frame[field] = line.slice(colon + 1).replace(/^ /, '');
    }
  }
  return frame;
}

/** Opens the stream as `token`'s user, after `lastEventId` when given; expects a 200. */
export async function openEventStream(baseUrl: string, token: string, lastEventId?: string): Promise<EventStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const response = await fetch(`${baseUrl}/transactional/v1/orders/events`, { headers, signal: abort.signal });
  expect(response.status).toBe(200);
  return new EventStream(response, abort);
}
